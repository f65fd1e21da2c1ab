// Internal to the CUDA template matcher: the frame kernel, its device helpers and the parameters
// the host passes it. Included by templatematch_cuda.cu alone, which instantiates the kernel
// (everything here has internal linkage: one translation unit).
//
// Tensor-core formulation. For one image row r and the 16 output rows y0..y0+15 of a warp's
// M-group, A[m][k] = T(k, r - y0 - m) (template row by row, zero outside the template) and
// B_s[k][n] = I(x0 + s + 4n + k, r) for s = 0..3: the product accumulates, over all r, the
// correlation of output (x0 + s + 4n, y0 + m). A comes from shared memory with ldmatrix; the
// columns of B are 4-byte windows of the image row at a byte offset, built with funnel shifts
// from aligned 32-bit words. No work is wasted along k beyond padding the template width to 32;
// along r an M-group spends th + 15 row steps for th rows of the template. The staged template rows
// have 16 zero rows around each row segment, so a lane's ldmatrix row is linear in r (no per-lane
// range test in the loop). A masked template (kMasked) takes two passes of two products each:
// A = M T and A = M with B = I, then A = M with B = the high and the low bytes of I^2.
#pragma once
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstring>
#include <type_traits>

#include "mma_u8.cuh"
#include "templatematch_internal.h"
#include "templatematch_layout.h"
#include "templatematch_trace.h"

namespace cudaprep {

namespace {

namespace cg = cooperative_groups;
using tm::frame_layout;
using tm::FrameLayout;
using tm::kChunk;
using tm::kM16Rows;
using tm::kMaxKz;
using tm::kRows;
using tm::kRowSegments;

__device__ __forceinline__ uint4 fetch16(cudaTextureObject_t tex, int xe, int y) {
  return tex2D<uint4>(tex, static_cast<float>(xe) + 0.5f, static_cast<float>(y) + 0.5f);
}

// ------------------------------------------------------------------------------------------
// The frame kernel.
//
// A block owns a tile of 64 * PP x 64 positions (frame coordinates, x aligned to the tile width)
// and, with a cluster split (kz > 1, sm_90), template rows [JA, JB) of it; the kz blocks of one
// tile form a thread-block cluster. (The row split, kScan, differs in steps 2 to 4: see there.)
// Per block:
//   1. stage the template rows and the frame rows the block reads (texture, 16-byte texels);
//   2. sum T * I over its template rows: tensor cores (4 warps of 32 x 32 * PP positions, times
//      ks groups that split the rows again; or, with a cluster split, 8 warps of 16 x 32) or
//      dp4a; partial sums into a shared tile;
//   3. kz > 1: each block adds up rows [64 q / kz, 64 (q + 1) / kz) of the tile over the cluster
//      (DSMEM), q = its rank;
//   4. exact window sums S1, S2 of its rows from the staged frame rows (vertical running sums per
//      column, 16 rows at a time, then horizontal sums of 8 consecutive positions per thread), the
//      score of each position (the CPU's formula), written into the shared tile and then, row by
//      row, into the map;
//   5. peaks: the best position of each cell part inside the tile (a warp per cell part); where it
//      reaches the threshold, merged over blocks with a 64-bit atomicMax on (score, -position);
//      the first block to reach a cell records it in a list. The last block to finish (a ticket)
//      reads the listed cells, fits the sub-pixel offsets from the map and writes the candidates
//      straight into pinned host memory, then resets the cell keys, the list and the ticket for
//      the next frame.
// The host then synchronises once and runs the shared NMS: one launch, no copy.

constexpr int kSeg = 8;                                 // consecutive positions per thread in the horizontal pass
constexpr unsigned long long kTouchedOne = 1ull << 32;  // one listed cell in FrameParams::progress
constexpr int kNmsKeysPerThread = 8;                    // the kernel's suppression holds this many keys per thread

struct alignas(32) OutHeader {
  unsigned done;  // 0 until the kernel has written the candidates, then their count + 1
  unsigned pad[7];
};
static_assert(sizeof(OutHeader) == 32, "header");

struct FrameParams {
  cudaTextureObject_t tex;
  const uint8_t* templ;  // th rows of kp bytes, zero beyond tw (and, masked, outside the mask)
  const uint8_t* mask;   // masked templates: th rows of kp bytes, 1 where the mask is set; else null
  int tw, th, kp;
  int64_t n, st, var_t;
  int sx, sy, mw, mh;
  int x_first;  // frame x of the first tile (a multiple of the tile width)
  int kz;       // template-row split over a cluster (1: none)
  float* map;
  int64_t mpitch;
  // Peaks; peaks == 0: score map only.
  int peaks;
  int cw, ch, ncx;
  double threshold;
  unsigned long long* keys;      // per cell, 0 between frames
  unsigned* touched;             // cells with a key, in no particular order
  unsigned long long* progress;  // blocks done (low word), cells listed (high word); 0 between frames
  OutHeader* out;                // pinned host memory: header, then the candidates
  int max_matches;               // for the non-maximum suppression in the kernel
  unsigned nms_host_up_to;       // candidate lists up to this long go to the host whole
  unsigned long long* trace;     // diagnostics.trace: per block, tm::kTraceSlots clock/timer values; else null
};

// diagnostics.trace (templatematch_trace.h). (Marks inside the box phase were tried: they changed
// the kernels' register allocation, and 128 px got 2 % slower with them.)
__device__ __forceinline__ unsigned long long global_timer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void trace_mark(const FrameParams& p, int slot) {
  if (p.trace && threadIdx.x == 0) {
    const unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned long long* t = p.trace + static_cast<size_t>(b) * tm::kTraceSlots;
    t[slot] = clock64();
    if (slot == tm::kTrStart) {
      t[tm::kTrGtStart] = global_timer();
      unsigned sm;
      asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
      t[tm::kTrSm] = sm;
      t[tm::kTrLast] = 0;
    }
    if (slot == tm::kTrEnd) t[tm::kTrGtEnd] = global_timer();
  }
}

CUDAPREP_HD uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}
CUDAPREP_HD float bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}

