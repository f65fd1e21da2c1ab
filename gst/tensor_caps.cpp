#include "tensor_caps.h"

gchar *
gst_cuda_prep_tensor_dimensions (int width, int height, cudaprep::Layout layout, int batch)
{
  if (layout == cudaprep::Layout::NCHW)
    return g_strdup_printf ("%d:%d:3:%d", width, height, batch);
  return g_strdup_printf ("3:%d:%d:%d", width, height, batch);
}

const gchar *
gst_cuda_prep_tensor_type_name (cudaprep::DType dtype)
{
  return dtype == cudaprep::DType::Float16 ? "float16" : "float32";
}
