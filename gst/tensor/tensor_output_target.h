/* The output of cudatensorize and cudatensorbatch: where one tensor (or batch) is written and
 * how it is completed. The element drives it top to bottom, with no callback:
 *
 *   target.begin (device, ..., outbuf, padding_key);     maps, or finds the pinned block
 *   kernel (target.data (), target.rows ());              the element's one converter call
 *   attach the metas                                      host work while the GPU works
 *   target.finish (device, gpu_wait, lifetime, status);   complete, or left on the stream; unmaps
 *
 * Where the tensor is:
 *  - A system-memory tensor of the GPU path is written by the kernel itself into the pinned
 *    memory of the element's pool (@outbuf must come from it, pinned_pool.h), across the bus:
 *    one launch and no copy. data() is the buffer's device address, and finish() waits for it as
 *    gpu-wait says. Where @padding_key is not 0 and the buffer still holds the padding rows of
 *    that key (the last tensor written into it had the same key, and nothing mapped it for
 *    writing since), rows() is PaddingRows::Keep: those rows need not be sent again.
 *  - A CUDA tensor is complete after finish(), or (1.24+) left on the element's stream, which
 *    its memory carries, where the frame-lifetime policy allows (frame_lifetime.h).
 *  - On the CPU path data() is host memory.
 * Context current on the GPU path. */
#pragma once

#include <gst/gst.h>

#include "cudaprep_device.h"
#include "frame_lifetime.h"
#include "pinned_pool.h"
#include "tensorize.h"

class TensorOutputTarget {
 public:
  TensorOutputTarget() = default;
  ~TensorOutputTarget();
  TensorOutputTarget(const TensorOutputTarget &) = delete;
  TensorOutputTarget &operator=(const TensorOutputTarget &) = delete;

  /* Makes @outbuf writable where the tensor goes: @on_device, the GPU path; @output_cuda,
   * CUDA memory (else system memory). */
  cudaprep::Status begin(CudaPrepDevice &device, gboolean on_device, gboolean output_cuda, GstBuffer *outbuf,
                         guint64 padding_key);
  uint8_t *data() const { return data_; }
  cudaprep::PaddingRows rows() const { return rows_; }

  /* Completes the tensor after its writing ended with @written: a system-memory tensor of the
   * GPU path waited for as @download_wait says; a CUDA tensor left on the stream where
   * @lifetime's inputs may stay and its memory carries the stream, else synchronised; then
   * @lifetime.end_output(). Unmaps. Returns the first error (@written's, if any). */
  cudaprep::Status finish(CudaPrepDevice &device, cudaprep::GpuWait download_wait, FrameLifetime &lifetime,
                          cudaprep::Status written);
  /* After finish(): whether the tensor was left on the stream (not complete yet). */
  gboolean left_on_stream() const { return left_on_stream_; }

 private:
  void unmap();

  GstBuffer *outbuf_ = nullptr;
  GstMapInfo map_{};
  gboolean mapped_ = FALSE;
  PinnedBlock *block_ = nullptr; /* system-memory tensor of the GPU path */
  guint64 padding_key_ = 0;
  uint8_t *data_ = nullptr;
  cudaprep::PaddingRows rows_ = cudaprep::PaddingRows::Write;
  gboolean left_on_stream_ = FALSE;
};
