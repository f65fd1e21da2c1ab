// CUDA bank matcher (bank_match.h). Per frame, on the caller's stream, no allocation: the members'
// regions are copied from pinned memory, one scoring launch scores every member in its region,
// bank_peaks_kernel turns the cells that reach their threshold into candidates in mapped pinned
// memory and clears the cells (one launch), then one stream synchronisation and the host's
// suppression (select_bank_matches, shared with the CPU path).
//
// Scoring on the tensor cores (sm_80+, bank_scores_mma_kernel). The members are packed into
// groups of up to 8 (similar widths and heights together); a block stages a tile of the frame
// once for all members of its group and sums T * I for them in one pass of m16n8k32 products:
//   A[m][k] = I(x + m + k, r)            16 positions of image row r (a Hankel matrix of the row),
//   B[k][n] = T_n(k, r - y - rho_n)      column n: member slot n % gp, output row y + n / gp,
// so that D[m][n] accumulates, over the image rows r, the correlation of position (x + m) of
// output row y + n / gp with member n % gp. With gp members in a group, the 8 columns hold
// 8 / gp output rows of each: one member alone still fills the tensor cores. A's registers are
// 4-byte windows of the staged row (funnel shifts of shared words), shared by all columns and by
// 4 sets of output rows; B's come from the packed group in global memory (L1 holds it).
// Window sums: an unmasked member's from vertical then horizontal running sums of the staged tile
// (once per size); a masked group's by three more passes with the masks as B: over I (sum M I) and
// over the high and low bytes of I^2 (sum M I^2 = 256 sum M hi + sum M lo). All sums are exact
// integers, the score the CPU path's formula; each cell's best position is kept with a 64-bit
// atomicMax of (ordered score, inverted position), over the block in shared memory, then over the
// blocks in the member's cell keys.
//
// Before sm_80, bank_scores_dp4a_kernel: a block owns a tile of 32 x 16 positions, stages the frame
// bytes under it once, and, member after member, each thread sums its 4 consecutive positions with
// dp4a (sum MT * I, M * I, M * I^2).
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bank_match.h"
#include "cuda_device.h"
#include "cuda_status.h"
#include "mma_u8.cuh"
#include "templatematch_internal.h"

namespace cudaprep {

namespace {

constexpr int kTileX = 32, kTileY = 16, kThreads = 128;  // dp4a: a thread, 4 consecutive positions of one row
constexpr int kLocalCells = 64;                          // cells of >= 4 x 4 positions a tile can touch: at most 9 x 5
constexpr int kMaxCandidates = 1 << 18;

struct MemberDev {
  const uint8_t* templ;  // th rows of kp bytes: T where the mask is set, else 0
  const uint8_t* mask;   // th rows of kp bytes: 1 where the mask is set, else 0
  int tw, th, kp, masked;
  long long n, st, var_t;
  int cw, ch;
  unsigned long long* keys;  // the cells of a whole-frame search, 0 between frames
};

// Per frame: the member's region (mw == 0: not searched).
struct MemberRegion {
  int rx, ry, mw, mh, ncx, ncy;
  float* map;  // score_map(): the member's scores, else null
  double threshold;
};
static_assert(sizeof(MemberRegion) == 40, "MemberRegion");

struct GroupDev;
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
  unsigned* out_count;  // pinned host memory: the candidates' count, written by the peaks' last block
  unsigned capacity;
  unsigned* progress;      // device memory: candidates listed, peak blocks done; 0 between frames
  const GroupDev* groups;  // the tensor-core kernel's member groups
  const GroupFrame* group_frames;
};

__device__ __forceinline__ unsigned long long cell_key(float score, unsigned position) {
  const unsigned bits = __float_as_uint(score);
  const unsigned ordered = (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
  return (static_cast<unsigned long long>(ordered) << 32) | ~position;
}

__device__ __forceinline__ float key_score(unsigned long long key) {
  const unsigned ordered = static_cast<unsigned>(key >> 32);
  return __uint_as_float((ordered & 0x80000000u) ? (ordered & 0x7fffffffu) : ~ordered);
}

// Merges a block's best position of each cell it touched (ncl cells, ncl_x a row, from cell
// (cx0, cy0)) into the member's cell keys, then waits for the block.
__device__ __forceinline__ void flush_cell_keys(const unsigned long long* cell_keys, int ncl, int ncl_x, int cx0,
                                                int cy0, const MemberDev& md, const MemberRegion& rg) {
  if (static_cast<int>(threadIdx.x) < ncl) {
    const unsigned long long key = cell_keys[threadIdx.x];
    const int cx = cx0 + threadIdx.x % ncl_x, cy = cy0 + threadIdx.x / ncl_x;
    if (key != 0) atomicMax(&md.keys[cy * rg.ncx + cx], key);
  }
  __syncthreads();
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
    if (rg.mw == 0) continue;
    // The tile's positions in this member's map; the block skips members it has none of.
    const int u_first = max(x0 - rg.rx, 0), u_last = min(x0 + kTileX - 1 - rg.rx, rg.mw - 1);
    const int v_first = max(y0 - rg.ry, 0), v_last = min(y0 + kTileY - 1 - rg.ry, rg.mh - 1);
    if (u_first > u_last || v_first > v_last) continue;
    const MemberDev md = p.members[m];
    const int cx0 = u_first / md.cw, cy0 = v_first / md.ch;
    const int ncl_x = u_last / md.cw - cx0 + 1, ncl = ncl_x * (v_last / md.ch - cy0 + 1);
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
      if (isnan(score)) continue;
      const int local = (v / md.ch - cy0) * ncl_x + (u / md.cw - cx0);
      atomicMax(&cell_keys[local], cell_key(score, static_cast<unsigned>(v) * rg.mw + u));
    }
    __syncthreads();
    flush_cell_keys(cell_keys, ncl, ncl_x, cx0, cy0, md, rg);
  }
}

