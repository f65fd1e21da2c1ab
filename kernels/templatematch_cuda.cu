// CUDA template matcher. Per frame, on the caller's stream, with no allocation and one sync:
//   1. box_sums_kernel: window sums S1 = sum I and S2 = sum I^2 of every position (u32, exact),
//      from a shared-memory tile (vertical running sums, then horizontal sliding sums).
//   2. corr_kernel: sum T * I, exact in 32 bits, on the tensor cores (int8 mma, u8 x u8 -> s32,
//      sm_80+) or with dp4a (older GPUs, or CUDAPREP_TM_KERNEL=dp4a); the score in double from
//      the exact sums (the formula the CPU path uses), stored as float.
//   3. peaks_kernel: one warp per cell, best position above the threshold + sub-pixel fit,
//      appended to a small candidate list with an atomic counter.
//   4. one cudaMemcpyAsync of the list to pinned memory, one stream sync, host NMS (shared code).
// The frame is read through texture objects (pitch 2D, 16-byte texels, point filtering, clamped)
// cached per (pointer, pitch): a buffer pool's frames reuse theirs.
//
// Tensor-core formulation. For one image row r and the 16 output rows y0..y0+15 of a warp's
// M-group, A[m][k] = T(k, r - y0 - m) (template row by row, zero outside the template) and
// B_s[k][n] = I(x0 + s + 4n + k, r) for s = 0..3: the product accumulates, over all r, the
// correlation of output (x0 + s + 4n, y0 + m). A comes from shared memory with ldmatrix; the
// columns of B are 4-byte windows of the image row at a byte offset, built with funnel shifts
// from aligned 32-bit words. No work is wasted along k beyond padding the template width to 32;
// along r an M-group spends th + 15 row steps for th rows of the template.
//
// Tuning (measured on an H200): the tensor-core kernel is latency-bound (a warp's serial chain of
// row steps sets its time when all blocks are resident), so blocks are 64 positions wide and the
// template rows may be split between 2 or 4 groups of warps (choose_ks). Diagnostics and
// variants, read by configure(): CUDAPREP_TM_KERNEL=dp4a, CUDAPREP_TM_TILE=128,
// CUDAPREP_TM_KSPLIT=1|2|4, CUDAPREP_TM_GRAPHS=1 (replay the frame as a CUDA graph),
// CUDAPREP_TM_PROFILE=1 (stage times on stderr).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_device.h"
#include "templatematch_internal.h"

