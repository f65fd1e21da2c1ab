/* Pools of contiguous tensors: CUDA, pinned or pageable system memory. */
#include "tensor_pool.h"

#include <gst/video/video.h>

#include "pinned_pool.h"

#if CUDAPREP_HAVE_CUDA
#include <gst/cuda/gstcudabufferpool.h>
#endif

GstBufferPool *gst_cuda_prep_tensor_pool_new(CudaPrepDevice &device, gboolean output_cuda, GstCaps *caps, gsize bytes,
                                             guint min_buffers, guint *size, std::string *error) {
  GstBufferPool *pool = NULL;
  GstCaps *pool_caps = NULL;
#if CUDAPREP_HAVE_CUDA
  if (output_cuda && device.context()) {
    /* GstCudaBufferPool sizes its memory from video caps: describe the contiguous tensor as
     * one RGBA row, so the allocation has no row padding. */
    GstVideoInfo vinfo;
    gst_video_info_set_format(&vinfo, GST_VIDEO_FORMAT_RGBA, (guint)((bytes + 3) / 4), 1);
    pool = gst_cuda_buffer_pool_new(device.context());
    pool_caps = gst_video_info_to_caps(&vinfo);
    *size = (guint)GST_VIDEO_INFO_SIZE(&vinfo);
  }
#endif
  if (!pool) {
    pool = gst_cuda_prep_pinned_pool_new(device); /* NULL on the CPU path */
    if (!pool) pool = gst_buffer_pool_new();
    pool_caps = caps ? gst_caps_ref(caps) : NULL;
    *size = (guint)bytes;
  }

  GstStructure *config = gst_buffer_pool_get_config(pool);
  gst_buffer_pool_config_set_params(config, pool_caps, *size, min_buffers, 0);
  if (pool_caps) gst_caps_unref(pool_caps);
#if CUDAPREP_HAVE_GST_CUDA_STREAM
  if (output_cuda && device.cuda_stream()) gst_buffer_pool_config_set_cuda_stream(config, device.cuda_stream());
#endif
  if (!gst_buffer_pool_set_config(pool, config)) {
    *error = std::to_string(bytes) + " bytes per tensor, " + (output_cuda ? "CUDA" : "system") + " memory";
    gst_object_unref(pool);
    return NULL;
  }
  /* The pool may round the size up (CUDA pitch). */
  config = gst_buffer_pool_get_config(pool);
  gst_buffer_pool_config_get_params(config, NULL, size, NULL, NULL);
  gst_structure_free(config);
  return pool;
}

gboolean gst_cuda_prep_tensor_pool_decide(GstElement *element, GstQuery *query, CudaPrepDevice &device,
                                          gboolean output_cuda, gsize bytes) {
  GstCaps *outcaps = NULL;
  gst_query_parse_allocation(query, &outcaps, NULL);
  if (!outcaps) return FALSE;
  guint size = 0;
  std::string error;
  GstBufferPool *pool = gst_cuda_prep_tensor_pool_new(device, output_cuda, outcaps, bytes, 2, &size, &error);
  if (!pool) {
    GST_ELEMENT_ERROR(element, RESOURCE, SETTINGS, ("Could not configure the output buffer pool"),
                      ("%s", error.c_str()));
    return FALSE;
  }
  if (gst_query_get_n_allocation_pools(query) > 0)
    gst_query_set_nth_allocation_pool(query, 0, pool, size, 2, 0);
  else
    gst_query_add_allocation_pool(query, pool, size, 2, 0);
  gst_object_unref(pool);
  return TRUE;
}