// Cell key: larger is better. High word: the score's bits, ordered like the floats; low word:
// ~(v * mw + u), so that equal scores prefer the lowest y, then the lowest x (the CPU's scan).
// Scores are never -0 or NaN (see ccoeff_normed), and every real key is nonzero.
CUDAPREP_HD unsigned long long cell_key(float s, uint32_t at) {
  const uint32_t b = float_bits(s);
  const uint32_t o = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
  return (static_cast<unsigned long long>(o) << 32) | (0xffffffffu - at);
}
CUDAPREP_HD float key_score(unsigned long long k) {
  const uint32_t o = static_cast<uint32_t>(k >> 32);
  return bits_float((o & 0x80000000u) ? (o & 0x7fffffffu) : ~o);
}
CUDAPREP_HD uint32_t key_at(unsigned long long k) { return 0xffffffffu - static_cast<uint32_t>(k); }

// A cell's peak as a candidate, with tm::subpixel_at's offsets from the other blocks' scores (L2).
__device__ tm::Candidate cell_candidate(const FrameParams& p, unsigned long long key) {
  const uint32_t at = key_at(key);
  tm::Candidate c;
  c.u = static_cast<int>(at % static_cast<uint32_t>(p.mw));
  c.v = static_cast<int>(at / static_cast<uint32_t>(p.mw));
  c.score = key_score(key);
  const float* row = p.map + static_cast<int64_t>(c.v) * p.mpitch;
  c.dx = (c.u > 0 && c.u < p.mw - 1) ? tm::parabola_offset(__ldcg(row + c.u - 1), c.score, __ldcg(row + c.u + 1)) : 0.0;
  c.dy = (c.v > 0 && c.v < p.mh - 1)
             ? tm::parabola_offset(__ldcg(row + c.u - p.mpitch), c.score, __ldcg(row + c.u + p.mpitch))
             : 0.0;
  return c;
}

// The largest of the warp's 32 values, in every lane.
__device__ __forceinline__ unsigned long long warp_max(unsigned long long v) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    const unsigned long long o = __shfl_xor_sync(0xffffffffu, v, off);
    v = o > v ? o : v;
  }
  return v;
}

// tm::select_matches inside one block, on the listed cells' keys (larger key = better: score,
// then lower y, then lower x), clearing the keys for the next frame. Each round takes the best
// remaining key (one block-wide maximum, one barrier: the partial maxima alternate between two
// buffers) and drops every remaining key whose box overlaps it. Keys stay in registers, up to
// kNmsKeysPerThread per thread. Returns the number kept; their keys are in s_kept, best first.
__device__ unsigned block_nms(const FrameParams& p, unsigned count, int tid, int nthreads, unsigned long long* s_kept,
                              unsigned long long* s_partial /* 2 x 32 */) {
  unsigned long long key[kNmsKeysPerThread];
  int ku[kNmsKeysPerThread], kv[kNmsKeysPerThread];
#pragma unroll
  for (int j = 0; j < kNmsKeysPerThread; ++j) {
    const unsigned i = static_cast<unsigned>(tid + j * nthreads);
    key[j] = 0ull;
    if (i < count) {
      const unsigned cell = __ldcg(&p.touched[i]);
      key[j] = __ldcg(&p.keys[cell]);
      p.keys[cell] = 0ull;
    }
    const uint32_t at = key_at(key[j]);
    ku[j] = static_cast<int>(at % static_cast<uint32_t>(p.mw));
    kv[j] = static_cast<int>(at / static_cast<uint32_t>(p.mw));
  }
  const int lane = tid & 31, warp = tid >> 5, warps = nthreads >> 5;
  const unsigned limit = static_cast<unsigned>(min(p.max_matches, kMaxMatches));
  unsigned kept = 0;
  for (unsigned round = 0; kept < limit; ++round) {
    unsigned long long best = 0ull;
#pragma unroll
    for (int j = 0; j < kNmsKeysPerThread; ++j) best = key[j] > best ? key[j] : best;
    best = warp_max(best);
    unsigned long long* partial = s_partial + 32 * (round & 1u);
    if (lane == 0) partial[warp] = best;
    __syncthreads();
    best = lane < warps ? partial[lane] : 0ull;  // every warp reduces the partial maxima itself
    best = warp_max(best);
    if (best == 0ull) break;
    if (tid == 0) s_kept[kept] = best;
    ++kept;
    const uint32_t at = key_at(best);
    const int bu = static_cast<int>(at % static_cast<uint32_t>(p.mw));
    const int bv = static_cast<int>(at / static_cast<uint32_t>(p.mw));
#pragma unroll
    for (int j = 0; j < kNmsKeysPerThread; ++j)
      if (abs(ku[j] - bu) < p.tw && abs(kv[j] - bv) < p.th) key[j] = 0ull;  // the kept one too
  }
  __syncthreads();  // s_kept complete
  return kept;
}

// The cells that meet map positions [ut0, ut1) x [vt0, vt1) of a block (its tile rows r0..).
struct TileCells {
  int ut0, ut1, vt0, vt1, cx0, cy0, lcx, count;
};
CUDAPREP_HD TileCells tile_cells(const FrameParams& p, int X0, int Y0, int r0, int nrows, int tile_w) {
  TileCells t;
  t.ut0 = X0 - p.sx > 0 ? X0 - p.sx : 0;
  t.ut1 = X0 - p.sx + tile_w < p.mw ? X0 - p.sx + tile_w : p.mw;
  t.vt0 = Y0 - p.sy + r0;
  t.vt1 = t.vt0 + nrows < p.mh ? t.vt0 + nrows : p.mh;
  t.cx0 = t.cy0 = t.lcx = t.count = 0;
  if (t.ut0 >= t.ut1 || t.vt0 >= t.vt1) return t;
  t.cx0 = t.ut0 / p.cw;
  t.cy0 = t.vt0 / p.ch;
  t.lcx = (t.ut1 - 1) / p.cw - t.cx0 + 1;
  t.count = t.lcx * ((t.vt1 - 1) / p.ch - t.cy0 + 1);
  return t;
}

