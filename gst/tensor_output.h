/* Writing one tensor (or batch) into an output buffer from wherever the tensorizer runs: in
 * place into CUDA memory, into pinned system memory by the kernel itself, or straight into host
 * memory on the CPU path, and how long the element then waits. Shared by cudatensorize and
 * cudatensorbatch. */
#pragma once

#include <gst/gst.h>

#include "cuda_device.h"
#include "cudaprep_device.h"
#include "pinned_pool.h"
#include "tensorize.h"

#if CUDAPREP_HAVE_CUDA
#include <gst/cuda/gstcudamemory.h>
#endif

/* Writes one tensor (or batch) into @outbuf: calls @write (uint8_t *dst, cudaprep::PaddingRows)
 * -> cudaprep::Status, then @while_gpu_works () (host work that does not need the tensor done:
 * its metas), then waits as the memory needs.
 *  - A system-memory tensor of the GPU path (@on_device, not @output_cuda) is written by the
 *    kernel itself into the pinned memory of the element's pool (@outbuf must come from it,
 *    pinned_pool.h), across the bus: one launch and no copy. dst is the buffer's device address,
 *    and the tensor is complete on return, waited for as @download_wait (gpu-wait) says. Where
 *    @padding_key is not 0 and the buffer still holds the padding rows of that key (the last
 *    tensor written into it had the same key, and nothing mapped it for writing since), @write
 *    is told PaddingRows::Keep and need not send those rows again.
 *  - A CUDA tensor is complete on return, or (1.24+) left on the device's stream, which its
 *    memory carries (*left_on_stream), when @inputs_may_stay says that the inputs need not be
 *    read by then: their producers order their reuse on that stream, or the caller holds them
 *    until the GPU has read them.
 *  - On the CPU path @write writes host memory.
 * Context current on the GPU path. */
template <typename Write, typename WhileGpuWorks>
static inline cudaprep::Status
gst_cuda_prep_write_tensor (CudaPrepDevice & device, gboolean on_device, gboolean output_cuda,
    cudaprep::GpuWait download_wait, guint64 padding_key, GstBuffer * outbuf,
    gboolean inputs_may_stay, gboolean * left_on_stream, Write && write,
    WhileGpuWorks && while_gpu_works)
{
  *left_on_stream = FALSE;
  if (on_device && !output_cuda) {
    /* Not mapped: a write map would forget the kept rows (pinned_pool.h), and the kernel
     * writes through the memory's device address. */
    PinnedBlock *block = gst_cuda_prep_pinned_block_of (outbuf, device);
    if (!block)
      return cudaprep::Status::error ("the system-memory output buffer is not pinned memory of "
          "the element's CUDA context");
    void *dst = gst_cuda_prep_pinned_block_device_data (block);
    /* (taken: what the buffer holds is unknown until the kernel is done) */
    const guint64 held = gst_cuda_prep_pinned_block_take_padding_key (block);
    const cudaprep::PaddingRows rows = padding_key != 0 && held == padding_key ?
        cudaprep::PaddingRows::Keep : cudaprep::PaddingRows::Write;
    cudaprep::Status st = write (static_cast < uint8_t * >(dst), rows);
    if (st.ok ()) {
      while_gpu_works ();
      st = device.wait_for_download (download_wait);
    }
    if (st.ok ())
      gst_cuda_prep_pinned_block_set_padding_key (block, padding_key);
    return st;
  }
  GstMapFlags flags = GST_MAP_WRITE;
#if CUDAPREP_HAVE_CUDA
  if (on_device)
    flags = (GstMapFlags) (GST_MAP_WRITE | GST_MAP_CUDA);
#endif
  GstMapInfo map;
  if (!gst_buffer_map (outbuf, &map, flags))
    return cudaprep::Status::error ("could not map the output buffer");
  cudaprep::Status st = write (map.data, cudaprep::PaddingRows::Write);
  if (st.ok ())
    while_gpu_works ();
  if (st.ok () && inputs_may_stay && device.orders (outbuf))
    *left_on_stream = TRUE;
  else if (st.ok ())
    st = device.sync ();        /* complete, and the GPU done with the inputs, before any leaves */
  gst_buffer_unmap (outbuf, &map);
  return st;
}
