#pragma once

#include "gstcudaprepbase.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_TEMPLATE_MATCH (gst_cuda_template_match_get_type())
G_DECLARE_FINAL_TYPE(GstCudaTemplateMatch, gst_cuda_template_match, GST, CUDA_TEMPLATE_MATCH, GstCudaPrepBase)

GST_ELEMENT_REGISTER_DECLARE(cudatemplatematch);

G_END_DECLS