// ------------------------------------------------------------------------------------------
// The tensor-core kernel. Block: 4 warps; warp w owns output rows [w R rs, (w + 1) R rs) of the
// block's tile of 64 positions (x), as R sets of rs = 8 / gp rows; grid z = group.

constexpr int kMmaWarps = 4;
constexpr int kMmaThreads = 32 * kMmaWarps;
constexpr int kMmaTileX = 64;  // positions a block row: 4 m16 tiles
constexpr int kMaxSets = 4;
constexpr int kChunkRows = 16;       // rows of positions the epilogue scores at a time
constexpr int kMmaLocalCells = 128;  // cells of >= 4 x 4 positions in 64 x 16: at most 17 x 5

// A group of up to 8 members, as the tensor-core kernel reads it.
struct GroupDev {
  int member[8];       // bank member of each slot (slot < count)
  int th_of[8];        // rows of each slot's template
  int count;           // members
  int gp;              // slots: the power of two >= count; a B column n is slot n % gp, row n / gp
  int sets;            // R: sets of output rows a warp holds
  int chunks;          // 32-byte chunks of the widest member
  int cl;              // chunks in the packed rows (even)
  int th, tw;          // the tallest and the widest member
  int masked;          // the window sums come from three more passes over the masks
  int pitch_w;         // 32-bit words a staged row
  const uint32_t* bt;  // packed rows of M T: [slot][row][t][chunk][half] words (see pack_group)
  const uint32_t* bm;  // the same of M (masked groups), else null
};

// Per frame: the tiles a group's searched members cover.
struct GroupFrame {
  int bx, by;    // frame position of the first tile
  int ntx, nty;  // tiles (0: the group has nothing to search)
};
static_assert(sizeof(GroupFrame) == 16, "GroupFrame");

struct MmaShape {
  int rs, rows, stage_rows;  // rows a set, output rows a block, staged frame rows
};
__host__ __device__ inline MmaShape mma_shape(const GroupDev& g) {
  MmaShape m;
  m.rs = 8 / g.gp;
  m.rows = kMmaWarps * g.sets * m.rs;
  m.stage_rows = m.rows + g.th - 1;
  return m;
}

// Shared memory of a block of group g: the staged plane, the per-slot sums (T I; for masked
// groups M I and M I^2), the box sums' scratch (unmasked groups), the local cell keys.
struct MmaSmem {
  int plane, sti, s1, s2, vbox, sbox, cells, total;  // byte offsets, total size
};
__host__ __device__ inline MmaSmem mma_smem(const GroupDev& g) {
  const MmaShape sh = mma_shape(g);
  const int sums = g.gp * sh.rows * kMmaTileX * 4;  // u32 per slot, block row and position
  MmaSmem m;
  m.plane = 0;
  int at = (sh.stage_rows * g.pitch_w * 4 + 15) / 16 * 16;
  m.sti = at;
  at += sums;
  m.s1 = m.s2 = m.vbox = m.sbox = at;
  if (g.masked) {
    m.s1 = at;
    at += sums;
    m.s2 = at;
    at += sums;
  } else {
    m.vbox = at;  // two planes of kChunkRows x (63 + tw) column sums
    at += 2 * kChunkRows * (kMmaTileX + g.tw) * 4;
    m.sbox = at;  // two planes of kChunkRows x 64 window sums
    at += 2 * kChunkRows * kMmaTileX * 4;
  }
  m.cells = (at + 7) / 8 * 8;
  at = m.cells + kMmaLocalCells * 8;
  m.total = at;
  return m;
}

enum class Plane { Image, SquareHigh, SquareLow };

// Stages frame rows [y0, y0 + rows) x columns [x0, x0 + 4 pitch_w) as 32-bit words (zero
// outside the frame), or the high / low bytes of their squares.
__device__ void stage_plane(uint32_t* plane, int pitch_w, int rows, const BankParams& p, int x0, int y0, Plane kind) {
  for (int i = threadIdx.x; i < rows * pitch_w; i += kMmaThreads) {
    const int r = i / pitch_w, c = i - r * pitch_w;
    const int y = y0 + r;
    uint32_t w = 0;
    if (y < p.fh) {
      const uint8_t* row = p.frame + y * p.stride;
#pragma unroll
      for (int k = 3; k >= 0; --k) {
        const int x = x0 + 4 * c + k;
        uint32_t b = x < p.fw ? row[x] : 0u;
        if (kind == Plane::SquareHigh) b = (b * b) >> 8;
        if (kind == Plane::SquareLow) b = (b * b) & 255u;
        w = (w << 8) | b;
      }
    }
    plane[i] = w;
  }
}

