#include "enum_types.h"
#include "tensor_meta_output.h"

#include "config.h"
#include "gstcudaprepmeta.h"
#include "tensor_caps.h"
#include "tensor_pool.h"
#include "tensorize_batch.h"
#if CUDAPREP_HAVE_TENSOR_META
#include <gst/analytics/analytics.h>
#endif

using namespace cudaprep;

GType gst_cuda_prep_output_get_type(void) {
  static GType type = 0;
  static const GEnumValue values[] = {
      {GST_CUDA_PREP_OUTPUT_TENSOR, "The tensor as its own buffer (other/tensors caps)", "tensor"},
      {GST_CUDA_PREP_OUTPUT_VIDEO_META,
       "The frame passes through with the tensor on it as a "
       "GstTensorMeta (GStreamer >= 1.26)",
       "video-meta"},
      {0, NULL, NULL}};
  return gst_cuda_prep_register_enum(&type, "GstCudaTensorizeOutput", values);
}

gboolean TensorMetaOutput::supported() { return CUDAPREP_HAVE_TENSOR_META; }

gboolean TensorMetaOutput::configure(CudaPrepDevice &device, gboolean output_cuda, const TensorOutputPlan &output,
                                     std::string *error) {
  reset();
  const gsize h = output.dst_height, w = output.dst_width, c = output.channels;
  const gsize nchw[4] = {1, c, h, w}, nhwc[4] = {1, h, w, c};
  for (int i = 0; i < 4; i++) dims_[i] = output.layout == Layout::NCHW ? nchw[i] : nhwc[i];
  dtype_ = output.dtype;
  guint size;
  /* No upper bound: downstream may hold many frames, each keeping its tensor. */
  pool_ = gst_cuda_prep_tensor_pool_new(device, output_cuda, NULL, slot_bytes(output), 2, &size, error);
  if (!pool_) return FALSE;
  if (!gst_buffer_pool_set_active(pool_, TRUE)) {
    *error = "could not activate the tensor pool";
    reset();
    return FALSE;
  }
  return TRUE;
}

void TensorMetaOutput::reset() {
  if (!pool_) return;
  /* Tensors still on frames downstream are freed when those frames go. */
  gst_buffer_pool_set_active(pool_, FALSE);
  gst_object_unref(pool_);
  pool_ = nullptr;
}

GstFlowReturn TensorMetaOutput::acquire(GstBuffer **tensor) {
  if (!pool_) return GST_FLOW_NOT_NEGOTIATED;
  return gst_buffer_pool_acquire_buffer(pool_, tensor, NULL);
}

/* The transform meta of @from, copied onto @to through the meta's own transform function. */
static gboolean copy_transform_meta(GstBuffer *to, GstBuffer *from) {
  GstCustomMeta *meta = gst_buffer_get_custom_meta(from, GST_CUDA_PREP_TRANSFORM_META_NAME);
  if (!meta) return FALSE;
  GstMetaTransformCopy copy = {FALSE, 0, (gsize)-1};
  return ((GstMeta *)meta)->info->transform_func(to, (GstMeta *)meta, from, _gst_meta_transform_copy, &copy);
}

#if CUDAPREP_HAVE_TENSOR_META
/* GStreamer's tensor type of each row of kDTypes, in DType order: a row missing here does not
 * compile. */
static constexpr GstTensorDataType kTensorDataTypes[] = {
    GST_TENSOR_DATA_TYPE_FLOAT32,
    GST_TENSOR_DATA_TYPE_FLOAT16,
    GST_TENSOR_DATA_TYPE_UINT8,
    GST_TENSOR_DATA_TYPE_INT8,
};
static_assert(G_N_ELEMENTS(kTensorDataTypes) == cudaprep::kDTypeCount,
              "every dtype of kDTypes needs its GstTensorDataType");

static GstTensorDataType tensor_data_type(DType dtype) { return kTensorDataTypes[(int)dtype]; }
#endif

GstStructure *gst_cuda_prep_tensors_field(const TensorShape &shape, const std::string &group) {
#if CUDAPREP_HAVE_TENSOR_CAPS
  const int nchw[4] = {1, shape.channels, shape.height, shape.width};
  const int nhwc[4] = {1, shape.height, shape.width, shape.channels};
  GValue dims = G_VALUE_INIT, v = G_VALUE_INIT;
  gst_value_array_init(&dims, 4);
  g_value_init(&v, G_TYPE_INT);
  for (int i = 0; i < 4; i++) {
    g_value_set_int(&v, shape.layout == Layout::NCHW ? nchw[i] : nhwc[i]);
    gst_value_array_append_value(&dims, &v);
  }
  g_value_unset(&v);
  GstStructure *tensor =
      gst_structure_new("tensor/strided", "tensor-id", G_TYPE_STRING, GST_CUDA_PREP_TENSOR_ID, "dims-order",
                        G_TYPE_STRING, "row-major", "type", G_TYPE_STRING, dtype_name(shape.dtype), NULL);
  gst_structure_take_value(tensor, "dims", &dims);
  GstCaps *caps = gst_caps_new_full(tensor, NULL);
  GValue list = G_VALUE_INIT, item = G_VALUE_INIT;
  g_value_init(&list, GST_TYPE_UNIQUE_LIST);
  g_value_init(&item, GST_TYPE_CAPS);
  gst_value_set_caps(&item, caps);
  gst_caps_unref(caps);
  gst_value_unique_list_append_and_take_value(&list, &item);
  GstStructure *groups = gst_structure_new_empty("tensorgroups");
  gst_structure_take_value(groups, group.empty() ? GST_CUDA_PREP_TENSOR_ID : group.c_str(), &list);
  return groups;
#else
  (void)shape;
  (void)group;
  return NULL;
#endif
}

gboolean TensorMetaOutput::attach(GstBuffer *video, GstBuffer *tensor, std::string *error) {
  if (!copy_transform_meta(video, tensor)) {
    gst_buffer_unref(tensor);
    *error = "the tensor carries no transform meta";
    return FALSE;
  }
#if CUDAPREP_HAVE_TENSOR_META
  static const GQuark id = g_quark_from_static_string(GST_CUDA_PREP_TENSOR_ID);
  gsize dims[4] = {dims_[0], dims_[1], dims_[2], dims_[3]};
  GstTensor *t = gst_tensor_new_simple(id, tensor_data_type(dtype_), tensor, GST_TENSOR_DIM_ORDER_ROW_MAJOR, 4, dims);
  if (!t) {
    *error = "gst_tensor_new_simple refused the tensor (size does not match its dims)";
    return FALSE;
  }
  /* Upstream tensors already on the frame stay; ours is added after them. */
  GstTensorMeta *meta = gst_buffer_get_tensor_meta(video);
  if (!meta) meta = gst_buffer_add_tensor_meta(video);
  GstTensor **tensors = g_new(GstTensor *, meta->num_tensors + 1);
  for (gsize i = 0; i < meta->num_tensors; i++) tensors[i] = gst_tensor_copy(meta->tensors[i]);
  tensors[meta->num_tensors] = t;
  gst_tensor_meta_set(meta, (guint)meta->num_tensors + 1, tensors);
  return TRUE;
#else
  gst_buffer_unref(tensor);
  *error = "this build has no GstTensorMeta (GStreamer < 1.26)";
  return FALSE;
#endif
}
