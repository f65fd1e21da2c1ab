/* Writing one tensor (or batch) into an output buffer from wherever the tensorizer runs: in
 * place into CUDA memory, into pinned system memory by the kernel itself, or straight into host
 * memory on the CPU path, and how long the element then waits. Shared by cudatensorize and
 * cudatensorbatch. */
#pragma once

#include <gst/gst.h>

#include "cuda_device.h"
#include "cudaprep_device.h"
#include "pinned_pool.h"

#if CUDAPREP_HAVE_CUDA
#include <gst/cuda/gstcudamemory.h>
#endif

/* Maps @outbuf for writing where @write writes (device memory when @on_device), calls
 * @write (uint8_t *dst) -> cudaprep::Status, with dst the buffer's device address where the
 * tensor is made on the device for system memory (@outbuf must then come from the element's
 * pinned pool, pinned_pool.h). A system-memory tensor is then complete on return, waited for
 * as @download_wait (gpu-wait) says. A CUDA tensor is complete, or (1.24+) left on the
 * device's stream, which its memory carries (*left_on_stream), when @inputs_may_stay says that
 * the inputs need not be read by then: their producers order their reuse on that stream, or
 * the caller holds them until the GPU has read them. Context current on the GPU path. */
template <typename Write>
static inline cudaprep::Status
gst_cuda_prep_write_tensor (CudaPrepDevice & device, gboolean on_device, gboolean output_cuda,
    cudaprep::GpuWait download_wait, GstBuffer * outbuf, gboolean inputs_may_stay,
    gboolean * left_on_stream, Write && write)
{
  *left_on_stream = FALSE;
  const gboolean download = on_device && !output_cuda;
  GstMapFlags flags = GST_MAP_WRITE;
#if CUDAPREP_HAVE_CUDA
  if (on_device && !download)
    flags = (GstMapFlags) (GST_MAP_WRITE | GST_MAP_CUDA);
#endif
  GstMapInfo map;
  if (!gst_buffer_map (outbuf, &map, flags))
    return cudaprep::Status::error ("could not map the output buffer");
  /* A system-memory tensor of the GPU path is written by the kernel itself into the pinned
   * memory of the element's pool, across the bus: one launch, no copy after it. */
  uint8_t *dst = download ?
      static_cast < uint8_t * >(gst_cuda_prep_pinned_device_pointer (outbuf, device)) : map.data;
  cudaprep::Status st = dst ? write (dst) : cudaprep::Status::error ("the system-memory output "
      "buffer is not pinned memory of the element's CUDA context");
  if (st.ok () && download)
    st = device.wait_for_download (download_wait);
  else if (st.ok () && inputs_may_stay && device.orders (outbuf))
    *left_on_stream = TRUE;
  else if (st.ok ())
    st = device.sync ();        /* complete, and the GPU done with the inputs, before any leaves */
  gst_buffer_unmap (outbuf, &map);
  return st;
}