// One lane's best key over its share (i = lane, lane + 32, ...) of the part of cell `lc` (local
// index) inside the tile; the scores are float bits in the tile. *cell: the cell's global index.
// kNaN: scores may be NaN (a masked template's windows with no variance), which never win.
template <bool kNaN = false>
CUDAPREP_HD unsigned long long cell_part_best(const FrameParams& p, const TileCells& t, const uint32_t* tile, int cp,
                                              int X0, int Y0, int lc, int lane, int* cell) {
  const int cx = t.cx0 + lc % t.lcx, cy = t.cy0 + lc / t.lcx;
  *cell = cy * p.ncx + cx;
  const int u0 = t.ut0 > cx * p.cw ? t.ut0 : cx * p.cw, u1 = t.ut1 < (cx + 1) * p.cw ? t.ut1 : (cx + 1) * p.cw;
  const int v0 = t.vt0 > cy * p.ch ? t.vt0 : cy * p.ch, v1 = t.vt1 < (cy + 1) * p.ch ? t.vt1 : (cy + 1) * p.ch;
  const int w = u1 - u0, h = v1 - v0;
  unsigned long long best = 0;
  // Element i = lane + 32 k of the w x h part, row-major: (du, dv) = (i % w, i / w), stepped
  // without a division per element.
  const int sq = 32 / w, sr = 32 % w;
  int du = lane % w, dv = lane / w;
  const uint32_t* t0 = tile + (v0 - (Y0 - p.sy)) * cp + (u0 - (X0 - p.sx));
  while (dv < h) {
    const float s = bits_float(t0[dv * cp + du]);
    const unsigned long long k = cell_key(s, static_cast<uint32_t>((v0 + dv) * p.mw + u0 + du));
    if (!kNaN || s == s) best = k > best ? k : best;
    du += sr;
    dv += sq;
    if (du >= w) {
      du -= w;
      ++dv;
    }
  }
  return best;
}

// Unrolling hints only where the device compiler reads them (the window sums build for the host too).
#if defined(__CUDA_ARCH__)
#define TM_DEVICE_PRAGMA(x) _Pragma(#x)
#else
#define TM_DEVICE_PRAGMA(x)
#endif

struct BlockSync {
  __device__ void operator()() const { __syncthreads(); }
};

// The score of a position from its window sums, written over its sum T * I in the tile (float
// bits); positions outside the map keep their value.
__host__ __device__ inline void score_into(const FrameParams& p, uint32_t* t, int u, int v, uint32_t s1, uint32_t s2) {
  if (u >= 0 && u < p.mw && v < p.mh)
    *t = float_bits(static_cast<float>(tm::ccoeff_normed(p.n, p.st, p.var_t, s1, s2, *t)));
}

// Column sums of I and I^2 over th rows from `rows` (a staged row every rw bytes): column
// c = tid + k * nthreads (k < K) of the first ncols, into a1[k] and a2[k].
template <int K>
__host__ __device__ inline void vertical_sums(const uint8_t* rows, int rw, int ncols, int th, int tid, int nthreads,
                                              uint32_t (&a1)[K], uint32_t (&a2)[K]) {
  TM_DEVICE_PRAGMA(unroll)
  for (int k = 0; k < K; ++k) {
    const int c = tid + k * nthreads;
    uint32_t s = 0, s2 = 0;
    if (c < ncols) {
      const uint8_t* col = rows + c;
      TM_DEVICE_PRAGMA(unroll 4)
      for (int j = 0; j < th; ++j) {
        const uint32_t v = col[j * rw];
        s += v;
        s2 += v * v;
      }
    }
    a1[k] = s;
    a2[k] = s2;
  }
}

// The column sums of `rows` consecutive rows from `top` on (a1, a2 hold the first row's): out(i,
// c, sum I, sum I^2) for row i, then each slides down a row, but not past the last of `left` rows
// (never past the staged rows).
template <int K, class Out>
__host__ __device__ inline void slide_sums(const uint8_t* top, int rw, int ncols, int th, int rows, int left, int tid,
                                           int nthreads, uint32_t (&a1)[K], uint32_t (&a2)[K], Out&& out) {
  TM_DEVICE_PRAGMA(unroll)
  for (int k = 0; k < K; ++k) {
    const int c = tid + k * nthreads;
    if (c >= ncols) continue;
    const uint8_t* col = top + c;
    // The bytes that leave and enter the window first (the stores may alias them for the
    // compiler), then the rows.
    TM_DEVICE_PRAGMA(unroll 1)
    for (int i0 = 0; i0 < rows; i0 += 8) {
      uint32_t out_px[8], in_px[8];
      TM_DEVICE_PRAGMA(unroll)
      for (int i = 0; i < 8; ++i) {
        const bool slide = i0 + i < rows && i0 + i + 1 < left;
        out_px[i] = slide ? col[(i0 + i) * rw] : 0u;
        in_px[i] = slide ? col[(i0 + i + th) * rw] : 0u;
      }
      TM_DEVICE_PRAGMA(unroll)
      for (int i = 0; i < 8; ++i) {
        if (i0 + i < rows) {
          out(i0 + i, c, a1[k], a2[k]);
          a1[k] += in_px[i] - out_px[i];
          a2[k] += in_px[i] * in_px[i] - out_px[i] * out_px[i];
        }
      }
    }
  }
}

