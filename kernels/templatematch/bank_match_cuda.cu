// CUDA bank matcher (bank_match.h). Per frame, on the caller's stream, no allocation: the members'
// regions are copied from pinned memory; one scoring launch scores every member in its region and
// lists the cells whose best position reaches the threshold; then
//   - few listed cells: bank_peaks_kernel makes each a candidate with sub-pixel offsets (mapped
//     pinned memory) and clears it, and the host suppresses (select_bank_matches, shared with the
//     CPU path);
//   - many: bank_rank_kernel turns them into records in the host's order, bank_peaks_kernel
//     suppresses them per template (the same rule), and bank_emit_kernel makes only the kept
//     matches candidates;
// bank_emit_kernel's last block hands the count to the host and sets a flag; one wait, as
// configure()'s GpuWait says (Spin and Poll on that flag; Blocking sleeps until the scoring
// launch is done and spins on the flag through the short kernels after it).
//
// Scoring on the tensor cores (sm_80+, bank_scores_mma_kernel). The members are packed into
// groups of up to 8 (similar widths and heights together); a block stages a tile of the frame
// and its group's template rows once and sums T * I for all members in one pass of m16n8k32
// products:
//   A[m][k] = T_slot(k, r - y - m / gp), slot = m % gp    gp slots, 16 / gp output rows each
//   B[k][n] = I(x + s + 4 n + k, r)                       s = 0..3: 32 positions of image row r
// so that D[m][n] accumulates, over the image rows r, the correlation of slot m % gp at output
// row y + m / gp, position x + s + 4 n. The 16 rows of A hold every member: with 8 members two
// output rows each, so an M-group spends th + 1 row steps on th template rows (a member alone,
// 16 output rows: th + 15). A comes from the staged rows with ldmatrix, B from 4 words of the
// staged frame row and funnel shifts, shared by the M-groups of a warp.
// Window sums: an unmasked member's from vertical then horizontal running sums of the staged tile
// (once per size); a masked group's by three more passes with the masks as A: over I (sum M I) and
// over the high and low bytes of I^2 (sum M I^2 = 256 sum M hi + sum M lo). All sums are exact
// integers, the score the CPU path's formula; each cell's best position that reaches the threshold
// is kept with a 64-bit atomicMax of (ordered score, inverted position), over the block in shared
// memory, then over the blocks in the member's cell keys.
//
// Before sm_80, and for the members of a group no block can hold, bank_scores_dp4a_kernel: a block
// owns a tile of 32 x 16 positions, stages the frame bytes under it once, and, member after
// member, each thread sums its 4 consecutive positions with dp4a (sum MT * I, M * I, M * I^2).
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bank_match.h"
#include "bank_mma_layout.h"
#include "cuda_device.h"
#include "cuda_status.h"
#include "mma_u8.cuh"
#include "templatematch_internal.h"

namespace cudaprep {

namespace {

constexpr int kTileX = 32, kTileY = 16, kThreads = 128;  // dp4a: a thread, 4 consecutive positions of one row
constexpr int kLocalCells = 64;                          // cells of >= 4 x 4 positions a tile can touch: at most 9 x 5
constexpr int kMaxCandidates = 1 << 18;
constexpr unsigned kHostCandidates = 256;  // cells reaching their threshold the host suppresses; beyond, the device

struct MemberDev {
  const uint8_t* templ;  // th rows of kp bytes: T where the mask is set, else 0
  const uint8_t* mask;   // th rows of kp bytes: 1 where the mask is set, else 0
  int tw, th, kp, masked;
  int on_cores;  // scored by bank_scores_dp4a_kernel (else by its group on the tensor cores)
  long long n, st, var_t;
  int cw, ch;
  unsigned long long* keys;  // the cells of a whole-frame search, 0 between frames
};

// Per frame: the member's region (mw == 0: not searched).
struct MemberRegion {
  int rx, ry, mw, mh, ncx, ncy;
  float* map;  // score_map(): the member's scores, else null
  double threshold;
  int template_index, max_matches;  // the member's template and its most matches
};
static_assert(sizeof(MemberRegion) == 48, "MemberRegion");

struct GroupFrame;

struct BankParams {
  const uint8_t* frame;
  long long stride;
  int fw, fh;
  const MemberDev* members;
  const MemberRegion* regions;
  int count;
  int bx, by;       // first position of the tiles (the regions' union)
  int rows, pitch;  // staged tile: rows x pitch bytes
  BankCandidate* out;
  unsigned* out_count;  // pinned host memory: the candidates' count and two more words, then (word 3) a
                        // flag set last: all written by bank_emit_kernel's last block
  unsigned capacity;
  unsigned* progress;  // device memory: candidates, emit blocks done, cells listed, matches kept; 0 between frames
  uint2* listed;       // (member, cell) of each cell whose key reached its threshold this frame
  uint4* ranked;       // suppression on the device: per listed cell, its rank (2 words), x | y << 16,
                       // member | template << 8 | (tw - 1) << 16 | (th - 1) << 24
  unsigned listed_capacity;
  uint4* kept;                       // suppression on the device: member, key (2 words) of each kept match
  unsigned host_up_to;               // more listed cells than this: suppression in bank_peaks_kernel
  int templates;                     // of the bank
  int across;                        // suppression across templates
  const bank_mma::GroupDev* groups;  // the tensor-core kernel's member groups
  const GroupFrame* group_frames;
};

// Float bits ordered as the floats (0: below all of them), and back.
__device__ __forceinline__ unsigned ordered_bits(float f) {
  const unsigned b = __float_as_uint(f);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
__device__ __forceinline__ float ordered_float(unsigned o) {
  return __uint_as_float((o & 0x80000000u) ? (o & 0x7fffffffu) : ~o);
}

// The largest value among the lanes of `lanes` (which holds the calling lane; the lanes of each
// such group call it together with the same mask).
__device__ __forceinline__ unsigned group_max(unsigned lanes, unsigned v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  return __reduce_max_sync(lanes, v);
#else
  unsigned m = v;
  for (int i = 0; i < 32; ++i) {
    const unsigned o = __shfl_sync(0xffffffffu, v, i);
    if (lanes >> i & 1u) m = max(m, o);
  }
  return m;
#endif
}

// The sum of the warp's 32 values (modulo 2^32), in every lane.
__device__ __forceinline__ unsigned warp_sum(unsigned v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  return __reduce_add_sync(0xffffffffu, v);
#else
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
#endif
}

__device__ __forceinline__ unsigned long long cell_key(float score, unsigned position) {
  return (static_cast<unsigned long long>(ordered_bits(score)) << 32) | ~position;
}

__device__ __forceinline__ float key_score(unsigned long long key) {
  return ordered_float(static_cast<unsigned>(key >> 32));
}

// Only a position that reaches its member's threshold gets a key: a cell's best position matters
// only where it reaches the threshold, and then it is the best of those that do.
__device__ __forceinline__ bool reaches(float score, const MemberRegion& rg) {
  return static_cast<double>(score) >= rg.threshold;
}

// The cells of one member that a block's frame positions [x0, x0 + w) x [y0, y0 + h) meet in its
// map (ncl of them, ncl_x a row, from cell (cx0, cy0)); ncl 0: none of its positions.
struct LocalCells {
  int cx0, cy0, ncl_x, ncl;
};
__device__ __forceinline__ LocalCells local_cells(const MemberDev& md, const MemberRegion& rg, int x0, int y0, int w,
                                                  int h) {
  const int u_first = max(x0 - rg.rx, 0), u_last = min(x0 + w - 1 - rg.rx, rg.mw - 1);
  const int v_first = max(y0 - rg.ry, 0), v_last = min(y0 + h - 1 - rg.ry, rg.mh - 1);
  LocalCells c{0, 0, 0, 0};
  if (u_first > u_last || v_first > v_last) return c;
  c.cx0 = u_first / md.cw;
  c.cy0 = v_first / md.ch;
  c.ncl_x = u_last / md.cw - c.cx0 + 1;
  c.ncl = c.ncl_x * (v_last / md.ch - c.cy0 + 1);
  return c;
}

// Merges a block's key of local cell i of member m into the member's cell keys; the first key of
// a cell this frame (all keys reach the threshold) lists the cell for bank_peaks_kernel.
__device__ __forceinline__ void flush_cell_key(const BankParams& p, int m, const MemberDev& md, const MemberRegion& rg,
                                               const LocalCells& lc, int i, unsigned long long key) {
  if (key == 0 || i >= lc.ncl) return;
  const int cell = (lc.cy0 + i / lc.ncl_x) * rg.ncx + lc.cx0 + i % lc.ncl_x;
  if (atomicMax(&md.keys[cell], key) == 0) {
    const unsigned at = atomicAdd(&p.progress[2], 1u);
    if (at < p.listed_capacity) p.listed[at] = make_uint2(static_cast<unsigned>(m), static_cast<unsigned>(cell));
  }
}

__global__ void __launch_bounds__(kThreads) bank_scores_dp4a_kernel(const BankParams p) {
  extern __shared__ __align__(16) uint8_t tile[];
  __shared__ unsigned long long cell_keys[kLocalCells];
  const int x0 = p.bx + blockIdx.x * kTileX, y0 = p.by + blockIdx.y * kTileY;

  // Stage the frame bytes of the tile (zero outside the frame: only padded template columns,
  // which are zero, read them).
  uint32_t* words = reinterpret_cast<uint32_t*>(tile);
  const int wpr = p.pitch / 4;
  for (int i = threadIdx.x; i < p.rows * wpr; i += kThreads) {
    const int r = i / wpr, c = (i % wpr) * 4;
    const int y = y0 + r;
    uint32_t w = 0;
    if (y < p.fh) {
      const uint8_t* row = p.frame + y * p.stride;
      for (int k = 3; k >= 0; --k) {
        const int x = x0 + c + k;
        w = (w << 8) | (x < p.fw ? row[x] : 0u);
      }
    }
    words[i] = w;
  }
  __syncthreads();

  const int tx = threadIdx.x % 8, ty = threadIdx.x / 8;
  const int px = x0 + 4 * tx, py = y0 + ty;
  for (int m = 0; m < p.count; ++m) {
    const MemberRegion rg = p.regions[m];
    if (rg.mw == 0 || !p.members[m].on_cores) continue;
    // The block skips members it has no positions of.
    const MemberDev md = p.members[m];
    const LocalCells lc = local_cells(md, rg, x0, y0, kTileX, kTileY);
    if (lc.ncl == 0) continue;
    if (threadIdx.x < kLocalCells) cell_keys[threadIdx.x] = 0;
    __syncthreads();

    uint32_t sti[4] = {0, 0, 0, 0}, s1[4] = {0, 0, 0, 0}, s2[4] = {0, 0, 0, 0};
    const int chunks = md.kp / 4;
    for (int j = 0; j < md.th; ++j) {
      const uint32_t* srow = words + (ty + j) * wpr + tx;
      const uint32_t* trow = reinterpret_cast<const uint32_t*>(md.templ + j * md.kp);
      const uint32_t* mrow = reinterpret_cast<const uint32_t*>(md.mask + j * md.kp);
      uint32_t lo = srow[0];
      for (int c = 0; c < chunks; ++c) {
        const uint32_t hi = srow[c + 1];
        const uint32_t t4 = __ldg(trow + c), m4 = __ldg(mrow + c);
        if (m4 != 0) {
          const uint32_t mff = m4 * 255u;  // 1 -> 0xff per byte
#pragma unroll
          for (int s = 0; s < 4; ++s) {
            const uint32_t win = __funnelshift_r(lo, hi, 8 * s);
            sti[s] = __dp4a(win, t4, sti[s]);
            s1[s] = __dp4a(win, m4, s1[s]);
            s2[s] = __dp4a(win, win & mff, s2[s]);
          }
        }
        lo = hi;
      }
    }
    const int v = py - rg.ry;
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      const int u = px + s - rg.rx;
      if (u < 0 || u >= rg.mw || v < 0 || v >= rg.mh) continue;
      const float score = tm::bank_ccoeff_normed(md.n, md.st, md.var_t, s1[s], s2[s], sti[s], md.masked != 0);
      if (rg.map) rg.map[static_cast<long long>(v) * rg.mw + u] = score;
      if (isnan(score) || !reaches(score, rg)) continue;
      const int local = (v / md.ch - lc.cy0) * lc.ncl_x + (u / md.cw - lc.cx0);
      atomicMax(&cell_keys[local], cell_key(score, static_cast<unsigned>(v) * rg.mw + u));
    }
    __syncthreads();
    if (threadIdx.x < kLocalCells) flush_cell_key(p, m, md, rg, lc, threadIdx.x, cell_keys[threadIdx.x]);
    __syncthreads();
  }
}

// ------------------------------------------------------------------------------------------
// The tensor-core kernel. Block: 8 warps, 2 along x (32 positions each) by 4 along y; a warp
// holds G M-groups (1, 2 or 4) of rs = 16 / gp output rows each, for every slot of its group;
// grid z = group. Groups, shapes and the products' layout: bank_mma_layout.h.
using namespace bank_mma;

// Per frame: the tiles a group's searched members cover.
struct GroupFrame {
  int bx, by;    // frame position of the first tile
  int ntx, nty;  // tiles (0: the group has nothing to search)
};
static_assert(sizeof(GroupFrame) == 16, "GroupFrame");

// A block's copy of one slot's member and region.
struct SlotInfo {
  MemberRegion rg;
  MemberDev md;
};
static_assert(sizeof(SlotInfo) <= kSlotBytes, "SlotInfo");

enum class Plane { Image, SquareHigh, SquareLow };

// Asynchronous copies into shared memory (sm_80+; before, plain copies): a thread issues all of
// its copies without waiting for any, and wait_copies() waits for its own.
__device__ __forceinline__ void copy_async4(uint32_t* dst, const uint32_t* src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(static_cast<uint32_t>(__cvta_generic_to_shared(dst))),
               "l"(src)
               : "memory");
#else
  *dst = __ldg(src);
#endif
}
__device__ __forceinline__ void copy_async16(uint4* dst, const uint4* src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(static_cast<uint32_t>(__cvta_generic_to_shared(dst))),
      "l"(src)
      : "memory");
#else
  *dst = __ldg(src);
#endif
}
__device__ __forceinline__ void wait_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

