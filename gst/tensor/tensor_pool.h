/* Buffer pools of contiguous tensors (no row padding): the output pool of a tensor element
 * (cudatensorize, cudatensorbatch) and the pool of the tensors cudatensorize attaches to frames
 * as GstTensorMeta (tensor_meta_output.h). */
#pragma once

#include <gst/gst.h>

#include <string>

#include "cudaprep_device.h"

/* A configured (not yet active) pool of @bytes-byte tensors, at least @min_buffers of them. With
 * @output_cuda: CUDA memory in @device's context, the pool on @device's stream (GStreamer 1.24+),
 * so buffers stay ordered on it. Otherwise system memory: pinned when @device is on the GPU
 * (tensors downloaded into it go at DMA speed), pageable on the CPU path; @caps (may be NULL) go
 * into its config. *size: the buffer size the pool settled on (CUDA may round it up: trim
 * buffers to the tensor). NULL, with @error set, when the pool refuses the configuration. */
GstBufferPool *gst_cuda_prep_tensor_pool_new(CudaPrepDevice &device, gboolean output_cuda, GstCaps *caps, gsize bytes,
                                             guint min_buffers, guint *size, std::string *error);

/* Answers an ALLOCATION query for @bytes-byte tensors of its caps: sets (or adds) a pool from
 * gst_cuda_prep_tensor_pool_new() as the query's first one, with at least 2 buffers. Posts an
 * error on @element and returns FALSE when the pool refuses the configuration. */
gboolean gst_cuda_prep_tensor_pool_decide(GstElement *element, GstQuery *query, CudaPrepDevice &device,
                                          gboolean output_cuda, gsize bytes);
