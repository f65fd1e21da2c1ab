#pragma once

#include <gst/base/gstaggregator.h>
#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_CUDA_TENSOR_BATCH (gst_cuda_tensor_batch_get_type())
G_DECLARE_FINAL_TYPE(GstCudaTensorBatch, gst_cuda_tensor_batch, GST, CUDA_TENSOR_BATCH, GstAggregator)

GST_ELEMENT_REGISTER_DECLARE(cudatensorbatch);

G_END_DECLS