// Stages frame rows [y0, y0 + rows) x columns [x0, x0 + 4 pitch_w) as 32-bit words (zero
// outside the frame), or the high / low bytes of their squares. An image word inside the frame
// is one asynchronous 4-byte copy where the frame's rows and x0 are 4-byte aligned: wait_copies()
// before the barrier that publishes the plane.
__device__ void stage_plane(uint32_t* plane, int pitch_w, int rows, const BankParams& p, int x0, int y0, Plane kind) {
  const bool aligned =
      ((reinterpret_cast<uintptr_t>(p.frame) | static_cast<uintptr_t>(p.stride) | static_cast<uintptr_t>(x0)) & 3u) ==
      0;
#pragma unroll 4
  for (int i = threadIdx.x; i < rows * pitch_w; i += kMmaThreads) {
    const int r = i / pitch_w, c = i - r * pitch_w;
    const int y = y0 + r, x = x0 + 4 * c;
    uint32_t w = 0;
    if (y < p.fh) {
      const uint8_t* row = p.frame + y * p.stride;
      if (aligned && x + 3 < p.fw) {
        if (kind == Plane::Image) {
          copy_async4(plane + i, reinterpret_cast<const uint32_t*>(row + x));
          continue;
        }
        w = __ldg(reinterpret_cast<const uint32_t*>(row + x));
      } else {
#pragma unroll
        for (int k = 3; k >= 0; --k) w = (w << 8) | (x + k < p.fw ? row[x + k] : 0u);
      }
      if (kind != Plane::Image) {
        uint32_t q = 0;
#pragma unroll
        for (int k = 3; k >= 0; --k) {
          const uint32_t b = w >> (8 * k) & 255u;
          q = (q << 8) | (kind == Plane::SquareHigh ? (b * b) >> 8 : (b * b) & 255u);
        }
        w = q;
      }
    }
    plane[i] = w;
  }
}

// Asynchronous: wait_copies() before the barrier that publishes the rows.
__device__ void stage_rows(uint4* dst, const uint4* src, int bytes) {
#pragma unroll 4
  for (int i = threadIdx.x; i < bytes / 16; i += kMmaThreads) copy_async16(dst + i, src + i);
}

// The products of image rows [r_begin, r_stop) for G M-groups: B from 4 words of the staged frame
// row and funnel shifts, shared by the M-groups; A of each M-group with ldmatrix. kAll: every
// M-group meets these rows (no test in the loop).
template <int G, bool kAll>
__device__ __forceinline__ void mma_rows(const uint32_t* b_base, uint32_t a_base, const WarpLayout& w, int r_begin,
                                         int r_stop, uint32_t (&acc)[kMaxMGroups][4][4]) {
  const int super = w.gp * w.tp;  // bytes between consecutive image rows of one lane's A row
  const uint32_t* brow = b_base + r_begin * w.pitch_w;
  uint32_t arow[G];  // each M-group's A row address, a row on each step
#pragma unroll
  for (int gi = 0; gi < G; ++gi) arow[gi] = a_base + (r_begin - gi * w.rs) * super;
  for (int r = r_begin; r < r_stop; ++r, brow += w.pitch_w) {
    bool live[G];
#pragma unroll
    for (int gi = 0; gi < G; ++gi) live[gi] = kAll || (r >= live_first(w, gi) && r < live_end(w, gi));
#pragma unroll 2
    for (int c = 0; c < w.chunks; ++c) {
      const uint32_t w0 = brow[8 * c], w1 = brow[8 * c + 1], w2 = brow[8 * c + 4], w3 = brow[8 * c + 5];
      uint32_t b0[4], b1[4];
      b0[0] = w0;
      b1[0] = w2;
#pragma unroll
      for (int s = 1; s < 4; ++s) {
        b0[s] = __funnelshift_r(w0, w1, 8 * s);
        b1[s] = __funnelshift_r(w2, w3, 8 * s);
      }
#pragma unroll
      for (int gi = 0; gi < G; ++gi) {
        if (!kAll && !live[gi]) continue;
        uint32_t a[4];
        ldmatrix_x4(a, arow[gi] + 32 * c);
#pragma unroll
        for (int s = 0; s < 4; ++s) mma_u8(acc[gi][s], a, b0[s], b1[s]);
      }
    }
#pragma unroll
    for (int gi = 0; gi < G; ++gi) arow[gi] += super;
  }
}

// One pass of products over every image row the warp reads: acc[gi][s] = sums of M-group gi,
// shift s. staged: the staged template rows (A), plane: the staged frame rows (B).
template <int G>
__device__ __forceinline__ void mma_pass_of(const uint32_t* plane, const uint8_t* staged, const WarpLayout& w,
                                            uint32_t (&acc)[kMaxMGroups][4][4]) {
  const int lane = threadIdx.x & 31;
  const uint32_t a_base =
      static_cast<uint32_t>(__cvta_generic_to_shared(staged)) + static_cast<uint32_t>(a_row_offset(w, lane, 0, 0));
  const uint32_t* b_base = plane + b_word(w, lane, 0, 0, 0);
  const int all_first = live_first(w, G - 1), all_end = live_end(w, 0), r_end = live_end(w, G - 1);
  if (all_first < all_end) {
    mma_rows<G, false>(b_base, a_base, w, w.warp_row, all_first, acc);
    mma_rows<G, true>(b_base, a_base, w, all_first, all_end, acc);
    mma_rows<G, false>(b_base, a_base, w, all_end, r_end, acc);
  } else {
    mma_rows<G, false>(b_base, a_base, w, w.warp_row, r_end, acc);
  }
}

// skip: none of the warp's positions is in a map (its sums stay 0, and nothing reads them).
__device__ __forceinline__ void mma_pass(const uint32_t* plane, const uint8_t* staged, const WarpLayout& w, bool skip,
                                         uint32_t (&acc)[kMaxMGroups][4][4]) {
#pragma unroll
  for (int gi = 0; gi < kMaxMGroups; ++gi)
#pragma unroll
    for (int s = 0; s < 4; ++s)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[gi][s][e] = 0;
  if (skip) return;
  switch (w.mgroups) {
    case 4: mma_pass_of<4>(plane, staged, w, acc); break;
    case 2: mma_pass_of<2>(plane, staged, w, acc); break;
    default: mma_pass_of<1>(plane, staged, w, acc);
  }
}