// What a warp's passes read, in registers (the group's arrays stay in global memory).
struct PassArgs {
  int gp, sets, rs, th, cl, pitch_w, chunks;
  int th_slot;  // rows of this lane's B column's member
};

// One pass over the chunk pair pair_index (CP chunks of it hold data) of every image row the
// warp reads: acc[k][i] += the products of set k, m16 tile i. bsrc: the group's packed rows.
// B of the next row is loaded while this row's products run.
template <int CP>
__device__ __forceinline__ void mma_rows(const uint32_t* __restrict__ plane, const PassArgs& g,
                                         const uint32_t* __restrict__ bsrc, int pair_index, int warp_row,
                                         uint32_t (&acc)[kMaxSets][4][4]) {
  const int lane = threadIdx.x & 31, gid = lane >> 2, t = lane & 3;
  const int shift = (gid & 3) * 8;
  const int slot = gid % g.gp, rho = gid / g.gp;  // this lane's B column
  const int row_words = 8 * g.cl;
  const uint32_t* bcol = bsrc + static_cast<size_t>(slot) * g.th * row_words + t * 2 * g.cl + 4 * pair_index;
  const uint32_t* arow = plane + warp_row * g.pitch_w + 16 * pair_index + t + (gid >> 2);
  const int steps = g.sets * g.rs + g.th - 1;
  constexpr int kWindows = 4 * CP + 6;
  auto load_b = [&](int s, uint4(&b)[kMaxSets]) {
#pragma unroll
    for (int k = 0; k < kMaxSets; ++k) {
      const int j = s - k * g.rs - rho;
      b[k] = make_uint4(0u, 0u, 0u, 0u);
      if (k < g.sets && j >= 0 && j < g.th_slot)
        b[k] = __ldg(reinterpret_cast<const uint4*>(bcol + static_cast<size_t>(j) * row_words));
    }
  };
  uint4 b[kMaxSets], b_next[kMaxSets];
  load_b(0, b);
  for (int s = 0; s < steps; ++s, arow += g.pitch_w) {
    load_b(s + 1, b_next);
    // Window q: bytes 8 q + 4 t + gid .. + 3 of the pair's 64 bytes: A of m16 tile i, chunk c is
    // windows 2 i + 4 c .. + 3.
    uint32_t win[kWindows];
#pragma unroll
    for (int q = 0; q < kWindows; ++q) win[q] = __funnelshift_r(arow[2 * q], arow[2 * q + 1], shift);
#pragma unroll
    for (int k = 0; k < kMaxSets; ++k) {
      if (k >= g.sets) break;
      const int sk = s - k * g.rs;  // template row of column rho = 0
      if (sk < 0 || sk > g.th + g.rs - 2) continue;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
#pragma unroll
        for (int c = 0; c < CP; ++c) {
          const int q = 2 * i + 4 * c;
          const uint32_t a[4] = {win[q], win[q + 1], win[q + 2], win[q + 3]};
          mma_u8(acc[k][i], a, c == 0 ? b[k].x : b[k].z, c == 0 ? b[k].y : b[k].w);
        }
      }
    }
#pragma unroll
    for (int k = 0; k < kMaxSets; ++k) b[k] = b_next[k];
  }
}

// All chunk pairs of bsrc over the staged plane into acc (zeroed first).
__device__ __forceinline__ void mma_pass(const uint32_t* plane, const PassArgs& g, const uint32_t* bsrc, int warp_row,
                                         uint32_t (&acc)[kMaxSets][4][4]) {
#pragma unroll
  for (int k = 0; k < kMaxSets; ++k)
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[k][i][e] = 0;
  const int pairs = (g.chunks + 1) / 2;
  for (int pi = 0; pi < pairs; ++pi) {
    if (2 * pi + 1 < g.chunks)
      mma_rows<2>(plane, g, bsrc, pi, warp_row, acc);
    else
      mma_rows<1>(plane, g, bsrc, pi, warp_row, acc);
  }
}

// The slot-major index of the entry (set k, m16 tile i, accumulator e) of this lane:
// [slot][block row][position].
__device__ __forceinline__ int sum_index(const PassArgs& g, int rows, int warp, int k, int i, int e) {
  const int lane = threadIdx.x & 31, gid = lane >> 2, t = lane & 3;
  const int n = 2 * t + (e & 1);
  const int slot = n % g.gp, rho = n / g.gp;
  const int row = (warp * g.sets + k) * g.rs + rho;
  const int x = 16 * i + gid + 8 * (e >> 1);
  return (slot * rows + row) * kMmaTileX + x;
}

template <class Op>
__device__ __forceinline__ void for_each_entry(const PassArgs& g, int rows, int warp, uint32_t (&acc)[kMaxSets][4][4],
                                               Op op) {
#pragma unroll
  for (int k = 0; k < kMaxSets; ++k) {
    if (k >= g.sets) break;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int e = 0; e < 4; ++e) op(sum_index(g, rows, warp, k, i, e), acc[k][i][e]);
  }
}

