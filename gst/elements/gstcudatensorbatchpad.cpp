/* GstCudaTensorBatchPad: a cudatensorbatch sink pad with its own roi, rois, roi-meta and filters. */
#include "gstcudatensorbatchpad.h"

#include "property_arrays.h"
#include "tensorize_settings.h"

enum {
  PROP_0,
  PROP_ROI,
  PROP_REGION_FIRST, /* rois, roi-meta and its filters (region_settings.h) */
};

struct _GstCudaTensorBatchPad {
  GstAggregatorPad parent;
  CudaTensorBatchPadSettings *settings; /* under the pad's object lock */
  guint version;                        /* under the pad's object lock */
  CudaTensorBatchPadState *state;
};

G_DEFINE_TYPE(GstCudaTensorBatchPad, gst_cuda_tensor_batch_pad, GST_TYPE_AGGREGATOR_PAD);

CudaTensorBatchPadState &gst_cuda_tensor_batch_pad_state(GstCudaTensorBatchPad *pad) { return *pad->state; }

CudaTensorBatchPadSettings gst_cuda_tensor_batch_pad_settings(GstCudaTensorBatchPad *pad, guint *version) {
  GST_OBJECT_LOCK(pad);
  CudaTensorBatchPadSettings s = *pad->settings;
  if (version) *version = pad->version;
  GST_OBJECT_UNLOCK(pad);
  return s;
}

guint gst_cuda_tensor_batch_pad_settings_version(GstCudaTensorBatchPad *pad) {
  GST_OBJECT_LOCK(pad);
  const guint version = pad->version;
  GST_OBJECT_UNLOCK(pad);
  return version;
}

static void gst_cuda_tensor_batch_pad_set_property(GObject *object, guint prop_id, const GValue *value,
                                                   GParamSpec *pspec) {
  GstCudaTensorBatchPad *pad = GST_CUDA_TENSOR_BATCH_PAD(object);
  gboolean known = TRUE;
  /* Read by the streaming thread before each batch: takes effect at the next one. */
  GST_OBJECT_LOCK(pad);
  if (prop_id == PROP_ROI)
    pad->settings->roi = gst_cuda_prep_vector_from_array<int>(value);
  else
    known = prop_id >= PROP_REGION_FIRST &&
            gst_cuda_prep_region_property_set(pad->settings->regions, prop_id - PROP_REGION_FIRST, value);
  if (known) pad->version++;
  GST_OBJECT_UNLOCK(pad);
  if (!known) G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
}

static void gst_cuda_tensor_batch_pad_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  GstCudaTensorBatchPad *pad = GST_CUDA_TENSOR_BATCH_PAD(object);
  gboolean known = TRUE;
  GST_OBJECT_LOCK(pad);
  if (prop_id == PROP_ROI)
    gst_cuda_prep_vector_to_array(pad->settings->roi, value);
  else
    known = prop_id >= PROP_REGION_FIRST &&
            gst_cuda_prep_region_property_get(pad->settings->regions, prop_id - PROP_REGION_FIRST, value);
  GST_OBJECT_UNLOCK(pad);
  if (!known) G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
}

static void gst_cuda_tensor_batch_pad_finalize(GObject *object) {
  GstCudaTensorBatchPad *pad = GST_CUDA_TENSOR_BATCH_PAD(object);
  delete pad->settings;
  delete pad->state;
  G_OBJECT_CLASS(gst_cuda_tensor_batch_pad_parent_class)->finalize(object);
}

static void gst_cuda_tensor_batch_pad_class_init(GstCudaTensorBatchPadClass *klass) {
  GObjectClass *gobject_class = G_OBJECT_CLASS(klass);
  gobject_class->set_property = gst_cuda_tensor_batch_pad_set_property;
  gobject_class->get_property = gst_cuda_tensor_batch_pad_get_property;
  gobject_class->finalize = gst_cuda_tensor_batch_pad_finalize;
  g_object_class_install_property(
      gobject_class, PROP_ROI,
      gst_cuda_prep_param_spec_roi("Rectangle \"<x, y, width, height>\" of this pad's frames "
                                   "that its slot is made from, clipped to the frame (the slot's meta says what was "
                                   "used); empty (default) = whole frame. Without rois and roi-meta the pad has one "
                                   "slot. Takes effect at the next batch"));
  gst_cuda_prep_region_properties_install(gobject_class, PROP_REGION_FIRST, ~0u, REGION_SCOPE_BATCH_PAD);
}

static void gst_cuda_tensor_batch_pad_init(GstCudaTensorBatchPad *pad) {
  pad->settings = new CudaTensorBatchPadSettings();
  pad->version = 0;
  pad->state = new CudaTensorBatchPadState();
}