template <class Op>
__device__ __forceinline__ void for_each_entry(const WarpLayout& w, int rows, uint32_t (&acc)[kMaxMGroups][4][4],
                                               Op op) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int gi = 0; gi < kMaxMGroups; ++gi) {
    if (gi >= w.mgroups) break;
#pragma unroll
    for (int s = 0; s < 4; ++s)
#pragma unroll
      for (int e = 0; e < 4; ++e) op(sum_index(w, rows, lane, gi, s, e), acc[gi][s][e]);
  }
}

// Column sums of a thread's columns c and c + kMmaThreads (sum I and sum I^2 over some rows).
struct ColumnCarry {
  uint32_t s1[2], s2[2];
};

// Adds staged rows [from, to) of the thread's columns below `cols` to its column sums.
__device__ __forceinline__ void add_column_rows(const uint8_t* bytes, int pitch, int cols, int from, int to,
                                                ColumnCarry& sums) {
#pragma unroll
  for (int q = 0; q < 2; ++q) {
    const int c = threadIdx.x + q * kMmaThreads;
    if (c >= cols) break;
    uint32_t a1 = sums.s1[q], a2 = sums.s2[q];
    for (int j = from; j < to; ++j) {
      const uint32_t b = bytes[j * pitch + c];
      a1 += b;
      a2 += b * b;
    }
    sums.s1[q] = a1;
    sums.s2[q] = a2;
  }
}

// Where box_sums' column sums start: from the previous chunk's (carry holds rows
// [r0 - 1, r0 - 1 + th)), from rows [r0, r0 + th) that the caller summed (carry holds them), or
// from the staged rows.
enum class ColumnStart { Carried, Given, Staged };

// Window sums of a tw x th box over block rows [r0, r0 + kChunkRows) from the staged plane:
// column sums (a thread per column, running down from `start`; carry is left with the chunk's
// last row's), then, a warp a row, the window sums of the row from its column sums. Exact modulo
// 2^32 (the sums of one window fit).
__device__ void box_sums(const uint32_t* plane, int pitch_w, int r0, int tw, int th, ColumnStart start,
                         ColumnCarry& carry, uint32_t* v1, uint32_t* v2, uint32_t* b1, uint32_t* b2) {
  const uint8_t* bytes = reinterpret_cast<const uint8_t*>(plane);
  const int pitch = 4 * pitch_w;
  const int cols = kMmaTileX + tw - 1, vp = kMmaTileX + tw;
  static_assert(2 * kMmaThreads >= kMmaTileX + 255, "two columns a thread");
  if (start == ColumnStart::Staged) {
    carry = ColumnCarry{};
    add_column_rows(bytes, pitch, cols, r0, r0 + th, carry);
  }
#pragma unroll
  for (int q = 0; q < 2; ++q) {
    const int c = threadIdx.x + q * kMmaThreads;
    if (c >= cols) break;
    uint32_t a1 = carry.s1[q], a2 = carry.s2[q];
    int v = 0;
    if (start != ColumnStart::Carried) {
      v1[c] = a1;
      v2[c] = a2;
      v = 1;
    }
    for (; v < kChunkRows; ++v) {
      const uint32_t add = bytes[(r0 + v + th - 1) * pitch + c], sub = bytes[(r0 + v - 1) * pitch + c];
      a1 += add - sub;
      a2 += add * add - sub * sub;
      v1[v * vp + c] = a1;
      v2[v * vp + c] = a2;
    }
    carry.s1[q] = a1;
    carry.s2[q] = a2;
  }
  __syncthreads();
  // Each row's kMmaTileX window sums, a warp a row. With q the sum of the row's first tw - 1 column
  // sums and d[k] = v[tw - 1 + k] - v[k], the window at u sums to q + v[u] + d[0] + ... + d[u]:
  // one reduction and one scan of 64 differences, whatever tw; each load or store of the warp is
  // 32 consecutive words (no bank conflicts).
  static_assert(kMmaTileX == 64, "two window sums a lane");
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
#pragma unroll
  for (int row = warp; row < 2 * kChunkRows; row += kMmaWarps) {
    const uint32_t* vr = (row < kChunkRows ? v1 : v2) + (row % kChunkRows) * vp;
    uint32_t* br = (row < kChunkRows ? b1 : b2) + (row % kChunkRows) * kMmaTileX;
    const uint32_t lo = vr[lane], hi = vr[lane + 32];
    uint32_t q = (lane < tw - 1 ? lo : 0u) + (lane + 32 < tw - 1 ? hi : 0u);
    for (int c = lane + 64; c < tw - 1; c += 32) q += vr[c];
    q = warp_sum(q);
    uint32_t d0 = vr[tw - 1 + lane] - lo, d1 = vr[tw + 31 + lane] - hi;  // inclusive scans of both halves
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
      const uint32_t t0 = __shfl_up_sync(0xffffffffu, d0, off), t1 = __shfl_up_sync(0xffffffffu, d1, off);
      if (lane >= off) d0 += t0, d1 += t1;
    }
    d1 += __shfl_sync(0xffffffffu, d0, 31);
    br[lane] = q + lo + d0;
    br[lane + 32] = q + hi + d1;
  }
  __syncthreads();
}

// Once a block, so that the epilogue neither reads the members nor divides: each slot's local
// cells in each chunk of kChunkRows block rows; the first local cell of each block row's cell row
// (row_cells[slot][row]) and the local cell column of each block column (col_cells[slot][column]),
// -1 outside the slot's map. A position's local cell is the sum of its row's and its column's.
__device__ void cell_tables(const SlotInfo* info, int count, int x0, int y0, int rows, int nchunks, int* row_cells,
                            int* col_cells, LocalCells* chunk_cells) {
  auto chunk_of = [&](const SlotInfo& s, int c) {
    return local_cells(s.md, s.rg, x0, y0 + c * kChunkRows, kMmaTileX, min(kChunkRows, rows - c * kChunkRows));
  };
  for (int i = threadIdx.x; i < count * nchunks; i += kMmaThreads)
    chunk_cells[i] = chunk_of(info[i / nchunks], i % nchunks);
  for (int i = threadIdx.x; i < count * rows; i += kMmaThreads) {
    const SlotInfo& s = info[i / rows];
    const int r = i % rows, v = y0 + r - s.rg.ry;
    int first = -1;
    if (v >= 0 && v < s.rg.mh) {
      const LocalCells lc = chunk_of(s, r / kChunkRows);
      first = (v / s.md.ch - lc.cy0) * lc.ncl_x;
    }
    row_cells[i] = first;
  }
  for (int i = threadIdx.x; i < count * kMmaTileX; i += kMmaThreads) {
    const SlotInfo& s = info[i / kMmaTileX];
    const int u = x0 + i % kMmaTileX - s.rg.rx;
    col_cells[i] = u >= 0 && u < s.rg.mw ? u / s.md.cw - max(x0 - s.rg.rx, 0) / s.md.cw : -1;
  }
}