// Window sums of a tw x th box over block rows [r0, r0 + kChunkRows) from the staged plane:
// column sums (a thread per column, running down), then row sums (8 positions a thread, running
// right). Exact modulo 2^32 (the sums of one window fit).
__device__ void box_sums(const uint32_t* plane, int pitch_w, int r0, int tw, int th, uint32_t* v1, uint32_t* v2,
                         uint32_t* b1, uint32_t* b2) {
  const uint8_t* bytes = reinterpret_cast<const uint8_t*>(plane);
  const int pitch = 4 * pitch_w;
  const int cols = kMmaTileX + tw - 1, vp = kMmaTileX + tw;
  for (int c = threadIdx.x; c < cols; c += kMmaThreads) {
    uint32_t a1 = 0, a2 = 0;
    for (int j = 0; j < th; ++j) {
      const uint32_t b = bytes[(r0 + j) * pitch + c];
      a1 += b;
      a2 += b * b;
    }
    v1[c] = a1;
    v2[c] = a2;
    for (int v = 1; v < kChunkRows; ++v) {
      const uint32_t add = bytes[(r0 + v + th - 1) * pitch + c], sub = bytes[(r0 + v - 1) * pitch + c];
      a1 += add - sub;
      a2 += add * add - sub * sub;
      v1[v * vp + c] = a1;
      v2[v * vp + c] = a2;
    }
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < kChunkRows * 8; idx += kMmaThreads) {
    const int v = idx >> 3, u0 = (idx & 7) * 8;
    const uint32_t* r1 = v1 + v * vp;
    const uint32_t* r2 = v2 + v * vp;
    uint32_t a1 = 0, a2 = 0;
    for (int i = 0; i < tw; ++i) {
      a1 += r1[u0 + i];
      a2 += r2[u0 + i];
    }
    b1[v * kMmaTileX + u0] = a1;
    b2[v * kMmaTileX + u0] = a2;
    for (int k = 1; k < 8; ++k) {
      a1 += r1[u0 + k + tw - 1] - r1[u0 + k - 1];
      a2 += r2[u0 + k + tw - 1] - r2[u0 + k - 1];
      b1[v * kMmaTileX + u0 + k] = a1;
      b2[v * kMmaTileX + u0 + k] = a2;
    }
  }
  __syncthreads();
}

