// One interface for the tensorize operation, CPU and CUDA alike: an element picks the
// implementation once (at start) and calls it per frame without asking which one it has.
#pragma once
#include <memory>

#include "tensorize.h"

namespace cudaprep {

class Tensorizer {
 public:
  virtual ~Tensorizer() = default;
  // Where run() reads the frame and writes the tensor: device memory (CUDA) or host memory.
  virtual bool on_device() const = 0;
  // One tensor of `plan` from `src` into `dst` (tensor_bytes(plan) bytes, contiguous). The CUDA
  // implementation enqueues one kernel on its stream and returns without waiting.
  virtual Status run(const TensorizePlan& plan, const ImageView& src, void* dst) = 0;
};

std::unique_ptr<Tensorizer> make_tensorizer_cpu();
// `stream` is a cudaStream_t; the CUDA context must be current when run() is called.
std::unique_ptr<Tensorizer> make_tensorizer_cuda(void* stream);

}  // namespace cudaprep
