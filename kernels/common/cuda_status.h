// Internal to the .cu files of kernels/: a CUDA runtime result as a Status, the one wording of a
// CUDA error across the project ("what: cudaErrorName (description)").
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "status.h"

namespace cudaprep {

inline Status cuda_status(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status();
  return Status::error(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

}  // namespace cudaprep
