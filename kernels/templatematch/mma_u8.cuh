// The one tensor-core product both template kernels issue: D += A * B with unsigned bytes,
// m16n8k32, 32-bit integer accumulators (exact: the sums of a 256 x 256 template fit 32 bits),
// and the ldmatrix load both take A's fragments with.
#pragma once
#include <cstdint>

namespace cudaprep {
namespace {

__device__ __forceinline__ void mma_u8(uint32_t (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

// Four 8 x 8 matrices of 16-bit elements from shared memory: lane l gives the address of row
// l % 8 of matrix l / 8; register i of lane (g, t) is elements 2 t, 2 t + 1 of row g of matrix i.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&a)[4], uint32_t addr) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
               : "r"(addr));
#else
  a[0] = a[1] = a[2] = a[3] = addr * 0u;  // (the kernels that call it run from sm_80 on)
#endif
}

}  // namespace
}  // namespace cudaprep
