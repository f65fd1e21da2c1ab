/* GstCudaTensorBatchPad: a cudatensorbatch sink pad with a per-pad roi. */
#include "gstcudatensorbatchpad.h"

#include "property_arrays.h"
#include "tensorize_settings.h"

enum {
  PROP_0,
  PROP_ROI,
};

struct _GstCudaTensorBatchPad {
  GstAggregatorPad parent;
  std::vector<int> *roi; /* under the pad's object lock */
  CudaTensorBatchPadState *state;
};

G_DEFINE_TYPE(GstCudaTensorBatchPad, gst_cuda_tensor_batch_pad, GST_TYPE_AGGREGATOR_PAD);

CudaTensorBatchPadState &gst_cuda_tensor_batch_pad_state(GstCudaTensorBatchPad *pad) { return *pad->state; }

std::vector<int> gst_cuda_tensor_batch_pad_roi(GstCudaTensorBatchPad *pad) {
  GST_OBJECT_LOCK(pad);
  std::vector<int> roi = *pad->roi;
  GST_OBJECT_UNLOCK(pad);
  return roi;
}

gboolean gst_cuda_tensor_batch_pad_roi_equals(GstCudaTensorBatchPad *pad, const std::vector<int> &roi) {
  GST_OBJECT_LOCK(pad);
  const gboolean equal = *pad->roi == roi;
  GST_OBJECT_UNLOCK(pad);
  return equal;
}

static void gst_cuda_tensor_batch_pad_set_property(GObject *object, guint prop_id, const GValue *value,
                                                   GParamSpec *pspec) {
  GstCudaTensorBatchPad *pad = GST_CUDA_TENSOR_BATCH_PAD(object);
  switch (prop_id) {
    case PROP_ROI:
      /* Read by the streaming thread before each batch: takes effect at the next one. */
      GST_OBJECT_LOCK(pad);
      *pad->roi = gst_cuda_prep_vector_from_array<int>(value);
      GST_OBJECT_UNLOCK(pad);
      break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec); break;
  }
}

static void gst_cuda_tensor_batch_pad_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  GstCudaTensorBatchPad *pad = GST_CUDA_TENSOR_BATCH_PAD(object);
  switch (prop_id) {
    case PROP_ROI:
      GST_OBJECT_LOCK(pad);
      gst_cuda_prep_vector_to_array(*pad->roi, value);
      GST_OBJECT_UNLOCK(pad);
      break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec); break;
  }
}

static void gst_cuda_tensor_batch_pad_finalize(GObject *object) {
  GstCudaTensorBatchPad *pad = GST_CUDA_TENSOR_BATCH_PAD(object);
  delete pad->roi;
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
                                   "used); empty (default) = whole frame. Takes effect at the next batch"));
}

static void gst_cuda_tensor_batch_pad_init(GstCudaTensorBatchPad *pad) {
  pad->roi = new std::vector<int>();
  pad->state = new CudaTensorBatchPadState();
}