// Step 4 for tile rows [r0, r0 + nrows) of a block without window-sum warps: window sums, scores
// into the tile (as float bits), for positions inside the map. `region` row i is frame row Y0 + i;
// `tile` holds sum T * I (64 rows of cp words); vbuf holds kChunk rows of vp words (vertical sums
// of I^2), then kChunk rows of vh half-words (vertical sums of I, <= 256 * 255). Threads tid of
// nthreads; `sync` is the block barrier. A thread re-sums tw columns for 8 consecutive positions
// of a row (few barriers).
#pragma nv_exec_check_disable
template <int TW, class Sync>
__host__ __device__ inline void box_scores(const FrameParams& p, const uint8_t* region, int rw, uint32_t* tile, int cp,
                                           uint32_t* vbuf, int vp, int vh, int X0, int Y0, int r0, int nrows, int tid,
                                           int nthreads, Sync&& sync) {
  const int tw = p.tw, th = p.th;
  const int ncols = TW - 1 + tw;                                  // window columns of the tile's positions
  constexpr int kCols = (TW - 1 + kMaxTemplateSide + 127) / 128;  // columns per thread (>= 128 threads)
  uint32_t* v2 = vbuf;
  uint16_t* v1 = reinterpret_cast<uint16_t*>(vbuf + kChunk * vp);
  uint32_t a1[kCols], a2[kCols];
  vertical_sums<kCols>(region + r0 * rw, rw, ncols, th, tid, nthreads, a1, a2);
  // Horizontal tasks: a thread sums 8 consecutive positions of one row. Lanes 0-15 take rows 0-15
  // of one segment, lanes 16-31 the same rows 16 columns further: with odd word pitches (and
  // half-word pitches of 2 mod 4), distinct banks.
  constexpr int kTasks = kChunk * (TW / kSeg);
  for (int rc = 0; rc < nrows; rc += kChunk) {
    const int rows = nrows - rc < kChunk ? nrows - rc : kChunk;
    slide_sums<kCols>(region + (r0 + rc) * rw, rw, ncols, th, rows, nrows - rc, tid, nthreads, a1, a2,
                      [&](int i, int c, uint32_t s1, uint32_t s2) {
                        v1[i * vh + c] = static_cast<uint16_t>(s1);  // <= 256 * 255
                        v2[i * vp + c] = s2;
                      });
    sync();
    for (int task = tid; task < kTasks; task += nthreads) {
      const int lane = task & 31, grp = task >> 5;
      const int i = lane & 15;
      if (i >= rows) continue;
      const int seg = (grp >> 1) * 4 + (grp & 1) + (lane >> 4) * 2;
      const int x0 = seg * kSeg;
      const uint16_t* w1 = v1 + i * vh + x0;
      const uint32_t* w2 = v2 + i * vp + x0;
      uint32_t s1 = 0, s2 = 0;
      TM_DEVICE_PRAGMA(unroll 4)
      for (int x = 0; x < tw; ++x) {
        s1 += w1[x];
        s2 += w2[x];
      }
      uint32_t S1[kSeg], S2[kSeg];
      S1[0] = s1;
      S2[0] = s2;
      TM_DEVICE_PRAGMA(unroll)
      for (int e = 1; e < kSeg; ++e) {
        s1 += static_cast<uint32_t>(w1[e - 1 + tw]) - w1[e - 1];
        s2 += w2[e - 1 + tw] - w2[e - 1];
        S1[e] = s1;
        S2[e] = s2;
      }
      const int yy = r0 + rc + i;
      const int v = Y0 - p.sy + yy;
      uint32_t* trow = tile + yy * cp + x0;
      TM_DEVICE_PRAGMA(unroll)
      for (int e = 0; e < kSeg; ++e) score_into(p, trow + e, X0 - p.sx + x0 + e, v, S1[e], S2[e]);
    }
    sync();
  }
}

#if defined(__CUDA_ARCH__)
// Each row of the vertical sums (v1 and v2, 32-bit, pitch vp) turned in place into its inclusive
// prefix sums, a warp per row, 4 consecutive columns per lane (128 per pass). Sums of I^2 may
// wrap: a window's difference is still exact, as its true value is below 2^32.
__device__ inline void prefix_rows(uint32_t* v1, uint32_t* v2, int vp, int ncols, int rows, int tid, int nthreads) {
  const int lane = tid & 31;
  for (int i = tid >> 5; i < rows; i += nthreads >> 5) {
    uint32_t carry1 = 0, carry2 = 0;
    for (int c = 4 * lane; c - 4 * lane < ncols; c += 128) {
      uint32_t a[4], b[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        a[k] = c + k < ncols ? v1[i * vp + c + k] : 0u;
        b[k] = c + k < ncols ? v2[i * vp + c + k] : 0u;
      }
#pragma unroll
      for (int k = 1; k < 4; ++k) {
        a[k] += a[k - 1];
        b[k] += b[k - 1];
      }
      uint32_t s1 = a[3], s2 = b[3];  // inclusive over the lanes, then made exclusive
#pragma unroll
      for (int off = 1; off < 32; off <<= 1) {
        const uint32_t t1 = __shfl_up_sync(0xffffffffu, s1, off), t2 = __shfl_up_sync(0xffffffffu, s2, off);
        if (lane >= off) s1 += t1, s2 += t2;
      }
      const uint32_t e1 = carry1 + s1 - a[3], e2 = carry2 + s2 - b[3];
#pragma unroll
      for (int k = 0; k < 4; ++k)
        if (c + k < ncols) {
          v1[i * vp + c + k] = a[k] + e1;
          v2[i * vp + c + k] = b[k] + e2;
        }
      carry1 += __shfl_sync(0xffffffffu, s1, 31);
      carry2 += __shfl_sync(0xffffffffu, s2, 31);
    }
  }
}
#endif

// Step 1, template rows [JA, JA + J) (src: row JA, kp bytes a row) into the staged layout of
// frame_layout (tp bytes a row): segment g (rows b[g] <= j < b[g + 1], b[g] = g J / ks) at staged
// rows 16 (g + 1) + j, zero band k (16 rows) at 16 k + b[k], k = 0..ks. Threads tid of nthreads.
#pragma nv_exec_check_disable
__host__ __device__ inline void stage_template(uint8_t* tsm, int tp, const uint8_t* src, int kp, int J, int ks, int tid,
                                               int nthreads) {
  const int per_row = kp / 16;
  const int b1 = J / ks, b2 = 2 * J / ks, b3 = 3 * J / ks;  // ks <= 4
  const uint4* s16 = reinterpret_cast<const uint4*>(src);
  for (int i = tid; i < J * per_row; i += nthreads) {
    const int j = i / per_row, c16 = i - j * per_row;
    const int g = (ks > 1 && j >= b1) + (ks > 2 && j >= b2) + (ks > 3 && j >= b3);
    *reinterpret_cast<uint4*>(tsm + (16 * (g + 1) + j) * tp + 16 * c16) = s16[i];
  }
  for (int i = tid; i < 16 * (ks + 1) * per_row; i += nthreads) {
    const int z = i / per_row, c16 = i - z * per_row, k = z >> 4;
    *reinterpret_cast<uint4*>(tsm + (16 * k + k * J / ks + (z & 15)) * tp + 16 * c16) = make_uint4(0, 0, 0, 0);
  }
}

// Fragments of one (image row, 32-column chunk) step of the tensor-core loop: A of the two
// M-groups from NA staged row sets, the B words of NB frame planes. A masked template uses
// NA = 2 (M T and M, with the same B: I) and NB = 2 (the high and the low bytes of I^2, with the
// same A: M); NA * NB <= 2.
template <int PP, int NA, int NB>
struct Frag {
  uint32_t a0[NA][4], a1[NA][4];
  uint32_t w[NB][PP][4];
};

struct MmaCtx {
  const uint8_t* wbase;  // the warp's first staged row and column
  int rw;
  int w_next;      // NB == 2: bytes from the first plane to the second
  uint32_t abase;  // this lane's ldmatrix row for image row rr: abase + rr * tp (M-group 0)
  int a_next;      // NA == 2: bytes from the first staged row set to the second
  int tp, ja, jb, gt;
};