namespace cudaprep {

namespace {

// corr_kernel: a block is 2 x 2 warps; a warp computes 32 rows x 32 * PP positions, so a block
// tile is (64 * PP) x 64. PP = 2 amortises the A fragments over more mma; PP = 1 gives twice the
// blocks (better balance on small grids).
constexpr int kTileH = 64;   // and along y (2 warps x 32)
constexpr int kCorrThreads = 128;
__host__ __device__ constexpr int tile_w(int pp) { return 64 * pp; }
__host__ __device__ constexpr int corr_pitch(int pp) { return tile_w(pp) + 1; }  // odd: distinct banks
constexpr int kBoxTileW = 64, kBoxTileH = 16, kBoxThreads = 256;
constexpr int kPeakWarps = 8;
constexpr int kFirstCopy = 1024;  // candidates fetched with the counter in the one copy
constexpr int kTexCacheSize = 16;

struct alignas(32) Header {
  unsigned count;
  unsigned pad[7];
};
static_assert(sizeof(Header) == 32, "header");

Status cuda_status(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status();
  return Status::error(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

__host__ __device__ inline int round_up(int v, int m) { return (v + m - 1) / m * m; }

// Shared-memory sizes of the kernels for one template.
__host__ __device__ inline int box_smem_bytes(int tw, int th) {
  const int rw = round_up(15 + kBoxTileW + tw - 1, 16);
  const int vp = kBoxTileW + tw;  // 63 + tw column sums, then the total
  return rw * (kBoxTileH + th - 1) + 2 * kBoxTileH * vp * 4;
}
__host__ __device__ inline int corr_region_bytes(int kp, int th, int pp) {
  const int region = (tile_w(pp) + kp) * (kTileH + th - 1);
  const int corr = kTileH * corr_pitch(pp) * 4;
  return round_up(region > corr ? region : corr, 128);
}
__host__ __device__ inline int corr_smem_bytes(int kp, int th, int pp) {
  return corr_region_bytes(kp, th, pp) + (th + 1) * (kp + 16);
}

// ------------------------------------------------------------------------------------------
// Kernels

__device__ __forceinline__ uint4 fetch16(cudaTextureObject_t tex, int xe, int y) {
  return tex2D<uint4>(tex, static_cast<float>(xe) + 0.5f, static_cast<float>(y) + 0.5f);
}

// S1, S2 of the map positions [u0, u0 + 64) x [v0, v0 + 16); block (0, 0) also resets the
// candidate counter for this frame's peaks_kernel.
__global__ void __launch_bounds__(kBoxThreads) box_sums_kernel(cudaTextureObject_t tex, int sx, int sy, int mw,
                                                               int mh, int tw, int th, uint32_t* __restrict s1,
                                                               uint32_t* __restrict s2, int64_t spitch,
                                                               Header* __restrict header) {
  extern __shared__ __align__(16) uint8_t smem[];
  const int tid = threadIdx.x;
  if (header && blockIdx.x == 0 && blockIdx.y == 0 && tid == 0) header->count = 0;
  const int u0 = blockIdx.x * kBoxTileW, v0 = blockIdx.y * kBoxTileH;
  const int fx = sx + u0, x0 = fx & ~15, d = fx - x0, fy = sy + v0;
  const int rw = round_up(15 + kBoxTileW + tw - 1, 16);  // row pitch of the staged region
  const int rh = kBoxTileH + th - 1;
  const int vp = kBoxTileW + tw;
  uint8_t* region = smem;
  uint32_t* v1 = reinterpret_cast<uint32_t*>(smem + rw * rh);
  uint32_t* v2 = v1 + kBoxTileH * vp;

  const int texels = round_up(d + kBoxTileW + tw - 1, 16) / 16;
  for (int i = tid; i < texels * rh; i += kBoxThreads) {
    const int e = i % texels, r = i / texels;
    *reinterpret_cast<uint4*>(region + r * rw + 16 * e) = fetch16(tex, x0 / 16 + e, fy + r);
  }
  __syncthreads();

  // Vertical running sums over th rows, for each column and each of the 16 output rows.
  const int ncols = kBoxTileW + tw - 1;
  for (int c = tid; c < ncols; c += kBoxThreads) {
    const uint8_t* col = region + d + c;
    uint32_t a = 0, b = 0;
    for (int j = 0; j < th; ++j) {
      const uint32_t p = col[j * rw];
      a += p;
      b += p * p;
    }
    v1[c] = a;
    v2[c] = b;
    for (int yy = 1; yy < kBoxTileH; ++yy) {
      const uint32_t out = col[(yy - 1) * rw], in = col[(yy + th - 1) * rw];
      a += in - out;
      b += in * in - out * out;
      v1[yy * vp + c] = a;
      v2[yy * vp + c] = b;
    }
  }
  __syncthreads();

  // Exclusive prefix sums along each row (mod 2^32: the differences below are exact since every
  // window sum is below 2^32), one warp per row and array.
  const int lane = tid & 31, warp = tid >> 5;
  for (int row = warp; row < 2 * kBoxTileH; row += kBoxThreads / 32) {
    uint32_t* a = (row < kBoxTileH ? v1 : v2) + (row % kBoxTileH) * vp;
    uint32_t carry = 0;
    for (int base = 0; base < ncols; base += 32) {
      const uint32_t x = base + lane < ncols ? a[base + lane] : 0u;
      uint32_t incl = x;
#pragma unroll
      for (int off = 1; off < 32; off <<= 1) {
        const uint32_t y = __shfl_up_sync(0xffffffffu, incl, off);
        if (lane >= off) incl += y;
      }
      if (base + lane < ncols) a[base + lane] = carry + incl - x;
      carry += __shfl_sync(0xffffffffu, incl, 31);
    }
    if (lane == 0) a[ncols] = carry;
  }
  __syncthreads();

  // Window sums: a warp writes 32 consecutive positions of one row.
  for (int i = tid; i < kBoxTileW * kBoxTileH; i += kBoxThreads) {
    const int yy = i / kBoxTileW, u = i % kBoxTileW;
    const int v = v0 + yy, uu = u0 + u;
    if (v >= mh || uu >= mw) continue;
    s1[v * spitch + uu] = v1[yy * vp + u + tw] - v1[yy * vp + u];
    s2[v * spitch + uu] = v2[yy * vp + u + tw] - v2[yy * vp + u];
  }
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&a)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
               : "r"(addr));
}

__device__ __forceinline__ void mma_u8(uint32_t (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

struct CorrParams {
  cudaTextureObject_t tex;
  const uint8_t* templ;  // th rows of kp bytes, zero beyond tw
  int tw, th, kp;
  int64_t n, st, var_t;
  int sx, sy, mw, mh;
  int x_first;  // frame x of the first tile (a multiple of the tile width)
  const uint32_t* s1;
  const uint32_t* s2;
  int64_t spitch;
  float* map;
  int64_t mpitch;
};

// One block: output frame positions [X0, X0 + 64 * PP) x [Y0, Y0 + 64), 4 warps of (32 * PP) x 32.
// One row step of a warp's MMA loop: image row rr (relative to the warp's first output row)
// against the template rows that meet it in M-group 0 (output rows 0..15) and / or M-group 1
// (rows 16..31). A lane's ldmatrix row address points at its template row, or at the zero row
// where that row lies outside this warp's share [ja, jb) of the template rows.
template <int PP, bool M0, bool M1>
__device__ __forceinline__ void mma_row_step(uint32_t (&acc)[2][PP][4][4], const uint32_t* rowp, uint32_t tsm_addr,
                                             int rr, int lrow, int lcol, int ja, int jb, int tp, int nc, int zero_row) {
  const int j0 = rr - lrow, j1 = rr - 16 - lrow;
  const uint32_t a0base = tsm_addr + ((j0 >= ja && j0 < jb) ? j0 : zero_row) * tp + lcol;
  const uint32_t a1base = tsm_addr + ((j1 >= ja && j1 < jb) ? j1 : zero_row) * tp + lcol;
  for (int c = 0; c < nc; ++c) {
    uint32_t a0[4] = {0, 0, 0, 0}, a1[4] = {0, 0, 0, 0};
    if (M0) ldmatrix_x4(a0, a0base + 32 * c);
    if (M1) ldmatrix_x4(a1, a1base + 32 * c);
#pragma unroll
    for (int pp = 0; pp < PP; ++pp) {
      const uint32_t* w = rowp + 8 * pp + 8 * c;
      const uint32_t w0 = w[0], w1 = w[1], w4 = w[4], w5 = w[5];
#pragma unroll
      for (int s = 0; s < 4; ++s) {
        const uint32_t b0 = s ? __funnelshift_r(w0, w1, 8 * s) : w0;
        const uint32_t b1 = s ? __funnelshift_r(w4, w5, 8 * s) : w4;
        if (M0) mma_u8(acc[0][pp][s], a0, b0, b1);
        if (M1) mma_u8(acc[1][pp][s], a1, b0, b1);
      }
    }
  }
}

// One block: output frame positions [X0, X0 + 64 * PP) x [Y0, Y0 + 64). Tensor cores: 4 warps of
// (32 * PP) x 32 positions, times KS = blockDim.x / 128 groups that split the template rows
// between them (more warps in flight on the same shared tiles), summed at the end. dp4a: 128
// threads, PP = 2.
template <bool kMma, int PP>
__global__ void __launch_bounds__(512) corr_kernel(const CorrParams p) {
  constexpr int kTileW = tile_w(PP), kCorrPitch = corr_pitch(PP);
  extern __shared__ __align__(16) uint8_t smem[];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, nthreads = blockDim.x;
  const int X0 = p.x_first + blockIdx.x * kTileW, Y0 = p.sy + blockIdx.y * kTileH;
  const int th = p.th, kp = p.kp;
  const int rw = kTileW + kp, rh = kTileH + th - 1;  // staged region: bytes per row, rows
  const int tp = kp + 16;                            // template row pitch (keeps ldmatrix conflict-free)
  uint8_t* region = smem;
  uint32_t* corr = reinterpret_cast<uint32_t*>(smem);  // reuses the region once it is consumed
  uint8_t* tsm = smem + corr_region_bytes(kp, th, PP);

  // Stage the template (plus one zero row) and the frame region.
  {
    const int per_row = kp / 16;
    const uint4* src = reinterpret_cast<const uint4*>(p.templ);
    for (int i = tid; i < th * per_row; i += nthreads)
      *reinterpret_cast<uint4*>(tsm + (i / per_row) * tp + 16 * (i % per_row)) = src[i];
    for (int i = tid; i < tp / 16; i += nthreads)
      *reinterpret_cast<uint4*>(tsm + th * tp + 16 * i) = make_uint4(0, 0, 0, 0);
    const int texels = rw / 16;
    for (int i = tid; i < texels * rh; i += nthreads) {
      const int e = i % texels, r = i / texels;
      *reinterpret_cast<uint4*>(region + r * rw + 16 * e) = fetch16(p.tex, X0 / 16 + e, Y0 + r);
    }
  }
  __syncthreads();

  if constexpr (kMma) {
    const int wq = warp & 3, kgroup = warp >> 2, ks = nthreads >> 7;
    const int wx = wq & 1, wy = wq >> 1;
    const int g = lane >> 2, t = lane & 3;
    const int lrow = (lane & 7) + 8 * ((lane >> 3) & 1), lcol = 16 * (lane >> 4);
    const uint32_t tsm_addr = static_cast<uint32_t>(__cvta_generic_to_shared(tsm));
    const int nc = kp / 32;
    const int ja = kgroup * th / ks, jb = (kgroup + 1) * th / ks;  // this group's template rows
    uint32_t acc[2][PP][4][4];
#pragma unroll
    for (int a = 0; a < 2; ++a)
#pragma unroll
      for (int b = 0; b < PP; ++b)
#pragma unroll
        for (int c = 0; c < 4; ++c)
#pragma unroll
          for (int i = 0; i < 4; ++i) acc[a][b][c][i] = 0;

    // Image rows rr in [ja, jb + 31): M-group 0 meets template rows in [ja, jb) for
    // rr < jb + 15, M-group 1 for rr >= ja + 16. Three loops without per-step branches.
    const uint8_t* wbase = region + (32 * wy) * rw + 32 * PP * wx;
    const int e1 = min(ja + 16, jb + 15), e2 = jb + 15, e3 = jb + 31;
    int rr = ja;
    for (; rr < e1; ++rr)
      mma_row_step<PP, true, false>(acc, reinterpret_cast<const uint32_t*>(wbase + rr * rw) + g + t, tsm_addr, rr,
                                    lrow, lcol, ja, jb, tp, nc, th);
    for (; rr < e2; ++rr)
      mma_row_step<PP, true, true>(acc, reinterpret_cast<const uint32_t*>(wbase + rr * rw) + g + t, tsm_addr, rr,
                                   lrow, lcol, ja, jb, tp, nc, th);
    for (; rr < e3; ++rr)
      mma_row_step<PP, false, true>(acc, reinterpret_cast<const uint32_t*>(wbase + rr * rw) + g + t, tsm_addr, rr,
                                    lrow, lcol, ja, jb, tp, nc, th);
    __syncthreads();  // every warp is done with the region: reuse it for the sums
    for (int k = 0; k < ks; ++k) {
      if (k == kgroup) {
#pragma unroll
        for (int mg = 0; mg < 2; ++mg)
#pragma unroll
          for (int pp = 0; pp < PP; ++pp)
#pragma unroll
            for (int s = 0; s < 4; ++s)
#pragma unroll
              for (int i = 0; i < 4; ++i) {
                const int row = 32 * wy + 16 * mg + g + 8 * (i >> 1);
                const int col = 32 * PP * wx + 32 * pp + s + 8 * t + 4 * (i & 1);
                if (k == 0)
                  corr[row * kCorrPitch + col] = acc[mg][pp][s][i];
                else
                  corr[row * kCorrPitch + col] += acc[mg][pp][s][i];
              }
      }
      if (ks > 1) __syncthreads();
    }
  } else {
    static_assert(PP == 2, "the dp4a kernel covers 128 positions: 32 threads x 4");
    // dp4a: each thread 4 consecutive positions x 16 rows.
    const int xq = tid & 31, rg = tid >> 5;
    const int rw4 = rw / 4, tp4 = tp / 4, words = (p.tw + 3) / 4;
    const uint32_t* r32 = reinterpret_cast<const uint32_t*>(region);
    const uint32_t* t32 = reinterpret_cast<const uint32_t*>(tsm);
    uint32_t acc[16][4];
#pragma unroll
    for (int r = 0; r < 16; ++r)
#pragma unroll
      for (int s = 0; s < 4; ++s) acc[r][s] = 0;
    for (int j = 0; j < th; ++j) {
      const uint32_t* rowp = r32 + (16 * rg + j) * rw4 + xq;
      uint32_t carry[16];
#pragma unroll
      for (int r = 0; r < 16; ++r) carry[r] = rowp[r * rw4];
      for (int q = 0; q < words; ++q) {
        const uint32_t tq = t32[j * tp4 + q];
#pragma unroll
        for (int r = 0; r < 16; ++r) {
          const uint32_t w = carry[r], wn = rowp[r * rw4 + q + 1];
          acc[r][0] = __dp4a(w, tq, acc[r][0]);
          acc[r][1] = __dp4a(__funnelshift_r(w, wn, 8), tq, acc[r][1]);
          acc[r][2] = __dp4a(__funnelshift_r(w, wn, 16), tq, acc[r][2]);
          acc[r][3] = __dp4a(__funnelshift_r(w, wn, 24), tq, acc[r][3]);
          carry[r] = wn;
        }
      }
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < 16; ++r)
#pragma unroll
      for (int s = 0; s < 4; ++s) corr[(16 * rg + r) * kCorrPitch + 4 * xq + s] = acc[r][s];
  }
  __syncthreads();

  // Scores: coalesced over the tile.
  for (int i = tid; i < kTileW * kTileH; i += nthreads) {
    const int yy = i / kTileW, xx = i % kTileW;
    const int u = X0 + xx - p.sx, v = Y0 + yy - p.sy;
    if (u < 0 || u >= p.mw || v >= p.mh) continue;
    const int64_t si = p.s1[v * p.spitch + u], sii = p.s2[v * p.spitch + u];
    const int64_t sti = corr[yy * kCorrPitch + xx];
    p.map[v * p.mpitch + u] = static_cast<float>(tm::ccoeff_normed(p.n, p.st, p.var_t, si, sii, sti));
  }
}

struct PeakParams {
  const float* map;
  int64_t mpitch;
  int mw, mh, cw, ch, ncx, ncells;
  double threshold;
  Header* header;
  tm::Candidate* out;
};

__global__ void __launch_bounds__(kPeakWarps * 32) peaks_kernel(const PeakParams p) {
  const int lane = threadIdx.x & 31;
  const int cell = blockIdx.x * kPeakWarps + (threadIdx.x >> 5);
  if (cell >= p.ncells) return;
  const int u0 = (cell % p.ncx) * p.cw, v0 = (cell / p.ncx) * p.ch;
  const int w = min(p.cw, p.mw - u0), h = min(p.ch, p.mh - v0);
  float best = -3.0f;
  int best_at = 0x7fffffff;  // v * mw + u: the row-major order breaks ties
  for (int i = lane; i < w * h; i += 32) {
    const int u = u0 + i % w, v = v0 + i / w;
    const float s = p.map[v * p.mpitch + u];
    const int at = v * p.mw + u;
    if (s > best || (s == best && at < best_at)) {
      best = s;
      best_at = at;
    }
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    const float s = __shfl_xor_sync(0xffffffffu, best, off);
    const int at = __shfl_xor_sync(0xffffffffu, best_at, off);
    if (s > best || (s == best && at < best_at)) {
      best = s;
      best_at = at;
    }
  }
  if (lane != 0 || !(static_cast<double>(best) >= p.threshold)) return;
  tm::Candidate c;
  c.u = best_at % p.mw;
  c.v = best_at / p.mw;
  c.score = best;
  tm::subpixel_at(p.map, p.mpitch, p.mw, p.mh, c.u, c.v, &c.dx, &c.dy);
  const unsigned slot = atomicAdd(&p.header->count, 1u);
  p.out[slot] = c;  // capacity = cells of the full frame >= cells of any search region
}

struct TexEntry {
  const void* ptr = nullptr;
  int64_t pitch = 0;
  int width = 0, height = 0;
  cudaTextureObject_t tex = 0;
  uint64_t last_use = 0;
};

}  // namespace

// ------------------------------------------------------------------------------------------
// Host side

struct TemplateMatcherCuda::Impl {
  cudaStream_t stream = nullptr;
  bool configured = false;
  int width = 0, height = 0;
  // Device properties.
  int cc_major = 0;
  int smem_optin = 48 << 10;
  int tex_pitch_align = 32;
  int tex_align = 512;
  bool use_mma = false;
  int pp_tile = 1;  // tensor-core tile width / 64
  int force_ks = 0;  // CUDAPREP_TM_KSPLIT: 1, 2 or 4 (0: chosen per template and grid)
  int occupancy[3] = {1, 1, 1};
  int sm_count = 1;
  // Per caps.
  cuda::DeviceBuffer s1, s2, map, staging;
  int64_t spitch = 0;  // elements per row of s1 / s2 / map
  // Per template.
  bool has_template = false;
  int tw = 0, th = 0, kp = 0;
  int64_t n = 0, st = 0, var_t = 0;
  cuda::DeviceBuffer templ;
  cuda::DeviceBuffer candidates;  // Header, then capacity Candidates
  cuda::PinnedBuffer host_candidates;
  int capacity = 0;
  // Texture objects per (pointer, pitch), least recently used evicted.
  std::vector<TexEntry> textures;
  uint64_t tick = 0;
  struct GraphEntry {
    cudaTextureObject_t tex = 0;
    Rect r;
    double threshold = 0;
    cudaGraphExec_t exec = nullptr;
    uint64_t last_use = 0;
  };
  std::vector<GraphEntry> graphs;
  bool use_graphs = false;
  bool profile = false;
  cudaEvent_t events[5] = {};
  TemplateMatcherCuda::TextureCacheStats stats;

  void destroy_textures() {
    for (TexEntry& e : textures) cudaDestroyTextureObject(e.tex);
    textures.clear();
    stats.entries = 0;
  }

  Status alloc_candidates() {
    candidates.reset();
    host_candidates.reset();
    capacity = 0;
    if (!configured || !has_template || tw > width || th > height) return Status();
    const int mw = width - tw + 1, mh = height - th + 1;
    const int cw = tm::cell_side(tw), ch = tm::cell_side(th);
    capacity = ((mw + cw - 1) / cw) * ((mh + ch - 1) / ch);
    const size_t bytes = sizeof(Header) + static_cast<size_t>(capacity) * sizeof(tm::Candidate);
    CUDAPREP_RETURN_IF_ERROR(candidates.allocate(bytes));
    CUDAPREP_RETURN_IF_ERROR(host_candidates.allocate(bytes));
    return Status();
  }

  // The kernels may use up to the device's opt-in limit: set once, to the maximum, so that
  // matchers with different templates never fight over the attribute.
  Status set_kernel_limits() {
    const int box = box_smem_bytes(tw, th), corr = std::max(corr_smem_bytes(kp, th, 2), corr_smem_bytes(kp, th, 1));
    if (box > smem_optin || corr > smem_optin)
      return Status::error("template " + std::to_string(tw) + "x" + std::to_string(th) +
                           " needs more shared memory than this GPU offers (" + std::to_string(std::max(box, corr)) +
                           " > " + std::to_string(smem_optin) + " bytes)");
    return Status();
  }

  // A texture over the frame's plane; frames whose pointer or pitch a texture cannot take are
  // first copied into the staging buffer (allocated in configure()).
  Status texture_for(const GrayView& f, cudaTextureObject_t* out) {
    const bool usable = reinterpret_cast<uintptr_t>(f.data) % tex_align == 0 && f.stride % tex_pitch_align == 0 &&
                        f.stride >= round_up(f.width, 16);
    if (usable && cached_texture(f.data, f.stride, f.width, f.height, out).ok()) return Status();
    cudaGetLastError();  // a refused texture leaves no sticky error, but be tidy
    CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaMemcpy2DAsync(staging.data(), staging.pitch(), f.data, f.stride, f.width,
                                                           f.height, cudaMemcpyDeviceToDevice, stream),
                                         "cudaMemcpy2DAsync (staging)"));
    return cached_texture(staging.data(), static_cast<int64_t>(staging.pitch()), f.width, f.height, out);
  }

