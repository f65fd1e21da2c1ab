// cudaprep-regress suite: reading a suite (a directory of goldens or a manifest file).
#include <glib.h>
#include <glib/gstdio.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "regress_json.h"
#include "regress_math.h"
#include "regress_store.h"
#include "regress_suite.h"

namespace regress {

namespace {

const std::set<std::string> kClipOptions = {"tensor-tol", "match-pos-tol", "match-score-tol",
                                            "det-iou",    "det-pos-tol",   "det-conf-tol",
                                            "det-missed", "det-extra",     "store"};

std::string join_path(const std::string& dir, const std::string& rel) {
  if (rel.empty() || g_path_is_absolute(rel.c_str()) || dir.empty() || dir == ".") return rel;
  return dir + "/" + rel;
}

std::string dirname_of(const std::string& path) {
  gchar* d = g_path_get_dirname(path.c_str());
  std::string s = d;
  g_free(d);
  return s;
}

// Names become directory names and JUnit test names: letters, digits, '_', '-', '.', and '/'
// between components that are neither empty nor '.' nor '..'.
bool valid_name(const std::string& name) {
  if (name.empty() || name.front() == '/' || name.back() == '/') return false;
  for (char c : name)
    if (!g_ascii_isalnum(c) && c != '_' && c != '-' && c != '.' && c != '/') return false;
  gchar** parts = g_strsplit(name.c_str(), "/", -1);
  bool ok = true;
  for (gchar** p = parts; *p; p++)
    if (!**p || g_str_equal(*p, ".") || g_str_equal(*p, "..")) ok = false;
  g_strfreev(parts);
  return ok;
}

bool parse_timeout(const std::string& text, double* out) {
  return parse_decimal(text, out) && *out >= 0 && std::isfinite(*out);
}

// Every directory under `dir` (itself excluded) holding a manifest.json, as paths below `dir`.
void find_goldens(const std::string& dir, const std::string& rel, std::vector<std::string>* out) {
  GDir* d = g_dir_open((rel.empty() ? dir : dir + "/" + rel).c_str(), 0, nullptr);
  if (!d) return;
  std::vector<std::string> names;
  while (const gchar* n = g_dir_read_name(d)) names.push_back(n);
  g_dir_close(d);
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    const std::string r = rel.empty() ? n : rel + "/" + n;
    const std::string full = dir + "/" + r;
    if (!g_file_test(full.c_str(), G_FILE_TEST_IS_DIR) || g_file_test(full.c_str(), G_FILE_TEST_IS_SYMLINK)) continue;
    if (g_file_test((full + "/manifest.json").c_str(), G_FILE_TEST_IS_REGULAR))
      out->push_back(r);
    else
      find_goldens(dir, r, out);
  }
}

bool load_golden_dir(const std::string& dir, const SuiteDefaults& defaults, Suite* suite, std::string* error) {
  if (defaults.clips_root.empty()) {
    *error = "a suite that is a directory of goldens needs --clips ROOT (where the clips are)";
    return false;
  }
  std::vector<std::string> names;
  find_goldens(dir, "", &names);
  if (names.empty()) {
    *error = dir + ": no golden in it (no directory holding a manifest.json)";
    return false;
  }
  gchar* base = g_path_get_basename(dir.c_str());
  suite->name = base;
  g_free(base);
  for (const auto& n : names) {
    SuiteClip c;
    c.name = n;
    if (!valid_name(n)) {
      *error = dir + "/" + n + ": a golden's directory name may hold letters, digits, '_', '-' and '.' only";
      return false;
    }
    c.golden = dir + "/" + n;
    std::string text, err;
    Json j;
    if (!read_file(c.golden + "/manifest.json", &text, &err) || !Json::parse(text, &j, &err)) {
      *error = c.golden + "/manifest.json: " + err;
      return false;
    }
    std::string clip;
    if (!j["clip"].get_string(&clip) || clip.empty() || clip.find('/') != std::string::npos) {
      *error = c.golden + "/manifest.json: no clip file name (field \"clip\")";
      return false;
    }
    // the clip under --clips, in the golden's subdirectory first (a suite mirroring the clips'
    // folders), else directly under it
    const std::string sub = dirname_of(n);
    c.clip = join_path(defaults.clips_root, clip);
    if (sub != ".") {
      const std::string nested = join_path(defaults.clips_root, sub + "/" + clip);
      if (g_file_test(nested.c_str(), G_FILE_TEST_EXISTS)) c.clip = nested;
    }
    j["pipeline"].get_string(&c.pipeline);
    std::string store;
    if (j["store"].get_string(&store)) c.options["store"] = store;
    for (const auto& kv : defaults.options) c.options[kv.first] = kv.second;
    c.timeout_s = defaults.timeout_s > 0 ? defaults.timeout_s : 0;
    suite->clips.push_back(c);
  }
  return true;
}

std::string key_string(GKeyFile* kf, const char* group, const char* key) {
  gchar* v = g_key_file_get_string(kf, group, key, nullptr);
  std::string s = v ? v : "";
  g_free(v);
  return s;
}

bool load_manifest(const std::string& path, const SuiteDefaults& defaults, Suite* suite, std::string* error) {
  GKeyFile* kf = g_key_file_new();
  GError* err = nullptr;
  if (!g_key_file_load_from_file(kf, path.c_str(), G_KEY_FILE_NONE, &err)) {
    *error = path + ": " + err->message;
    g_error_free(err);
    g_key_file_free(kf);
    return false;
  }
  const std::string base = dirname_of(path);
  bool ok = true;
  auto fail = [&](const std::string& msg) {
    if (ok) *error = path + ": " + msg;
    ok = false;
  };
  if (!g_key_file_has_group(kf, "suite")) fail("no [suite] group");
  // the [suite] group: defaults
  std::map<std::string, std::string> opts;
  std::string pipeline, clips_root, goldens;
  double timeout = 0;
  {
    gchar** keys = ok ? g_key_file_get_keys(kf, "suite", nullptr, nullptr) : nullptr;
    for (gchar** k = keys; k && *k; k++) {
      const std::string key = *k, value = key_string(kf, "suite", *k);
      if (key == "name")
        suite->name = value;
      else if (key == "pipeline")
        pipeline = value;
      else if (key == "clips")
        clips_root = join_path(base, value);
      else if (key == "goldens")
        goldens = join_path(base, value);
      else if (key == "timeout") {
        if (!parse_timeout(value, &timeout))
          fail("[suite] timeout=" + value + ": expected seconds (a decimal number >= 0)");
      } else if (kClipOptions.count(key))
        opts[key] = value;
      else
        fail("[suite]: unknown key " + key);
    }
    g_strfreev(keys);
  }
  if (suite->name.empty()) {
    gchar* b = g_path_get_basename(path.c_str());
    suite->name = b;
    g_free(b);
    const size_t dot = suite->name.rfind('.');
    if (dot != std::string::npos && dot > 0) suite->name.resize(dot);
  }
  if (!defaults.clips_root.empty()) clips_root = defaults.clips_root;
  if (clips_root.empty()) clips_root = base;
  if (!defaults.goldens_dir.empty()) goldens = defaults.goldens_dir;
  if (goldens.empty()) goldens = join_path(base, "goldens");
  for (const auto& kv : defaults.options) opts[kv.first] = kv.second;  // the command line wins
  if (defaults.timeout_s >= 0) timeout = defaults.timeout_s;

  gchar** groups = ok ? g_key_file_get_groups(kf, nullptr) : nullptr;
  for (gchar** g = groups; ok && g && *g; g++) {
    const std::string group = *g;
    if (group == "suite") continue;
    if (group.rfind("clip ", 0) != 0) {
      fail("[" + group + "]: expected [suite] or [clip NAME]");
      break;
    }
    SuiteClip c;
    c.name = group.substr(5);
    if (!valid_name(c.name)) {
      fail("[" + group + "]: a clip's name may hold letters, digits, '_', '-', '.' and '/' between components");
      break;
    }
    c.options = opts;
    c.pipeline = pipeline;
    c.timeout_s = timeout;
    std::string file;
    gchar** keys = g_key_file_get_keys(kf, *g, nullptr, nullptr);
    for (gchar** k = keys; k && *k; k++) {
      const std::string key = *k, value = key_string(kf, *g, *k);
      if (key == "file")
        file = value;
      else if (key == "pipeline")
        c.pipeline = value;
      else if (key == "timeout") {
        if (!parse_timeout(value, &c.timeout_s)) fail("[" + group + "] timeout=" + value + ": expected seconds");
      } else if (kClipOptions.count(key))
        c.options[key] = value;
      else
        fail("[" + group + "]: unknown key " + key);
    }
    g_strfreev(keys);
    if (file.empty()) fail("[" + group + "]: no file= (the clip, relative to the clips root)");
    c.clip = join_path(clips_root, file);
    c.golden = goldens + "/" + c.name;
    suite->clips.push_back(c);
  }
  g_strfreev(groups);
  g_key_file_free(kf);
  if (ok && suite->clips.empty()) fail("no [clip NAME] group");
  return ok;
}

}  // namespace

bool load_suite(const std::string& path, const SuiteDefaults& defaults, Suite* suite, std::string* error) {
  suite->source = path;
  suite->clips.clear();
  GStatBuf st;
  if (g_stat(path.c_str(), &st) != 0) {
    *error = "suite " + path + ": " + g_strerror(errno);
    return false;
  }
  const bool ok =
      S_ISDIR(st.st_mode) ? load_golden_dir(path, defaults, suite, error) : load_manifest(path, defaults, suite, error);
  if (!ok) return false;
  std::sort(suite->clips.begin(), suite->clips.end(),
            [](const SuiteClip& a, const SuiteClip& b) { return a.name < b.name; });
  return true;
}

uint64_t fnv1a64(const std::string& text) {
  uint64_t h = 14695981039346656037ull;  // the FNV-1a 64-bit offset basis and prime
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

uint32_t suite_part(const std::string& name, uint32_t parts) { return parts ? (uint32_t)(fnv1a64(name) % parts) : 0; }

}  // namespace regress
