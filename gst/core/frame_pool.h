/* The buffer pool an element proposes upstream for its input frames. */
#pragma once

#include <gst/gst.h>

#include "cudaprep_device.h"

/* Answers an ALLOCATION query from upstream with a pool of the query's video caps: a CUDA pool
 * on @device's stream for CUDA caps on the GPU path (since 1.24 its memory carries the stream,
 * so upstream writes the frames in our stream's order and the element need not wait for them),
 * else a video pool; @min_buffers more than upstream needs (CUDA pool only). FALSE, with no
 * pool added, if the caps are not video, CUDA caps meet no CUDA context, or the pool refuses. An element that captures
 * CUDA graphs must capture them on a stream of its own: a producer enqueues on the proposed stream from its thread. */
gboolean gst_cuda_prep_propose_frame_pool(CudaPrepDevice& device, GstQuery* query, guint min_buffers);