  Status cached_texture(const void* ptr, int64_t pitch, int width, int height, cudaTextureObject_t* out) {
    ++tick;
    for (TexEntry& e : textures) {
      if (e.ptr == ptr && e.pitch == pitch && e.width == width && e.height == height) {
        e.last_use = tick;
        ++stats.hits;
        *out = e.tex;
        return Status();
      }
    }
    cudaResourceDesc res{};
    res.resType = cudaResourceTypePitch2D;
    res.res.pitch2D.devPtr = const_cast<void*>(ptr);
    res.res.pitch2D.desc = cudaCreateChannelDesc<uint4>();
    res.res.pitch2D.width = (width + 15) / 16;
    res.res.pitch2D.height = height;
    res.res.pitch2D.pitchInBytes = pitch;
    cudaTextureDesc td{};
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModePoint;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 0;
    TexEntry e;
    CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaCreateTextureObject(&e.tex, &res, &td, nullptr), "cudaCreateTextureObject"));
    if (static_cast<int>(textures.size()) >= kTexCacheSize) {
      // Safe to destroy: every match() ends with a stream sync, so no kernel still reads it.
      auto lru = std::min_element(textures.begin(), textures.end(),
                                  [](const TexEntry& a, const TexEntry& b) { return a.last_use < b.last_use; });
      for (size_t i = 0; i < graphs.size();) {
        if (graphs[i].tex == lru->tex) {
          cudaGraphExecDestroy(graphs[i].exec);
          graphs.erase(graphs.begin() + i);
        } else {
          ++i;
        }
      }
      cudaDestroyTextureObject(lru->tex);
      textures.erase(lru);
    }
    e.ptr = ptr;
    e.pitch = pitch;
    e.width = width;
    e.height = height;
    e.last_use = tick;
    textures.push_back(e);
    ++stats.created;
    stats.entries = static_cast<int>(textures.size());
    *out = e.tex;
    return Status();
  }

  // Kernels 1 and 2: the score map of the region into `map`.
  Status enqueue_scores(cudaTextureObject_t tex, const Rect& r) {
    const int mw = r.w - tw + 1, mh = r.h - th + 1;
    Header* header = reinterpret_cast<Header*>(candidates.data());
    uint32_t* d1 = reinterpret_cast<uint32_t*>(s1.data());
    uint32_t* d2 = reinterpret_cast<uint32_t*>(s2.data());
    {
      const dim3 grid((mw + kBoxTileW - 1) / kBoxTileW, (mh + kBoxTileH - 1) / kBoxTileH);
      box_sums_kernel<<<grid, kBoxThreads, box_smem_bytes(tw, th), stream>>>(tex, r.x, r.y, mw, mh, tw, th, d1, d2,
                                                                             spitch, header);
      CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaGetLastError(), "box_sums_kernel launch"));
    }
    mark(1);
    CorrParams p;
    p.tex = tex;
    p.templ = templ.data();
    p.tw = tw;
    p.th = th;
    p.kp = kp;
    p.n = n;
    p.st = st;
    p.var_t = var_t;
    p.sx = r.x;
    p.sy = r.y;
    p.mw = mw;
    p.mh = mh;
    const int pp = use_mma ? pp_tile : 2;  // the dp4a kernel always works on 128-wide tiles
    const int tile = tile_w(pp);
    p.x_first = r.x / tile * tile;
    p.s1 = d1;
    p.s2 = d2;
    p.spitch = spitch;
    p.map = reinterpret_cast<float*>(map.data());
    p.mpitch = spitch;
    const int gx = (r.x + mw + tile - 1) / tile - r.x / tile;
    const dim3 grid(gx, (mh + kTileH - 1) / kTileH);
    const int smem = corr_smem_bytes(kp, th, pp);
    const int ks = use_mma ? choose_ks(static_cast<int>(grid.x * grid.y)) : 1;
    if (!use_mma)
      corr_kernel<false, 2><<<grid, kCorrThreads, smem, stream>>>(p);
    else if (pp_tile == 1)
      corr_kernel<true, 1><<<grid, kCorrThreads * ks, smem, stream>>>(p);
    else
      corr_kernel<true, 2><<<grid, kCorrThreads * ks, smem, stream>>>(p);
    CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaGetLastError(), "corr_kernel launch"));
    mark(2);
    return Status();
  }

  // Template-row split of the tensor-core kernel. Measured: the kernel is latency-bound (a
  // warp's serial chain of row steps, th / ks + 31 of them, sets its time when all blocks are
  // resident). Splitting shortens the chain but makes blocks larger, so fewer fit on an SM:
  // pick the ks with the least waves x chain length. Equal: the smaller ks (less work).
  int choose_ks(int blocks) const {
    if (force_ks > 0) return std::min(force_ks, th);
    int best = 1;
    double best_cost = 0;
    for (int i = 0; i < 3; ++i) {
      const int ks = 1 << i;
      if (ks > 1 && th / ks < 16) break;  // below 16 rows a split mostly adds work
      const int per_wave = std::max(1, occupancy[i]) * sm_count;
      const double cost = static_cast<double>((blocks + per_wave - 1) / per_wave) * (th / ks + 31);
      if (i == 0 || cost < best_cost) {
        best = ks;
        best_cost = cost;
      }
    }
    return best;
  }

  // Resident blocks per SM of the tensor-core kernel for ks = 1, 2, 4 (per template).
  Status compute_occupancy() {
    const int smem = corr_smem_bytes(kp, th, pp_tile);
    const void* k = pp_tile == 1 ? reinterpret_cast<const void*>(corr_kernel<true, 1>)
                                 : reinterpret_cast<const void*>(corr_kernel<true, 2>);
    for (int i = 0; i < 3; ++i) {
      occupancy[i] = 0;
      CUDAPREP_RETURN_IF_ERROR(cuda_status(
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occupancy[i], k, kCorrThreads << i, smem),
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor"));
    }
    return Status();
  }

  // Kernel 3 and the copy of the counter and the first candidates.
  Status enqueue_peaks(const Rect& r, double threshold) {
    const int mw = r.w - tw + 1, mh = r.h - th + 1;
    PeakParams pp;
    pp.map = reinterpret_cast<const float*>(map.data());
    pp.mpitch = spitch;
    pp.mw = mw;
    pp.mh = mh;
    pp.cw = tm::cell_side(tw);
    pp.ch = tm::cell_side(th);
    pp.ncx = (mw + pp.cw - 1) / pp.cw;
    pp.ncells = pp.ncx * ((mh + pp.ch - 1) / pp.ch);
    pp.threshold = threshold;
    pp.header = reinterpret_cast<Header*>(candidates.data());
    pp.out = reinterpret_cast<tm::Candidate*>(candidates.data() + sizeof(Header));
    peaks_kernel<<<(pp.ncells + kPeakWarps - 1) / kPeakWarps, kPeakWarps * 32, 0, stream>>>(pp);
    CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaGetLastError(), "peaks_kernel launch"));
    mark(3);
    const int first = std::min(capacity, kFirstCopy);
    CUDAPREP_RETURN_IF_ERROR(cuda_status(
        cudaMemcpyAsync(host_candidates.data(), candidates.data(), sizeof(Header) + first * sizeof(tm::Candidate),
                        cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync (candidates)"));
    mark(4);
    return Status();
  }

  // The whole frame's work, optionally (CUDAPREP_TM_GRAPHS=1) as a CUDA graph replayed per
  // (texture, region, threshold): one submission instead of four. Falls back to plain launches
  // where capture is not possible (the legacy default stream) or fails.
  Status enqueue_frame(cudaTextureObject_t tex, const Rect& r, double threshold) {
    if (!use_graphs || profile) {
      mark(0);
      CUDAPREP_RETURN_IF_ERROR(enqueue_scores(tex, r));
      return enqueue_peaks(r, threshold);
    }
    ++tick;
    for (GraphEntry& g : graphs) {
      if (g.tex == tex && g.r.x == r.x && g.r.y == r.y && g.r.w == r.w && g.r.h == r.h && g.threshold == threshold) {
        g.last_use = tick;
        return cuda_status(cudaGraphLaunch(g.exec, stream), "cudaGraphLaunch");
      }
    }
    cudaGraph_t graph = nullptr;
    CUDAPREP_RETURN_IF_ERROR(
        cuda_status(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture"));
    Status s = enqueue_scores(tex, r);
    if (s.ok()) s = enqueue_peaks(r, threshold);
    const cudaError_t end = cudaStreamEndCapture(stream, &graph);
    cudaGraphExec_t exec = nullptr;
    if (s.ok() && end == cudaSuccess) s = cuda_status(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    if (graph) cudaGraphDestroy(graph);
    if (!s.ok() || end != cudaSuccess || !exec) {
      // Capture is not available here: plain launches from now on.
      cudaGetLastError();
      use_graphs = false;
      CUDAPREP_RETURN_IF_ERROR(enqueue_scores(tex, r));
      return enqueue_peaks(r, threshold);
    }
    if (static_cast<int>(graphs.size()) >= kTexCacheSize) {
      auto lru = std::min_element(graphs.begin(), graphs.end(),
                                  [](const GraphEntry& a, const GraphEntry& b) { return a.last_use < b.last_use; });
      cudaGraphExecDestroy(lru->exec);
      graphs.erase(lru);
    }
    GraphEntry g;
    g.tex = tex;
    g.r = r;
    g.threshold = threshold;
    g.exec = exec;
    g.last_use = tick;
    graphs.push_back(g);
    return cuda_status(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
  }

  void destroy_graphs() {
    for (GraphEntry& g : graphs) cudaGraphExecDestroy(g.exec);
    graphs.clear();
  }

  // CUDAPREP_TM_PROFILE=1: events between the stages, printed after each match().
  void mark(int i) {
    if (profile) cudaEventRecord(events[i], stream);
  }
  void print_profile() {
    float t[4] = {0, 0, 0, 0};
    for (int i = 0; i < 4; ++i) cudaEventElapsedTime(&t[i], events[i], events[i + 1]);
    std::fprintf(stderr, "tm profile (ms): box %.4f corr %.4f peaks %.4f copy %.4f\n", t[0], t[1], t[2], t[3]);
  }

  Status check_frame(const GrayView& f) const {
    if (!configured) return Status::error("TemplateMatcherCuda: configure() first");
    if (!has_template) return Status::error("no template set");
    CUDAPREP_RETURN_IF_ERROR(tm::check_gray(f, "frame"));
    if (f.width > width || f.height > height)
      return Status::error("frame " + std::to_string(f.width) + "x" + std::to_string(f.height) +
                           " is larger than the configured " + std::to_string(width) + "x" + std::to_string(height));
    return Status();
  }

  void release() {
    destroy_graphs();
    destroy_textures();
    for (cudaEvent_t& e : events) {
      if (e) cudaEventDestroy(e);
      e = nullptr;
    }
    profile = false;
    s1.reset();
    s2.reset();
    map.reset();
    staging.reset();
    candidates.reset();
    host_candidates.reset();
    capacity = 0;
    configured = false;
  }
};

TemplateMatcherCuda::TemplateMatcherCuda() : impl_(new Impl) {}
TemplateMatcherCuda::~TemplateMatcherCuda() {
  if (impl_) {
    release();
    impl_->templ.reset();
  }
}

bool TemplateMatcherCuda::has_template() const { return impl_->has_template; }
int TemplateMatcherCuda::template_width() const { return impl_->tw; }
int TemplateMatcherCuda::template_height() const { return impl_->th; }

TemplateMatcherCuda::TextureCacheStats TemplateMatcherCuda::texture_cache_stats() const { return impl_->stats; }

Status TemplateMatcherCuda::configure(int frame_width, int frame_height, void* stream) {
  Impl& m = *impl_;
  m.release();
  if (frame_width <= 0 || frame_height <= 0)
    return Status::error("invalid frame size " + std::to_string(frame_width) + "x" + std::to_string(frame_height));
  m.stream = static_cast<cudaStream_t>(stream);
  int dev = 0;
  CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaGetDevice(&dev), "cudaGetDevice"));
  CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaDeviceGetAttribute(&m.cc_major, cudaDevAttrComputeCapabilityMajor, dev),
                                       "cudaDeviceGetAttribute"));
  CUDAPREP_RETURN_IF_ERROR(cuda_status(
      cudaDeviceGetAttribute(&m.smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev), "cudaDeviceGetAttribute"));
  CUDAPREP_RETURN_IF_ERROR(cuda_status(
      cudaDeviceGetAttribute(&m.tex_pitch_align, cudaDevAttrTexturePitchAlignment, dev), "cudaDeviceGetAttribute"));
  if (m.tex_pitch_align < 16) m.tex_pitch_align = 16;
  CUDAPREP_RETURN_IF_ERROR(cuda_status(
      cudaDeviceGetAttribute(&m.tex_align, cudaDevAttrTextureAlignment, dev), "cudaDeviceGetAttribute"));
  if (m.tex_align < m.tex_pitch_align) m.tex_align = m.tex_pitch_align;
  const void* kernels[] = {reinterpret_cast<const void*>(box_sums_kernel),
                           reinterpret_cast<const void*>(corr_kernel<true, 1>),
                           reinterpret_cast<const void*>(corr_kernel<true, 2>),
                           reinterpret_cast<const void*>(corr_kernel<false, 2>)};
  for (const void* k : kernels)
    CUDAPREP_RETURN_IF_ERROR(cuda_status(
        cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, m.smem_optin), "cudaFuncSetAttribute"));
  m.use_mma = m.cc_major >= 8;
  m.pp_tile = 1;
  if (const char* t = std::getenv("CUDAPREP_TM_TILE")) {
    if (std::strcmp(t, "128") == 0) m.pp_tile = 2;
  }
  m.force_ks = 0;
  if (const char* k = std::getenv("CUDAPREP_TM_KSPLIT")) {
    const int v = std::atoi(k);
    if (v == 1 || v == 2 || v == 4) m.force_ks = v;
  }
  CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaDeviceGetAttribute(&m.sm_count, cudaDevAttrMultiProcessorCount, dev),
                                       "cudaDeviceGetAttribute"));
  if (const char* k = std::getenv("CUDAPREP_TM_KERNEL")) {
    if (std::strcmp(k, "dp4a") == 0) m.use_mma = false;
  }
  const char* g = std::getenv("CUDAPREP_TM_GRAPHS");
  // Measured on an H200: replaying the frame as a graph saved nothing (the GPU is busy while the
  // host submits the next kernel), so plain launches are the default; CUDAPREP_TM_GRAPHS=1 opts in.
  m.use_graphs = m.stream != nullptr && g && std::strcmp(g, "1") == 0;
  const char* prof = std::getenv("CUDAPREP_TM_PROFILE");
  if (prof && std::strcmp(prof, "1") == 0) {
    for (cudaEvent_t& e : m.events) CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaEventCreate(&e), "cudaEventCreate"));
    m.profile = true;
  }
  m.width = frame_width;
  m.height = frame_height;
  m.spitch = round_up(frame_width, 4);
  const size_t plane = static_cast<size_t>(m.spitch) * frame_height * 4;
  CUDAPREP_RETURN_IF_ERROR(m.s1.allocate(plane));
  CUDAPREP_RETURN_IF_ERROR(m.s2.allocate(plane));
  CUDAPREP_RETURN_IF_ERROR(m.map.allocate(plane));
  CUDAPREP_RETURN_IF_ERROR(m.staging.allocate_pitched(round_up(frame_width, 16), frame_height));
  m.configured = true;
  if (m.has_template) {
    CUDAPREP_RETURN_IF_ERROR(m.set_kernel_limits());
    CUDAPREP_RETURN_IF_ERROR(m.compute_occupancy());
    CUDAPREP_RETURN_IF_ERROR(m.alloc_candidates());
  }
  return Status();
}