__global__ void __launch_bounds__(kMmaThreads, 2) bank_scores_mma_kernel(const BankParams p) {
  extern __shared__ __align__(16) uint8_t smem[];
  const GroupDev& g = p.groups[blockIdx.z];  // (read in place)
  const GroupFrame gf = p.group_frames[blockIdx.z];
  if (static_cast<int>(blockIdx.x) >= gf.ntx || static_cast<int>(blockIdx.y) >= gf.nty) return;
  const MmaShape sh = mma_shape(g);
  const MmaSmem sm = mma_smem(g);
  const int x0 = gf.bx + blockIdx.x * kMmaTileX, y0 = gf.by + blockIdx.y * sh.rows;
  uint32_t* plane = reinterpret_cast<uint32_t*>(smem + sm.plane);
  uint8_t* staged = smem + sm.staged;
  uint32_t* sti = reinterpret_cast<uint32_t*>(smem + sm.sti);
  uint32_t* s1 = reinterpret_cast<uint32_t*>(smem + sm.s1);
  uint32_t* s2 = reinterpret_cast<uint32_t*>(smem + sm.s2);
  unsigned long long* cell_keys = reinterpret_cast<unsigned long long*>(smem + sm.cells);
  SlotInfo* info = reinterpret_cast<SlotInfo*>(smem + sm.info);
  int* row_cells = reinterpret_cast<int*>(smem + sm.row_cells);
  int* col_cells = reinterpret_cast<int*>(smem + sm.col_cells);
  LocalCells* chunk_cells = reinterpret_cast<LocalCells*>(smem + sm.chunk_cells);
  const int nchunks = (sh.rows + kChunkRows - 1) / kChunkRows;
  const int warp = threadIdx.x >> 5;
  WarpLayout w;
  w.gp = g.gp;
  w.rs = g.rs;
  w.mgroups = g.mgroups;
  w.th = g.th;
  w.chunks = g.chunks;
  w.pitch_w = g.pitch_w;
  w.tp = g.tp;
  w.warp_col = warp & 1;
  w.warp_row = (warp >> 1) * g.mgroups * g.rs;

  // The staging copies run while the block builds its cell tables.
  stage_rows(reinterpret_cast<uint4*>(staged), static_cast<const uint4*>(g.at), sh.staged_bytes);
  stage_plane(plane, g.pitch_w, sh.stage_rows, p, x0, y0, Plane::Image);
  if (static_cast<int>(threadIdx.x) < g.count) {
    const int m = g.member[threadIdx.x];
    info[threadIdx.x].rg = p.regions[m];
    info[threadIdx.x].md = p.members[m];
  }
  __syncthreads();
  cell_tables(info, g.count, x0, y0, sh.rows, nchunks, row_cells, col_cells, chunk_cells);
  // A warp whose 32 columns and G rs rows meet no slot's map (the right-most tiles of a frame
  // whose map is not a multiple of 64 wide) skips the products.
  bool idle = true;
  for (int slot = 0; slot < g.count; ++slot) {
    const MemberRegion& rg = info[slot].rg;
    const int u0 = x0 + 32 * w.warp_col - rg.rx, v0 = y0 + w.warp_row - rg.ry;
    if (rg.mw != 0 && u0 < rg.mw && u0 + 32 > 0 && v0 < rg.mh && v0 + g.mgroups * g.rs > 0) idle = false;
  }
  wait_copies();
  __syncthreads();
  uint32_t acc[kMaxMGroups][4][4];
  mma_pass(plane, staged, w, idle, acc);
  if (!g.masked) __syncthreads();  // the sums replace the staged rows
  for_each_entry(w, sh.rows, acc, [&](int at, uint32_t v) { sti[at] = v; });
  if (g.masked) {
    // Each lane stores and later reads back only its own entries: no barrier between passes
    // over the same staged rows.
    __syncthreads();
    stage_rows(reinterpret_cast<uint4*>(staged), static_cast<const uint4*>(g.am), sh.staged_bytes);
    wait_copies();
    __syncthreads();
    mma_pass(plane, staged, w, idle, acc);
    for_each_entry(w, sh.rows, acc, [&](int at, uint32_t v) { s1[at] = v; });
    __syncthreads();
    stage_plane(plane, g.pitch_w, sh.stage_rows, p, x0, y0, Plane::SquareHigh);
    __syncthreads();
    mma_pass(plane, staged, w, idle, acc);
    for_each_entry(w, sh.rows, acc, [&](int at, uint32_t v) { s2[at] = v; });
    __syncthreads();
    stage_plane(plane, g.pitch_w, sh.stage_rows, p, x0, y0, Plane::SquareLow);
    __syncthreads();
    mma_pass(plane, staged, w, idle, acc);
    for_each_entry(w, sh.rows, acc, [&](int at, uint32_t v) { s2[at] = s2[at] * 256u + v; });
  }
  __syncthreads();

  // Scores and cells, kChunkRows block rows at a time, in passes over runs of slots: in an unmasked
  // group a run of one box size (the slots go by height, then width: make_group), which shares
  // the box sums; in a masked group all its slots (each has its own sums). A pass's first column
  // sums are the previous pass's plus the rows between their heights, and each next chunk's run
  // down from the previous chunk's, so that no column is summed over a box's height twice. After
  // each chunk of a pass its slots' cell keys are flushed and cleared.
  const bool masked = g.masked != 0;
  const int members = g.count, widest = g.tw;
  uint32_t* vbox = reinterpret_cast<uint32_t*>(smem + sm.vbox);
  uint32_t* sbox = reinterpret_cast<uint32_t*>(smem + sm.sbox);
  const int vplane = kChunkRows * (kMmaTileX + widest);
  const int uu = threadIdx.x % kMmaTileX;  // a thread keeps its column
  // A thread's positions k = 0..kPositionsPerThread-1 of a chunk: block row r0 + vv(k), column uu
  // (rows past a short chunk read its last row and are outside every map).
  auto row_of = [&](int k) { return static_cast<int>(threadIdx.x + k * kMmaThreads) / kMmaTileX; };
  // The window terms every slot of one box size shares (a masked slot has its own): sum I and
  // 1 / sqrt(var_i) in single precision (0: a flat window, var_i <= 0).
  uint32_t win_si[kPositionsPerThread];
  float win_rsd[kPositionsPerThread];
  // slot >= 0: from that slot's sums of the chunk at r0 (a masked group), else from the box sums.
  auto window_terms = [&](const uint32_t* si_of, const uint32_t* sii_of, int slot, int r0, int rows, long long n) {
#pragma unroll
    for (int k = 0; k < kPositionsPerThread; ++k) {
      const int vr = min(row_of(k), rows - 1);
      const int at = slot >= 0 ? sum_at(w.rs, sh.rows, slot, r0 + vr, uu) : vr * kMmaTileX + uu;
      const uint32_t si = si_of[at], sii = sii_of[at];
      // n <= 2^16 and sii < 2^32: exact in 64 bits.
      const long long var_i = n * static_cast<long long>(sii) - static_cast<long long>(si) * si;
      win_si[k] = si;
      win_rsd[k] = var_i > 0 ? rsqrtf(static_cast<float>(var_i)) : 0.0f;
    }
  };
  ColumnCarry carry{};  // box_sums' column sums: the pass's previous chunk
  ColumnCarry top{};    // rows [0, top_h) of the widest member's columns
  int top_h = 0;
  for (int i = threadIdx.x; i < members * kMmaLocalCells; i += kMmaThreads) cell_keys[i] = 0;
  __syncthreads();
  for (int first = 0, last = 0; first < members; first = last) {
    const MemberDev& box = info[first].md;  // (unmasked: the pass's box size)
    last = first + 1;
    while (last < members && (masked || (info[last].md.tw == box.tw && info[last].md.th == box.th))) ++last;
    bool carried = false;  // carry holds the pass's column sums of the previous chunk
    for (int r0 = 0, chunk = 0; r0 < sh.rows; r0 += kChunkRows, ++chunk) {
      const int rows = min(kChunkRows, sh.rows - r0);
      bool any = false;  // a slot of the pass has positions in the chunk
      for (int slot = first; slot < last; ++slot) any = any || chunk_cells[slot * nchunks + chunk].ncl != 0;
      if (!any) {
        carried = false;
        continue;
      }
      if (!masked) {
        // (The previous chunk's slots read only sbox, which box_sums writes after its first barrier.)
        ColumnStart start = carried ? ColumnStart::Carried : ColumnStart::Staged;
        if (!carried && r0 == 0) {
          if (box.th < top_h) top = ColumnCarry{}, top_h = 0;
          add_column_rows(reinterpret_cast<const uint8_t*>(plane), 4 * g.pitch_w, kMmaTileX + widest - 1, top_h, box.th,
                          top);
          top_h = box.th;
          carry = top;
          start = ColumnStart::Given;
        }
        box_sums(plane, g.pitch_w, r0, box.tw, box.th, start, carry, vbox, vbox + vplane, sbox,
                 sbox + kChunkRows * kMmaTileX);
        carried = true;
        window_terms(sbox, sbox + kChunkRows * kMmaTileX, -1, r0, rows, box.n);
      }
      for (int slot = first; slot < last; ++slot) {
        if (chunk_cells[slot * nchunks + chunk].ncl == 0) continue;  // none of its positions
        const MemberRegion& rg = info[slot].rg;
        const MemberDev& md = info[slot].md;
        if (masked) window_terms(s1, s2, slot, r0, rows, md.n);
        unsigned long long* keys = cell_keys + slot * kMmaLocalCells;
        // Every position's single-precision estimate (relative error below 1e-6); the exact score
        // only where the estimate is at most 1e-4 under the threshold and within kEstimateMargin of
        // the best estimate of a group of positions of its cell that holds it: the warp's positions
        // of its cell, over the thread's kPositionsPerThread rows where these meet one cell row,
        // else in its row. No estimate is more than kEstimateMargin / 2 off its score, so the cell's
        // best position that reaches the threshold, and every position tied with it, are always
        // scored. A score map scores every position; flat windows (no estimate) are always scored.
        const bool all = rg.map != nullptr;
        const float skip_below = static_cast<float>(rg.threshold) - 1e-4f;
        const int col = col_cells[slot * kMmaTileX + uu];
        // The lanes of the warp in this lane's cell column: a warp's 32 positions are one row, so
        // they share a cell exactly where they share a cell column.
        const unsigned cell_lanes = __match_any_sync(0xffffffffu, col);
        // n <= 2^16 and st < 2^24: the sums' products are exact in 64 bits from 32-bit factors.
        const long long n = md.n, st = md.st;
        const float rsd_t = rsqrtf(static_cast<float>(md.var_t));
        unsigned exact = 0;                  // bit k: score position k exactly
        unsigned bits[kPositionsPerThread];  // ordered estimate; 0: not a candidate
        float estimate[kPositionsPerThread];
        int cell_row = -1;         // the cell row of the thread's candidates
        bool one_cell_row = true;  // (the same in the whole warp)
#pragma unroll
        for (int k = 0; k < kPositionsPerThread; ++k) {
          const int vv = row_of(k);
          const int row = vv < rows ? row_cells[slot * sh.rows + r0 + vv] : -1;  // the same in the whole warp
          const bool in_map = row >= 0 && col >= 0;
          const uint32_t ti = sti[sum_at(w.rs, sh.rows, slot, r0 + min(vv, rows - 1), uu)];
          const long long cov = n * static_cast<long long>(ti) - st * static_cast<long long>(win_si[k]);
          const bool flat = win_rsd[k] == 0.0f;
          estimate[k] = static_cast<float>(cov) * (win_rsd[k] * rsd_t);
          if (in_map && (all || flat)) exact |= 1u << k;
          bits[k] = !all && in_map && !flat && estimate[k] >= skip_below ? ordered_bits(estimate[k]) : 0u;
          if (row >= 0) {
            one_cell_row = one_cell_row && (cell_row < 0 || cell_row == row);
            cell_row = row;
          }
        }
        if (one_cell_row) {
          // The thread's positions share one cell with every lane of cell_lanes: one maximum.
          unsigned most = 0;
#pragma unroll
          for (int k = 0; k < kPositionsPerThread; ++k) most = max(most, bits[k]);
          const float floor = ordered_float(group_max(cell_lanes, most)) - kEstimateMargin;
#pragma unroll
          for (int k = 0; k < kPositionsPerThread; ++k)
            if (bits[k] != 0 && estimate[k] >= floor) exact |= 1u << k;
        } else {
#pragma unroll
          for (int k = 0; k < kPositionsPerThread; ++k) {
            const unsigned best = group_max(cell_lanes, bits[k]);
            if (bits[k] != 0 && estimate[k] >= ordered_float(best) - kEstimateMargin) exact |= 1u << k;
          }
        }
#pragma unroll
        for (int k = 0; k < kPositionsPerThread; ++k) {
          if (!(exact >> k & 1u)) continue;
          const int vv = row_of(k);
          const int u = x0 + uu - rg.rx, v = y0 + r0 + vv - rg.ry;
          const int at = sum_at(w.rs, sh.rows, slot, r0 + vv, uu);
          const uint32_t sii = masked ? s2[at] : sbox[kChunkRows * kMmaTileX + vv * kMmaTileX + uu];
          const float score = tm::bank_ccoeff_normed(md.n, md.st, md.var_t, win_si[k], sii, sti[at], md.masked != 0);
          if (rg.map) rg.map[static_cast<long long>(v) * rg.mw + u] = score;
          if (!isnan(score) && reaches(score, rg))
            atomicMax(&keys[row_cells[slot * sh.rows + r0 + vv] + col],
                      cell_key(score, static_cast<unsigned>(v) * rg.mw + u));
        }
      }
      __syncthreads();
      for (int i = first * kMmaLocalCells + threadIdx.x; i < last * kMmaLocalCells; i += kMmaThreads) {
        const unsigned long long key = cell_keys[i];
        if (key == 0) continue;
        cell_keys[i] = 0;
        const int slot = i / kMmaLocalCells;
        flush_cell_key(p, g.member[slot], info[slot].md, info[slot].rg, chunk_cells[slot * nchunks + chunk],
                       i % kMmaLocalCells, key);
      }
      // The next chunk's keys: an unmasked pass's box_sums passes two barriers before any is set.
      if (masked) __syncthreads();
    }
  }
}

