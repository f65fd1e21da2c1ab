#include "tensor_pool.h"

#include <gst/video/video.h>

#if CUDAPREP_HAVE_CUDA
#include <gst/cuda/gstcudabufferpool.h>
#endif

GstBufferPool *
gst_cuda_prep_tensor_pool_new (GstCudaContext * context, GstCaps * caps, gsize bytes,
    guint min_buffers, guint * size, std::string * error)
{
  GstBufferPool *pool = NULL;
  GstCaps *pool_caps = NULL;
#if CUDAPREP_HAVE_CUDA
  if (context) {
    /* GstCudaBufferPool sizes its memory from video caps: describe the contiguous tensor as
     * one RGBA row, so the allocation has no row padding. */
    GstVideoInfo vinfo;
    gst_video_info_set_format (&vinfo, GST_VIDEO_FORMAT_RGBA, (guint) ((bytes + 3) / 4), 1);
    pool = gst_cuda_buffer_pool_new (context);
    pool_caps = gst_video_info_to_caps (&vinfo);
    *size = (guint) GST_VIDEO_INFO_SIZE (&vinfo);
  }
#endif
  if (!pool) {
    pool = gst_buffer_pool_new ();
    pool_caps = caps ? gst_caps_ref (caps) : NULL;
    *size = (guint) bytes;
  }

  GstStructure *config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, pool_caps, *size, min_buffers, 0);
  if (pool_caps)
    gst_caps_unref (pool_caps);
  if (!gst_buffer_pool_set_config (pool, config)) {
    *error = "could not configure a pool of " + std::to_string (bytes) + "-byte tensors in " +
        (context ? "CUDA" : "system") + " memory";
    gst_object_unref (pool);
    return NULL;
  }
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_get_params (config, NULL, size, NULL, NULL);
  gst_structure_free (config);
  return pool;
}
