/* The buffer pool an element proposes upstream for its input frames. */
#include "frame_pool.h"

#include <gst/video/video.h>

#include "config.h"
#include "cuda_element_core.h" /* gst_cuda_prep_caps_has_cuda_feature */
#if CUDAPREP_HAVE_CUDA
#include <gst/cuda/gstcudabufferpool.h>
#endif

gboolean gst_cuda_prep_propose_frame_pool(CudaPrepDevice &device, GstQuery *query, guint min_buffers) {
  GstCaps *caps = NULL;
  GstVideoInfo info;
  gst_query_parse_allocation(query, &caps, NULL);
  if (!caps || !gst_video_info_from_caps(&info, caps)) return FALSE;

  /* CUDA caps get a CUDA pool or none: a system-memory pool would not hold what they say. */
  const gboolean cuda_pool = gst_cuda_prep_caps_has_cuda_feature(caps, 0);
  GstBufferPool *pool = NULL;
#if CUDAPREP_HAVE_CUDA
  if (cuda_pool && device.context()) pool = gst_cuda_buffer_pool_new(device.context());
#endif
  if (cuda_pool && !pool) return FALSE;
  if (!pool) pool = gst_video_buffer_pool_new();
  GstStructure *config = gst_buffer_pool_get_config(pool);
#if CUDAPREP_HAVE_GST_CUDA_STREAM
  if (cuda_pool && device.cuda_stream()) gst_buffer_pool_config_set_cuda_stream(config, device.cuda_stream());
#endif
  gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  gst_buffer_pool_config_set_params(config, caps, (guint)GST_VIDEO_INFO_SIZE(&info), 0, 0);
  if (!gst_buffer_pool_set_config(pool, config)) {
    gst_object_unref(pool);
    return FALSE;
  }
  /* A CUDA pool may have picked a pitch: report the size it settled on. */
  config = gst_buffer_pool_get_config(pool);
  guint size;
  gst_buffer_pool_config_get_params(config, NULL, &size, NULL, NULL);
  gst_structure_free(config);
  gst_query_add_allocation_pool(query, pool, size, cuda_pool ? min_buffers : 0, 0);
  gst_object_unref(pool);
  return TRUE;
}
