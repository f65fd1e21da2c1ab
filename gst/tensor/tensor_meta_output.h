/* cudatensorize output=video-meta: the frame passes through unchanged and the tensor rides on it
 * as a GstTensorMeta (gst-plugins-bad's analytics library, GStreamer >= 1.26), the way upstream's
 * inference and tensor-decoder elements keep the frame for overlay and encoding without a tee.
 *
 * The tensor is a GstTensor with id GST_CUDA_PREP_TENSOR_ID, row-major dims [1,C,H,W] (nchw) or
 * [1,H,W,C] (nhwc), C = channels (3, or 1 gray), float32, float16, uint8 or int8, its data a buffer from a pool made
 * per caps: CUDA memory on the GPU path, system memory on the CPU path (only the GstTensor record, which the analytics
 * API allocates, is made per frame). The transform meta is on the frame and on the
 * tensor's data buffer. Builds without the library refuse the mode at start. */
#pragma once

#include <gst/gst.h>

#include <string>

#include "cudaprep_device.h"
#include "tensorize.h"

/* The GstTensor id: names the transform that made it (the GstCudaPrepTransformMeta beside it
 * maps tensor pixels back to the frame). */
#define GST_CUDA_PREP_TENSOR_ID "cudaprep-tensorize"

/* cudatensorize's output property: the tensor as its own buffer, or on the frame. */
typedef enum {
  GST_CUDA_PREP_OUTPUT_TENSOR,
  GST_CUDA_PREP_OUTPUT_VIDEO_META,
} GstCudaPrepOutput;
GType gst_cuda_prep_output_get_type(void);

struct TensorShape;

/* The "tensors" field of the src caps (GStreamer >= 1.28 builds; NULL on others): a "tensorgroups"
 * structure whose field @group (the model-info's group-id, else GST_CUDA_PREP_TENSOR_ID) is a
 * unique list of one "tensor/strided" caps: tensor-id GST_CUDA_PREP_TENSOR_ID, dims as the
 * GstTensor's (row-major [1,C,H,W] or [1,H,W,C]), dims-order row-major, type the dtype's name. */
GstStructure *gst_cuda_prep_tensors_field(const TensorShape &shape, const std::string &group);

class TensorMetaOutput {
 public:
  TensorMetaOutput() = default;
  TensorMetaOutput(const TensorMetaOutput &) = delete;
  TensorMetaOutput &operator=(const TensorMetaOutput &) = delete;
  ~TensorMetaOutput() { reset(); }

  /* Whether this build can attach GstTensorMeta. */
  static gboolean supported();

  /* Per caps: a pool of tensors of @output's shape, in CUDA memory on @device with
   * @output_cuda, else in system memory (tensor_pool.h). FALSE, with @error set, on failure. */
  gboolean configure(CudaPrepDevice &device, gboolean output_cuda, const cudaprep::TensorOutputPlan &output,
                     std::string *error);
  void reset();

  /* A tensor buffer from the pool (no allocation once the pool is warm). */
  GstFlowReturn acquire(GstBuffer **tensor);
  /* Hands @tensor (transfer full; written, carrying its transform meta) to @video as an entry
   * of its GstTensorMeta, and copies the transform meta onto @video. FALSE, with @error set,
   * when the meta could not be made. */
  gboolean attach(GstBuffer *video, GstBuffer *tensor, std::string *error);

 private:
  GstBufferPool *pool_ = nullptr;
  gsize dims_[4]{};
  cudaprep::DType dtype_ = cudaprep::DType::Float32;
};