__global__ void __launch_bounds__(kMmaThreads) bank_scores_mma_kernel(const BankParams p) {
  extern __shared__ __align__(16) uint8_t smem[];
  const GroupDev& g = p.groups[blockIdx.z];  // (its arrays are indexed per lane: read in place)
  const GroupFrame gf = p.group_frames[blockIdx.z];
  if (static_cast<int>(blockIdx.x) >= gf.ntx || static_cast<int>(blockIdx.y) >= gf.nty) return;
  const MmaShape sh = mma_shape(g);
  const MmaSmem sm = mma_smem(g);
  const int x0 = gf.bx + blockIdx.x * kMmaTileX, y0 = gf.by + blockIdx.y * sh.rows;
  uint32_t* plane = reinterpret_cast<uint32_t*>(smem + sm.plane);
  uint32_t* sti = reinterpret_cast<uint32_t*>(smem + sm.sti);
  uint32_t* s1 = reinterpret_cast<uint32_t*>(smem + sm.s1);
  uint32_t* s2 = reinterpret_cast<uint32_t*>(smem + sm.s2);
  unsigned long long* cell_keys = reinterpret_cast<unsigned long long*>(smem + sm.cells);
  const int warp = threadIdx.x >> 5;
  const int warp_row = warp * g.sets * sh.rs;
  PassArgs pa;
  pa.gp = g.gp;
  pa.sets = g.sets;
  pa.rs = sh.rs;
  pa.th = g.th;
  pa.cl = g.cl;
  pa.pitch_w = g.pitch_w;
  pa.chunks = g.chunks;
  pa.th_slot = g.th_of[((threadIdx.x & 31) >> 2) % g.gp];

  stage_plane(plane, g.pitch_w, sh.stage_rows, p, x0, y0, Plane::Image);
  __syncthreads();
  uint32_t acc[kMaxSets][4][4];
  mma_pass(plane, pa, g.bt, warp_row, acc);
  for_each_entry(pa, sh.rows, warp, acc, [&](int at, uint32_t v) { sti[at] = v; });
  if (g.masked) {
    // Each lane stores and later reads back only its own entries: no barrier between passes
    // over the same plane.
    mma_pass(plane, pa, g.bm, warp_row, acc);
    for_each_entry(pa, sh.rows, warp, acc, [&](int at, uint32_t v) { s1[at] = v; });
    __syncthreads();
    stage_plane(plane, g.pitch_w, sh.stage_rows, p, x0, y0, Plane::SquareHigh);
    __syncthreads();
    mma_pass(plane, pa, g.bm, warp_row, acc);
    for_each_entry(pa, sh.rows, warp, acc, [&](int at, uint32_t v) { s2[at] = v; });
    __syncthreads();
    stage_plane(plane, g.pitch_w, sh.stage_rows, p, x0, y0, Plane::SquareLow);
    __syncthreads();
    mma_pass(plane, pa, g.bm, warp_row, acc);
    for_each_entry(pa, sh.rows, warp, acc, [&](int at, uint32_t v) { s2[at] = s2[at] * 256u + v; });
  }
  __syncthreads();

  // Scores and cells, member by member, kChunkRows block rows at a time.
  const bool masked = g.masked != 0;
  const int members = g.count, widest = g.tw;
  uint32_t* vbox = reinterpret_cast<uint32_t*>(smem + sm.vbox);
  uint32_t* sbox = reinterpret_cast<uint32_t*>(smem + sm.sbox);
  const int vplane = kChunkRows * (kMmaTileX + widest);
  for (int r0 = 0; r0 < sh.rows; r0 += kChunkRows) {
    const int rows = min(kChunkRows, sh.rows - r0);
    int box_w = 0, box_h = 0;  // the box sums held in sbox
    for (int slot = 0; slot < members; ++slot) {
      const int m = p.groups[blockIdx.z].member[slot];
      const MemberRegion rg = p.regions[m];
      if (rg.mw == 0) continue;
      const int fy = y0 + r0;
      const int u_first = max(x0 - rg.rx, 0), u_last = min(x0 + kMmaTileX - 1 - rg.rx, rg.mw - 1);
      const int v_first = max(fy - rg.ry, 0), v_last = min(fy + rows - 1 - rg.ry, rg.mh - 1);
      if (u_first > u_last || v_first > v_last) continue;
      const MemberDev md = p.members[m];
      if (!masked && (md.tw != box_w || md.th != box_h)) {
        box_sums(plane, g.pitch_w, r0, md.tw, md.th, vbox, vbox + vplane, sbox, sbox + kChunkRows * kMmaTileX);
        box_w = md.tw;
        box_h = md.th;
      }
      const int cx0 = u_first / md.cw, cy0 = v_first / md.ch;
      const int ncl_x = u_last / md.cw - cx0 + 1, ncl = ncl_x * (v_last / md.ch - cy0 + 1);
      cell_keys[threadIdx.x] = 0;
      __syncthreads();
      // A warp scores 32 consecutive positions of one row; the positions of one cell are
      // consecutive lanes: a segmented maximum over the lanes leaves one atomic per cell and warp.
      // Only a cell whose best score reaches the threshold becomes a candidate, so a position whose
      // single-precision estimate (relative error below 1e-6) is 1e-4 under the threshold cannot
      // matter: it gets no exact score (every position does for a score map).
      const int lane = threadIdx.x & 31;
      const float skip_below = rg.map ? -INFINITY : static_cast<float>(rg.threshold) - 1e-4f;
      for (int idx = threadIdx.x; idx < rows * kMmaTileX; idx += kMmaThreads) {
        const int vv = idx / kMmaTileX, uu = idx - vv * kMmaTileX;
        const int u = x0 + uu - rg.rx, v = fy + vv - rg.ry;
        unsigned long long key = 0;
        int local = -1;
        if (u >= 0 && u < rg.mw && v >= 0 && v < rg.mh) {
          const int at = (slot * sh.rows + r0 + vv) * kMmaTileX + uu;
          const long long si = masked ? s1[at] : sbox[idx];
          const long long sii = masked ? s2[at] : sbox[kChunkRows * kMmaTileX + idx];
          const long long sti_at = sti[at];
          local = (v / md.ch - cy0) * ncl_x + (u / md.cw - cx0);
          const long long var_i = md.n * sii - si * si;
          const float estimate = var_i > 0 ? static_cast<float>(md.n * sti_at - md.st * si) *
                                                 rsqrtf(static_cast<float>(md.var_t) * static_cast<float>(var_i))
                                           : INFINITY;  // (flat windows: the exact path, it is cheap)
          if (estimate >= skip_below) {
            const float score = tm::bank_ccoeff_normed(md.n, md.st, md.var_t, si, sii, sti_at, md.masked != 0);
            if (rg.map) rg.map[static_cast<long long>(v) * rg.mw + u] = score;
            if (!isnan(score)) key = cell_key(score, static_cast<unsigned>(v) * rg.mw + u);
          }
        }
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
          const unsigned long long other = __shfl_down_sync(0xffffffffu, key, off);
          const int other_local = __shfl_down_sync(0xffffffffu, local, off);
          if (lane + off < 32 && other_local == local && other > key) key = other;
        }
        const int before = __shfl_up_sync(0xffffffffu, local, 1);
        if (local >= 0 && key != 0 && (lane == 0 || before != local)) atomicMax(&cell_keys[local], key);
      }
      __syncthreads();
      flush_cell_keys(cell_keys, ncl, ncl_x, cx0, cy0, md, rg);
    }
  }
}

// Sums over rows part, part + kRowParts, ... of the window at (u, v) of a member's map read
// straight from the frame (a peak's neighbours), by a whole warp: each lane sums the template
// columns i = lane (mod 32), then the warp adds up the lanes' sums (exact integers: the order
// does not matter).
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
  const int tw = md.tw, th = md.th, kp = md.kp;
