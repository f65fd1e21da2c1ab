/* Buffer pools for contiguous tensors (no row padding): CUDA memory on the element's context, or
 * system memory. Used for cudatensorize's output buffers and for the tensors it attaches to
 * video frames as GstTensorMeta. */
#pragma once

#include <gst/gst.h>

#include <string>

#include "cudaprep_device.h"

/* A configured (not yet active) pool of @bytes tensors: GstCudaMemory on @context, or system
 * memory without one. @caps go into the config of the system pool. @size: the buffer size the
 * pool settled on (CUDA may round it up; buffers are trimmed to the tensor when written).
 * NULL, with @error set, on failure. */
GstBufferPool *gst_cuda_prep_tensor_pool_new (GstCudaContext * context, GstCaps * caps,
    gsize bytes, guint min_buffers, guint * size, std::string * error);