Status TemplateMatcherCuda::set_template(const GrayView& t) {
  Impl& m = *impl_;
  CUDAPREP_RETURN_IF_ERROR(tm::check_gray(t, "template"));
  if (t.width > kMaxTemplateSide || t.height > kMaxTemplateSide)
    return Status::error("template " + std::to_string(t.width) + "x" + std::to_string(t.height) +
                         " is larger than the maximum of " + std::to_string(kMaxTemplateSide) + "x" +
                         std::to_string(kMaxTemplateSide));
  const int kp = round_up(t.width, 32);
  std::vector<uint8_t> padded(static_cast<size_t>(kp) * t.height, 0);
  int64_t sum = 0, sum_sq = 0;
  for (int y = 0; y < t.height; ++y)
    for (int x = 0; x < t.width; ++x) {
      const uint8_t v = t.data[y * t.stride + x];
      padded[static_cast<size_t>(y) * kp + x] = v;
      sum += v;
      sum_sq += static_cast<int64_t>(v) * v;
    }
  const int64_t n = static_cast<int64_t>(t.width) * t.height;
  if (n * sum_sq - sum * sum <= 0) return Status::error(tm::kFlatTemplateMessage);
  m.has_template = false;
  m.destroy_graphs();
  CUDAPREP_RETURN_IF_ERROR(m.templ.allocate(padded.size()));
  CUDAPREP_RETURN_IF_ERROR(
      cuda_status(cudaMemcpy(m.templ.data(), padded.data(), padded.size(), cudaMemcpyHostToDevice), "cudaMemcpy"));
  m.tw = t.width;
  m.th = t.height;
  m.kp = kp;
  m.n = n;
  m.st = sum;
  m.var_t = n * sum_sq - sum * sum;
  m.has_template = true;
  if (m.configured) {
    Status s = m.set_kernel_limits();
    if (s.ok()) s = m.compute_occupancy();
    if (s.ok()) s = m.alloc_candidates();
    if (!s.ok()) {
      m.has_template = false;
      return s;
    }
  }
  return Status();
}

