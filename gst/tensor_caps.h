/* other/tensors caps in NNStreamer's convention (innermost dimension first). */
#pragma once

#include <gst/gst.h>

#include "tensorize.h"

#define GST_CUDA_PREP_TENSOR_CAPS_STR \
  "other/tensors, format = (string) static, num_tensors = (int) 1, " \
  "types = (string) { float32, float16 }, " \
  "framerate = (fraction) [ 0/1, MAX ]"

/* "W:H:3:B" for NCHW, "3:W:H:B" for NHWC (B = batch, 1 for a single frame). */
gchar *gst_cuda_prep_tensor_dimensions (int width, int height, cudaprep::Layout layout, int batch = 1);
const gchar *gst_cuda_prep_tensor_type_name (cudaprep::DType dtype);
