/* nvcc's host compiler finds this math.h first (.ci/cuda-host/gcc puts this folder first on its
 * include path) in the forky part of CI: glibc 2.42 and later declare C23's rsqrt and rsqrtf,
 * noexcept in C++, after CUDA 13.0's crt/math_functions.h declared them without, and nvcc stops
 * at "exception specification is incompatible with that of previous function rsqrt". glibc's
 * declarations (every precision, and their vector variants) take other names here; CUDA's rsqrt
 * and rsqrtf are the ones left. */
#define rsqrt __cudaprep_glibc_rsqrt
#define rsqrtf __cudaprep_glibc_rsqrtf
#define __DECL_SIMD___cudaprep_glibc_rsqrt
#define __DECL_SIMD___cudaprep_glibc_rsqrtf
#define __DECL_SIMD___cudaprep_glibc_rsqrtl
#define __DECL_SIMD___cudaprep_glibc_rsqrtf16
#define __DECL_SIMD___cudaprep_glibc_rsqrtf32
#define __DECL_SIMD___cudaprep_glibc_rsqrtf64
#define __DECL_SIMD___cudaprep_glibc_rsqrtf128
#define __DECL_SIMD___cudaprep_glibc_rsqrtf32x
#define __DECL_SIMD___cudaprep_glibc_rsqrtf64x
#define __DECL_SIMD___cudaprep_glibc_rsqrtf128x
#define __DECL_SIMD___cudaprep_glibc_rsqrtff
#include_next <math.h>
#undef rsqrt
#undef rsqrtf
