/* TensorOutputTarget (tensor_output_target.h). */
#include "tensor_output_target.h"

#if CUDAPREP_HAVE_CUDA
#include <gst/cuda/gstcudamemory.h>
#endif

using cudaprep::PaddingRows;
using cudaprep::Status;

TensorOutputTarget::~TensorOutputTarget() { unmap(); }

void TensorOutputTarget::unmap() {
  if (mapped_) gst_buffer_unmap(outbuf_, &map_);
  mapped_ = FALSE;
}

Status TensorOutputTarget::begin(CudaPrepDevice& device, gboolean on_device, gboolean output_cuda, GstBuffer* outbuf,
                                 guint64 padding_key) {
  outbuf_ = outbuf;
  padding_key_ = padding_key;
  left_on_stream_ = FALSE;
  rows_ = PaddingRows::Write;
  if (on_device && !output_cuda) {
    /* Not mapped: a write map would forget the kept rows (pinned_pool.h), and the kernel
     * writes through the memory's device address. */
    block_ = gst_cuda_prep_pinned_block_of(outbuf, device);
    if (!block_)
      return Status::error(
          "the system-memory output buffer is not pinned memory of the "
          "element's CUDA context");
    data_ = static_cast<uint8_t*>(gst_cuda_prep_pinned_block_device_data(block_));
    /* (taken: what the buffer holds is unknown until the kernel is done) */
    const guint64 held = gst_cuda_prep_pinned_block_take_padding_key(block_);
    if (padding_key != 0 && held == padding_key) rows_ = PaddingRows::Keep;
    return Status();
  }
  GstMapFlags flags = GST_MAP_WRITE;
#if CUDAPREP_HAVE_CUDA
  if (on_device) flags = (GstMapFlags)(GST_MAP_WRITE | GST_MAP_CUDA);
#endif
  if (!gst_buffer_map(outbuf, &map_, flags)) return Status::error("could not map the output buffer");
  mapped_ = TRUE;
  data_ = map_.data;
  return Status();
}

Status TensorOutputTarget::finish(CudaPrepDevice& device, cudaprep::GpuWait download_wait, FrameLifetime& lifetime,
                                  Status written) {
  Status st = std::move(written);
  if (block_) {
    if (st.ok()) st = device.wait_for_download(download_wait);
    if (st.ok()) gst_cuda_prep_pinned_block_set_padding_key(block_, padding_key_);
  } else if (st.ok() && device.gpu() && lifetime.inputs_may_stay() && device.orders(outbuf_)) {
    left_on_stream_ = TRUE;
  } else if (st.ok() && device.gpu()) {
    st = device.sync(); /* complete, and the GPU done with the inputs, before any leaves */
  }
  unmap();
  if (st.ok()) st = lifetime.end_output(left_on_stream_, device.stream());
  return st;
}
