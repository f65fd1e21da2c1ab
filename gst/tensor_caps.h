/* other/tensors caps in NNStreamer's convention (innermost dimension first). */
#pragma once

#include <gst/gst.h>

#include "tensorize.h"

#define GST_CUDA_PREP_TENSOR_CAPS_STR \
  "other/tensors, format = (string) static, num_tensors = (int) 1, " \
  "types = (string) { float32, float16 }, " \
  "framerate = (fraction) [ 0/1, MAX ]"

/* "W:H:3:1" for NCHW, "3:W:H:1" for NHWC. */
gchar *gst_cuda_prep_tensor_dimensions (int width, int height, cudaprep::Layout layout);
/* "W:H:3:B" for NCHW, "3:W:H:B" for NHWC: a batch of @batch tensors. */
gchar *gst_cuda_prep_batch_dimensions (int width, int height, cudaprep::Layout layout, int batch);
const gchar *gst_cuda_prep_tensor_type_name (cudaprep::DType dtype);