#pragma unroll 4
  for (int j = part; j < th; j += kRowParts) {
    const uint8_t* row = frame + j * stride;
    for (int i = lane; i < tw; i += 32) {
      const uint32_t px = __ldg(row + i), mk = __ldg(mask + j * kp + i);
      sti += px * __ldg(templ + j * kp + i);
      s1 += px * mk;
      s2 += px * px * mk;
    }
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

// Grid (cells up to kPeakBlocks, members): a block takes cells cell, cell + gridDim.x, ...; it
// reads each cell's key and clears it; where the peak reaches the threshold, its warps sum the
// peak's four neighbours (kRowParts warps each, a share of the rows each) and thread 0 lists the
// candidate.
constexpr int kPeakBlocks = 4096;
__global__ void __launch_bounds__(kPeakThreads) bank_peaks_kernel(const BankParams p) {
  __shared__ WindowSums parts[4][kRowParts];
  const int m = blockIdx.y;
  const MemberRegion rg = p.regions[m];
  const MemberDev md = p.members[m];
  const int cells = rg.mw == 0 ? 0 : rg.ncx * rg.ncy, warp = threadIdx.x / 32;
  const int side = warp / kRowParts, part = warp % kRowParts;  // neighbour: left, right, above, below
  for (int cell = blockIdx.x; cell < cells; cell += gridDim.x) {
    const unsigned long long key = md.keys[cell];
    if (key == 0) continue;  // (the whole block)
    const float score = key_score(key);
    const bool found = static_cast<double>(score) >= rg.threshold;
    const unsigned position = ~static_cast<unsigned>(key);
    const int u = static_cast<int>(position % rg.mw), v = static_cast<int>(position / rg.mw);
    const bool fit_x = u > 0 && u<rg.mw - 1, fit_y = v> 0 && v < rg.mh - 1;
    if (found && (side < 2 ? fit_x : fit_y)) {
      const int du = side == 0 ? -1 : side == 1 ? 1 : 0, dv = side == 2 ? -1 : side == 3 ? 1 : 0;
      const WindowSums w = warp_window_sums(p, md, rg, u + du, v + dv, part);
      if ((threadIdx.x & 31) == 0) parts[side][part] = w;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      md.keys[cell] = 0;
      if (found) {
        float neighbours[4];
        for (int n = 0; n < 4; ++n) {
          uint32_t sti = 0, s1 = 0, s2 = 0;
          for (int k = 0; k < kRowParts; ++k) {
            sti += parts[n][k].sti;
            s1 += parts[n][k].s1;
            s2 += parts[n][k].s2;
          }
          neighbours[n] = (n < 2 ? fit_x : fit_y)
                              ? tm::bank_ccoeff_normed(md.n, md.st, md.var_t, s1, s2, sti, md.masked != 0)
                              : 0.0f;
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
      }
    }
    __syncthreads();
  }
  // The last block to finish hands the count to the host and clears the counters.
  if (threadIdx.x == 0) {
    __threadfence();
    const unsigned blocks = gridDim.x * gridDim.y;
    if (atomicAdd(&p.progress[1], 1u) == blocks - 1) {
      const unsigned count = atomicAdd(&p.progress[0], 0u);
      *p.out_count = count;
      p.progress[0] = 0;
      p.progress[1] = 0;
    }
  }
}

// The tensor-core kernel's groups: members ordered by (masked, chunks, height) and cut into runs
// of up to 8 that share the masked flag; each group's sets R as large as its shared memory allows
// (at least 4 rows a warp: the epilogue scores 16 block rows at a time).
struct GroupPlan {
  GroupDev dev;
  std::vector<int> members;
};

constexpr int kMmaSmemPreferred = 76 << 10;  // three blocks an SM

std::vector<GroupPlan> plan_groups(const std::vector<MemberDev>& members, int smem_optin) {
  const int count = static_cast<int>(members.size());
  std::vector<int> order(count);
  for (int m = 0; m < count; ++m) order[m] = m;
  auto chunks = [&](int m) { return (members[m].tw + 31) / 32; };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (members[a].masked != members[b].masked) return members[a].masked < members[b].masked;
    if (chunks(a) != chunks(b)) return chunks(a) < chunks(b);
    return members[a].th < members[b].th;
  });
  std::vector<GroupPlan> groups;
  for (int at = 0; at < count;) {
    GroupPlan gp;
    while (at < count && gp.members.size() < 8 &&
           (gp.members.empty() || members[order[at]].masked == members[gp.members[0]].masked))
      gp.members.push_back(order[at++]);
    GroupDev& g = gp.dev;
    g = GroupDev{};
    g.count = static_cast<int>(gp.members.size());
    g.gp = 1;
    while (g.gp < g.count) g.gp *= 2;
    for (int k = 0; k < g.count; ++k) {
      const MemberDev& md = members[gp.members[k]];
      g.member[k] = gp.members[k];
      g.th_of[k] = md.th;
      g.th = std::max(g.th, md.th);
      g.tw = std::max(g.tw, md.tw);
      g.masked |= md.masked;
    }
    g.chunks = (g.tw + 31) / 32;
    g.cl = (g.chunks + 1) / 2 * 2;
    g.pitch_w = 8 * g.cl + 17;
    const int rs = 8 / g.gp;
    int best = 0;
    for (int r = kMaxSets; r >= 1; r /= 2) {
      if (r * rs < 4) break;
      g.sets = r;
      const int need = mma_smem(g).total;
      if (need <= smem_optin && (best == 0 || need <= kMmaSmemPreferred)) best = r;
      if (need <= kMmaSmemPreferred) break;
    }
    g.sets = best;  // 0: does not fit (the caller refuses the bank)
    groups.push_back(std::move(gp));
  }
  return groups;
}

