#pragma once

#include "gstcudaprepbase.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_TENSORIZE (gst_cuda_tensorize_get_type())
G_DECLARE_FINAL_TYPE(GstCudaTensorize, gst_cuda_tensorize, GST, CUDA_TENSORIZE, GstCudaPrepBase)

GST_ELEMENT_REGISTER_DECLARE(cudatensorize);

G_END_DECLS
