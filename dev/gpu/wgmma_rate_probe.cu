// wgmma_rate_probe: the tensor cores' rate on unsigned bytes, mma.sync m16n8k32 against wgmma
// m64nNk32 with A from registers (not part of the product): raw, with A fixed, and with A rebuilt
// each step from 8 shared-memory words and 4 funnel shifts, as the bank kernel builds its frame
// windows (two A register sets alternating, wait_group 1 after each step). 1 and 2 blocks of 256
// threads an SM. Findings: dev/perf/templatematch.md.
// Build: nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -o wgmma_rate_probe dev/gpu/wgmma_rate_probe.cu
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>
#define CK(x)                                        \
  do {                                               \
    cudaError_t e = (x);                             \
    if (e) {                                         \
      printf("%s: %s\n", #x, cudaGetErrorString(e)); \
      return 1;                                      \
    }                                                \
  } while (0)

__device__ __forceinline__ void imma(int* d, const unsigned* a, const unsigned* b) {
  asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32 {%0,%1,%2,%3},{%4,%5,%6,%7},{%8,%9},{%0,%1,%2,%3};"
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__global__ void k_mma(int iters, int* out) {
  int d[8][4] = {};
  unsigned a[4] = {threadIdx.x, 1u, 2u, 3u}, b[2] = {5u, threadIdx.x};
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int j = 0; j < 8; ++j) imma(d[j], a, b);
  }
  int s = 0;
  for (int j = 0; j < 8; ++j)
    for (int e = 0; e < 4; ++e) s += d[j][e];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
__device__ __forceinline__ uint64_t desc(const void* p, int lbo, int sbo) {
  uint64_t a = (uint64_t)(__cvta_generic_to_shared(p) & 0x3ffff) >> 4;
  return a | ((uint64_t)(lbo >> 4) << 16) | ((uint64_t)(sbo >> 4) << 32);
}
__device__ __forceinline__ void wg16(int* d, const unsigned* a, uint64_t db) {
  asm volatile("wgmma.mma_async.sync.aligned.m64n16k32.s32.u8.u8 {%0,%1,%2,%3,%4,%5,%6,%7},{%8,%9,%10,%11},%12,1;"
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));
}
__device__ __forceinline__ void wg32(int* d, const unsigned* a, uint64_t db) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n32k32.s32.u8.u8 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15},{%16,%17,%18,%19},%20,1;"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), "+r"(d[8]),
        "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));
}
__device__ __forceinline__ void fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void waitg() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// SETS accumulator sets of n16 (or n32 when W32) with A fixed; or A rebuilt from smem each step (REBUILD).
template <int SETS, bool W32, bool REBUILD>
__global__ void k_wg(int iters, int* out) {
  __shared__ __align__(1024) unsigned char sb[8192];
  __shared__ unsigned plane[1024];
  for (int i = threadIdx.x; i < 8192; i += blockDim.x) sb[i] = (unsigned char)(i * 7);
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) plane[i] = i * 2654435761u;
  asm volatile("fence.proxy.async.shared::cta;");
  __syncthreads();
  constexpr int NA = W32 ? 16 : 8;
  int d[SETS][NA] = {};
  unsigned a[2][4] = {{threadIdx.x, 1u, 2u, 3u}, {threadIdx.x, 5u, 6u, 7u}};
  const int lane = threadIdx.x & 31;
  auto step = [&](int i, unsigned* ac) {
    if (REBUILD) {
      const int w = (lane >> 2) / 4 + (lane & 3) + (i & 63) * 8;
      const int sh = ((lane >> 2) & 3) * 8;
      unsigned x[8];
#pragma unroll
      for (int k = 0; k < 8; ++k) x[k] = plane[(w + k) & 1023];
      ac[0] = __funnelshift_r(x[0], x[1], sh);
      ac[1] = __funnelshift_r(x[2], x[3], sh);
      ac[2] = __funnelshift_r(x[4], x[5], sh);
      ac[3] = __funnelshift_r(x[6], x[7], sh);
    }
    fence();
#pragma unroll
    for (int s = 0; s < SETS; ++s) {
      const uint64_t db = desc(sb + ((s * 512 + (i & 7) * 256) & 4095), 128, 256);
      if (W32)
        wg32(d[s], ac, db);
      else
        wg16(d[s], ac, db);
    }
    commit();
    waitg<1>();
  };
  for (int i = 0; i < iters; i += 2) {
    step(i, a[0]);
    step(i + 1, a[REBUILD ? 1 : 0]);
  }
  waitg<0>();
  int s = 0;
  for (int j = 0; j < SETS; ++j)
    for (int e = 0; e < NA; ++e) s += d[j][e];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("device: %s, %d SMs\n", p.name, p.multiProcessorCount);
  int* out;
  CK(cudaMalloc(&out, 132 * 4 * 512 * 4));
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  const int iters = 20000;
  auto run = [&](const char* name, auto launch, double macs_per_block_iter, int blocks) {
    launch();
    cudaDeviceSynchronize();
    cudaEventRecord(e0);
    launch();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    double macs = macs_per_block_iter * iters * blocks;
    printf("%-40s %8.3f ms  %7.1f TMAC/s  %s\n", name, ms, macs / ms / 1e9, cudaGetErrorString(cudaGetLastError()));
  };
  // The wgmma rows: accumulator sets, N and A's source, two warpgroups a block.
  struct WgRow {
    void (*kernel)(int, int*);
    int sets, n;
    bool rebuilt;
  };
  const WgRow wg_rows[] = {
      {k_wg<4, false, false>, 4, 16, false}, {k_wg<8, false, false>, 8, 16, false},
      {k_wg<4, true, false>, 4, 32, false},  {k_wg<4, false, true>, 4, 16, true},
      {k_wg<8, false, true>, 8, 16, true},   {k_wg<4, true, true>, 4, 32, true},
  };
  const int sms = p.multiProcessorCount;
  for (int bpsm = 1; bpsm <= 2; ++bpsm) {
    int B = sms * bpsm;
    printf("-- %d blocks an SM\n", bpsm);
    run(
        "mma.sync m16n8k32, 8 warps x 8 acc", [&] { k_mma<<<B, 256>>>(iters, out); }, 8.0 * 8 * 4096, B);
    for (const WgRow& r : wg_rows) {
      char name[64];
      snprintf(name, sizeof name, "wgmma n%d x%d sets, A %s, 2 WG", r.n, r.sets, r.rebuilt ? "rebuilt" : "fixed");
      run(
          name, [&] { r.kernel<<<B, 256>>>(iters, out); }, 2.0 * r.sets * 64 * r.n * 32, B);
    }
  }
  return 0;
}