// Sums over rows part, part + kRowParts, ... of the window at (u, v) of a member's map read
// straight from the frame (a peak's neighbours), by a whole warp: the lanes take the window's
// bytes in turn (8 of them in flight a lane: the loads are independent), then the warp adds up the
// lanes' sums (exact integers: the order does not matter).
constexpr int kRowParts = 4;
struct WindowSums {
  uint32_t sti, s1, s2;
};
__device__ WindowSums warp_window_sums(const BankParams& p, const MemberDev& md, const MemberRegion& rg, int u, int v,
                                       int part) {
  const int lane = threadIdx.x & 31;
  uint32_t sti = 0, s1 = 0, s2 = 0;
  const long long stride = p.stride;
  const uint8_t* frame = p.frame + (rg.ry + v) * stride + rg.rx + u;
  const uint8_t* __restrict__ templ = md.templ;
  const uint8_t* __restrict__ mask = md.mask;
  const int tw = md.tw, kp = md.kp, rows = (md.th - part + kRowParts - 1) / kRowParts;
#pragma unroll 8
  for (int e = lane; e < rows * tw; e += 32) {
    const int r = e / tw, i = e - r * tw, j = part + r * kRowParts;
    const uint32_t px = __ldg(frame + j * stride + i), mk = __ldg(mask + j * kp + i);
    sti += px * __ldg(templ + j * kp + i);
    s1 += px * mk;
    s2 += px * px * mk;
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    sti += __shfl_xor_sync(0xffffffffu, sti, off);
    s1 += __shfl_xor_sync(0xffffffffu, s1, off);
    s2 += __shfl_xor_sync(0xffffffffu, s2, off);
  }
  return WindowSums{sti, s1, s2};
}

constexpr int kPeakThreads = 32 * 4 * kRowParts;  // a block per cell: kRowParts warps per neighbour of its peak

// The candidates of count cell keys (member m[k], key[k]; each reaches its threshold) with
// sub-pixel offsets from the scores of their four neighbours: the block's warps share the
// neighbours' sums (kRowParts warps a neighbour, a share of the rows each), kEmitBatch candidates
// at a time, then a thread a candidate writes it. Called by the whole block.
constexpr int kEmitBatch = 16;
__device__ void emit_candidates(const BankParams& p, int count, const int* m_of, const unsigned long long* key_of) {
  __shared__ WindowSums parts[kEmitBatch][4][kRowParts];
  const int warp = threadIdx.x / 32, warps = blockDim.x / 32;
  for (int first = 0; first < count; first += kEmitBatch) {
    const int batch = min(kEmitBatch, count - first);
    for (int item = warp; item < batch * 4 * kRowParts; item += warps) {
      const int k = item / (4 * kRowParts), side = item / kRowParts % 4, part = item % kRowParts;
      const int m = m_of[first + k];
      const MemberRegion& rg = p.regions[m];
      const unsigned position = ~static_cast<unsigned>(key_of[first + k]);
      const int u = static_cast<int>(position % rg.mw), v = static_cast<int>(position / rg.mw);
      const bool fits = side < 2 ? u > 0 && u < rg.mw - 1 : v > 0 && v < rg.mh - 1;
      if (fits) {
        const int du = side == 0 ? -1 : side == 1 ? 1 : 0, dv = side == 2 ? -1 : side == 3 ? 1 : 0;
        const WindowSums w = warp_window_sums(p, p.members[m], rg, u + du, v + dv, part);
        if ((threadIdx.x & 31) == 0) parts[k][side][part] = w;
      }
    }
    __syncthreads();
    if (static_cast<int>(threadIdx.x) < batch) {
      const int k = threadIdx.x, m = m_of[first + k];
      const MemberRegion rg = p.regions[m];
      const MemberDev md = p.members[m];
      const unsigned long long key = key_of[first + k];
      const float score = key_score(key);
      const unsigned position = ~static_cast<unsigned>(key);
      const int u = static_cast<int>(position % rg.mw), v = static_cast<int>(position / rg.mw);
      const bool fit_x = u > 0 && u<rg.mw - 1, fit_y = v> 0 && v < rg.mh - 1;
      float neighbours[4];
      for (int n = 0; n < 4; ++n) {
        uint32_t sti = 0, s1 = 0, s2 = 0;
        for (int q = 0; q < kRowParts; ++q) {
          sti += parts[k][n][q].sti;
          s1 += parts[k][n][q].s1;
          s2 += parts[k][n][q].s2;
        }
        neighbours[n] =
            (n < 2 ? fit_x : fit_y) ? tm::bank_ccoeff_normed(md.n, md.st, md.var_t, s1, s2, sti, md.masked != 0) : 0.0f;
      }
      BankCandidate c;
      c.x = rg.rx + u;
      c.y = rg.ry + v;
      c.score = score;
      c.member = m;
      c.dx = fit_x ? tm::parabola_offset(neighbours[0], score, neighbours[1]) : 0.0;
      c.dy = fit_y ? tm::parabola_offset(neighbours[2], score, neighbours[3]) : 0.0;
      // The slot from a counter in device memory: an atomic on mapped host memory would cross
      // the bus once per candidate, one after the other.
      const unsigned slot = atomicAdd(&p.progress[0], 1u);
      if (slot < p.capacity) p.out[slot] = c;
      __threadfence_system();  // before bank_emit_kernel's flag says the candidates are there
    }
    __syncthreads();
  }
}

// The largest of the block's values, in every thread (s_partial: 32 words, alternate two buffers
// between consecutive calls).
__device__ __forceinline__ unsigned long long block_max(unsigned long long v, unsigned long long* s_partial) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    const unsigned long long o = __shfl_xor_sync(0xffffffffu, v, off);
    v = o > v ? o : v;
  }
  if ((threadIdx.x & 31) == 0) s_partial[threadIdx.x / 32] = v;
  __syncthreads();
  v = (threadIdx.x & 31) < blockDim.x / 32 ? s_partial[threadIdx.x & 31] : 0ull;
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    const unsigned long long o = __shfl_xor_sync(0xffffffffu, v, off);
    v = o > v ? o : v;
  }
  return v;
}

constexpr int kMaxKept = 256;        // matches one suppressing block keeps (the host suppresses beyond)
constexpr int kSharedRanked = 1536;  // cells a suppressing block holds in shared memory (else reads them each round)

// select_bank_matches over the listed cells of template t (every template when p.across), by one
// block: round after round, the best remaining cell (score, then y, x, member: the host's order)
// whose box overlaps no kept match of its template (of any, across) and whose template is not
// full is kept; the kept ones go to p.kept.
__device__ void suppress_listed(const BankParams& p, int t, unsigned listed) {
  __shared__ int s_x[kMaxKept], s_y[kMaxKept], s_w[kMaxKept], s_h[kMaxKept], s_t[kMaxKept], s_m[kMaxKept];
  __shared__ unsigned long long s_key[kMaxKept];
  __shared__ int s_count[kMaxBankTemplates], s_limit[kMaxBankTemplates];
  __shared__ unsigned long long s_partial[2][32];
  __shared__ uint4 s_ranked[kSharedRanked];  // the block's cells, where they fit
  __shared__ unsigned s_cells;
  for (int i = threadIdx.x; i < kMaxBankTemplates; i += blockDim.x) s_count[i] = 0;
  for (int m = threadIdx.x; m < p.count; m += blockDim.x) {
    const MemberRegion& rg = p.regions[m];
    if (rg.mw != 0) s_limit[rg.template_index] = rg.max_matches;
  }
  if (threadIdx.x == 0) s_cells = 0;
  __syncthreads();
  constexpr int kLoads = 8;  // records in flight a thread
  for (unsigned first = threadIdx.x; first < listed; first += kLoads * blockDim.x) {
    uint4 r[kLoads];
#pragma unroll
    for (int q = 0; q < kLoads; ++q)
      if (first + q * blockDim.x < listed) r[q] = __ldcg(&p.ranked[first + q * blockDim.x]);
#pragma unroll
    for (int q = 0; q < kLoads; ++q) {
      if (first + q * blockDim.x >= listed || (!p.across && static_cast<int>((r[q].w >> 8) & 255u) != t)) continue;
      const unsigned at = atomicAdd(&s_cells, 1u);
      if (at < kSharedRanked) s_ranked[at] = r[q];
    }
  }
  __syncthreads();
  const bool in_shared = s_cells <= kSharedRanked;
  const unsigned cells = in_shared ? s_cells : listed;
  const uint4* ranked = in_shared ? s_ranked : p.ranked;
  int kept = 0;
  for (int round = 0; kept < kMaxKept; ++round) {
    unsigned long long best = 0;
#pragma unroll 4
    for (unsigned i = threadIdx.x; i < cells; i += blockDim.x) {
      const uint4 r = in_shared ? ranked[i] : __ldcg(&ranked[i]);
      const int tm = static_cast<int>((r.w >> 8) & 255u);
      if ((!p.across && tm != t) || s_count[tm] >= s_limit[tm]) continue;
      const int x = static_cast<int>(r.z & 0xffffu), y = static_cast<int>(r.z >> 16);
      const int tw = static_cast<int>((r.w >> 16) & 255u) + 1, th = static_cast<int>(r.w >> 24) + 1;
      bool overlaps = false;
      for (int k = 0; k < kept && !overlaps; ++k)
        overlaps = (p.across || s_t[k] == tm) && x < s_x[k] + s_w[k] && s_x[k] < x + tw && y < s_y[k] + s_h[k] &&
                   s_y[k] < y + th;
      if (overlaps) continue;  // (a kept cell overlaps itself)
      const unsigned long long rank = (static_cast<unsigned long long>(r.y) << 32) | r.x;
      best = rank > best ? rank : best;
    }
    best = block_max(best, s_partial[round & 1]);
    if (best == 0) break;
    if (threadIdx.x == 0) {
      const unsigned order = 0xffffffffu - static_cast<unsigned>(best);
      const int m = static_cast<int>(order & 255u), pos = static_cast<int>(order >> 8);
      const MemberRegion rg = p.regions[m];
      const MemberDev& md = p.members[m];
      s_x[kept] = pos % p.fw;
      s_y[kept] = pos / p.fw;
      s_w[kept] = md.tw;
      s_h[kept] = md.th;
      s_t[kept] = rg.template_index;
      s_m[kept] = m;
      const unsigned position = static_cast<unsigned>((s_y[kept] - rg.ry) * rg.mw + s_x[kept] - rg.rx);
      s_key[kept] = (best & 0xffffffff00000000ull) | ~position;  // the cell's key (bank_rank_kernel cleared it)
      ++s_count[rg.template_index];
    }
    ++kept;
    __syncthreads();
  }
  // bank_emit_kernel gives each kept match a block for its neighbours' sums.
  __shared__ unsigned s_at;
  if (threadIdx.x == 0) s_at = atomicAdd(&p.progress[3], static_cast<unsigned>(kept));
  __syncthreads();
  for (int k = threadIdx.x; k < kept; k += blockDim.x)
    p.kept[s_at + k] = make_uint4(static_cast<unsigned>(s_m[k]), static_cast<unsigned>(s_key[k]),
                                  static_cast<unsigned>(s_key[k] >> 32), 0u);
}

