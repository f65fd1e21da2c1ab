/* The output buffer pool of a tensor element: contiguous tensors (no row padding). Shared by
 * cudatensorize and cudatensorbatch. */
#pragma once

#include <gst/gst.h>

#include "cudaprep_device.h"

/* Answers an ALLOCATION query for @bytes-byte tensors of @outcaps: sets (or adds) a configured
 * pool as the query's first one, with at least 2 buffers. With @output_cuda: CUDA memory in
 * @device's context, the pool on @device's stream (GStreamer 1.24+), so buffers stay ordered on
 * it. Otherwise system memory: pinned when @device is on the GPU (tensors downloaded into it go
 * at DMA speed), pageable on the CPU path. Posts an error on @element and returns FALSE when the
 * pool refuses the configuration. Buffers may be larger than @bytes (CUDA pitch): trim them. */
gboolean gst_cuda_prep_tensor_pool_decide (GstElement * element, GstQuery * query,
    CudaPrepDevice & device, gboolean output_cuda, gsize bytes);
