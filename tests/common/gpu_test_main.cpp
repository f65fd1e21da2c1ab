// main() of every GPU test binary: exit 77 (Meson's "skipped") when there is no usable GPU.
#include <gtest/gtest.h>

#include <cstdio>

#include "cuda_device.h"

int main(int argc, char** argv) {
  if (!cudaprep::cuda::built_with_cuda() || cudaprep::cuda::device_count() == 0) {
    std::printf("no CUDA device: skipping GPU tests\n");
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
