#include "tensor_caps.h"

gchar *
gst_cuda_prep_tensor_dimensions (int width, int height, cudaprep::Layout layout)
{
  if (layout == cudaprep::Layout::NCHW)
    return g_strdup_printf ("%d:%d:3:1", width, height);
  return g_strdup_printf ("3:%d:%d:1", width, height);
}

const gchar *
gst_cuda_prep_tensor_type_name (cudaprep::DType dtype)
{
  return dtype == cudaprep::DType::Float16 ? "float16" : "float32";
}
