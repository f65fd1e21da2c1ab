// CUDA template matcher. Per frame, on the caller's stream, with no allocation: ONE kernel launch
// (frame_kernel; replayed as a CUDA graph on the caller's own stream) and one wait, on a flag the
// kernel sets in pinned memory (wait_for_candidates), then the host's final NMS pass (shared code).
// The kernel
//   - stages the template rows and the frame rows of a 64 x 64 (or 128 x 64) tile of positions in
//     shared memory; the frame is read through texture objects (pitch 2D, 16-byte texels, point
//     filtering, clamped) cached per (pointer, pitch): a buffer pool's frames reuse theirs;
//   - sums T * I, exact in 32 bits, on the tensor cores (int8 mma, u8 x u8 -> s32, sm_80+) or with
//     dp4a (older GPUs, or MatcherCudaOptions::Tuning::dp4a);
//   - computes the exact window sums S1 = sum I, S2 = sum I^2 from the same staged rows, and the
//     score in double from the exact sums (the formula the CPU path uses), stored as float;
//   - finds each cell's best position (merged over tiles with a 64-bit atomicMax), and the last
//     block writes the candidates with their sub-pixel offsets straight into pinned host memory,
//     after non-maximum suppression of its own when more than 64 cells qualify (block_nms).
//
// Tensor-core formulation. For one image row r and the 16 output rows y0..y0+15 of a warp's
// M-group, A[m][k] = T(k, r - y0 - m) (template row by row, zero outside the template) and
// B_s[k][n] = I(x0 + s + 4n + k, r) for s = 0..3: the product accumulates, over all r, the
// correlation of output (x0 + s + 4n, y0 + m). A comes from shared memory with ldmatrix; the
// columns of B are 4-byte windows of the image row at a byte offset, built with funnel shifts
// from aligned 32-bit words. No work is wasted along k beyond padding the template width to 32;
// along r an M-group spends th + 15 row steps for th rows of the template. The staged template rows
// have 16 zero rows around each row segment, so a lane's ldmatrix row is linear in r (no per-lane
// range test in the loop).
//
// Launch shape (plan(); measured on an H200, see bench/NOTES-templatematch.md): 64-wide tiles,
// 128-wide for templates 65..128 px wide on grids that fill the GPU; where the tiles fill less
// than half the GPU, the template rows are split over a thread-block cluster of up to 8 blocks per
// tile (sm_90), summed through distributed shared memory, and such blocks run 8 warps of one
// 16-row M-group each (shorter serial chains); otherwise ks warp groups per block split the rows
// again where the occupancy allows (choose_ks). The tensor-core loop is software-pipelined (next
// step's fragments loaded during the current step's mma) where a row step has one 32-column
// chunk or the grid is small; otherwise the compiler's own unrolling of the chunk loop is faster.
// Variants and diagnostics: MatcherCudaOptions (templatematch.h), given to configure().
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_device.h"
#include "cuda_status.h"
#include "templatematch_internal.h"

