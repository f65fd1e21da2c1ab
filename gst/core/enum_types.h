/* The one way the elements' enum types are made: registered once, marked as plugin API so that
 * gst-inspect documents their values. */
#pragma once

#include <gst/gst.h>

/* The GType of the enum @name with @values (ending with {0, NULL, NULL}), registered at the first
 * call; *@type caches it (a static of the caller's get_type function). */
static inline GType gst_cuda_prep_register_enum(GType *type, const gchar *name, const GEnumValue *values) {
  if (g_once_init_enter(type)) {
    GType t = g_enum_register_static(name, values);
    gst_type_mark_as_plugin_api(t, (GstPluginAPIFlags)0);
    g_once_init_leave(type, t);
  }
  return *type;
}