// Suppression on the device: each listed cell's rank in the host's order (score, then y, x,
// member: (y * width + x) * 256 + member fits 32 bits), its frame position, member, template and
// size, read once here (and its key cleared) so that the suppressing blocks read one coalesced
// record a cell.
__global__ void bank_rank_kernel(const BankParams p) {
  const unsigned listed = min(__ldcg(&p.progress[2]), p.listed_capacity);
  if (listed <= p.host_up_to) return;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < listed; i += gridDim.x * blockDim.x) {
    const uint2 item = __ldcg(&p.listed[i]);
    const int m = static_cast<int>(item.x);
    const MemberRegion& rg = p.regions[m];
    const unsigned long long key = __ldcg(&p.members[m].keys[item.y]);
    const unsigned position = ~static_cast<unsigned>(key);
    const unsigned x = rg.rx + position % rg.mw, y = rg.ry + position / rg.mw;  // (< 2^12: see host_up_to)
    const unsigned order = ((y * p.fw + x) << 8) | item.x;
    const MemberDev& md = p.members[m];
    p.ranked[i] = make_uint4(0xffffffffu - order, static_cast<unsigned>(key >> 32), x | (y << 16),
                             item.x | (rg.template_index << 8) | ((md.tw - 1) << 16) | ((md.th - 1) << 24));
    md.keys[item.y] = 0;  // the record holds all of it
  }
}

// Few listed cells (p.host_up_to or fewer): a block takes up to kEmitBatch listed cells at a time,
// makes each a candidate and clears its key; the host suppresses. Many: block t
// suppresses template t's cells (block 0 all of them, across templates), and only the kept ones
// become candidates.
constexpr int kPeakBlocks = 512;
__global__ void __launch_bounds__(kPeakThreads) bank_peaks_kernel(const BankParams p) {
  const unsigned listed = min(__ldcg(&p.progress[2]), p.listed_capacity);
  if (listed <= p.host_up_to) {
    __shared__ int s_m[kEmitBatch];
    __shared__ unsigned long long s_key[kEmitBatch];
    // As many blocks busy as there are cells, up to kEmitBatch cells a block.
    const unsigned per_block = min((listed + gridDim.x - 1) / gridDim.x, static_cast<unsigned>(kEmitBatch));
    for (unsigned first = blockIdx.x * per_block; first < listed; first += gridDim.x * per_block) {
      const int batch = static_cast<int>(min(listed - first, per_block));
      if (static_cast<int>(threadIdx.x) < batch) {
        const uint2 item = __ldcg(&p.listed[first + threadIdx.x]);
        s_m[threadIdx.x] = static_cast<int>(item.x);
        s_key[threadIdx.x] = __ldcg(&p.members[item.x].keys[item.y]);
      }
      __syncthreads();
      emit_candidates(p, batch, s_m, s_key);
      if (static_cast<int>(threadIdx.x) < batch) {
        const uint2 item = __ldcg(&p.listed[first + threadIdx.x]);
        p.members[item.x].keys[item.y] = 0;
      }
    }
  } else if (static_cast<int>(blockIdx.x) < (p.across ? 1 : p.templates)) {
    suppress_listed(p, static_cast<int>(blockIdx.x), listed);
  }
}

// The matches bank_peaks_kernel kept (suppression on the device) become candidates, a block
// each; then the last block to finish hands the count to the host and clears the counters.
constexpr int kEmitBlocks = 256;
__global__ void __launch_bounds__(kPeakThreads) bank_emit_kernel(const BankParams p) {
  __shared__ int s_m[1];
  __shared__ unsigned long long s_key[1];
  const unsigned kept = __ldcg(&p.progress[3]);
  for (unsigned i = blockIdx.x; i < kept; i += gridDim.x) {
    if (threadIdx.x == 0) {
      const uint4 k = __ldcg(&p.kept[i]);
      s_m[0] = static_cast<int>(k.x);
      s_key[0] = (static_cast<unsigned long long>(k.z) << 32) | k.y;
    }
    __syncthreads();
    emit_candidates(p, 1, s_m, s_key);
  }
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(&p.progress[1], 1u) == gridDim.x - 1) {
      const unsigned listed = __ldcg(&p.progress[2]);
      p.out_count[1] = min(listed, p.listed_capacity) > p.host_up_to;  // only the kept matches are candidates
      p.out_count[2] = listed;  // cells that reached their threshold (all listed?)
      p.out_count[0] = atomicAdd(&p.progress[0], 0u);
      p.progress[0] = 0;
      p.progress[1] = 0;
      p.progress[2] = 0;
      p.progress[3] = 0;
      __threadfence_system();  // the words above before the flag (GpuWait::Spin and Poll wait on it)
      reinterpret_cast<volatile unsigned*>(p.out_count)[3] = 1;
    }
  }
}

}  // namespace

struct BankMatcherCuda::Impl {
  void* stream = nullptr;
  int fw = 0, fh = 0;
  bool use_mma = false;       // groups on the tensor cores
  bool any_on_cores = false;  // members on the CUDA cores
  bool force_dp4a = false;
  unsigned host_up_to = kHostCandidates;
  GpuWait wait = GpuWait::Blocking;  // for the frame's candidates
  cuda::StreamWaiter waiter;
  bool suppressed = false;  // the last frame's candidates are the kept matches only
  TemplateBank bank;
  std::vector<MemberStats> stats;
  std::vector<MemberDev> members;  // device pointers
  std::vector<GroupDev> groups;    // device pointers
  cuda::DeviceBuffer templates, keys, members_dev, regions_dev, staged, groups_dev, progress, listed, ranked, kept;
  cuda::PinnedBuffer regions_host,
      out;  // regions_host: the regions, then the group frames; out: a counter (32 bytes), then the candidates
  int max_kp = 0, max_th = 0, mma_smem_bytes = 0;
  std::vector<BankCandidate> candidates, selected;

  size_t group_frames_at() const { return (sizeof(MemberRegion) * bank.members.size() + 15) / 16 * 16; }

