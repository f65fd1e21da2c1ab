/* The sink pads of cudatensorbatch: one video stream each, with its own caps (size, format),
 * its own input mapping and GPU staging, and its own "roi" property. */
#pragma once

#include <gst/base/gstaggregator.h>
#include <gst/gst.h>

#include <vector>

#include "tensorize_batch.h"
#include "video_input.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_TENSOR_BATCH_PAD (gst_cuda_tensor_batch_pad_get_type())
G_DECLARE_FINAL_TYPE(GstCudaTensorBatchPad, gst_cuda_tensor_batch_pad, GST, CUDA_TENSOR_BATCH_PAD, GstAggregatorPad)

G_END_DECLS

/* Streaming state of one pad, touched only from the aggregator's streaming thread (caps
 * events, aggregate) and in stop. */
struct CudaTensorBatchPadState {
  CudaPrepVideoInput input;
  gboolean have_caps = FALSE;
  /* The slot plan of this pad's frames, valid while built_generation equals the element's
   * output generation and built_roi the roi property. */
  cudaprep::SlotPlan plan{};
  gboolean have_plan = FALSE;
  guint64 built_generation = 0;
  std::vector<int> built_roi;
  /* The frame mapped for the batch being made. */
  GstVideoFrame frame{};
  gboolean mapped = FALSE;
  GstBuffer *buffer = NULL; /* popped for the batch being made */
};

CudaTensorBatchPadState &gst_cuda_tensor_batch_pad_state(GstCudaTensorBatchPad *pad);
/* The roi property now (copied under the pad's object lock). */
std::vector<int> gst_cuda_tensor_batch_pad_roi(GstCudaTensorBatchPad *pad);
/* Whether the roi property equals @roi (compared under the lock, nothing copied). */
gboolean gst_cuda_tensor_batch_pad_roi_equals(GstCudaTensorBatchPad *pad, const std::vector<int> &roi);
