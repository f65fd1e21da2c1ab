/* The CUDA element core (cuda_element_core.h). */
#include "cuda_element_core.h"

#include "tensorize.h" /* kMaxSourceSide */

GST_DEBUG_CATEGORY_STATIC(cudaprep_core_debug);
#define GST_CAT_DEFAULT cudaprep_core_debug

void CudaPrepElementCore::install_properties(GObjectClass *klass, guint first_id) {
  GST_DEBUG_CATEGORY_INIT(cudaprep_core_debug, "cudaprepcore", 0, "cudaprep element core");
  const CudaPrepDeviceSettings defaults;
  const GParamFlags ready_only = (GParamFlags)(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);
  g_object_class_install_property(
      klass, first_id + CORE_PROP_DEVICE_ID,
      g_param_spec_int("device-id", "Device ID",
                       "CUDA device to use; -1 shares the context of neighbouring CUDA elements or takes "
                       "device 0. A device that cannot be used is a warning on the bus with backend=auto "
                       "(the CPU takes over) and an error with backend=cuda. NULL/READY only",
                       -1, G_MAXINT, defaults.device_id, ready_only));
  g_object_class_install_property(
      klass, first_id + CORE_PROP_BACKEND,
      g_param_spec_enum("backend", "Backend",
                        "Where frames are processed: auto uses CUDA when a device is usable, else the CPU. "
                        "NULL/READY only",
                        GST_TYPE_CUDA_PREP_BACKEND, defaults.backend, ready_only));
  gst_type_mark_as_plugin_api(GST_TYPE_CUDA_PREP_BACKEND, (GstPluginAPIFlags)0);
}

gboolean CudaPrepElementCore::set_property(GObject *object, guint prop, const GValue *value, GParamSpec *pspec) {
  if (prop >= CORE_PROP_COUNT) return FALSE;
  if (!gst_cuda_prep_ready_property_changeable(object, pspec)) return TRUE;
  settings_.write(object, [&](CudaPrepDeviceSettings &s) {
    if (prop == CORE_PROP_DEVICE_ID)
      s.device_id = g_value_get_int(value);
    else
      s.backend = (GstCudaPrepBackend)g_value_get_enum(value);
  });
  return TRUE;
}

gboolean CudaPrepElementCore::get_property(GObject *object, guint prop, GValue *value) {
  if (prop >= CORE_PROP_COUNT) return FALSE;
  const CudaPrepDeviceSettings s = settings_.snapshot(object);
  if (prop == CORE_PROP_DEVICE_ID)
    g_value_set_int(value, s.device_id);
  else
    g_value_set_enum(value, s.backend);
  return TRUE;
}

gboolean CudaPrepElementCore::start(GstElement *element) { return device_.open(element, settings_.snapshot(element)); }

void CudaPrepElementCore::stop() { device_.close(); }

void CudaPrepElementCore::set_context(GstElement *element, GstContext *context) {
  device_.set_context(element, context, settings_.snapshot(element).device_id);
}

gboolean CudaPrepElementCore::answer_context_query(GstElement *element, GstQuery *query) {
  return device_.answer_context_query(element, query);
}

gboolean CudaPrepElementCore::gpu_possible(GstElement *element) const {
  if (device_.is_open()) return device_.gpu();
  return CudaPrepDevice::gpu_possible(settings_.snapshot(element).backend);
}

gboolean CudaPrepElementCore::check_memory(GstElement *element, GstCaps *caps, const gchar *what) const {
  if (!gst_cuda_prep_caps_has_cuda_feature(caps, 0) || device_.gpu()) return TRUE;
  GST_ELEMENT_ERROR(
      element, CORE, NEGOTIATION, ("Input is in CUDA memory but no CUDA device is usable"),
      ("%s: caps %" GST_PTR_FORMAT " need a GPU; backend is cpu or no device could be opened", what, caps));
  return FALSE;
}

gboolean CudaPrepElementCore::refuse_oversized_frame(GstElement *element, GstQuery *query) {
  if (GST_QUERY_TYPE(query) != GST_QUERY_ACCEPT_CAPS) return FALSE;
  GstCaps *caps = NULL;
  gst_query_parse_accept_caps(query, &caps);
  if (!caps || gst_caps_get_size(caps) != 1) return FALSE;
  const GstStructure *s = gst_caps_get_structure(caps, 0);
  gint width = 0, height = 0;
  if (!gst_structure_has_name(s, "video/x-raw") || !gst_structure_get_int(s, "width", &width) ||
      !gst_structure_get_int(s, "height", &height) ||
      (width <= cudaprep::kMaxSourceSide && height <= cudaprep::kMaxSourceSide))
    return FALSE;
  const std::string size = std::to_string(width) + "x" + std::to_string(height);
  if (posted_size_error_ != size) {
    posted_size_error_ = size;
    GST_ELEMENT_ERROR(element, CORE, NEGOTIATION,
                      ("A %s frame is larger than the %dx%d the "
                       "element takes",
                       size.c_str(), cudaprep::kMaxSourceSide, cudaprep::kMaxSourceSide),
                      ("caps %" GST_PTR_FORMAT, caps));
  }
  gst_query_set_accept_caps_result(query, FALSE);
  return TRUE;
}

gboolean gst_cuda_prep_caps_has_cuda_feature(GstCaps *caps, guint idx) {
  GstCapsFeatures *f = gst_caps_get_features(caps, idx);
  return f && gst_caps_features_contains(f, "memory:CUDAMemory");
}

GstCaps *gst_cuda_prep_caps_order_memory(GstCaps *caps, gboolean gpu, gboolean cuda_first) {
  GstCaps *sys = gst_caps_new_empty(), *dev = gst_caps_new_empty();
  for (guint i = 0; i < gst_caps_get_size(caps); i++)
    gst_caps_append_structure_full(gst_cuda_prep_caps_has_cuda_feature(caps, i) ? dev : sys,
                                   gst_structure_copy(gst_caps_get_structure(caps, i)),
                                   gst_caps_features_copy(gst_caps_get_features(caps, i)));
  gst_caps_unref(caps);
  if (gpu && cuda_first) return gst_caps_merge(dev, sys);
  return gst_caps_merge(sys, dev);
}

gboolean gst_cuda_prep_ready_property_changeable(GObject *object, GParamSpec *pspec) {
  GST_OBJECT_LOCK(object);
  const gboolean ok = GST_STATE(object) <= GST_STATE_READY && GST_STATE_PENDING(object) <= GST_STATE_READY;
  GST_OBJECT_UNLOCK(object);
  if (!ok)
    GST_ELEMENT_WARNING(
        object, LIBRARY, SETTINGS,
        ("%s can only be changed in the NULL or READY state: the change is ignored", g_param_spec_get_name(pspec)),
        (NULL));
  return ok;
}