namespace cudaprep {

namespace {

namespace cg = cooperative_groups;

constexpr int kGroupThreads = 128;  // threads of one warp group (4 warps: a 64-row tile)
constexpr int kTexCacheSize = 16;

__host__ __device__ inline int round_up(int v, int m) { return (v + m - 1) / m * m; }

// ------------------------------------------------------------------------------------------
// Kernel

__device__ __forceinline__ uint4 fetch16(cudaTextureObject_t tex, int xe, int y) {
  return tex2D<uint4>(tex, static_cast<float>(xe) + 0.5f, static_cast<float>(y) + 0.5f);
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

// ------------------------------------------------------------------------------------------
// The frame kernel.
//
// A block owns a tile of 64 * PP x 64 positions (frame coordinates, x aligned to the tile width)
// and, with a cluster split (kz > 1, sm_90), template rows [JA, JB) of it; the kz blocks of one
// tile form a thread-block cluster. Per block:
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

constexpr int kRows = 64;    // tile height in positions
constexpr int kChunk = 16;   // rows of window sums per pass
constexpr int kSeg = 8;      // consecutive positions per thread in the horizontal pass
constexpr int kMaxKz = 8;    // cluster split (portable cluster size)
constexpr unsigned long long kTouchedOne = 1ull << 32;  // one listed cell in FrameParams::progress
constexpr int kNmsKeysPerThread = 8;  // the kernel's suppression holds this many keys per thread

struct alignas(32) OutHeader {
  unsigned done;  // 0 until the kernel has written the candidates, then their count + 1
  unsigned pad[7];
};
static_assert(sizeof(OutHeader) == 32, "header");

struct FrameParams {
  cudaTextureObject_t tex;
  const uint8_t* templ;  // th rows of kp bytes, zero beyond tw
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
  unsigned long long* keys;  // per cell, 0 between frames
  unsigned* touched;         // cells with a key, in no particular order
  unsigned long long* progress;  // blocks done (low word), cells listed (high word); 0 between frames
  OutHeader* out;            // pinned host memory: header, then the candidates
  int max_matches;           // for the non-maximum suppression in the kernel
  unsigned nms_host_up_to;   // candidate lists up to this long go to the host whole
  unsigned long long* trace;  // diagnostics.trace: per block, kTraceSlots clock/timer values; else null
};

// Diagnostics (diagnostics.trace): thread 0 of each block records clock64() at the phase
// boundaries, %globaltimer at start and end, its SM and whether it was the last block.
// (Marks inside the box phase were tried: they changed the kernels' register allocation, and 128 px
// got 2 % slower with them.)
constexpr int kTraceSlots = 12;
enum TraceSlot { kTrStart, kTrStaged, kTrMma, kTrCluster, kTrBox, kTrMap, kTrCells, kTrEnd, kTrGtStart, kTrGtEnd, kTrSm,
                 kTrLast };
__device__ __forceinline__ unsigned long long global_timer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void trace_mark(const FrameParams& p, int slot) {
  if (p.trace && threadIdx.x == 0) {
    const unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned long long* t = p.trace + static_cast<size_t>(b) * kTraceSlots;
    t[slot] = clock64();
    if (slot == kTrStart) {
      t[kTrGtStart] = global_timer();
      unsigned sm;
      asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
      t[kTrSm] = sm;
      t[kTrLast] = 0;
    }
    if (slot == kTrEnd) t[kTrGtEnd] = global_timer();
  }
}

// Shared-memory layout of the frame kernel: the staged frame rows (th + 63 rows of rw bytes), then
// one area that holds the template rows during the correlation (`rows` rows in `groups` segments,
// each between 16 zero rows: the warps' ldmatrix rows are linear in the image row, rows just
// outside a segment read zeros) and afterwards the 32-bit tile
// (64 rows of cp words) and the vertical sums of one pass: kChunk rows of vp words (sum I^2) and
// kChunk rows of vh half-words (sum I <= 256 * 255 fits 16 bits; smaller blocks, more per SM).
// With `scan` (box_scores' prefix-sum pass) the sums of I take kChunk rows of vp words instead:
// their prefix sums need 32 bits.
struct FrameLayout {
  int rw, tp, cp, vp, vh, region, area, total;
};
__host__ __device__ inline FrameLayout frame_layout(int pp, int tw, int th, int kp, int rows, int groups,
                                                    bool scan = false) {
  FrameLayout l;
  l.rw = 64 * pp + kp;
  l.tp = kp + 16;               // template row pitch (keeps ldmatrix conflict-free)
  l.cp = 64 * pp + 1;           // odd: a warp's 16 rows x 2 segments hit distinct banks
  const int ncols = 64 * pp - 1 + tw;
  l.vp = ncols | 1;             // odd, as cp
  l.vh = ((ncols + 1) & ~3) + 2;  // 2 mod 4 half-words: 16 rows x 2 segments in distinct banks too
  l.region = round_up(l.rw * (th + kRows - 1), 128);
  const int tmpl = (rows + 16 * (groups + 1)) * l.tp;
  const int work = kRows * l.cp * 4 + kChunk * l.vp * 4 + (scan ? kChunk * l.vp * 4 : round_up(kChunk * l.vh * 2, 16));
  l.area = round_up(tmpl > work ? tmpl : work, 128);
  l.total = l.region + l.area;
  return l;
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
  c.dx = (c.u > 0 && c.u < p.mw - 1) ? tm::parabola_offset(__ldcg(row + c.u - 1), c.score, __ldcg(row + c.u + 1))
                                     : 0.0;
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
__device__ unsigned block_nms(const FrameParams& p, unsigned count, int tid, int nthreads,
                              unsigned long long* s_kept, unsigned long long* s_partial /* 2 x 32 */) {
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
    best = k > best ? k : best;
    du += sr;
    dv += sq;
    if (du >= w) {
      du -= w;
      ++dv;
    }
  }
  return best;
}

// Step 4 for tile rows [r0, r0 + nrows): window sums, scores into the tile (as float bits), for
// positions inside the map. `region` row i is frame row Y0 + i; `tile` holds sum T * I (64 rows of
// cp words); vbuf holds kChunk rows of vp words (vertical sums of I^2), then kChunk rows of vh
// half-words (vertical sums of I). Threads tid of nthreads; `sync` is the block barrier (a host
// test runs this with real threads).
// Unrolling hints only where the device compiler reads them (box_scores also builds for a host test).
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
  if (u >= 0 && u < p.mw && v < p.mh) *t = float_bits(static_cast<float>(tm::ccoeff_normed(p.n, p.st, p.var_t, s1, s2, *t)));
}

#if defined(__CUDA_ARCH__)
// kScan: each row of the chunk's vertical sums (v1 and v2, 32-bit, pitch vp) turned in place into
// its inclusive prefix sums, a warp per row, 4 consecutive columns per lane (128 per pass). Sums
// of I^2 may wrap: a window's difference is still exact, as its true value is below 2^32.
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

// kScan (blocks with few rows, e.g. cluster splits: 8 rows on 256 threads): window sums as
// differences of row prefix sums, every thread scoring its own positions; otherwise a thread
// re-sums tw columns for 8 consecutive positions of a row (fewer barriers, no 32-bit v1 rows).
#pragma nv_exec_check_disable
template <int TW, bool kScan, class Sync>
__host__ __device__ inline void box_scores(const FrameParams& p, const uint8_t* region, int rw, uint32_t* tile, int cp,
                                           uint32_t* vbuf, int vp, int vh, int X0, int Y0, int r0, int nrows, int tid,
                                           int nthreads, Sync&& sync) {
  const int tw = p.tw, th = p.th;
  const int ncols = TW - 1 + tw;  // window columns of the tile's positions
  constexpr int kCols = (TW - 1 + kMaxTemplateSide + 127) / 128;  // columns per thread (>= 128 threads)
  uint32_t* v2 = vbuf;
  uint16_t* v1 = reinterpret_cast<uint16_t*>(vbuf + kChunk * vp);
  uint32_t* v1w = vbuf + kChunk * vp;  // kScan: 32-bit rows of pitch vp
  // Vertical sums over th rows, running down the rows: column c = tid + k * nthreads.
  uint32_t a1[kCols], a2[kCols];
  TM_DEVICE_PRAGMA(unroll)
  for (int k = 0; k < kCols; ++k) {
    const int c = tid + k * nthreads;
    uint32_t s = 0, s2 = 0;
    if (c < ncols) {
      const uint8_t* col = region + r0 * rw + c;
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
  // Horizontal tasks: a thread sums 8 consecutive positions of one row. Lanes 0-15 take rows 0-15
  // of one segment, lanes 16-31 the same rows 16 columns further: with odd word pitches (and
  // half-word pitches of 2 mod 4), distinct banks.
  constexpr int kTasks = kChunk * (TW / kSeg);
  for (int rc = 0; rc < nrows; rc += kChunk) {
    const int rows = nrows - rc < kChunk ? nrows - rc : kChunk;
  TM_DEVICE_PRAGMA(unroll)
    for (int k = 0; k < kCols; ++k) {
      const int c = tid + k * nthreads;
      if (c >= ncols) continue;
      const uint8_t* col = region + (r0 + rc) * rw + c;
      // The bytes that leave and enter the window first (the stores below may alias them for the
      // compiler), then the chunk's rows; no slide past the last row (never past the staged rows).
  TM_DEVICE_PRAGMA(unroll 1)
      for (int i0 = 0; i0 < rows; i0 += 8) {
        uint32_t out_px[8], in_px[8];
  TM_DEVICE_PRAGMA(unroll)
        for (int i = 0; i < 8; ++i) {
          const bool slide = i0 + i < rows && rc + i0 + i + 1 < nrows;
          out_px[i] = slide ? col[(i0 + i) * rw] : 0u;
          in_px[i] = slide ? col[(i0 + i + th) * rw] : 0u;
        }
  TM_DEVICE_PRAGMA(unroll)
        for (int i = 0; i < 8; ++i) {
          if (i0 + i < rows) {
            if constexpr (kScan)
              v1w[(i0 + i) * vp + c] = a1[k];
            else
              v1[(i0 + i) * vh + c] = static_cast<uint16_t>(a1[k]);  // <= 256 * 255
            v2[(i0 + i) * vp + c] = a2[k];
            a1[k] += in_px[i] - out_px[i];
            a2[k] += in_px[i] * in_px[i] - out_px[i] * out_px[i];
          }
        }
      }
    }
    sync();
    if constexpr (kScan) {
#if defined(__CUDA_ARCH__)
      prefix_rows(v1w, v2, vp, ncols, rows, tid, nthreads);
      sync();
      for (int task = tid; task < rows * TW; task += nthreads) {
        const int i = task / TW, x = task % TW;
        const uint32_t* q1 = v1w + i * vp;
        const uint32_t* q2 = v2 + i * vp;
        uint32_t s1 = q1[x + tw - 1], s2 = q2[x + tw - 1];
        if (x > 0) s1 -= q1[x - 1], s2 -= q2[x - 1];
        const int yy = r0 + rc + i;
        score_into(p, tile + yy * cp + x, X0 - p.sx + x, Y0 - p.sy + yy, s1, s2);
      }
      sync();
#endif
    } else {
#if defined(__CUDA_ARCH__)
#endif
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
}

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

// Fragments of one (image row, 32-column chunk) step of the tensor-core loop.
template <int PP>
struct Frag {
  uint32_t a0[4], a1[4];
  uint32_t w[PP][4];
};

struct MmaCtx {
  const uint8_t* wbase;  // the warp's first staged row and column
  int rw;
  uint32_t abase;  // this lane's ldmatrix row for image row rr: abase + rr * tp (M-group 0)
  int tp, ja, jb, gt;
};

template <int PP, bool M0, bool M1>
__device__ __forceinline__ void load_frag(Frag<PP>& f, const MmaCtx& x, int rr, int c) {
  if (M0) ldmatrix_x4(f.a0, x.abase + rr * x.tp + 32 * c);
  if (M1) ldmatrix_x4(f.a1, x.abase + (rr - 16) * x.tp + 32 * c);
  const uint32_t* w = reinterpret_cast<const uint32_t*>(x.wbase + rr * x.rw) + x.gt + 8 * c;
#pragma unroll
  for (int pp = 0; pp < PP; ++pp) {
    f.w[pp][0] = w[8 * pp];
    f.w[pp][1] = w[8 * pp + 1];
    f.w[pp][2] = w[8 * pp + 4];
    f.w[pp][3] = w[8 * pp + 5];
  }
}

template <int PP, bool M0, bool M1>
__device__ __forceinline__ void mma_frag(uint32_t (&acc)[2][PP][4][4], const Frag<PP>& f) {
#pragma unroll
  for (int pp = 0; pp < PP; ++pp) {
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      const uint32_t b0 = s ? __funnelshift_r(f.w[pp][0], f.w[pp][1], 8 * s) : f.w[pp][0];
      const uint32_t b1 = s ? __funnelshift_r(f.w[pp][2], f.w[pp][3], 8 * s) : f.w[pp][2];
      if (M0) mma_u8(acc[0][pp][s], f.a0, b0, b1);
      if (M1) mma_u8(acc[1][pp][s], f.a1, b0, b1);
    }
  }
}

// Image rows [rb, re) of one M-group phase, nc column chunks each. kPipe: the fragments of the next
// step are loaded while the tensor cores work on the current one (two register sets).
template <int PP, bool M0, bool M1, bool kPipe>
__device__ __forceinline__ void mma_phase(uint32_t (&acc)[2][PP][4][4], const MmaCtx& x, int rb, int re, int nc) {
  if (rb >= re) return;
  if constexpr (!kPipe) {
    for (int rr = rb; rr < re; ++rr)
      for (int c = 0; c < nc; ++c) {
        Frag<PP> f;
        load_frag<PP, M0, M1>(f, x, rr, c);
        mma_frag<PP, M0, M1>(acc, f);
      }
  } else {
    const int total = (re - rb) * nc;
    int lr = rb, lc = 0;  // the next step to load
    Frag<PP> f0, f1;
    load_frag<PP, M0, M1>(f0, x, lr, lc);
    if (++lc == nc) lc = 0, ++lr;
    for (int it = 0;;) {
      if (it + 1 < total) {
        load_frag<PP, M0, M1>(f1, x, lr, lc);
        if (++lc == nc) lc = 0, ++lr;
      }
      mma_frag<PP, M0, M1>(acc, f0);
      if (++it == total) break;
      if (it + 1 < total) {
        load_frag<PP, M0, M1>(f0, x, lr, lc);
        if (++lc == nc) lc = 0, ++lr;
      }
      mma_frag<PP, M0, M1>(acc, f1);
      if (++it == total) break;
    }
  }
}

// kM16: 8 warps of one 16-row M-group each (image rows [ja, jb + 15) per warp instead of
// [ja, jb + 31) for two M-groups): the shorter serial chain of the small cluster-split grids.
// kScan: window sums from row prefix sums (box_scores), for blocks with few tile rows.
template <bool kMma, int PP, bool kPipe, bool kM16, bool kScan>
__global__ void __launch_bounds__(PP == 1 ? 512 : 256) frame_kernel(const FrameParams p) {
  constexpr int TW = 64 * PP;
  extern __shared__ __align__(16) uint8_t smem[];  // no static shared memory: the limit is the opt-in size
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, nthreads = blockDim.x;
  const int X0 = p.x_first + blockIdx.x * TW, Y0 = p.sy + blockIdx.y * kRows;
  const int th = p.th, kp = p.kp, kz = p.kz, q = blockIdx.z;
  const int JA = q * th / kz, JB = (q + 1) * th / kz, J = JB - JA;  // this block's template rows
  const int r0 = q * kRows / kz, nrows = (q + 1) * kRows / kz - r0;  // and tile rows of step 4
  const int ks = kMma && !kM16 ? nthreads >> 7 : 1;                   // template-row segments
  const FrameLayout L = frame_layout(PP, p.tw, th, kp, J, ks, kScan);
  uint8_t* region = smem;
  uint8_t* tsm = smem + L.region;
  uint32_t* tile = reinterpret_cast<uint32_t*>(smem + L.region);  // replaces the template rows
  uint32_t* vbuf = tile + kRows * L.cp;
  trace_mark(p, kTrStart);

  // 1. Stage the template rows and the frame rows this block reads. Template: segment g (rows
  //    [JA + g J / ks, JA + (g + 1) J / ks), one per warp group) at staged rows from
  //    16 (g + 1) + g J / ks on, 16 zero rows before and after each. Frame: the correlation reads
  //    rows [JA, JB + 63), the window sums rows [r0, r0 + nrows + th - 1) (with a cluster split
  //    both are a slice of the th + 63 rows).
  {
    stage_template(tsm, L.tp, p.templ + static_cast<size_t>(JA) * kp, kp, J, ks, tid, nthreads);
    const int texels = L.rw / 16;
    const int s0 = min(JA, r0), s1 = min(th + kRows - 1, max(JB + kRows - 1, r0 + nrows + th - 1));
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
  trace_mark(p, kTrStaged);

  // 2. sum T * I of the block's template rows into the tile.
  if constexpr (kMma) {
    // Warp: column half wx, first output row wrow of the tile, template-row segment kgroup.
    const int wx = warp & 1;
    const int wrow = kM16 ? 16 * (warp >> 1) : 32 * ((warp >> 1) & 1), kgroup = kM16 ? 0 : warp >> 2;
    const int g = lane >> 2, t = lane & 3;
    MmaCtx x;
    x.wbase = region + wrow * L.rw + 32 * PP * wx;
    x.rw = L.rw;
    x.tp = L.tp;
    x.ja = JA + kgroup * J / ks;
    x.jb = JA + (kgroup + 1) * J / ks;
    // A row m of M-group 0 at image row rr is template row j = rr - m (m = lrow for ldmatrix),
    // staged at row 16 (kgroup + 1) + j - JA; |j - segment| <= 15 where it is read.
    const int lrow = (lane & 7) + 8 * ((lane >> 3) & 1);
    x.abase = static_cast<uint32_t>(__cvta_generic_to_shared(tsm)) + (16 * (kgroup + 1) - JA - lrow) * L.tp +
              16 * (lane >> 4);
    x.gt = g + t;
    const int nc = kp / 32;
    uint32_t acc[2][PP][4][4];
#pragma unroll
    for (int a = 0; a < 2; ++a)
#pragma unroll
      for (int b = 0; b < PP; ++b)
#pragma unroll
        for (int c = 0; c < 4; ++c)
#pragma unroll
          for (int i = 0; i < 4; ++i) acc[a][b][c][i] = 0;
    if constexpr (kM16) {
      mma_phase<PP, true, false, kPipe>(acc, x, x.ja, x.jb + 15, nc);
    } else {
      // Image rows rr in [ja, jb + 31) relative to the warp's first output row: M-group 0 meets
      // template rows in [ja, jb) for rr < jb + 15, M-group 1 for rr >= ja + 16.
      const int e1 = min(x.ja + 16, x.jb + 15), e2 = x.jb + 15, e3 = x.jb + 31;
      mma_phase<PP, true, false, kPipe>(acc, x, x.ja, e1, nc);
      mma_phase<PP, true, true, kPipe>(acc, x, e1, e2, nc);
      mma_phase<PP, false, true, kPipe>(acc, x, max(e1, e2), e3, nc);
    }
    __syncthreads();  // every warp is done with the template rows: the tile replaces them
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
                if (k == 0)
                  tile[row * L.cp + col] = acc[mg][pp][s][i];
                else
                  tile[row * L.cp + col] += acc[mg][pp][s][i];
              }
      }
      __syncthreads();
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

  trace_mark(p, kTrMma);

  // 3. Cluster split: rows [r0, r0 + nrows) summed over the kz blocks of the tile. A block then
  //    only touches its own rows, so it needs the others only to stay resident while they read
  //    its tile: it arrives at the cluster barrier now and waits for it just before leaving.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (kz > 1) {
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
    if (kz > 1) asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
#endif
    trace_mark(p, kTrEnd);
  };

  trace_mark(p, kTrCluster);

  // 4. Window sums and scores of rows [r0, r0 + nrows); then the map, row by row.
  box_scores<TW, kScan>(p, region, L.rw, tile, L.cp, vbuf, L.vp, L.vh, X0, Y0, r0, nrows, tid, nthreads, BlockSync());
  trace_mark(p, kTrBox);
  for (int i = tid; i < nrows * TW; i += nthreads) {
    const int yy = r0 + i / TW, xx = i % TW;
    const int u = X0 - p.sx + xx, v = Y0 - p.sy + yy;
    if (u >= 0 && u < p.mw && v < p.mh) p.map[v * p.mpitch + u] = bits_float(tile[yy * L.cp + xx]);
  }
  trace_mark(p, kTrMap);
  if (!p.peaks) {
    trace_mark(p, kTrCells);
    leave();
    return;
  }

  // 5. Cell maxima of the tile's positions (a warp per cell part), merged over blocks.
  const TileCells tc = tile_cells(p, X0, Y0, r0, nrows, TW);
  for (int lc = warp; lc < tc.count; lc += nthreads >> 5) {
    int cell = 0;
    unsigned long long best = cell_part_best(p, tc, tile, L.cp, X0, Y0, lc, lane, &cell);
    best = warp_max(best);
    if (lane == 0 && static_cast<double>(key_score(best)) >= p.threshold) {
      if (atomicMax(&p.keys[cell], best) == 0ull)
        p.touched[static_cast<unsigned>(atomicAdd(p.progress, kTouchedOne) >> 32)] = static_cast<unsigned>(cell);
    }
  }
  // The last block to finish writes the candidates.
  __threadfence();
  __syncthreads();
  trace_mark(p, kTrCells);
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
    p.trace[(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)) * kTraceSlots + kTrLast] = 1;
  leave();
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
  int smem_per_sm = 0, smem_reserved = 0;  // shared memory of an SM, and reserved per block
  int tex_pitch_align = 32;
  int tex_align = 512;
  int sm_count = 1;
  bool use_mma = false;   // tensor cores (sm_80+); dp4a otherwise
  bool clusters = false;  // sm_90+: template rows split over a cluster where the grid is small
  // Overrides read from the environment by configure() (0 / -1: chosen per template and grid).
  // From MatcherCudaOptions::Tuning (0 / -1: chosen per template and grid).
  int force_pp = 0;     // tile_width / 64: 1 (64 wide) or 2 (128 wide)
  int force_ks = 0;     // row_split: 1, 2 or 4
  int force_kz = 0;     // cluster_split: 1..8
  int force_solo = -1;  // solo: 0 or 1 (one block per SM in cluster-split launches)
  bool scan_split = true;  // prefix_sums = false: cluster-split blocks re-sum window columns
  int force_pipe = -1;  // pipelining: 0 or 1
  bool m16_split = true;  // m16 = false: cluster-split blocks keep 4 warps of two M-groups
  GpuWait wait = GpuWait::Spin;
  bool host_time = false;  // diagnostics.host_time: host-side times of match() on stderr
  bool in_flight = false;  // a frame kernel may still be running (see settle())
  unsigned nms_host_up_to = 0;  // tuning.nms_on_host_up_to (tests: 0 = always in the kernel)
  int occ[2][kMaxKz + 1][3] = {};  // blocks per SM: [tile width / 64 - 1][kz][log2 ks]; 0: does not fit
  // Per cluster split kz (64-wide tiles): clusters that can be resident at once with one block per
  // SM, and the dynamic shared memory that makes it one (0: not possible).
  int solo_clusters[kMaxKz + 1] = {}, solo_smem[kMaxKz + 1] = {};
  // Per caps.
  cuda::DeviceBuffer map, staging;
  int64_t spitch = 0;  // floats per row of map
  // Per template.
  bool has_template = false;
  int tw = 0, th = 0, kp = 0;
  int64_t n = 0, st = 0, var_t = 0;
  cuda::DeviceBuffer templ;
  cuda::DeviceBuffer state;     // ticket, touched count, cell keys, touched cells: zero between frames
  cuda::PinnedBuffer host_out;  // OutHeader, then the candidates; written by the kernel (mapped)
  OutHeader* out_dev = nullptr;  // host_out as the device sees it
  int capacity = 0;              // cells of the full frame >= cells of any search region
  // Texture objects per (pointer, pitch), least recently used evicted.
  std::vector<TexEntry> textures;
  uint64_t tick = 0;
  struct GraphEntry {
    cudaTextureObject_t tex = 0;
    Rect r;
    double threshold = 0;
    int max_matches = 0;
    cudaGraphExec_t exec = nullptr;
    uint64_t last_use = 0;
  };
  std::vector<GraphEntry> graphs;
  bool use_graphs = false;
  bool profile = false;
  cudaEvent_t events[2] = {};
  // diagnostics.trace: per-block phase clocks of the last launch, summarised on stderr.
  cuda::DeviceBuffer trace;
  int trace_capacity = 0;   // blocks
  unsigned trace_blocks = 0;  // of the last launch
  int trace_smem = 0;         // dynamic shared memory per block of the last launch
  int clock_khz = 0;
  TemplateMatcherCuda::TextureCacheStats stats;

  void destroy_textures() {
    for (TexEntry& e : textures) cudaDestroyTextureObject(e.tex);
    textures.clear();
    stats.entries = 0;
  }

  // Per template and caps: the peak-search state and the pinned candidate buffer.
  Status alloc_peaks() {
    settle();
    host_out.reset();
    state.reset();
    out_dev = nullptr;
    capacity = 0;
    if (!configured || !has_template || tw > width || th > height) return Status();
    const int mw = width - tw + 1, mh = height - th + 1;
    const int cw = tm::cell_side(tw), ch = tm::cell_side(th);
    capacity = ((mw + cw - 1) / cw) * ((mh + ch - 1) / ch);
    CUDAPREP_RETURN_IF_ERROR(
        host_out.allocate(sizeof(OutHeader) + static_cast<size_t>(capacity) * sizeof(tm::Candidate)));
    void* dev = nullptr;
    CUDAPREP_RETURN_IF_ERROR(
        cuda_status(cudaHostGetDevicePointer(&dev, host_out.data(), 0), "cudaHostGetDevicePointer"));
    out_dev = static_cast<OutHeader*>(dev);
    const size_t state_bytes = 32 + static_cast<size_t>(capacity) * (sizeof(unsigned long long) + sizeof(unsigned));
    CUDAPREP_RETURN_IF_ERROR(state.allocate(state_bytes));
    CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaMemset(state.data(), 0, state_bytes), "cudaMemset"));
    return Status();
  }

