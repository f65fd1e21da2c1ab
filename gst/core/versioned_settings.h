/* The properties of a cudaprep element, as its streaming thread reads them.
 *
 * Property setters write the values behind the element's object lock and bump a version; they
 * never touch streaming state. The streaming thread keeps the version its state was built from
 * (start, caps) and, before each frame, asks whether anything was written since: one atomic
 * read when nothing was. When something was, the values are compared with the snapshot the
 * state was built from (under the lock, no copy) and copied only when they differ, so that
 * writing a property to its current value rebuilds nothing. */
#pragma once

#include <gst/gst.h>

#include <utility>

template <typename Settings>
class VersionedSettings {
 public:
  /* f (Settings &) under @owner's object lock; every write bumps the version. */
  template <typename F>
  void write(gpointer owner, F&& f) {
    GST_OBJECT_LOCK(owner);
    f(values_);
    g_atomic_int_inc(&version_);
    GST_OBJECT_UNLOCK(owner);
  }

  /* f (const Settings &) under the lock, for get_property and small reads. */
  template <typename F>
  auto read(gpointer owner, F&& f) const {
    GST_OBJECT_LOCK(owner);
    auto result = f(values_);
    GST_OBJECT_UNLOCK(owner);
    return result;
  }

  /* A copy of the values and their version: what streaming state is built from. */
  Settings snapshot(gpointer owner, gint* version = nullptr) const {
    GST_OBJECT_LOCK(owner);
    Settings s = values_;
    if (version) *version = version_;
    GST_OBJECT_UNLOCK(owner);
    return s;
  }

  /* Whether the values differ from @built, the snapshot of version *@version: if so, *@out is
   * a copy of them. *@version is brought up to date either way. Streaming thread. */
  gboolean changed_since(gpointer owner, gint* version, const Settings& built, Settings* out) const {
    if (g_atomic_int_get(&version_) == *version) return FALSE; /* nothing written since */
    GST_OBJECT_LOCK(owner);
    *version = version_;
    const gboolean changed = !(values_ == built);
    if (changed) *out = values_;
    GST_OBJECT_UNLOCK(owner);
    return changed;
  }

 private:
  Settings values_{};
  gint version_ = 0;
};