template <int PP, int NA, int NB, bool M0, bool M1>
__device__ __forceinline__ void load_frag(Frag<PP, NA, NB>& f, const MmaCtx& x, int rr, int c) {
#pragma unroll
  for (int na = 0; na < NA; ++na) {
    if (M0) ldmatrix_x4(f.a0[na], x.abase + na * x.a_next + rr * x.tp + 32 * c);
    if (M1) ldmatrix_x4(f.a1[na], x.abase + na * x.a_next + (rr - 16) * x.tp + 32 * c);
  }
#pragma unroll
  for (int nb = 0; nb < NB; ++nb) {
    const uint32_t* w = reinterpret_cast<const uint32_t*>(x.wbase + nb * x.w_next + rr * x.rw) + x.gt + 8 * c;
#pragma unroll
    for (int pp = 0; pp < PP; ++pp) {
      f.w[nb][pp][0] = w[8 * pp];
      f.w[nb][pp][1] = w[8 * pp + 1];
      f.w[nb][pp][2] = w[8 * pp + 4];
      f.w[nb][pp][3] = w[8 * pp + 5];
    }
  }
}

// acc[na * NB + nb]: the product of A set na with plane nb.
template <int PP, int NA, int NB, bool M0, bool M1>
__device__ __forceinline__ void mma_frag(uint32_t (&acc)[NA * NB][2][PP][4][4], const Frag<PP, NA, NB>& f) {
#pragma unroll
  for (int nb = 0; nb < NB; ++nb)
#pragma unroll
    for (int pp = 0; pp < PP; ++pp) {
#pragma unroll
      for (int s = 0; s < 4; ++s) {
        const uint32_t b0 = s ? __funnelshift_r(f.w[nb][pp][0], f.w[nb][pp][1], 8 * s) : f.w[nb][pp][0];
        const uint32_t b1 = s ? __funnelshift_r(f.w[nb][pp][2], f.w[nb][pp][3], 8 * s) : f.w[nb][pp][2];
#pragma unroll
        for (int na = 0; na < NA; ++na) {
          if (M0) mma_u8(acc[na * NB + nb][0][pp][s], f.a0[na], b0, b1);
          if (M1) mma_u8(acc[na * NB + nb][1][pp][s], f.a1[na], b0, b1);
        }
      }
    }
}

// Image rows [rb, re) of one M-group phase, nc column chunks each. kPipe: the fragments of the next
// step are loaded while the tensor cores work on the current one (two register sets).
template <int PP, int NA, int NB, bool M0, bool M1, bool kPipe>
__device__ __forceinline__ void mma_phase(uint32_t (&acc)[NA * NB][2][PP][4][4], const MmaCtx& x, int rb, int re,
                                          int nc) {
  if (rb >= re) return;
  if constexpr (!kPipe) {
    for (int rr = rb; rr < re; ++rr)
      for (int c = 0; c < nc; ++c) {
        Frag<PP, NA, NB> f;
        load_frag<PP, NA, NB, M0, M1>(f, x, rr, c);
        mma_frag<PP, NA, NB, M0, M1>(acc, f);
      }
  } else {
    const int total = (re - rb) * nc;
    int lr = rb, lc = 0;  // the next step to load
    Frag<PP, NA, NB> f0, f1;
    load_frag<PP, NA, NB, M0, M1>(f0, x, lr, lc);
    if (++lc == nc) lc = 0, ++lr;
    for (int it = 0;;) {
      if (it + 1 < total) {
        load_frag<PP, NA, NB, M0, M1>(f1, x, lr, lc);
        if (++lc == nc) lc = 0, ++lr;
      }
      mma_frag<PP, NA, NB, M0, M1>(acc, f0);
      if (++it == total) break;
      if (it + 1 < total) {
        load_frag<PP, NA, NB, M0, M1>(f0, x, lr, lc);
        if (++lc == nc) lc = 0, ++lr;
      }
      mma_frag<PP, NA, NB, M0, M1>(acc, f1);
      if (++it == total) break;
    }
  }
}

