/* GstCudaPrepBase: device, stream and input handling shared by the cudaprep transforms. */
#include "gstcudaprepbase.h"


GST_DEBUG_CATEGORY_STATIC (gst_cuda_prep_base_debug);
#define GST_CAT_DEFAULT gst_cuda_prep_base_debug

enum
{
  PROP_0,
  PROP_DEVICE_ID,
  PROP_BACKEND,
};

/* C++ state of the element: created in init, deleted in finalize (the idiom of every
 * cudaprep element: one pointer to one C++ object). */
struct GstCudaPrepBaseImpl
{
  CudaPrepDeviceSettings settings;      /* under the object lock */
  CudaPrepDevice device;                /* streaming state, start .. stop */
  CudaPrepVideoInput input;             /* set_caps .. stop */
};

typedef struct
{
  GstCudaPrepBaseImpl *impl;
} GstCudaPrepBasePrivate;

G_DEFINE_TYPE_WITH_CODE (GstCudaPrepBase, gst_cuda_prep_base, GST_TYPE_BASE_TRANSFORM,
    G_ADD_PRIVATE (GstCudaPrepBase);
    GST_DEBUG_CATEGORY_INIT (gst_cuda_prep_base_debug, "cudaprepbase", 0, "cudaprep base class"));

static GstCudaPrepBaseImpl *
IMPL (GstCudaPrepBase * self)
{
  return ((GstCudaPrepBasePrivate *) gst_cuda_prep_base_get_instance_private (self))->impl;
}

gboolean
gst_cuda_prep_ready_property_changeable (GObject * object, GParamSpec * pspec)
{
  GST_OBJECT_LOCK (object);
  const gboolean ok = GST_STATE (object) <= GST_STATE_READY &&
      GST_STATE_PENDING (object) <= GST_STATE_READY;
  GST_OBJECT_UNLOCK (object);
  if (!ok)
    GST_ELEMENT_WARNING (object, LIBRARY, SETTINGS,
        ("%s can only be changed in the NULL or READY state: the change is ignored",
            g_param_spec_get_name (pspec)), (NULL));
  return ok;
}