Status TemplateMatcherCuda::match(const GrayView& f, const MatchSettings& settings, std::vector<Match>* matches) {
  Impl& m = *impl_;
  matches->clear();
  CUDAPREP_RETURN_IF_ERROR(tm::check_match_settings(settings));
  CUDAPREP_RETURN_IF_ERROR(m.check_frame(f));
  Rect r;
  CUDAPREP_RETURN_IF_ERROR(resolve_search_region(f.width, f.height, m.tw, m.th, settings.search, &r));
  cudaTextureObject_t tex = 0;
  CUDAPREP_RETURN_IF_ERROR(m.texture_for(f, &tex));
  CUDAPREP_RETURN_IF_ERROR(m.enqueue_frame(tex, r, settings.threshold));
  const int first = std::min(m.capacity, kFirstCopy);
  CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaStreamSynchronize(m.stream), "cudaStreamSynchronize"));
  if (m.profile) m.print_profile();
  const int count = std::min<int>(reinterpret_cast<const Header*>(m.host_candidates.data())->count, m.capacity);
  if (count > first) {  // many cells above a low threshold: fetch the rest
    const size_t off = sizeof(Header) + first * sizeof(tm::Candidate);
    CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaMemcpyAsync(m.host_candidates.data() + off, m.candidates.data() + off,
                                                         (count - first) * sizeof(tm::Candidate),
                                                         cudaMemcpyDeviceToHost, m.stream),
                                         "cudaMemcpyAsync (candidates)"));
    CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaStreamSynchronize(m.stream), "cudaStreamSynchronize"));
  }
  const tm::Candidate* c = reinterpret_cast<const tm::Candidate*>(m.host_candidates.data() + sizeof(Header));
  std::vector<tm::Candidate> list(c, c + count);
  tm::select_matches(list, r, m.tw, m.th, settings.max_matches, matches);
  return Status();
}

