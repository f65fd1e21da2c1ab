/* Writing one tensor (or batch) into an output buffer from wherever the tensorizer runs: in
 * place into CUDA memory, through device scratch and one download into system memory, or
 * straight into host memory on the CPU path, and how long the element then waits. Shared by
 * cudatensorize and cudatensorbatch. */
#pragma once

#include <gst/gst.h>

#include "cuda_device.h"
#include "cudaprep_device.h"

#if CUDAPREP_HAVE_CUDA
#include <gst/cuda/gstcudamemory.h>
#endif

/* Maps @outbuf for writing where @write writes (device memory when @on_device), calls
 * @write (uint8_t *dst) -> cudaprep::Status, and downloads from @scratch when the output is in
 * system memory but the tensor was made on the device. Then a system-memory tensor is complete
 * on return (a sleeping wait: no core spins through the download). A CUDA tensor is complete,
 * or (1.24+) left on the device's stream, which its memory carries (*left_on_stream), when
 * @inputs_may_stay says that the inputs need not be read by then: their producers order their
 * reuse on that stream, or the caller holds them until the GPU has read them. Context current
 * on the GPU path. */
template <typename Write>
static inline cudaprep::Status
gst_cuda_prep_write_tensor (CudaPrepDevice & device, gboolean on_device, gboolean output_cuda,
    const cudaprep::cuda::DeviceBuffer & scratch, GstBuffer * outbuf, gsize bytes,
    gboolean inputs_may_stay, gboolean * left_on_stream, Write && write)
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
  cudaprep::Status st = write (download ? scratch.data () : map.data);
  if (st.ok () && download)
    st = cudaprep::cuda::copy_2d_async (map.data, bytes, scratch.data (), bytes, bytes, 1,
        cudaprep::cuda::CopyKind::DeviceToHost, device.stream ());
  if (st.ok () && download)
    st = device.sync_sleeping ();
  else if (st.ok () && inputs_may_stay && device.orders (outbuf))
    *left_on_stream = TRUE;
  else if (st.ok ())
    st = device.sync ();        /* complete, and the GPU done with the inputs, before any leaves */
  gst_buffer_unmap (outbuf, &map);
  return st;
}
