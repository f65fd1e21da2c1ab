/* GstCudaPrepBase: device, stream and input handling shared by the cudaprep transforms. */
#include "gstcudaprepbase.h"

GST_DEBUG_CATEGORY_STATIC(gst_cuda_prep_base_debug);
#define GST_CAT_DEFAULT gst_cuda_prep_base_debug

enum {
  PROP_0,
  PROP_CORE_FIRST, /* device-id, backend (cuda_element_core.h) */
};

/* C++ state of the element: created in init, deleted in finalize (the idiom of every
 * cudaprep element: one pointer to one C++ object). */
struct GstCudaPrepBaseImpl {
  CudaPrepElementCore core; /* device properties, the device start .. stop */
  CudaPrepVideoInput input; /* set_caps .. stop */
};

typedef struct {
  GstCudaPrepBaseImpl *impl;
} GstCudaPrepBasePrivate;

G_DEFINE_TYPE_WITH_CODE(GstCudaPrepBase, gst_cuda_prep_base, GST_TYPE_BASE_TRANSFORM, G_ADD_PRIVATE(GstCudaPrepBase);
                        GST_DEBUG_CATEGORY_INIT(gst_cuda_prep_base_debug, "cudaprepbase", 0, "cudaprep base class"));

static GstCudaPrepBaseImpl *IMPL(GstCudaPrepBase *self) {
  return ((GstCudaPrepBasePrivate *)gst_cuda_prep_base_get_instance_private(self))->impl;
}

static void gst_cuda_prep_base_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec) {
  if (!IMPL(GST_CUDA_PREP_BASE(object))->core.set_property(object, prop_id - PROP_CORE_FIRST, value, pspec))
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
}

static void gst_cuda_prep_base_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  if (!IMPL(GST_CUDA_PREP_BASE(object))->core.get_property(object, prop_id - PROP_CORE_FIRST, value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
}

static void gst_cuda_prep_base_set_context(GstElement *element, GstContext *context) {
  IMPL(GST_CUDA_PREP_BASE(element))->core.set_context(element, context);
  GST_ELEMENT_CLASS(gst_cuda_prep_base_parent_class)->set_context(element, context);
}

static gboolean gst_cuda_prep_base_query(GstBaseTransform *trans, GstPadDirection direction, GstQuery *query) {
  CudaPrepElementCore &core = IMPL(GST_CUDA_PREP_BASE(trans))->core;
  if (core.answer_context_query(GST_ELEMENT(trans), query)) return TRUE;
  if (direction == GST_PAD_SINK && core.refuse_oversized_frame(GST_ELEMENT(trans), query)) return TRUE;
  return GST_BASE_TRANSFORM_CLASS(gst_cuda_prep_base_parent_class)->query(trans, direction, query);
}

static gboolean gst_cuda_prep_base_start(GstBaseTransform *trans) {
  return IMPL(GST_CUDA_PREP_BASE(trans))->core.start(GST_ELEMENT(trans));
}

static gboolean gst_cuda_prep_base_stop(GstBaseTransform *trans) {
  GstCudaPrepBaseImpl *impl = IMPL(GST_CUDA_PREP_BASE(trans));
  {
    CudaPrepScopedContext ctx(impl->core.device(), GST_ELEMENT(trans));
    impl->core.device().sync();
    impl->input.reset();
  }
  impl->core.stop();
  return TRUE;
}

static gboolean gst_cuda_prep_base_set_caps(GstBaseTransform *trans, GstCaps *incaps, GstCaps *outcaps) {
  GstCudaPrepBase *self = GST_CUDA_PREP_BASE(trans);
  GstCudaPrepBaseImpl *impl = IMPL(self);
  GstCudaPrepBaseClass *klass = GST_CUDA_PREP_BASE_GET_CLASS(self);

  if (!impl->core.check_memory(GST_ELEMENT(self), incaps, "input")) return FALSE;
  {
    CudaPrepDevice &device = impl->core.device();
    CudaPrepScopedContext ctx(device, GST_ELEMENT(self));
    if (!ctx.ok() || !impl->input.configure(GST_ELEMENT(self), device, incaps)) return FALSE;
  }
  return !klass->configure || klass->configure(self, incaps, outcaps);
}

CudaPrepDevice &gst_cuda_prep_base_device(GstCudaPrepBase *self) { return IMPL(self)->core.device(); }

CudaPrepVideoInput &gst_cuda_prep_base_input(GstCudaPrepBase *self) { return IMPL(self)->input; }

gboolean gst_cuda_prep_base_gpu_possible(GstCudaPrepBase *self) {
  return IMPL(self)->core.gpu_possible(GST_ELEMENT(self));
}

static void gst_cuda_prep_base_finalize(GObject *object) {
  delete IMPL(GST_CUDA_PREP_BASE(object));
  G_OBJECT_CLASS(gst_cuda_prep_base_parent_class)->finalize(object);
}

static void gst_cuda_prep_base_class_init(GstCudaPrepBaseClass *klass) {
  GObjectClass *gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS(klass);

  gobject_class->set_property = gst_cuda_prep_base_set_property;
  gobject_class->get_property = gst_cuda_prep_base_get_property;
  gobject_class->finalize = gst_cuda_prep_base_finalize;

  CudaPrepElementCore::install_properties(gobject_class, PROP_CORE_FIRST);

  element_class->set_context = GST_DEBUG_FUNCPTR(gst_cuda_prep_base_set_context);
  trans_class->start = GST_DEBUG_FUNCPTR(gst_cuda_prep_base_start);
  trans_class->stop = GST_DEBUG_FUNCPTR(gst_cuda_prep_base_stop);
  trans_class->set_caps = GST_DEBUG_FUNCPTR(gst_cuda_prep_base_set_caps);
  trans_class->query = GST_DEBUG_FUNCPTR(gst_cuda_prep_base_query);

  gst_type_mark_as_plugin_api(GST_TYPE_CUDA_PREP_BASE, (GstPluginAPIFlags)0);
}

static void gst_cuda_prep_base_init(GstCudaPrepBase *self) {
  ((GstCudaPrepBasePrivate *)gst_cuda_prep_base_get_instance_private(self))->impl = new GstCudaPrepBaseImpl();
}