Status TemplateMatcherCuda::score_map(const GrayView& f, const Rect& search, std::vector<float>* scores, int* map_w,
                                     int* map_h) {
  Impl& m = *impl_;
  CUDAPREP_RETURN_IF_ERROR(m.check_frame(f));
  Rect r;
  CUDAPREP_RETURN_IF_ERROR(resolve_search_region(f.width, f.height, m.tw, m.th, search, &r));
  cudaTextureObject_t tex = 0;
  CUDAPREP_RETURN_IF_ERROR(m.texture_for(f, &tex));
  CUDAPREP_RETURN_IF_ERROR(m.enqueue_scores(tex, r));
  const int mw = r.w - m.tw + 1, mh = r.h - m.th + 1;
  scores->resize(static_cast<size_t>(mw) * mh);
  CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaMemcpy2DAsync(scores->data(), mw * sizeof(float), m.map.data(),
                                                         m.spitch * sizeof(float), mw * sizeof(float), mh,
                                                         cudaMemcpyDeviceToHost, m.stream),
                                       "cudaMemcpy2DAsync (scores)"));
  CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaStreamSynchronize(m.stream), "cudaStreamSynchronize"));
  *map_w = mw;
  *map_h = mh;
  return Status();
}

void TemplateMatcherCuda::release() {
  if (impl_) impl_->release();
}

}  // namespace cudaprep
