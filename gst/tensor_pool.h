/* The output buffer pool of a tensor element: contiguous tensors (no row padding) in CUDA
 * memory of @context or in system memory. Shared by cudatensorize and cudatensorbatch. */
#pragma once

#include <gst/gst.h>

#include "cudaprep_device.h"

/* Answers an ALLOCATION query for @bytes-byte tensors of @outcaps: sets (or adds) a configured
 * pool as the query's first one, with at least 2 buffers. A CUDA pool is made when @output_cuda
 * and @context are set. Posts an error on @element and returns FALSE when the pool refuses the
 * configuration. Buffers of the pool may be larger than @bytes (CUDA pitch): trim them. */
gboolean gst_cuda_prep_tensor_pool_decide (GstElement * element, GstQuery * query,
    GstCudaContext * context, gboolean output_cuda, gsize bytes);
