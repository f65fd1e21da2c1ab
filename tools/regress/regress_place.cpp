// cudaprep-regress: moving a complete recording into place without ever losing one.
#include "regress_place.h"

#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "regress_store.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

namespace regress {

namespace {

bool unsupported(int e) { return e == EINVAL || e == ENOSYS || e == ENOTSUP; }

// rename(2) puts a directory in place of an empty directory only, atomically; a directory that
// is not empty (or a file) makes it fail, and nothing at `out` is touched.
PlaceResult rename_over_empty(const std::string& tmp, const std::string& out, std::string* error) {
  if (rename(tmp.c_str(), out.c_str()) == 0) return PlaceResult::kPlaced;
  const int e = errno;
  if (e == ENOTEMPTY || e == EEXIST || e == ENOTDIR || e == EISDIR) return PlaceResult::kTargetAppeared;
  *error = "cannot create " + out + ": " + g_strerror(e);
  return PlaceResult::kFailed;
}

PlaceResult place_new(const std::string& tmp, const std::string& out, std::string* error) {
  if (renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, out.c_str(), RENAME_NOREPLACE) == 0) return PlaceResult::kPlaced;
  const int e = errno;
  if (e == EEXIST) return rename_over_empty(tmp, out, error);  // only an empty directory is taken
  if (!unsupported(e)) {
    *error = "cannot create " + out + ": " + g_strerror(e);
    return PlaceResult::kFailed;
  }
  // a file system without RENAME_NOREPLACE: claim `out` as an empty directory, then rename over
  // it (which fails if anything was put into it meanwhile)
  if (g_mkdir(out.c_str(), 0755) != 0 && errno != EEXIST) {
    *error = "cannot create " + out + ": " + g_strerror(errno);
    return PlaceResult::kFailed;
  }
  return rename_over_empty(tmp, out, error);
}

}  // namespace

PlaceResult place_recording(const std::string& tmp, const std::string& out, bool replace, std::string* error) {
  if (!replace) return place_new(tmp, out, error);
  if (renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, out.c_str(), RENAME_EXCHANGE) == 0) {
    remove_tree(tmp);  // now the older recording
    return PlaceResult::kPlaced;
  }
  const int e = errno;
  if (e == ENOENT) return place_new(tmp, out, error);  // nothing to replace (any more)
  if (!unsupported(e)) {
    *error = "cannot replace " + out + ": " + g_strerror(e);
    return PlaceResult::kFailed;
  }
  // no RENAME_EXCHANGE: move the old one aside, the new one in, then remove the old one
  const std::string old = out + ".old-" + std::to_string(getpid());
  if (g_rename(out.c_str(), old.c_str()) != 0) {
    *error = "cannot replace " + out + ": " + g_strerror(errno);
    return PlaceResult::kFailed;
  }
  const PlaceResult r = place_new(tmp, out, error);
  if (r == PlaceResult::kPlaced)
    remove_tree(old);
  else
    g_rename(old.c_str(), out.c_str());  // the older recording stays
  return r;
}

}  // namespace regress