  // across: suppression across templates. map_of_member: every candidate to the host.
  Status enqueue(const GrayView& frame, const BankSearch& search, bool across, float* map_of_member, int map_member) {
    const int count = static_cast<int>(bank.members.size());
    MemberRegion* regions = reinterpret_cast<MemberRegion*>(regions_host.data());
    int bx0 = frame.width, by0 = frame.height, bx1 = 0, by1 = 0;
    for (int m = 0; m < count; ++m) {
      MemberRegion rg{};
      const Rect& r = search.regions[m];
      if (!r.empty()) {
        CUDAPREP_RETURN_IF_ERROR(check_member_region(bank, m, frame.width, frame.height, r));
        const MemberDev& md = members[m];
        rg.rx = r.x;
        rg.ry = r.y;
        rg.mw = r.w - md.tw + 1;
        rg.mh = r.h - md.th + 1;
        rg.ncx = (rg.mw + md.cw - 1) / md.cw;
        rg.ncy = (rg.mh + md.ch - 1) / md.ch;
        rg.map = m == map_member ? map_of_member : nullptr;
        rg.template_index = bank.members[m].template_index;
        rg.threshold = search.thresholds[rg.template_index];
        rg.max_matches = search.max_matches[rg.template_index];
        bx0 = std::min(bx0, rg.rx);
        by0 = std::min(by0, rg.ry);
        bx1 = std::max(bx1, rg.rx + rg.mw);
        by1 = std::max(by1, rg.ry + rg.mh);
      }
      regions[m] = rg;
    }
    unsigned* counter = reinterpret_cast<unsigned*>(out.data());
    counter[0] = counter[1] = counter[2] = counter[3] = 0;  // the previous frame's kernels wrote them: match() waited
    candidates.clear();
    if (bx1 <= bx0 || by1 <= by0) {  // nothing searched: no kernel, so no flag but this one
      counter[3] = 1;
      return Status();
    }
    // Per group, the tiles over its searched members' positions.
    GroupFrame* frames = reinterpret_cast<GroupFrame*>(regions_host.data() + group_frames_at());
    int grid_x = 0, grid_y = 0;
    for (size_t gi = 0; gi < groups.size() && use_mma; ++gi) {
      const GroupDev& g = groups[gi];
      int x0 = frame.width, y0 = frame.height, x1 = 0, y1 = 0;
      for (int k = 0; k < g.count; ++k) {
        const MemberRegion& rg = regions[g.member[k]];
        if (rg.mw == 0) continue;
        x0 = std::min(x0, rg.rx);
        y0 = std::min(y0, rg.ry);
        x1 = std::max(x1, rg.rx + rg.mw);
        y1 = std::max(y1, rg.ry + rg.mh);
      }
      GroupFrame f{};
      if (x1 > x0 && y1 > y0) {
        f.bx = x0;
        f.by = y0;
        f.ntx = (x1 - x0 + kMmaTileX - 1) / kMmaTileX;
        f.nty = (y1 - y0 + mma_shape(g).rows - 1) / mma_shape(g).rows;
      }
      frames[gi] = f;
      grid_x = std::max(grid_x, f.ntx);
      grid_y = std::max(grid_y, f.nty);
    }
    const size_t upload = group_frames_at() + sizeof(GroupFrame) * groups.size();
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    CUDAPREP_RETURN_IF_ERROR(
        cuda_status(cudaMemcpyAsync(regions_dev.data(), regions_host.data(), upload, cudaMemcpyHostToDevice, s),
                    "cudaMemcpyAsync (bank regions)"));
    BankParams p;
    p.frame = frame.data;
    p.stride = frame.stride;
    p.fw = frame.width;
    p.fh = frame.height;
    p.members = reinterpret_cast<const MemberDev*>(members_dev.data());
    p.regions = reinterpret_cast<const MemberRegion*>(regions_dev.data());
    p.count = count;
    p.bx = bx0;
    p.by = by0;
    p.rows = kTileY + max_th - 1;
    p.pitch = kTileX + max_kp + 4;
    p.out = reinterpret_cast<BankCandidate*>(out.device_data() + 32);
    p.out_count = reinterpret_cast<unsigned*>(out.device_data());
    p.capacity = kMaxCandidates;
    p.progress = reinterpret_cast<unsigned*>(progress.data());
    p.listed = reinterpret_cast<uint2*>(listed.data());
    p.ranked = reinterpret_cast<uint4*>(ranked.data());
    p.kept = reinterpret_cast<uint4*>(kept.data());
    p.listed_capacity = static_cast<unsigned>(listed.bytes() / sizeof(uint2));
    // Suppression on the device orders cells by (y * width + x) * 256 + member in 32 bits and
    // keeps up to kMaxKept matches a block (a template's block at most kMaxMatches).
    static_assert(kMaxMatches <= kMaxKept, "a template's matches fit one suppressing block");
    int most_kept = 0;
    for (int t = 0; across && t < static_cast<int>(bank.templates.size()); ++t) most_kept += search.max_matches[t];
    const bool device_suppression = map_of_member == nullptr &&
                                    static_cast<long long>(frame.width) * frame.height < (1ll << 24) &&
                                    most_kept <= kMaxKept;
    p.host_up_to = device_suppression ? host_up_to : 0xffffffffu;
    p.templates = static_cast<int>(bank.templates.size());
    p.across = across ? 1 : 0;
    p.groups = reinterpret_cast<const GroupDev*>(groups_dev.data());
    p.group_frames = reinterpret_cast<const GroupFrame*>(regions_dev.data() + group_frames_at());
    if (use_mma && grid_x > 0) {
      const dim3 grid(grid_x, grid_y, static_cast<unsigned>(groups.size()));
      bank_scores_mma_kernel<<<grid, kMmaThreads, mma_smem_bytes, s>>>(p);
      CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaGetLastError(), "bank_scores_mma_kernel launch"));
    }
    if (any_on_cores) {
      const dim3 grid((bx1 - bx0 + kTileX - 1) / kTileX, (by1 - by0 + kTileY - 1) / kTileY);
      const size_t smem = static_cast<size_t>(p.rows) * p.pitch;
      bank_scores_dp4a_kernel<<<grid, kThreads, smem, s>>>(p);
      CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaGetLastError(), "bank_scores_dp4a_kernel launch"));
    }
    // What follows is a few short kernels: a blocking wait sleeps until here and spins on the flag.
    if (wait == GpuWait::Blocking) CUDAPREP_RETURN_IF_ERROR(waiter.mark(stream));
    bank_rank_kernel<<<kPeakBlocks, 256, 0, s>>>(p);
    bank_peaks_kernel<<<kPeakBlocks, kPeakThreads, 0, s>>>(p);
    bank_emit_kernel<<<kEmitBlocks, kPeakThreads, 0, s>>>(p);
    return cuda_status(cudaGetLastError(), "bank candidate launches");
  }

  Status collect() {
    const volatile unsigned* done = reinterpret_cast<const volatile unsigned*>(out.data()) + 3;
    CUDAPREP_RETURN_IF_ERROR(waiter.wait(stream, wait, done, "bank candidate kernels"));
    const unsigned count = *reinterpret_cast<const unsigned*>(out.data());
    const unsigned reached = reinterpret_cast<const unsigned*>(out.data())[2];
    if (reached > listed.bytes() / sizeof(uint2)) {  // unlisted cells kept their keys: clear them all
      CUDAPREP_RETURN_IF_ERROR(cuda_status(
          cudaMemsetAsync(keys.data(), 0, keys.bytes(), static_cast<cudaStream_t>(stream)), "cudaMemsetAsync (cells)"));
      CUDAPREP_RETURN_IF_ERROR(cuda::stream_sync(stream));
      return Status::error(std::to_string(reached) + " cells reach their threshold, more than the " +
                           std::to_string(listed.bytes() / sizeof(uint2)) + " a frame can hold: raise the threshold");
    }
    if (count > static_cast<unsigned>(kMaxCandidates))
      return Status::error(std::to_string(count) + " cells reach their threshold, more than the " +
                           std::to_string(kMaxCandidates) + " a frame can hold: raise the threshold");
    const BankCandidate* c = reinterpret_cast<const BankCandidate*>(out.data() + 32);
    candidates.assign(c, c + count);
    suppressed = reinterpret_cast<const unsigned*>(out.data())[1] != 0;
    sort_bank_candidates(&candidates);  // the kernel lists them in no particular order
    return Status();
  }
};

BankMatcherCuda::BankMatcherCuda() : impl_(new Impl) {}
BankMatcherCuda::~BankMatcherCuda() { release(); }

void BankMatcherCuda::release() {
  if (impl_->stream) cuda::stream_sync(impl_->stream);
  impl_->waiter.reset();
  impl_->templates.reset();
  impl_->keys.reset();
  impl_->members_dev.reset();
  impl_->regions_dev.reset();
  impl_->staged.reset();
  impl_->groups_dev.reset();
  impl_->progress.reset();
  impl_->listed.reset();
  impl_->ranked.reset();
  impl_->kept.reset();
  impl_->regions_host.reset();
  impl_->out.reset();
  impl_->bank = TemplateBank();
  impl_->members.clear();
  impl_->groups.clear();
}

const TemplateBank& BankMatcherCuda::bank() const { return impl_->bank; }
bool BankMatcherCuda::has_bank() const { return !impl_->bank.members.empty(); }
const std::vector<BankCandidate>& BankMatcherCuda::last_candidates() const { return impl_->candidates; }
bool BankMatcherCuda::last_candidates_suppressed() const { return impl_->suppressed; }
void BankMatcherCuda::suppress_on_device_above(unsigned cells) { impl_->host_up_to = cells; }

void BankMatcherCuda::use_cuda_cores_only(bool on) { impl_->force_dp4a = on; }

Status BankMatcherCuda::configure(int frame_width, int frame_height, void* stream, GpuWait wait) {
  if (frame_width <= 0 || frame_height <= 0 || frame_width > 65535 || frame_height > 65535)
    return Status::error("invalid frame size " + std::to_string(frame_width) + "x" + std::to_string(frame_height) +
                         " (the bank matcher takes 1 to 65535 pixels a side)");
  const bool resized = frame_width != impl_->fw || frame_height != impl_->fh;
  impl_->stream = stream;
  impl_->wait = wait;
  impl_->fw = frame_width;
  impl_->fh = frame_height;
  if (resized && has_bank()) {
    TemplateBank bank = impl_->bank;
    return set_bank(bank);  // the cell keys are sized for the frame
  }
  return Status();
}

