/* A buffer pool of page-locked (pinned) host memory, for tensors the GPU path downloads into
 * system memory: the device-to-host copy then runs at DMA speed, straight into the buffer,
 * instead of through the driver's bounce buffer and a CPU copy of every byte. Buffers are
 * allocated when the pool fills, never per frame. */
#pragma once

#include <gst/gst.h>

#include "cudaprep_device.h"

/* A pool whose buffers are pinned in @device's context (kept alive while any buffer lives).
 * Configure it like any GstBufferPool. NULL without CUDA. */
GstBufferPool *gst_cuda_prep_pinned_pool_new(CudaPrepDevice &device);

/* The pinned allocation behind @buffer when its one memory is a whole block of a pool of
 * @device's context, else NULL (a buffer of another pool, a share, no CUDA). Looked up once a
 * frame; valid while @buffer holds its memory. */
struct PinnedBlock;
PinnedBlock *gst_cuda_prep_pinned_block_of(GstBuffer *buffer, CudaPrepDevice &device);

/* Where @device's kernels write @block's bytes straight into its page-locked memory. */
void *gst_cuda_prep_pinned_block_device_data(PinnedBlock *block);

/* What a pinned block still holds of the last tensor written into it, for the next writer to
 * skip: the key of its padding rows (tensorize.h, PaddingRows). 0: nothing known. Any write map
 * of the memory, by anyone (a downstream element writing in place), sets it back to 0: the
 * memory's own allocator sees every map.
 * take: returns the key and leaves 0, for a writer about to write the block; set: by that
 * writer once its kernel is done. */
guint64 gst_cuda_prep_pinned_block_take_padding_key(PinnedBlock *block);
void gst_cuda_prep_pinned_block_set_padding_key(PinnedBlock *block, guint64 key);

/* The padding key of a tensor whose rows outside [@active_y0, @active_y1) are padding, for an
 * output plan named by @output_id (gst_cuda_prep_new_padding_output_id, once per output plan:
 * the pad values, size, layout and dtype). Never 0. */
guint64 gst_cuda_prep_padding_key(guint32 output_id, int active_y0, int active_y1);
/* A number no other output plan of this process has had (wrapping after 2^32 - 1 of them). */
guint32 gst_cuda_prep_new_padding_output_id(void);