// The packed rows of a group: per slot, per template row, per lane quad t, per 32-byte chunk c,
// per half h: the 4 bytes 32 c + 16 h + 4 t .. + 3 of the row (B's two registers of chunk c for
// the lanes of quad t); of M T (mask_only false) or of M (1 where counted).
void pack_group(const TemplateBank& bank, const GroupDev& g, bool mask_only, uint32_t* out) {
  const int row_words = 8 * g.cl;
  std::fill(out, out + static_cast<size_t>(g.gp) * g.th * row_words, 0u);
  for (int slot = 0; slot < g.count; ++slot) {
    const MaskedGray& img = bank.members[g.member[slot]].image;
    for (int j = 0; j < img.height; ++j) {
      uint32_t* row = out + (static_cast<size_t>(slot) * g.th + j) * row_words;
      for (int i = 0; i < img.width; ++i) {
        const size_t at = static_cast<size_t>(j) * img.width + i;
        const bool in = !img.masked() || img.mask[at];
        const uint32_t v = !in ? 0u : mask_only ? 1u : img.pixels[at];
        const int c = i / 32, h = (i % 32) / 16, t = (i % 16) / 4, byte = i % 4;
        row[t * 2 * g.cl + 2 * c + h] |= v << (8 * byte);
      }
    }
  }
}

}  // namespace

struct BankMatcherCuda::Impl {
  void* stream = nullptr;
  int fw = 0, fh = 0;
  bool use_mma = false;
  bool force_dp4a = false;
  TemplateBank bank;
  std::vector<MemberStats> stats;
  std::vector<MemberDev> members;  // device pointers
  std::vector<GroupDev> groups;    // device pointers
  cuda::DeviceBuffer templates, keys, members_dev, regions_dev, packed, groups_dev, progress;
  cuda::PinnedBuffer regions_host,
      out;  // regions_host: the regions, then the group frames; out: a counter (32 bytes), then the candidates
  int max_kp = 0, max_th = 0, mma_smem_bytes = 0;
  std::vector<BankCandidate> candidates, selected;

  size_t group_frames_at() const { return (sizeof(MemberRegion) * bank.members.size() + 15) / 16 * 16; }

  Status enqueue(const GrayView& frame, const BankSearch& search, float* map_of_member, int map_member) {
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
        rg.threshold = search.thresholds[bank.members[m].template_index];
        bx0 = std::min(bx0, rg.rx);
        by0 = std::min(by0, rg.ry);
        bx1 = std::max(bx1, rg.rx + rg.mw);
        by1 = std::max(by1, rg.ry + rg.mh);
      }
      regions[m] = rg;
    }
    unsigned* counter = reinterpret_cast<unsigned*>(out.data());
    *counter = 0;  // the previous frame's kernels are done: match() waited for them
    candidates.clear();
    if (bx1 <= bx0 || by1 <= by0) return Status();
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
    p.groups = reinterpret_cast<const GroupDev*>(groups_dev.data());
    p.group_frames = reinterpret_cast<const GroupFrame*>(regions_dev.data() + group_frames_at());
    if (use_mma) {
      const dim3 grid(grid_x, grid_y, static_cast<unsigned>(groups.size()));
      bank_scores_mma_kernel<<<grid, kMmaThreads, mma_smem_bytes, s>>>(p);
      CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaGetLastError(), "bank_scores_mma_kernel launch"));
    } else {
      const dim3 grid((bx1 - bx0 + kTileX - 1) / kTileX, (by1 - by0 + kTileY - 1) / kTileY);
      const size_t smem = static_cast<size_t>(p.rows) * p.pitch;
      bank_scores_dp4a_kernel<<<grid, kThreads, smem, s>>>(p);
      CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaGetLastError(), "bank_scores_dp4a_kernel launch"));
    }
    int most_cells = 0;
    for (int m = 0; m < count; ++m) most_cells = std::max(most_cells, regions[m].ncx * regions[m].ncy);
    const dim3 peaks_grid(std::min(most_cells, kPeakBlocks), count);
    bank_peaks_kernel<<<peaks_grid, kPeakThreads, 0, s>>>(p);
    return cuda_status(cudaGetLastError(), "bank_peaks_kernel launch");
  }

  Status collect() {
    CUDAPREP_RETURN_IF_ERROR(cuda::stream_sync(stream));
    const unsigned count = *reinterpret_cast<const unsigned*>(out.data());
    if (count > static_cast<unsigned>(kMaxCandidates))
      return Status::error(std::to_string(count) + " cells reach their threshold, more than the " +
                           std::to_string(kMaxCandidates) + " a frame can hold: raise the threshold");
    const BankCandidate* c = reinterpret_cast<const BankCandidate*>(out.data() + 32);
    candidates.assign(c, c + count);
    sort_bank_candidates(&candidates);  // the kernel lists them in no particular order
    return Status();
  }
};

BankMatcherCuda::BankMatcherCuda() : impl_(new Impl) {}
BankMatcherCuda::~BankMatcherCuda() { release(); }

void BankMatcherCuda::release() {
  if (impl_->stream) cuda::stream_sync(impl_->stream);
  impl_->templates.reset();
  impl_->keys.reset();
  impl_->members_dev.reset();
  impl_->regions_dev.reset();
  impl_->packed.reset();
  impl_->groups_dev.reset();
  impl_->progress.reset();
  impl_->regions_host.reset();
  impl_->out.reset();
  impl_->bank = TemplateBank();
  impl_->members.clear();
  impl_->groups.clear();
}