Status BankMatcherCuda::set_bank(const TemplateBank& bank) {
  if (impl_->fw <= 0) return Status::error("configure() the matcher before setting a bank");
  std::vector<MemberStats> stats;
  CUDAPREP_RETURN_IF_ERROR(check_bank(bank, &stats));
  CUDAPREP_RETURN_IF_ERROR(cuda::stream_sync(impl_->stream));  // nothing of the old bank is in use after this
  int device = 0, cc_major = 0, smem_optin = 0;
  CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaGetDevice(&device), "cudaGetDevice"));
  CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, device),
                                       "cudaDeviceGetAttribute"));
  CUDAPREP_RETURN_IF_ERROR(cuda_status(
      cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), "cudaDeviceGetAttribute"));
  bool use_mma = cc_major >= 8 && !impl_->force_dp4a;
  const int count = static_cast<int>(bank.members.size());
  // Layout: each member's masked template, then its mask, rows padded to 4 bytes; the cells of
  // a whole-frame search per member.
  std::vector<size_t> templ_at(count), keys_at(count);
  size_t templ_bytes = 0, key_count = 0;
  int max_kp = 0, max_th = 0;
  std::vector<MemberDev> members(count);
  for (int m = 0; m < count; ++m) {
    const MaskedGray& g = bank.members[m].image;
    MemberDev& md = members[m];
    md.tw = g.width;
    md.th = g.height;
    md.kp = (g.width + 3) / 4 * 4;
    md.masked = g.masked() ? 1 : 0;
    md.n = stats[m].n;
    md.st = stats[m].st;
    md.var_t = stats[m].var_t;
    md.cw = tm::cell_side(g.width);
    md.ch = tm::cell_side(g.height);
    templ_at[m] = templ_bytes;
    templ_bytes += 2 * static_cast<size_t>(md.kp) * md.th;
    keys_at[m] = key_count;
    if (g.width <= impl_->fw && g.height <= impl_->fh)
      key_count +=
          static_cast<size_t>((impl_->fw - g.width + md.cw) / md.cw) * ((impl_->fh - g.height + md.ch) / md.ch);
    max_kp = std::max(max_kp, md.kp);
    max_th = std::max(max_th, md.th);
  }
  std::vector<uint8_t> host(templ_bytes, 0);
  for (int m = 0; m < count; ++m) {
    const MaskedGray& g = bank.members[m].image;
    uint8_t* t = host.data() + templ_at[m];
    uint8_t* k = t + static_cast<size_t>(members[m].kp) * g.height;
    for (int j = 0; j < g.height; ++j)
      for (int i = 0; i < g.width; ++i) {
        const size_t at = static_cast<size_t>(j) * g.width + i;
        const bool in = !g.masked() || g.mask[at];
        t[j * members[m].kp + i] = in ? g.pixels[at] : 0;
        k[j * members[m].kp + i] = in ? 1 : 0;
      }
  }
  // The tensor-core kernel's groups and their staged rows. The members of a group no block can
  // hold (a large masked member; a large member on a GPU with little shared memory) are scored on
  // the CUDA cores, in a second launch beside the groups'.
  std::vector<GroupPlan> plans;
  std::vector<size_t> staged_at;
  size_t staged_bytes = 0;
  int mma_smem_bytes = 0;
  std::vector<int> on_cores(count, 1);
  if (use_mma) {
    std::vector<MemberShape> shapes;
    for (const MemberDev& md : members) shapes.push_back(MemberShape{md.tw, md.th, md.masked});
    std::vector<GroupPlan> fitted;
    for (GroupPlan& gp : plan_groups(shapes, smem_optin)) {
      if (gp.dev.mgroups == 0) continue;  // no block holds it: its members run on the CUDA cores
      for (int m : gp.members) on_cores[m] = 0;
      fitted.push_back(std::move(gp));
    }
    plans = std::move(fitted);
    for (const GroupPlan& gp : plans) {
      mma_smem_bytes = std::max(mma_smem_bytes, mma_smem(gp.dev).total);
      staged_at.push_back(staged_bytes);
      staged_bytes += static_cast<size_t>(mma_shape(gp.dev).staged_bytes) * (gp.dev.masked ? 2 : 1);
    }
  }
  use_mma = !plans.empty();
  bool any_on_cores = false;
  for (int m = 0; m < count; ++m) {
    members[m].on_cores = on_cores[m];
    any_on_cores |= on_cores[m] != 0;
  }
  std::vector<uint8_t> staged_host(std::max<size_t>(staged_bytes, 16), 0u);
  for (size_t gi = 0; gi < plans.size(); ++gi) {
    const GroupDev& g = plans[gi].dev;
    stage_group(bank, g, false, staged_host.data() + staged_at[gi]);
    if (g.masked) stage_group(bank, g, true, staged_host.data() + staged_at[gi] + mma_shape(g).staged_bytes);
  }
  Impl& d = *impl_;
  cuda::DeviceBuffer templates, keys, members_dev, regions_dev, staged, groups_dev, progress, listed, ranked, kept;
  cuda::PinnedBuffer regions_host, out;
  const size_t frames_at = (sizeof(MemberRegion) * count + 15) / 16 * 16;
  const size_t region_bytes = frames_at + sizeof(GroupFrame) * std::max<size_t>(plans.size(), 1);
  CUDAPREP_RETURN_IF_ERROR(templates.allocate(templ_bytes));
  CUDAPREP_RETURN_IF_ERROR(keys.allocate(std::max<size_t>(key_count, 1) * sizeof(unsigned long long)));
  CUDAPREP_RETURN_IF_ERROR(members_dev.allocate(sizeof(MemberDev) * count));
  CUDAPREP_RETURN_IF_ERROR(regions_dev.allocate(region_bytes));
  CUDAPREP_RETURN_IF_ERROR(regions_host.allocate(region_bytes));
  CUDAPREP_RETURN_IF_ERROR(staged.allocate(staged_host.size()));
  CUDAPREP_RETURN_IF_ERROR(groups_dev.allocate(sizeof(GroupDev) * std::max<size_t>(plans.size(), 1)));
  CUDAPREP_RETURN_IF_ERROR(out.allocate(32 + sizeof(BankCandidate) * kMaxCandidates));
  CUDAPREP_RETURN_IF_ERROR(progress.allocate(4 * sizeof(unsigned)));
  CUDAPREP_RETURN_IF_ERROR(kept.allocate(sizeof(uint4) * kMaxKept * kMaxBankTemplates));
  const size_t listed_cells = std::min<size_t>(std::max<size_t>(key_count, 1), kMaxCandidates);
  CUDAPREP_RETURN_IF_ERROR(listed.allocate(listed_cells * sizeof(uint2)));
  CUDAPREP_RETURN_IF_ERROR(ranked.allocate(listed_cells * sizeof(uint4)));
  for (int m = 0; m < count; ++m) {
    members[m].templ = templates.data() + templ_at[m];
    members[m].mask = members[m].templ + static_cast<size_t>(members[m].kp) * members[m].th;
    members[m].keys = reinterpret_cast<unsigned long long*>(keys.data()) + keys_at[m];
  }
  std::vector<GroupDev> groups;
  for (size_t gi = 0; gi < plans.size(); ++gi) {
    GroupDev g = plans[gi].dev;
    const uint8_t* base = staged.data() + staged_at[gi];
    g.at = base;
    g.am = g.masked ? base + mma_shape(g).staged_bytes : nullptr;
    groups.push_back(g);
  }
  cudaStream_t s = static_cast<cudaStream_t>(d.stream);
  CUDAPREP_RETURN_IF_ERROR(
      cuda_status(cudaMemcpyAsync(templates.data(), host.data(), templ_bytes, cudaMemcpyHostToDevice, s),
                  "cudaMemcpyAsync (bank)"));
  CUDAPREP_RETURN_IF_ERROR(cuda_status(
      cudaMemcpyAsync(members_dev.data(), members.data(), sizeof(MemberDev) * count, cudaMemcpyHostToDevice, s),
      "cudaMemcpyAsync (bank)"));
  CUDAPREP_RETURN_IF_ERROR(
      cuda_status(cudaMemcpyAsync(staged.data(), staged_host.data(), staged_host.size(), cudaMemcpyHostToDevice, s),
                  "cudaMemcpyAsync (bank groups)"));
  if (!groups.empty())
    CUDAPREP_RETURN_IF_ERROR(cuda_status(
        cudaMemcpyAsync(groups_dev.data(), groups.data(), sizeof(GroupDev) * groups.size(), cudaMemcpyHostToDevice, s),
        "cudaMemcpyAsync (bank groups)"));
  CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaMemsetAsync(keys.data(), 0, keys.bytes(), s), "cudaMemsetAsync (cells)"));
  CUDAPREP_RETURN_IF_ERROR(
      cuda_status(cudaMemsetAsync(progress.data(), 0, progress.bytes(), s), "cudaMemsetAsync (candidate count)"));
  if (use_mma) {
    CUDAPREP_RETURN_IF_ERROR(cuda_status(
        cudaFuncSetAttribute(bank_scores_mma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, mma_smem_bytes),
        "cudaFuncSetAttribute (bank groups)"));
  }
  if (any_on_cores) {
    const int smem = (kTileY + max_th - 1) * (kTileX + max_kp + 4);
    CUDAPREP_RETURN_IF_ERROR(
        cuda_status(cudaFuncSetAttribute(bank_scores_dp4a_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
                    "cudaFuncSetAttribute (bank tile)"));
  }
  CUDAPREP_RETURN_IF_ERROR(cuda::stream_sync(d.stream));  // the host copies stay alive until here
  d.templates = std::move(templates);
  d.keys = std::move(keys);
  d.members_dev = std::move(members_dev);
  d.regions_dev = std::move(regions_dev);
  d.staged = std::move(staged);
  d.groups_dev = std::move(groups_dev);
  d.progress = std::move(progress);
  d.listed = std::move(listed);
  d.ranked = std::move(ranked);
  d.kept = std::move(kept);
  d.regions_host = std::move(regions_host);
  d.out = std::move(out);
  d.members = std::move(members);
  d.groups = std::move(groups);
  d.stats = std::move(stats);
  d.bank = bank;
  d.max_kp = max_kp;
  d.max_th = max_th;
  d.use_mma = use_mma;
  d.any_on_cores = any_on_cores;
  d.mma_smem_bytes = mma_smem_bytes;
  return Status();
}

Status BankMatcherCuda::match(const GrayView& device_frame, const BankSearch& search, bool suppress_across_templates,
                              std::vector<Match>* matches) {
  matches->clear();
  if (!has_bank()) return Status::error("no template bank set");
  CUDAPREP_RETURN_IF_ERROR(tm::check_gray(device_frame, "frame"));
  if (device_frame.width != impl_->fw || device_frame.height != impl_->fh)
    return Status::error("frame size differs from the configured one");
  CUDAPREP_RETURN_IF_ERROR(check_bank_search(impl_->bank, search));
  CUDAPREP_RETURN_IF_ERROR(impl_->enqueue(device_frame, search, suppress_across_templates, nullptr, -1));
  CUDAPREP_RETURN_IF_ERROR(impl_->collect());
  impl_->selected = impl_->candidates;
  select_bank_matches(impl_->bank, search, suppress_across_templates, &impl_->selected, matches);
  return Status();
}

Status BankMatcherCuda::score_map(const GrayView& device_frame, int member, const Rect& region,
                                  std::vector<float>* scores, int* map_w, int* map_h) {
  if (!has_bank()) return Status::error("no template bank set");
  const int count = static_cast<int>(impl_->bank.members.size());
  if (member < 0 || member >= count) return Status::error("no member " + std::to_string(member) + " in the bank");
  const MemberDev& md = impl_->members[member];
  Rect r;
  CUDAPREP_RETURN_IF_ERROR(resolve_search_region(device_frame.width, device_frame.height, md.tw, md.th, region, &r));
  BankSearch one = BankSearch::over(impl_->bank, Rect{});
  one.regions[member] = r;
  const int mw = r.w - md.tw + 1, mh = r.h - md.th + 1;
  cuda::DeviceBuffer map;  // a test and diagnostics call: allocates
  CUDAPREP_RETURN_IF_ERROR(map.allocate(sizeof(float) * mw * mh));
  CUDAPREP_RETURN_IF_ERROR(impl_->enqueue(device_frame, one, false, reinterpret_cast<float*>(map.data()), member));
  CUDAPREP_RETURN_IF_ERROR(impl_->collect());
  scores->resize(static_cast<size_t>(mw) * mh);
  CUDAPREP_RETURN_IF_ERROR(
      cuda_status(cudaMemcpy(scores->data(), map.data(), sizeof(float) * mw * mh, cudaMemcpyDeviceToHost),
                  "cudaMemcpy (score map)"));
  *map_w = mw;
  *map_h = mh;
  return Status();
}

}  // namespace cudaprep