static void
gst_cuda_prep_base_set_property (GObject * object, guint prop_id, const GValue * value,
    GParamSpec * pspec)
{
  GstCudaPrepBaseImpl *impl = IMPL (GST_CUDA_PREP_BASE (object));

  if (!gst_cuda_prep_ready_property_changeable (object, pspec))
    return;
  GST_OBJECT_LOCK (object);
  switch (prop_id) {
    case PROP_DEVICE_ID:
      impl->settings.device_id = g_value_get_int (value);
      break;
    case PROP_BACKEND:
      impl->settings.backend = (GstCudaPrepBackend) g_value_get_enum (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (object);
}

static void
gst_cuda_prep_base_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstCudaPrepBaseImpl *impl = IMPL (GST_CUDA_PREP_BASE (object));

  GST_OBJECT_LOCK (object);
  switch (prop_id) {
    case PROP_DEVICE_ID:
      g_value_set_int (value, impl->settings.device_id);
      break;
    case PROP_BACKEND:
      g_value_set_enum (value, impl->settings.backend);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (object);
}

static CudaPrepDeviceSettings
device_settings (GstCudaPrepBase * self)
{
  GST_OBJECT_LOCK (self);
  CudaPrepDeviceSettings s = IMPL (self)->settings;
  GST_OBJECT_UNLOCK (self);
  return s;
}

static void
gst_cuda_prep_base_set_context (GstElement * element, GstContext * context)
{
  GstCudaPrepBase *self = GST_CUDA_PREP_BASE (element);
  IMPL (self)->device.set_context (element, context, device_settings (self).device_id);
  GST_ELEMENT_CLASS (gst_cuda_prep_base_parent_class)->set_context (element, context);
}

static gboolean
gst_cuda_prep_base_query (GstBaseTransform * trans, GstPadDirection direction, GstQuery * query)
{
  if (IMPL (GST_CUDA_PREP_BASE (trans))->device.answer_context_query (GST_ELEMENT (trans), query))
    return TRUE;
  return GST_BASE_TRANSFORM_CLASS (gst_cuda_prep_base_parent_class)->query (trans, direction, query);
}

static gboolean
gst_cuda_prep_base_start (GstBaseTransform * trans)
{
  GstCudaPrepBase *self = GST_CUDA_PREP_BASE (trans);
  return IMPL (self)->device.open (GST_ELEMENT (self), device_settings (self));
}

static gboolean
gst_cuda_prep_base_stop (GstBaseTransform * trans)
{
  GstCudaPrepBaseImpl *impl = IMPL (GST_CUDA_PREP_BASE (trans));
  {
    CudaPrepScopedContext ctx (impl->device, GST_ELEMENT (trans));
    impl->device.sync ();
    impl->input.reset ();
  }
  impl->device.close ();
  return TRUE;
}

gboolean
gst_cuda_prep_caps_has_cuda_feature (GstCaps * caps, guint idx)
{
  GstCapsFeatures *f = gst_caps_get_features (caps, idx);
  return f && gst_caps_features_contains (f, "memory:CUDAMemory");
}

static gboolean
gst_cuda_prep_base_set_caps (GstBaseTransform * trans, GstCaps * incaps, GstCaps * outcaps)
{
  GstCudaPrepBase *self = GST_CUDA_PREP_BASE (trans);
  GstCudaPrepBaseImpl *impl = IMPL (self);
  GstCudaPrepBaseClass *klass = GST_CUDA_PREP_BASE_GET_CLASS (self);

  if (gst_cuda_prep_caps_has_cuda_feature (incaps, 0) && !impl->device.gpu ()) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Input is in CUDA memory but no CUDA device is usable"),
        ("caps %" GST_PTR_FORMAT " need a GPU; backend is cpu or no device could be opened",
            incaps));
    return FALSE;
  }
  {
    CudaPrepScopedContext ctx (impl->device, GST_ELEMENT (self));
    if (!ctx.ok () || !impl->input.configure (GST_ELEMENT (self), impl->device, incaps))
      return FALSE;
  }
  return !klass->configure || klass->configure (self, incaps, outcaps);
}

CudaPrepDevice &
gst_cuda_prep_base_device (GstCudaPrepBase * self)
{
  return IMPL (self)->device;
}

CudaPrepVideoInput &
gst_cuda_prep_base_input (GstCudaPrepBase * self)
{
  return IMPL (self)->input;
}

gboolean
gst_cuda_prep_base_gpu_possible (GstCudaPrepBase * self)
{
  GstCudaPrepBaseImpl *impl = IMPL (self);
  if (impl->device.is_open ())
    return impl->device.gpu ();
  return CudaPrepDevice::gpu_possible (device_settings (self).backend);
}

static void
gst_cuda_prep_base_finalize (GObject * object)
{
  delete IMPL (GST_CUDA_PREP_BASE (object));
  G_OBJECT_CLASS (gst_cuda_prep_base_parent_class)->finalize (object);
}

static void
gst_cuda_prep_base_class_init (GstCudaPrepBaseClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);

  gobject_class->set_property = gst_cuda_prep_base_set_property;
  gobject_class->get_property = gst_cuda_prep_base_get_property;
  gobject_class->finalize = gst_cuda_prep_base_finalize;

  gst_cuda_prep_device_properties_install (gobject_class, PROP_DEVICE_ID, PROP_BACKEND);

  element_class->set_context = GST_DEBUG_FUNCPTR (gst_cuda_prep_base_set_context);
  trans_class->start = GST_DEBUG_FUNCPTR (gst_cuda_prep_base_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_cuda_prep_base_stop);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_cuda_prep_base_set_caps);
  trans_class->query = GST_DEBUG_FUNCPTR (gst_cuda_prep_base_query);

  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_PREP_BASE, (GstPluginAPIFlags) 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_PREP_BACKEND, (GstPluginAPIFlags) 0);
}

static void
gst_cuda_prep_base_init (GstCudaPrepBase * self)
{
  ((GstCudaPrepBasePrivate *) gst_cuda_prep_base_get_instance_private (self))->impl =
      new GstCudaPrepBaseImpl ();
}
