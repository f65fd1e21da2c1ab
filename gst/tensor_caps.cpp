#include "tensor_caps.h"

gchar *
gst_cuda_prep_tensor_dimensions (int width, int height, cudaprep::Layout layout, int batch,
    int channels)
{
  if (layout == cudaprep::Layout::NCHW)
    return g_strdup_printf ("%d:%d:%d:%d", width, height, channels, batch);
  return g_strdup_printf ("%d:%d:%d:%d", channels, width, height, batch);
}

const gchar *
gst_cuda_prep_tensor_type_name (cudaprep::DType dtype)
{
  return cudaprep::dtype_name (dtype);
}