// kM16: 8 warps of one 16-row M-group each (image rows [ja, jb + 15) per warp instead of
// [ja, jb + 31) for two M-groups): the shorter serial chain of the small cluster-split grids.
// kScan (with kM16: the row split of small regions, no cluster): the kz blocks of a tile each own
// tile rows [r0, r0 + nrows), nrows <= 16, and take all template rows: 8 warps multiply (two
// column halves x four template-row segments, one 16-row M-group each) while 4 more warps sum
// the columns of the block's rows; after a barrier every warp turns the column sums into prefix
// sums, and one pass adds up the segments' sums, takes the window sums and writes the scores into
// the tile and the map. (Only block barriers: the window-sum warps share no barrier of their own.)
// kMasked: a masked template (OpenCV's masked TM_CCOEFF_NORMED): the window sums under the mask
// are products too, so a block runs two passes of the tensor-core loop with two products each:
// M T and M with I, then M with the high and with the low bytes of I^2 (sum M I^2 = 256 sum M hi
// + sum M lo); 64-wide tiles, no cluster split.
template <bool kMma, int PP, bool kPipe, bool kM16, bool kScan, bool kMasked = false>
__global__ void __launch_bounds__(kScan     ? 32 * (tm::kSumWarps + 2 * kRowSegments)
                                  : PP == 1 ? 512
                                            : 256) frame_kernel(const FrameParams p) {
  static_assert(!kMasked || (kMma && PP == 1 && !kM16 && !kScan), "masked: 64-wide tensor-core tiles only");
  static_assert(!kScan || (kMma && kM16), "row split: tensor-core blocks of 16-row M-groups only");
  constexpr bool kRowSplit = kScan;
  constexpr int kSumWarps = kRowSplit ? tm::kSumWarps : 0;  // (the first warps; the product warps follow)
  constexpr int TW = 64 * PP;
  extern __shared__ __align__(16) uint8_t smem[];  // no static shared memory: the limit is the opt-in size
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, nthreads = blockDim.x;
  const int X0 = p.x_first + blockIdx.x * TW, Y0 = p.sy + blockIdx.y * kRows;
  const int th = p.th, kp = p.kp, kz = p.kz, q = blockIdx.z;
  const int JA = kRowSplit ? 0 : q * th / kz, JB = kRowSplit ? th : (q + 1) * th / kz, J = JB - JA;  // template rows
  const int r0 = q * kRows / kz, nrows = (q + 1) * kRows / kz - r0;             // and tile rows of step 4
  const int ks = kRowSplit ? kRowSegments : kMma && !kM16 ? nthreads >> 7 : 1;  // template-row segments
  const FrameLayout L = frame_layout(PP, p.tw, th, kp, J, ks, kScan, kMasked);
  uint8_t* region = smem;
  uint8_t* tsm = smem + L.region;
  uint32_t* tile = reinterpret_cast<uint32_t*>(smem + L.region + L.tiles);  // unmasked: replaces the template rows
  uint32_t* vbuf = tile + kRows * L.cp;
  uint32_t* sum_mi = tile + kRows * L.cp;     // masked: sum M I (unmasked: vbuf's place)
  uint32_t* sum_mii = sum_mi + kRows * L.cp;  // masked: sum M I^2
  // kRowSplit: the column sums of the block's rows (kM16Rows rows of vp words, of I then of I^2),
  // then their prefix sums; each template-row segment's sums T * I of the block's 16 rows.
  uint32_t* vs1 = reinterpret_cast<uint32_t*>(smem + L.sums);
  uint32_t* vs2 = vs1 + kM16Rows * L.vp;
  uint32_t* parts = reinterpret_cast<uint32_t*>(smem + L.parts);
  trace_mark(p, tm::kTrStart);

  // 1. Stage the template rows and the frame rows this block reads. Template: segment g (rows
  //    [JA + g J / ks, JA + (g + 1) J / ks), one per warp group) at staged rows from
  //    16 (g + 1) + g J / ks on, 16 zero rows before and after each. Frame: the correlation reads
  //    rows [JA, JB + 63), the window sums rows [r0, r0 + nrows + th - 1) (with a cluster split
  //    both are a slice of the th + 63 rows).
  {
    stage_template(tsm, L.tp, p.templ + static_cast<size_t>(JA) * kp, kp, J, ks, tid, nthreads);
    if constexpr (kMasked)
      stage_template(tsm + L.tmpl, L.tp, p.mask + static_cast<size_t>(JA) * kp, kp, J, ks, tid, nthreads);
    const int texels = L.rw / 16;
    // (kRowSplit: the M-group's 16 rows from r0, some of them past the block's rows.)
    const int s0 = kRowSplit ? r0 : min(JA, r0),
              s1 = kRowSplit ? r0 + kM16Rows + th - 1 : min(th + kRows - 1, max(JB + kRows - 1, r0 + nrows + th - 1));
    // Texel e of row r for i = tid, tid + nthreads, ...: (e, r) stepped without a division, 8
    // fetches in flight per thread.
    const int dq = nthreads / texels, dr = nthreads % texels;
    int e = tid % texels, r = s0 + tid / texels;
    while (r < s1) {
      constexpr int kBatch = 8;
      uint4 v[kBatch];
      int at[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        at[b] = r < s1 ? r * L.rw + 16 * e : -1;
        if (r < s1) v[b] = fetch16(p.tex, X0 / 16 + e, Y0 + r);
        e += dr;
        r += dq;
        if (e >= texels) {
          e -= texels;
          ++r;
        }
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b)
        if (at[b] >= 0) *reinterpret_cast<uint4*>(region + at[b]) = v[b];
    }
  }
  __syncthreads();
  trace_mark(p, tm::kTrStaged);

  // 2. sum T * I of the block's template rows into the tile (masked: the four sums); with
  //    kRowSplit, into the segments' parts, while the window-sum warps sum the columns of the
  //    block's rows.
  if (warp < kSumWarps) {
    if constexpr (kRowSplit) {
      // The column sums of the block's rows, while the product warps multiply.
      constexpr int kCols = (TW - 1 + kMaxTemplateSide + 32 * kSumWarps - 1) / (32 * kSumWarps);
      const int ncols = TW - 1 + p.tw;
      uint32_t a1[kCols], a2[kCols];
      vertical_sums<kCols>(region + r0 * L.rw, L.rw, ncols, th, tid, 32 * kSumWarps, a1, a2);
      slide_sums<kCols>(region + r0 * L.rw, L.rw, ncols, th, nrows, nrows, tid, 32 * kSumWarps, a1, a2,
                        [&](int i, int c, uint32_t c1, uint32_t c2) {
                          vs1[i * L.vp + c] = c1;
                          vs2[i * L.vp + c] = c2;
                        });
    }
  } else if constexpr (kMma) {
    // Warp: column half wx, first output row wrow of the tile, template-row segment kgroup.
    const int pw = warp - kSumWarps;  // (the product warps)
    const int wx = pw & 1;
    const int wrow = kRowSplit ? r0 : kM16 ? 16 * (pw >> 1) : 32 * ((pw >> 1) & 1);
    const int kgroup = kRowSplit ? pw >> 1 : kM16 ? 0 : pw >> 2;
    const int g = lane >> 2, t = lane & 3;
    MmaCtx x;
    x.rw = L.rw;
    x.tp = L.tp;
    x.ja = JA + kgroup * J / ks;
    x.jb = JA + (kgroup + 1) * J / ks;
    // A row m of M-group 0 at image row rr is template row j = rr - m (m = lrow for ldmatrix),
    // staged at row 16 (kgroup + 1) + j - JA; |j - segment| <= 15 where it is read.
    const int lrow = (lane & 7) + 8 * ((lane >> 3) & 1);
    x.gt = g + t;
    const int nc = kp / 32;
    // One pass of products: A from the staged rows `staged` (template or mask; NA == 2: also the
    // set `a_next` bytes after it), B from the frame plane `plane` (NB == 2: also the plane
    // `w_next` bytes after it); the warp groups' partial sums into `out` (NA == 2: the second
    // set's into `out2`; NB == 2: 256 x the first plane's + the second's, sum M I^2 from its
    // high and low bytes).
    auto product = [&](auto sets, auto planes, const uint8_t* staged, int a_next, const uint8_t* plane, int w_next,
                       uint32_t* out, uint32_t* out2) {
      constexpr int NA = decltype(sets)::value, NB = decltype(planes)::value;
      x.wbase = plane + wrow * L.rw + 32 * PP * wx;
      x.w_next = w_next;
      x.a_next = a_next;
      x.abase = static_cast<uint32_t>(__cvta_generic_to_shared(staged)) + (16 * (kgroup + 1) - JA - lrow) * L.tp +
                16 * (lane >> 4);
      uint32_t acc[NA * NB][2][PP][4][4];
#pragma unroll
      for (int nb = 0; nb < NA * NB; ++nb)
#pragma unroll
        for (int a = 0; a < 2; ++a)
#pragma unroll
          for (int b = 0; b < PP; ++b)
#pragma unroll
            for (int c = 0; c < 4; ++c)
#pragma unroll
              for (int i = 0; i < 4; ++i) acc[nb][a][b][c][i] = 0;
      if constexpr (kM16) {
        mma_phase<PP, NA, NB, true, false, kPipe>(acc, x, x.ja, x.jb + 15, nc);
      } else {
        // Image rows rr in [ja, jb + 31) relative to the warp's first output row: M-group 0 meets
        // template rows in [ja, jb) for rr < jb + 15, M-group 1 for rr >= ja + 16.
        const int e1 = min(x.ja + 16, x.jb + 15), e2 = x.jb + 15, e3 = x.jb + 31;
        mma_phase<PP, NA, NB, true, false, kPipe>(acc, x, x.ja, e1, nc);
        mma_phase<PP, NA, NB, true, true, kPipe>(acc, x, e1, e2, nc);
        mma_phase<PP, NA, NB, false, true, kPipe>(acc, x, max(e1, e2), e3, nc);
      }
      if constexpr (kRowSplit) {
        // Lane (g, t) holds rows g and g + 8 of the M-group, 4 consecutive positions (the shifts)
        // at 8 t + 4 e of its column half: 16-byte stores into its segment's part.
#pragma unroll
        for (int i = 0; i < 4; ++i)
          *reinterpret_cast<uint4*>(parts + (kgroup * kM16Rows + g + 8 * (i >> 1)) * L.rp + 32 * wx + 8 * t +
                                    4 * (i & 1)) =
              make_uint4(acc[0][0][0][0][i], acc[0][0][0][1][i], acc[0][0][0][2][i], acc[0][0][0][3][i]);
        return;
      }
      __syncthreads();  // every warp is done with the staged rows (unmasked: the tile replaces them)
      for (int k = 0; k < ks; ++k) {
        if (k == kgroup) {
#pragma unroll
          for (int mg = 0; mg < (kM16 ? 1 : 2); ++mg)
#pragma unroll
            for (int pp = 0; pp < PP; ++pp)
#pragma unroll
              for (int s = 0; s < 4; ++s)
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                  const int row = wrow + 16 * mg + g + 8 * (i >> 1);
                  const int col = 32 * PP * wx + 32 * pp + s + 8 * t + 4 * (i & 1);
                  uint32_t v = acc[0][mg][pp][s][i];
                  if constexpr (NB == 2) v = 256u * v + acc[1][mg][pp][s][i];
                  const int at = row * L.cp + col;
                  out[at] = k == 0 ? v : out[at] + v;
                  if constexpr (NA == 2) out2[at] = k == 0 ? acc[1][mg][pp][s][i] : out2[at] + acc[1][mg][pp][s][i];
                }
        }
        __syncthreads();
      }
    };
    using One = std::integral_constant<int, 1>;
    using Two = std::integral_constant<int, 2>;
    if constexpr (!kMasked) {
      product(One(), One(), tsm, 0, region, 0, tile, nullptr);
    } else {
      const uint8_t* msm = tsm + L.tmpl;
      uint8_t* plane1 = region + L.plane;
      product(Two(), One(), tsm, L.tmpl, region, 0, tile, sum_mi);  // sum M T I and sum M I
      // Plane 1: the high bytes of I^2; plane 0 becomes their low bytes.
      uint32_t* w0 = reinterpret_cast<uint32_t*>(region);
      uint32_t* w1 = reinterpret_cast<uint32_t*>(plane1);
      for (int i = tid; i < L.plane / 4; i += nthreads) {
        const uint32_t w = w0[i];
        uint32_t hi = 0, lo = 0;
#pragma unroll
        for (int b = 0; b < 4; ++b) {
          const uint32_t v = (w >> (8 * b)) & 255u, sq = v * v;
          hi |= (sq >> 8) << (8 * b);
          lo |= (sq & 255u) << (8 * b);
        }
        w1[i] = hi;
        w0[i] = lo;
      }
      __syncthreads();
      product(One(), Two(), msm, 0, plane1, -L.plane, sum_mii, nullptr);  // sum M I^2 = 256 hi + lo
    }
  } else {
    static_assert(PP == 2, "the dp4a kernel covers 128 positions: 32 threads x 4");
    // dp4a (one block of 128 threads, kz = 1): each thread 4 consecutive positions x 16 rows.
    const int xq = tid & 31, rg = tid >> 5;
    const int rw4 = L.rw / 4, tp4 = L.tp / 4, words = (p.tw + 3) / 4;
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
      for (int qq = 0; qq < words; ++qq) {
        const uint32_t tq = t32[(16 + j) * tp4 + qq];  // segment 0 starts at staged row 16
#pragma unroll
        for (int r = 0; r < 16; ++r) {
          const uint32_t w = carry[r], wn = rowp[r * rw4 + qq + 1];
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
      for (int s = 0; s < 4; ++s) tile[(16 * rg + r) * L.cp + 4 * xq + s] = acc[r][s];
    __syncthreads();
  }

  // (Row split: thread 0 is a window-sum warp's, so this mark is the column sums' end; the
  // products' end falls in the next phase.)
  trace_mark(p, tm::kTrMma);

  // 3. Cluster split: rows [r0, r0 + nrows) summed over the kz blocks of the tile. A block then
  //    only touches its own rows, so it needs the others only to stay resident while they read
  //    its tile: it arrives at the cluster barrier now and waits for it just before leaving.
  if (kRowSplit) {
    __syncthreads();  // the segments' parts and the column sums are complete
#if defined(__CUDA_ARCH__)
    prefix_rows(vs1, vs2, L.vp, TW - 1 + p.tw, nrows, tid, nthreads);
#endif
    __syncthreads();
  }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (!kRowSplit && kz > 1) {
    cg::cluster_group cluster = cg::this_cluster();
    cluster.sync();  // every block's partial tile is complete
#pragma unroll 4
    for (int i = tid; i < nrows * TW; i += nthreads) {
      const int off = (r0 + i / TW) * L.cp + i % TW;
      uint32_t sum = 0;
#pragma unroll
      for (int k = 0; k < kMaxKz; ++k)
        if (k < kz) sum += cluster.map_shared_rank(tile, k)[off];
      tile[off] = sum;  // only this block reads or writes its own rows from here on
    }
    asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
  }
#endif
  // Every exit: no block leaves (and frees its shared memory) while others of its cluster read it.
  auto leave = [&]() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (!kRowSplit && kz > 1) asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
#endif
    trace_mark(p, tm::kTrEnd);
  };

  trace_mark(p, tm::kTrCluster);

  // 4. Window sums and scores of rows [r0, r0 + nrows); then the map, row by row.
  if constexpr (kRowSplit) {
    // The segments' parts added up, scored into the tile and the map in one pass.
    for (int i = tid; i < nrows * TW; i += nthreads) {
      const int yl = i / TW, xx = i % TW, yy = r0 + yl;
      const int u = X0 - p.sx + xx, v = Y0 - p.sy + yy;
      if (u < 0 || u >= p.mw || v >= p.mh) continue;
      uint32_t sti = 0;
#pragma unroll
      for (int k = 0; k < kRowSegments; ++k) sti += parts[(k * kM16Rows + yl) * L.rp + xx];
      // Window sums: differences of the row's prefix sums.
      const uint32_t* q1 = vs1 + yl * L.vp;
      const uint32_t* q2 = vs2 + yl * L.vp;
      const uint32_t s1 = q1[xx + p.tw - 1] - (xx > 0 ? q1[xx - 1] : 0u),
                     s2 = q2[xx + p.tw - 1] - (xx > 0 ? q2[xx - 1] : 0u);
      const float score = static_cast<float>(tm::ccoeff_normed(p.n, p.st, p.var_t, s1, s2, sti));
      tile[yy * L.cp + xx] = float_bits(score);
      p.map[v * p.mpitch + u] = score;
    }
    __syncthreads();
  } else if constexpr (kMasked) {
    // The sums are in the tiles: the score of a masked template (NaN where the window has no
    // variance under the mask), as the CPU bank matcher computes it.
    for (int i = tid; i < nrows * TW; i += nthreads) {
      const int yy = r0 + i / TW, xx = i % TW, at = yy * L.cp + xx;
      const int u = X0 - p.sx + xx, v = Y0 - p.sy + yy;
      if (u >= 0 && u < p.mw && v < p.mh)
        tile[at] = float_bits(tm::bank_ccoeff_normed(p.n, p.st, p.var_t, sum_mi[at], sum_mii[at], tile[at], true));
    }
    __syncthreads();
  } else {
    box_scores<TW>(p, region, L.rw, tile, L.cp, vbuf, L.vp, L.vh, X0, Y0, r0, nrows, tid, nthreads, BlockSync());
  }
  trace_mark(p, tm::kTrBox);
  for (int i = tid; !kRowSplit && i < nrows * TW; i += nthreads) {
    const int yy = r0 + i / TW, xx = i % TW;
    const int u = X0 - p.sx + xx, v = Y0 - p.sy + yy;
    if (u >= 0 && u < p.mw && v < p.mh) p.map[v * p.mpitch + u] = bits_float(tile[yy * L.cp + xx]);
  }
  trace_mark(p, tm::kTrMap);
  if (!p.peaks) {
    trace_mark(p, tm::kTrCells);
    leave();
    return;
  }

  // 5. Cell maxima of the tile's positions (a warp per cell part), merged over blocks.
  const TileCells tc = tile_cells(p, X0, Y0, r0, nrows, TW);
  for (int lc = warp; lc < tc.count; lc += nthreads >> 5) {
    int cell = 0;
    unsigned long long best = cell_part_best<kMasked>(p, tc, tile, L.cp, X0, Y0, lc, lane, &cell);
    best = warp_max(best);
    if (lane == 0 && static_cast<double>(key_score(best)) >= p.threshold) {
      if (atomicMax(&p.keys[cell], best) == 0ull)
        p.touched[static_cast<unsigned>(atomicAdd(p.progress, kTouchedOne) >> 32)] = static_cast<unsigned>(cell);
    }
  }
  // The last block to finish writes the candidates.
  __threadfence();
  __syncthreads();
  trace_mark(p, tm::kTrCells);
  // The ticket comes with the number of listed cells (one word): every block listed its cells
  // before taking its ticket, so the last one gets the final count without another L2 trip.
  unsigned* s_last = reinterpret_cast<unsigned*>(smem);  // the staged frame rows are no longer read
  if (tid == 0) {
    const unsigned long long before = atomicAdd(p.progress, 1ull);
    s_last[0] = static_cast<unsigned>(before) == gridDim.x * gridDim.y * gridDim.z - 1;
    s_last[1] = static_cast<unsigned>(before >> 32);
  }
  __syncthreads();
  if (!s_last[0]) {
    leave();
    return;
  }
  __threadfence();
  const unsigned count = s_last[1];
  tm::Candidate* out = reinterpret_cast<tm::Candidate*>(p.out + 1);
  unsigned written = count;
  if (count > p.nms_host_up_to && count <= static_cast<unsigned>(kNmsKeysPerThread * nthreads)) {
    // Long lists: non-maximum suppression here, so that only the kept matches (in best-first
    // order, none overlapping) cross to the host, whose own pass then keeps them all.
    unsigned long long* s_kept = reinterpret_cast<unsigned long long*>(smem) + 8;
    written = block_nms(p, count, tid, nthreads, s_kept, s_kept + kMaxMatches);
    if (static_cast<unsigned>(tid) < written) out[tid] = cell_candidate(p, s_kept[tid]);
  } else {
    for (unsigned i = tid; i < count; i += nthreads) {
      const unsigned cell = __ldcg(&p.touched[i]);
      const unsigned long long key = __ldcg(&p.keys[cell]);
      p.keys[cell] = 0ull;
      out[i] = cell_candidate(p, key);
    }
  }
  // Every writer's candidates are visible to the host before any thread passes the barrier, so
  // the flag (the count + 1, one store) needs no fence of its own.
  __threadfence_system();
  __syncthreads();
  if (tid == 0) {
    *p.progress = 0ull;
    *reinterpret_cast<volatile unsigned*>(&p.out->done) = written + 1u;
  }
  if (p.trace && tid == 0)
    p.trace[(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)) * tm::kTraceSlots + tm::kTrLast] = 1;
  leave();
}

}  // namespace

}  // namespace cudaprep
