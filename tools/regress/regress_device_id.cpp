// cudaprep-regress: running a pipeline on a given GPU (record / check --device-id N).
#include "regress_device_id.h"

namespace regress {

int apply_device_id(GstElement* pipeline, int id) {
  int set = 0;
  auto one = [&](GstElement* e) {
    GParamSpec* p = g_object_class_find_property(G_OBJECT_GET_CLASS(e), "device-id");
    if (!p || !(p->flags & G_PARAM_WRITABLE)) return;
    if (G_PARAM_SPEC_VALUE_TYPE(p) == G_TYPE_INT || G_PARAM_SPEC_VALUE_TYPE(p) == G_TYPE_UINT) {
      GValue v = G_VALUE_INIT;
      g_value_init(&v, G_PARAM_SPEC_VALUE_TYPE(p));
      if (G_VALUE_HOLDS_INT(&v))
        g_value_set_int(&v, id);
      else
        g_value_set_uint(&v, (guint)id);
      if (!g_param_value_validate(p, &v)) {
        g_object_set_property(G_OBJECT(e), "device-id", &v);
        set++;
      }
      g_value_unset(&v);
    }
  };
  one(pipeline);
  if (GST_IS_BIN(pipeline)) {
    GstIterator* it = gst_bin_iterate_recurse(GST_BIN(pipeline));
    GValue item = G_VALUE_INIT;
    while (gst_iterator_next(it, &item) == GST_ITERATOR_OK) {
      one(GST_ELEMENT(g_value_get_object(&item)));
      g_value_reset(&item);
    }
    g_value_unset(&item);
    gst_iterator_free(it);
  }
  return set;
}

}  // namespace regress
