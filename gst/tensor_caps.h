/* other/tensors caps in NNStreamer's convention (innermost dimension first). */
#pragma once

#include <gst/gst.h>

#include "tensorize.h"

/* The element types the tensor elements make (cudaprep::dtype_name of each DType). */
#define GST_CUDA_PREP_TENSOR_TYPES "types = (string) { float32, float16, uint8, int8 }, "

#define GST_CUDA_PREP_TENSOR_CAPS_STR \
  "other/tensors, format = (string) static, num_tensors = (int) 1, " \
  GST_CUDA_PREP_TENSOR_TYPES \
  "framerate = (fraction) [ 0/1, MAX ]"

/* "W:H:C:B" for NCHW, "C:W:H:B" for NHWC (C = channels, 3 or 1 for gray; B = batch, 1 for a
 * single frame). */
gchar *gst_cuda_prep_tensor_dimensions (int width, int height, cudaprep::Layout layout, int batch = 1,
    int channels = 3);
/* NNStreamer's type name: cudaprep::dtype_name ("float32", "float16", "uint8", "int8"). */
const gchar *gst_cuda_prep_tensor_type_name (cudaprep::DType dtype);
