/* A buffer pool of page-locked (pinned) host memory, for tensors the GPU path downloads into
 * system memory: the device-to-host copy then runs at DMA speed, straight into the buffer,
 * instead of through the driver's bounce buffer and a CPU copy of every byte. Buffers are
 * allocated when the pool fills, never per frame. */
#pragma once

#include <gst/gst.h>

#include "cudaprep_device.h"

/* A pool whose buffers are pinned in @device's context (kept alive while any buffer lives).
 * Configure it like any GstBufferPool. NULL without CUDA. */
GstBufferPool *gst_cuda_prep_pinned_pool_new (CudaPrepDevice & device);

/* Where @device's kernels can write @buffer's bytes straight into its page-locked memory: the
 * device address of its one memory when that is a block of a pool of @device's context, else
 * NULL. */
void *gst_cuda_prep_pinned_device_pointer (GstBuffer * buffer, CudaPrepDevice & device);