const TemplateBank& BankMatcherCuda::bank() const { return impl_->bank; }
bool BankMatcherCuda::has_bank() const { return !impl_->bank.members.empty(); }
const std::vector<BankCandidate>& BankMatcherCuda::last_candidates() const { return impl_->candidates; }

void BankMatcherCuda::use_cuda_cores_only(bool on) { impl_->force_dp4a = on; }

Status BankMatcherCuda::configure(int frame_width, int frame_height, void* stream) {
  if (frame_width <= 0 || frame_height <= 0)
    return Status::error("invalid frame size " + std::to_string(frame_width) + "x" + std::to_string(frame_height));
  const bool resized = frame_width != impl_->fw || frame_height != impl_->fh;
  impl_->stream = stream;
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
  const bool use_mma = cc_major >= 8 && !impl_->force_dp4a;
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
  // The tensor-core kernel's groups and their packed rows.
  std::vector<GroupPlan> plans;
  std::vector<size_t> packed_at;
  size_t packed_words = 0;
  int mma_smem_bytes = 0;
  if (use_mma) {
    plans = plan_groups(members, smem_optin);
    for (GroupPlan& gp : plans) {
      if (gp.dev.sets == 0)
        return Status::error("template " + member_name(bank, gp.members.back()) + " (" +
                             std::to_string(members[gp.members.back()].tw) + "x" +
                             std::to_string(members[gp.members.back()].th) +
                             ") needs more shared memory than this GPU gives a block");
      mma_smem_bytes = std::max(mma_smem_bytes, mma_smem(gp.dev).total);
      const size_t words = static_cast<size_t>(gp.dev.gp) * gp.dev.th * 8 * gp.dev.cl;
      packed_at.push_back(packed_words);
      packed_words += words * (gp.dev.masked ? 2 : 1);
    }
  }
  std::vector<uint32_t> packed_host(std::max<size_t>(packed_words, 1), 0u);
  for (size_t gi = 0; gi < plans.size(); ++gi) {
    const GroupDev& g = plans[gi].dev;
    pack_group(bank, g, false, packed_host.data() + packed_at[gi]);
    if (g.masked)
      pack_group(bank, g, true, packed_host.data() + packed_at[gi] + static_cast<size_t>(g.gp) * g.th * 8 * g.cl);
  }
  Impl& d = *impl_;
  cuda::DeviceBuffer templates, keys, members_dev, regions_dev, packed, groups_dev, progress;
  cuda::PinnedBuffer regions_host, out;
  const size_t frames_at = (sizeof(MemberRegion) * count + 15) / 16 * 16;
  const size_t region_bytes = frames_at + sizeof(GroupFrame) * std::max<size_t>(plans.size(), 1);
  CUDAPREP_RETURN_IF_ERROR(templates.allocate(templ_bytes));
  CUDAPREP_RETURN_IF_ERROR(keys.allocate(std::max<size_t>(key_count, 1) * sizeof(unsigned long long)));
  CUDAPREP_RETURN_IF_ERROR(members_dev.allocate(sizeof(MemberDev) * count));
  CUDAPREP_RETURN_IF_ERROR(regions_dev.allocate(region_bytes));
  CUDAPREP_RETURN_IF_ERROR(regions_host.allocate(region_bytes));
  CUDAPREP_RETURN_IF_ERROR(packed.allocate(packed_host.size() * sizeof(uint32_t)));
  CUDAPREP_RETURN_IF_ERROR(groups_dev.allocate(sizeof(GroupDev) * std::max<size_t>(plans.size(), 1)));
  CUDAPREP_RETURN_IF_ERROR(out.allocate(32 + sizeof(BankCandidate) * kMaxCandidates));
  CUDAPREP_RETURN_IF_ERROR(progress.allocate(2 * sizeof(unsigned)));
  for (int m = 0; m < count; ++m) {
    members[m].templ = templates.data() + templ_at[m];
    members[m].mask = members[m].templ + static_cast<size_t>(members[m].kp) * members[m].th;
    members[m].keys = reinterpret_cast<unsigned long long*>(keys.data()) + keys_at[m];
  }
  std::vector<GroupDev> groups;
  for (size_t gi = 0; gi < plans.size(); ++gi) {
    GroupDev g = plans[gi].dev;
    const uint32_t* base = reinterpret_cast<const uint32_t*>(packed.data()) + packed_at[gi];
    g.bt = base;
    g.bm = g.masked ? base + static_cast<size_t>(g.gp) * g.th * 8 * g.cl : nullptr;
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
      cuda_status(cudaMemcpyAsync(packed.data(), packed_host.data(), packed_host.size() * sizeof(uint32_t),
                                  cudaMemcpyHostToDevice, s),
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
  } else {
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
  d.packed = std::move(packed);
  d.groups_dev = std::move(groups_dev);
  d.progress = std::move(progress);
  d.regions_host = std::move(regions_host);
  d.out = std::move(out);
  d.members = std::move(members);
  d.groups = std::move(groups);
  d.stats = std::move(stats);
  d.bank = bank;
  d.max_kp = max_kp;
  d.max_th = max_th;
  d.use_mma = use_mma;
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
  CUDAPREP_RETURN_IF_ERROR(impl_->enqueue(device_frame, search, nullptr, -1));
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
  CUDAPREP_RETURN_IF_ERROR(impl_->enqueue(device_frame, one, reinterpret_cast<float*>(map.data()), member));
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
