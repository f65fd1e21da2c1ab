// One interface for the tensorize operation, CPU and CUDA alike: an element picks the
// implementation once (at start) and calls it per frame without asking which one it has.
#pragma once
#include <memory>

#include "tensorize_batch.h"

namespace cudaprep {

class Tensorizer {
 public:
  virtual ~Tensorizer() = default;
  // Where run() reads the frame and writes the tensor: device memory (CUDA) or host memory.
  virtual bool on_device() const = 0;
  // One tensor of `plan` from `src` into `dst` (tensor_bytes(plan) bytes, contiguous). The CUDA
  // implementation enqueues one kernel on its stream and returns without waiting; with `rows`
  // Keep it leaves out the rows that are all padding (tensorize.h: PaddingRows).
  virtual Status run(const TensorizePlan& plan, const ImageView& src, void* dst, PaddingRows rows) = 0;
  // Room for batches of up to `slots` slots (the CUDA slot table). run_batch() grows it on its
  // own when a batch is larger; calling reserve() when the batch size is known keeps that
  // allocation out of the streaming thread's first batch.
  virtual Status reserve(int slots) = 0;
  // All slots of `batch` into `dst` (batch_bytes() bytes, slot i at i * slot_bytes()), in one
  // pass; the CUDA implementation enqueues one upload and one kernel and returns without waiting.
  virtual Status run_batch(const TensorizeBatch& batch, void* dst, size_t dst_bytes) = 0;
};

std::unique_ptr<Tensorizer> make_tensorizer_cpu();
// `stream` is a cudaStream_t; the CUDA context must be current when run() is called.
std::unique_ptr<Tensorizer> make_tensorizer_cuda(void* stream);

}  // namespace cudaprep