  // The kernels may use up to the device's opt-in limit (set once, to the maximum, so that
  // matchers with different templates never fight over the attribute); the template must fit
  // with the narrowest tile the path has.
  Status set_kernel_limits() const {
    const int need = frame_layout(use_mma ? 1 : 2, tw, th, kp, th, 1).total;
    if (need > smem_optin)
      return Status::error("template " + std::to_string(tw) + "x" + std::to_string(th) +
                           " needs more shared memory than this GPU offers (" + std::to_string(need) + " > " +
                           std::to_string(smem_optin) + " bytes)");
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
      // Safe to destroy once no kernel of this matcher is still in flight.
      settle();
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

  using FrameKernel = void (*)(const FrameParams);
  // The one table from launch shape to kernel instantiation (scan only with m16).
  static FrameKernel frame_kernel_for(bool mma, int pp, bool pipelined, bool m16, bool scan) {
    if (!mma) return frame_kernel<false, 2, false, false, false>;
    if (m16 && scan) return pipelined ? frame_kernel<true, 1, true, true, true> : frame_kernel<true, 1, false, true, true>;
    if (m16) return pipelined ? frame_kernel<true, 1, true, true, false> : frame_kernel<true, 1, false, true, false>;
    if (pp == 1) return pipelined ? frame_kernel<true, 1, true, false, false> : frame_kernel<true, 1, false, false, false>;
    return pipelined ? frame_kernel<true, 2, true, false, false> : frame_kernel<true, 2, false, false, false>;
  }

  // Resident blocks per SM for each tile width, cluster split and warp-group split (per template).
  // The software-pipelined kernels use a few more registers: their occupancy bounds both.
  Status compute_occupancy() {
    for (int pp = 1; pp <= 2; ++pp)
      for (int kz = 1; kz <= kMaxKz; ++kz)
        for (int i = 0; i < 3; ++i) {
          int& o = occ[pp - 1][kz][i];
          o = 0;
          const int ks = 1 << i;
          if ((pp == 2 && ks > 2) || kz > th || (!use_mma && (pp == 1 || kz > 1 || ks > 1))) continue;
          const int smem = frame_layout(pp, tw, th, kp, (th + kz - 1) / kz, ks).total;
          if (smem > smem_optin) continue;
          CUDAPREP_RETURN_IF_ERROR(cuda_status(
              cudaOccupancyMaxActiveBlocksPerMultiprocessor(&o, frame_kernel_for(use_mma, pp, true, false, false),
                                                            kGroupThreads * ks, smem),
              "cudaOccupancyMaxActiveBlocksPerMultiprocessor"));
        }
    return compute_solo();
  }

  // Cluster-split launches are short chains of dependent phases, and a cluster waits for its
  // slowest block: two blocks sharing an SM (the cluster scheduler packs them where shared memory
  // allows) make the whole cluster wait. Asking for just over half an SM's shared memory keeps
  // one block per SM; plan() does so where every cluster of the launch still fits at once.
  Status compute_solo() {
    for (int kz = 0; kz <= kMaxKz; ++kz) solo_clusters[kz] = solo_smem[kz] = 0;
    if (!use_mma || !clusters || smem_per_sm <= 0) return Status();
    const int threads = block_threads_of(m16_split, 1);
    for (int kz = 2; kz <= std::min(kMaxKz, th); ++kz) {
      const int need = frame_layout(1, tw, th, kp, (th + kz - 1) / kz, 1, scan_split && m16_split).total;
      const int smem = std::max(need, round_up(smem_per_sm / 2 - smem_reserved + 1, 128));
      if (smem > smem_optin) continue;
      const FrameKernel k = frame_kernel_for(true, 1, true, m16_split, scan_split);
      int per_sm = 0;
      CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, threads, smem),
                                           "cudaOccupancyMaxActiveBlocksPerMultiprocessor"));
      if (per_sm != 1) continue;
      cudaLaunchConfig_t cfg = {};
      cfg.gridDim = dim3(1, 1, kz);
      cfg.blockDim = dim3(threads);
      cfg.dynamicSmemBytes = static_cast<size_t>(smem);
      cudaLaunchAttribute attr[1];
      attr[0].id = cudaLaunchAttributeClusterDimension;
      attr[0].val.clusterDim.x = 1;
      attr[0].val.clusterDim.y = 1;
      attr[0].val.clusterDim.z = static_cast<unsigned>(kz);
      cfg.attrs = attr;
      cfg.numAttrs = 1;
      int n = 0;
      if (cudaOccupancyMaxActiveClusters(&n, k, &cfg) != cudaSuccess) {
        cudaGetLastError();  // no answer: no padding for this split
        continue;
      }
      solo_clusters[kz] = n;
      solo_smem[kz] = smem;
    }
    return Status();
  }

  struct FramePlan {
    int pp = 1, kz = 1, ks = 1, smem = 0, x_first = 0;
    bool pipe = false, m16 = false, scan = false;
    dim3 grid;
  };

  // Launch shape for a search region (measured on an H200; bench/NOTES-templatematch.md):
  //  - tile width: 64; 128 for templates 65..128 px wide on a grid that fills the GPU (half the
  //    template loads per mma; faster at 128 px, slower at 64 and 256 px and on small grids);
  //  - cluster split kz: where the tiles fill less than half the GPU, the template rows are split
  //    over kz blocks per tile (up to 8, at least 8 rows each): small regions use more SMs and
  //    shorter serial chains (256 x 256 region, 64 px: 42 -> 24 us of kernel time); the largest kz
  //    whose clusters all fit with one block per SM (compute_solo), else the largest that fits;
  //  - with a cluster split (64-wide tiles): 8 warps of one 16-row M-group each (m16), whose
  //    serial chains are th / kz + 15 row steps instead of th / kz + 31;
  //  - otherwise ks warp groups per block (choose_ks);
  //  - software pipelining of the tensor-core loop where a row step is one 32-column chunk and on
  //    small grids; for wider templates on full frames the compiler's own unrolling of the chunk
  //    loop is faster (64 px -4%, 128 px -13% at 128 wide, 256 px -19% at 64 wide).
  FramePlan plan(const Rect& r) const {
    FramePlan pl;
    const int mw = r.w - tw + 1, mh = r.h - th + 1, nc = kp / 32;
    auto tiles_for = [&](int pp, int* gx, int* gy) {
      const int tile = 64 * pp;
      *gx = (r.x + mw + tile - 1) / tile - r.x / tile;
      *gy = (mh + kRows - 1) / kRows;
      return *gx * *gy;
    };
    int gx = 0, gy = 0;
    if (!use_mma) {
      pl.pp = 2;  // the dp4a kernel covers 128 positions per row
    } else {
      pl.pp = force_pp ? force_pp : (nc >= 3 && nc <= 4 && tiles_for(2, &gx, &gy) >= sm_count) ? 2 : 1;
      if (pl.pp == 2 && occ[1][1][0] == 0) pl.pp = 1;  // 128-wide tiles (kz 1, ks 1) do not fit
    }
    const int tiles = tiles_for(pl.pp, &gx, &gy);
    pl.x_first = r.x / (64 * pl.pp) * (64 * pl.pp);
    int kz = 1;
    bool solo = false;
    if (use_mma && clusters) {
      auto fits_solo = [&](int k) { return pl.pp == 1 && solo_smem[k] > 0 && solo_clusters[k] >= tiles; };
      if (force_kz > 0) {
        kz = std::min(force_kz, th);
        solo = kz > 1 && (force_solo == 1 ? pl.pp == 1 && solo_smem[kz] > 0 : force_solo != 0 && fits_solo(kz));
      } else {
        int packed = 1;
        for (int k = 2; k <= kMaxKz; ++k) {
          if (tiles * k > sm_count || th < 8 * k || occ[pl.pp - 1][k][0] == 0) continue;
          packed = k;
          if (force_solo != 0 && fits_solo(k)) kz = k;
        }
        solo = kz > 1;
        if (kz == 1) kz = packed;
      }
      while (kz > 1 && occ[pl.pp - 1][kz][0] == 0) --kz, solo = false;  // does not fit
    }
    pl.kz = kz;
    pl.m16 = use_mma && pl.kz > 1 && pl.pp == 1 && m16_split;
    pl.ks = use_mma && !pl.m16 ? choose_ks(pl.pp, pl.kz, tiles * pl.kz) : 1;
    pl.pipe = use_mma && (force_pipe >= 0 ? force_pipe == 1 : (nc == 1 || pl.kz > 1));
    pl.grid = dim3(gx, gy, pl.kz);
    const int rows = (th + pl.kz - 1) / pl.kz;
    pl.scan = pl.m16 && scan_split && frame_layout(pl.pp, tw, th, kp, rows, pl.ks, true).total <= smem_optin;
    pl.smem = frame_layout(pl.pp, tw, th, kp, rows, pl.ks, pl.scan).total;
    if (solo) pl.smem = std::max(pl.smem, solo_smem[pl.kz]);  // one block per SM
    return pl;
  }

  static int block_threads_of(bool m16, int ks) { return kGroupThreads * (m16 ? 2 : ks); }
  static int block_threads(const FramePlan& pl) { return block_threads_of(pl.m16, pl.ks); }
  FrameKernel kernel_of(const FramePlan& pl) const {
    return frame_kernel_for(use_mma, pl.pp, pl.pipe, pl.m16, pl.scan);
  }

  // Template-row split between warp groups of a block. The tensor-core loop is latency-bound (a
  // warp's serial chain of row steps, rows / ks + 31 of them, sets its time when all blocks are
  // resident). Splitting shortens the chain but makes blocks larger, so fewer fit on an SM: pick
  // the ks with the least waves x chain length. Equal: the smaller ks (less work).
  int choose_ks(int pp, int kz, int blocks) const {
    const int rows = th / kz, max_i = pp == 1 ? 2 : 1;
    if (force_ks > 0) {
      int i = 0;
      while (i < max_i && (2 << i) <= force_ks && (2 << i) <= rows && occ[pp - 1][kz][i + 1] > 0) ++i;
      return 1 << i;
    }
    int best = 1;
    double best_cost = 0;
    for (int i = 0; i <= max_i; ++i) {
      const int ks = 1 << i;
      if (ks > 1 && rows / ks < 16) break;  // below 16 rows a split mostly adds work
      if (occ[pp - 1][kz][i] == 0) break;
      const int per_wave = occ[pp - 1][kz][i] * sm_count;
      const double cost = static_cast<double>((blocks + per_wave - 1) / per_wave) * (rows / ks + 31);
      if (i == 0 || cost < best_cost) {
        best = ks;
        best_cost = cost;
      }
    }
    return best;
  }

  // One launch: scores of the region into `map` and, with peaks, the candidates into the pinned
  // buffer (count first).
  Status launch_frame(cudaTextureObject_t tex, const Rect& r, bool peaks, double threshold, int max_matches) {
    const FramePlan pl = plan(r);
    FrameParams p;
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
    p.mw = r.w - tw + 1;
    p.mh = r.h - th + 1;
    p.x_first = pl.x_first;
    p.kz = pl.kz;
    p.map = reinterpret_cast<float*>(map.data());
    p.mpitch = spitch;
    p.peaks = peaks ? 1 : 0;
    p.cw = tm::cell_side(tw);
    p.ch = tm::cell_side(th);
    p.ncx = (p.mw + p.cw - 1) / p.cw;
    p.threshold = threshold;
    p.max_matches = max_matches;
    p.nms_host_up_to = nms_host_up_to;
    p.progress = reinterpret_cast<unsigned long long*>(state.data());
    p.keys = reinterpret_cast<unsigned long long*>(state.data() + 32);
    p.touched = reinterpret_cast<unsigned*>(state.data() + 32 + static_cast<size_t>(capacity) * 8);
    p.out = out_dev;
    p.trace = nullptr;
    if (trace.data() && pl.grid.x * pl.grid.y * pl.grid.z <= static_cast<unsigned>(trace_capacity)) {
      p.trace = reinterpret_cast<unsigned long long*>(trace.data());
      trace_blocks = pl.grid.x * pl.grid.y * pl.grid.z;
      trace_smem = pl.smem;
    }
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = pl.grid;
    cfg.blockDim = dim3(block_threads(pl));
    cfg.dynamicSmemBytes = static_cast<size_t>(pl.smem);
    cfg.stream = stream;
    cudaLaunchAttribute attr[1];
    if (pl.kz > 1) {
      attr[0].id = cudaLaunchAttributeClusterDimension;
      attr[0].val.clusterDim.x = 1;
      attr[0].val.clusterDim.y = 1;
      attr[0].val.clusterDim.z = static_cast<unsigned>(pl.kz);
      cfg.attrs = attr;
      cfg.numAttrs = 1;
    }
    mark(0);
    const cudaError_t e = cudaLaunchKernelEx(&cfg, kernel_of(pl), p);
    if (e != cudaSuccess && pl.kz > 1) {  // no cluster launch here: split nothing from now on
      cudaGetLastError();
      clusters = false;
      return launch_frame(tex, r, peaks, threshold, max_matches);
    }
    CUDAPREP_RETURN_IF_ERROR(cuda_status(e, "frame_kernel launch"));
    mark(1);
    return Status();
  }

  // The frame's launch, replayed as a CUDA graph per (texture, region, threshold, max matches) on
  // the caller's own stream (measured: 2 us less per frame than a plain launch). Only for textures that were
  // cached already (a buffer pool), so that a stream of new buffers never pays a capture per frame.
  // Falls back to plain launches where capture is not possible or fails.
  Status enqueue_frame(cudaTextureObject_t tex, const Rect& r, double threshold, int max_matches,
                       bool reused_texture) {
    if (!use_graphs || profile || trace.data() || !reused_texture)
      return launch_frame(tex, r, true, threshold, max_matches);
    ++tick;
    for (GraphEntry& g : graphs) {
      if (g.tex == tex && g.r.x == r.x && g.r.y == r.y && g.r.w == r.w && g.r.h == r.h && g.threshold == threshold &&
          g.max_matches == max_matches) {
        g.last_use = tick;
        return cuda_status(cudaGraphLaunch(g.exec, stream), "cudaGraphLaunch");
      }
    }
    cudaGraph_t graph = nullptr;
    CUDAPREP_RETURN_IF_ERROR(
        cuda_status(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture"));
    Status s = launch_frame(tex, r, true, threshold, max_matches);
    const cudaError_t end = cudaStreamEndCapture(stream, &graph);
    cudaGraphExec_t exec = nullptr;
    if (s.ok() && end == cudaSuccess) s = cuda_status(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    if (graph) cudaGraphDestroy(graph);
    if (!s.ok() || end != cudaSuccess || !exec) {
      // Capture is not available here: plain launches from now on.
      cudaGetLastError();
      use_graphs = false;
      return launch_frame(tex, r, true, threshold, max_matches);
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
    g.max_matches = max_matches;
    g.exec = exec;
    g.last_use = tick;
    graphs.push_back(g);
    return cuda_status(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
  }

  void destroy_graphs() {
    for (GraphEntry& g : graphs) cudaGraphExecDestroy(g.exec);
    graphs.clear();
  }

  // The one host synchronisation of a frame. kFlag (default): spin on the flag that the kernel's
  // last block sets in pinned memory after the candidates, asking the driver now and then, so
  // that a failed launch ends the wait with its error instead of hanging. Measured on an H200:
  // about 2 us sooner than kSync (cudaStreamSynchronize), which waits for the whole kernel to
  // retire and for the driver to notice.
  Status wait_for_candidates() {
    if (wait == GpuWait::StreamSync) return cuda_status(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    const volatile unsigned* done = &reinterpret_cast<volatile OutHeader*>(host_out.data())->done;
    for (unsigned spin = 0; !*done; ++spin) {
      if ((spin & 255u) == 255u) {
        const cudaError_t e = cudaStreamQuery(stream);
        if (e == cudaSuccess) {
          if (*done) break;
          return Status::error("frame kernel finished without writing its candidates");
        }
        if (e != cudaErrorNotReady) return cuda_status(e, "frame kernel");
      }
    }
    std::atomic_thread_fence(std::memory_order_acquire);
    in_flight = true;  // its last block may still be leaving
    return Status();
  }

  // Waits for this matcher's last kernel to end (before its resources are destroyed or reused
  // outside the stream's order). Only the pinned-flag wait returns before the kernel has ended.
  void settle() {
    if (in_flight) cudaStreamSynchronize(stream);
    in_flight = false;
  }

  // diagnostics.kernel_time: events around the kernel, its time printed after each match().
  void mark(int i) {
    if (profile) cudaEventRecord(events[i], stream);
  }
  void print_profile() {
    float k = 0;
    cudaEventSynchronize(events[1]);  // the flag wait can return before the kernel has ended
    cudaEventElapsedTime(&k, events[0], events[1]);
    std::fprintf(stderr, "tm profile (ms): kernel %.4f\n", k);
  }

  // One line per launch: the span (first block start to last block end, %globaltimer), the spread
  // of block starts, blocks per SM, then per phase the median and maximum over blocks (us at the
  // nominal SM clock), and the last block's ticket-to-end time.
  void print_trace() {
    if (!trace_blocks) return;
    std::vector<unsigned long long> t(static_cast<size_t>(trace_blocks) * kTraceSlots);
    if (cudaMemcpy(t.data(), trace.data(), t.size() * 8, cudaMemcpyDeviceToHost) != cudaSuccess) return;
    const double cyc_us = clock_khz > 0 ? clock_khz / 1000.0 : 1980.0;
    unsigned long long g0 = ~0ull, g1 = 0, gs = 0;
    std::vector<int> per_sm(1024, 0);
    int max_per_sm = 0;
    for (unsigned b = 0; b < trace_blocks; ++b) {
      const unsigned long long* r = &t[static_cast<size_t>(b) * kTraceSlots];
      g0 = std::min(g0, r[kTrGtStart]);
      g1 = std::max(g1, r[kTrGtEnd]);
      gs = std::max(gs, r[kTrGtStart]);
      if (r[kTrSm] < per_sm.size()) max_per_sm = std::max(max_per_sm, ++per_sm[r[kTrSm]]);
    }
    std::fprintf(stderr, "tm trace: %u blocks of %d B shared, <=%d per SM over the launch, span %.2f us, starts spread %.2f us |",
                 trace_blocks, trace_smem, max_per_sm, (g1 - g0) / 1000.0, (gs - g0) / 1000.0);
    const char* names[] = {"stage", "mma", "cluster", "box", "map", "cells", "tail"};
    for (int ph = 1; ph <= kTrEnd; ++ph) {
      std::vector<double> d;
      for (unsigned b = 0; b < trace_blocks; ++b) {
        const unsigned long long* r = &t[static_cast<size_t>(b) * kTraceSlots];
        d.push_back(static_cast<double>(static_cast<long long>(r[ph] - r[ph - 1])) / cyc_us);
      }
      std::sort(d.begin(), d.end());
      std::fprintf(stderr, " %s %.2f/%.2f", names[ph - 1], d[d.size() / 2], d.back());
    }
    for (unsigned b = 0; b < trace_blocks; ++b) {
      const unsigned long long* r = &t[static_cast<size_t>(b) * kTraceSlots];
      if (r[kTrLast])
        std::fprintf(stderr, " | last block: total %.2f, tail %.2f, ended at +%.2f us", (r[kTrEnd] - r[kTrStart]) / cyc_us,
                     (r[kTrEnd] - r[kTrCells]) / cyc_us, (r[kTrGtEnd] - g0) / 1000.0);
    }
    std::fprintf(stderr, "\n");
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
    settle();
    destroy_graphs();
    destroy_textures();
    trace.reset();
    trace_capacity = 0;
    trace_blocks = 0;
    for (cudaEvent_t& e : events) {
      if (e) cudaEventDestroy(e);
      e = nullptr;
    }
    profile = false;
    map.reset();
    staging.reset();
    state.reset();
    host_out.reset();
    out_dev = nullptr;
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

namespace {
Status check_tuning(const MatcherCudaOptions::Tuning& t) {
  auto refuse = [](const char* what, int v) {
    return Status::error(std::string("TemplateMatcherCuda: tuning.") + what + " " + std::to_string(v) + " is invalid");
  };
  if (t.tile_width != 0 && t.tile_width != 64 && t.tile_width != 128) return refuse("tile_width", t.tile_width);
  if (t.row_split != 0 && t.row_split != 1 && t.row_split != 2 && t.row_split != 4)
    return refuse("row_split", t.row_split);
  if (t.cluster_split < 0 || t.cluster_split > kMaxKz) return refuse("cluster_split", t.cluster_split);
  return Status();
}

int override_value(MatcherCudaOptions::Override o) {
  return o == MatcherCudaOptions::Override::Auto ? -1 : o == MatcherCudaOptions::Override::On ? 1 : 0;
}
}  // namespace

Status TemplateMatcherCuda::configure(int frame_width, int frame_height, void* stream, const Options& options) {
  Impl& m = *impl_;
  m.release();
  if (frame_width <= 0 || frame_height <= 0)
    return Status::error("invalid frame size " + std::to_string(frame_width) + "x" + std::to_string(frame_height));
  CUDAPREP_RETURN_IF_ERROR(check_tuning(options.tuning));
  const MatcherCudaOptions::Tuning& tuning = options.tuning;
  const MatcherCudaOptions::Diagnostics& diagnostics = options.diagnostics;
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
  CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaDeviceGetAttribute(&m.sm_count, cudaDevAttrMultiProcessorCount, dev),
                                       "cudaDeviceGetAttribute"));
  CUDAPREP_RETURN_IF_ERROR(cuda_status(
      cudaDeviceGetAttribute(&m.smem_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev), "cudaDeviceGetAttribute"));
  CUDAPREP_RETURN_IF_ERROR(cuda_status(
      cudaDeviceGetAttribute(&m.smem_reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev), "cudaDeviceGetAttribute"));
  // The kernel has no static shared memory: its dynamic limit can be the whole opt-in size.
  for (int i = 0; i < 32; ++i) {  // every (mma, pp, pipelined, m16, scan) of the table
    const void* k = reinterpret_cast<const void*>(
        Impl::frame_kernel_for(i & 1, 1 + ((i >> 1) & 1), (i >> 2) & 1, (i >> 3) & 1, (i >> 4) & 1));
    CUDAPREP_RETURN_IF_ERROR(cuda_status(
        cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, m.smem_optin), "cudaFuncSetAttribute"));
  }
  m.use_mma = m.cc_major >= 8 && !tuning.dp4a;
  m.clusters = m.cc_major >= 9;
  m.force_pp = tuning.tile_width / 64;
  m.force_ks = tuning.row_split;
  m.force_kz = tuning.cluster_split;
  m.force_solo = override_value(tuning.solo);
  m.scan_split = tuning.prefix_sums;
  m.force_pipe = override_value(tuning.pipelining);
  // Graphs need a stream of the caller's own (the legacy stream cannot be captured).
  m.use_graphs = m.stream != nullptr && tuning.graphs;
  if (diagnostics.kernel_time) {
    for (cudaEvent_t& e : m.events) CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaEventCreate(&e), "cudaEventCreate"));
    m.profile = true;
  }
  m.m16_split = tuning.m16;
  m.wait = options.wait;
  m.nms_host_up_to = tuning.nms_on_host_up_to;
  m.host_time = diagnostics.host_time;
  if (diagnostics.trace) {
    m.trace_capacity = ((frame_width + 63) / 64 + 1) * ((frame_height + 63) / 64) * kMaxKz;
    CUDAPREP_RETURN_IF_ERROR(m.trace.allocate(static_cast<size_t>(m.trace_capacity) * kTraceSlots * 8));
    CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaDeviceGetAttribute(&m.clock_khz, cudaDevAttrClockRate, dev), "cudaDeviceGetAttribute"));
  }
  m.width = frame_width;
  m.height = frame_height;
  m.spitch = round_up(frame_width, 4);
  CUDAPREP_RETURN_IF_ERROR(m.map.allocate(static_cast<size_t>(m.spitch) * frame_height * sizeof(float)));
  CUDAPREP_RETURN_IF_ERROR(m.staging.allocate_pitched(round_up(frame_width, 16), frame_height));
  m.configured = true;
  if (m.has_template) {
    CUDAPREP_RETURN_IF_ERROR(m.set_kernel_limits());
    CUDAPREP_RETURN_IF_ERROR(m.compute_occupancy());
    CUDAPREP_RETURN_IF_ERROR(m.alloc_peaks());
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
  m.settle();
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
    if (s.ok()) s = m.alloc_peaks();
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
  const int64_t hits = m.stats.hits;
  CUDAPREP_RETURN_IF_ERROR(m.texture_for(f, &tex));
  const auto t0 = std::chrono::steady_clock::now();
  volatile OutHeader* header = reinterpret_cast<volatile OutHeader*>(m.host_out.data());
  header->done = 0;  // before the launch: the kernel sets it once the candidates are written
  CUDAPREP_RETURN_IF_ERROR(m.enqueue_frame(tex, r, settings.threshold, settings.max_matches, m.stats.hits > hits));
  const auto t1 = std::chrono::steady_clock::now();
  CUDAPREP_RETURN_IF_ERROR(m.wait_for_candidates());
  const auto t2 = std::chrono::steady_clock::now();
  if (m.profile) m.print_profile();
  if (m.trace.data()) m.print_trace();
  // The kernel wrote the candidates into the pinned buffer, then their count + 1 as the flag.
  const int count = std::min<int>(static_cast<int>(header->done) - 1, m.capacity);
  tm::Candidate* c = reinterpret_cast<tm::Candidate*>(m.host_out.data() + sizeof(OutHeader));
  tm::select_matches(c, std::max(count, 0), r, m.tw, m.th, settings.max_matches, matches);
  if (m.host_time) {
    const auto t3 = std::chrono::steady_clock::now();
    using us = std::chrono::duration<double, std::micro>;
    std::fprintf(stderr, "tm host (us): enqueue %.2f wait %.2f select %.2f candidates %d\n", us(t1 - t0).count(),
                 us(t2 - t1).count(), us(t3 - t2).count(), count);
  }
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
  CUDAPREP_RETURN_IF_ERROR(m.launch_frame(tex, r, false, 0.0, 0));
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
