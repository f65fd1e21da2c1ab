// Internal to the CUDA bank matcher: the tensor-core kernel's groups, their shared-memory layout
// and the layout of a warp's products, written once for the kernel (bank_match_cuda.cu) and for
// the host (the groups' plan in bank_mma_plan.cpp, and a test that checks the products' layout
// against direct sums without a GPU). Plain C++: no CUDA headers.
#pragma once
#include <vector>

#include "image.h"
#include "template_bank.h"

namespace cudaprep {
namespace bank_mma {

constexpr int kMmaWarps = 8;
constexpr int kMmaThreads = 32 * kMmaWarps;
constexpr int kMmaTileX = 64;   // positions a block row: 2 warps of 32
constexpr int kMaxMGroups = 4;  // G
constexpr int kChunkRows = 16;  // rows of positions the epilogue scores at a time
constexpr int kPositionsPerThread = kChunkRows * kMmaTileX / kMmaThreads;  // in each slot's epilogue
constexpr float kEstimateMargin = 4e-6f;  // twice the epilogue's score estimates' largest error
constexpr int kMmaLocalCells = 128;       // cells of >= 4 x 4 positions in 64 x 16: at most 17 x 5
constexpr int kSlotBytes = 128;           // a block's copy of a slot's member and region
static_assert(kMmaThreads % kMmaTileX == 0, "the epilogue keeps a thread in one column");
static_assert((kMmaTileX & (kMmaTileX - 1)) == 0, "sum_at rotates within a power-of-two row");

// A group of up to 8 members, as the tensor-core kernel reads it.
struct GroupDev {
  int member[8];   // bank member of each slot (slot < count), by height, then width
  int count;       // members
  int gp;          // slots: the power of two >= count; A row m is slot m % gp at output row m / gp
  int rs;          // output rows of an M-group: 16 / gp
  int mgroups;     // G: M-groups a warp holds
  int chunks;      // 32-byte chunks of the widest member
  int th, tw;      // the tallest and the widest member
  int masked;      // the window sums come from three more passes with the masks as A
  int pitch_w;     // 32-bit words a staged frame row
  int tp;          // bytes a staged template row: 32 chunks + 16 (ldmatrix rows in distinct banks)
  int srows;       // staged template super-rows: th rows between rs - 1 zero super-rows each side
  const void* at;  // device: the staged rows of M T, byte for byte as a block stages them (stage_group)
  const void* am;  // the same of M (masked groups), else null
};

struct MmaShape {
  int rows, stage_rows, staged_bytes;  // output rows a block, staged frame rows, staged template bytes
};
CUDAPREP_HD MmaShape mma_shape(const GroupDev& g) {
  MmaShape m;
  m.rows = (kMmaWarps / 2) * g.mgroups * g.rs;
  m.stage_rows = m.rows + g.th - 1;
  m.staged_bytes = g.srows * g.gp * g.tp;
  return m;
}

// Shared memory of a block of group g: the staged frame plane; the staged template rows (A),
// which the per-slot sums (T I) and the box sums' scratch replace after the products of an
// unmasked group; a masked group's three sums (T I, M I, M I^2) beside its staged masks; the local
// cell keys; each slot's member and region and its tables of local cells (cell_tables).
struct MmaSmem {
  int plane, staged, sti, s1, s2, vbox, sbox, cells, info, row_cells, col_cells, chunk_cells;  // byte offsets
  int total;                                                                                   // bytes
};
CUDAPREP_HD MmaSmem mma_smem(const GroupDev& g) {
  const MmaShape sh = mma_shape(g);
  const int sums = g.gp * sh.rows * kMmaTileX * 4;  // u32 per slot, block row and position
  MmaSmem m;
  m.plane = 0;
  m.staged = (sh.stage_rows * g.pitch_w * 4 + 15) / 16 * 16;
  int at;
  if (g.masked) {
    m.sti = m.staged + (sh.staged_bytes + 15) / 16 * 16;
    m.s1 = m.sti + sums;
    m.s2 = m.s1 + sums;
    m.vbox = m.sbox = m.s2 + sums;
    at = m.vbox;
  } else {
    m.sti = m.s1 = m.s2 = m.staged;
    m.vbox = m.sti + sums;                                      // two planes of kChunkRows x (63 + tw) column sums
    m.sbox = m.vbox + 2 * kChunkRows * (kMmaTileX + g.tw) * 4;  // two planes of kChunkRows x 64 window sums
    at = m.sbox + 2 * kChunkRows * kMmaTileX * 4;
    if (at < m.staged + sh.staged_bytes) at = m.staged + sh.staged_bytes;
  }
  m.cells = (at + 7) / 8 * 8;                          // each slot's cell keys
  m.info = m.cells + g.gp * kMmaLocalCells * 8;        // each slot's member and region
  m.row_cells = m.info + g.gp * kSlotBytes;            // [slot][block row] (int)
  m.col_cells = m.row_cells + g.gp * sh.rows * 4;      // [slot][block column] (int)
  m.chunk_cells = m.col_cells + g.gp * kMmaTileX * 4;  // [slot][chunk of kChunkRows rows]: 4 ints
  m.total = m.chunk_cells + g.gp * ((sh.rows + kChunkRows - 1) / kChunkRows) * 16;
  return m;
}

// The layout of a warp's products, shared by the kernel and the host's check of it
// (bank_mma_layout_test): for image row r (staged row r of the block's frame plane),
//   A[m][k] = T_slot(32 c + k, r - warp_row - gi rs - m / gp), slot = m % gp  (M-group gi)
//   B_s[k][n] = I(32 warp_col + 32 c + s + 4 n + k, r)                       (s = 0..3)
// so D[m][n] of M-group gi and shift s accumulates, over r, the correlation of slot m % gp at
// output row warp_row + gi rs + m / gp, position 32 warp_col + s + 4 n. A comes from the staged
// template rows with ldmatrix (super-row j + rs - 1 holds row j of every slot, tp bytes each, so a
// lane's row address is linear in r); B from 4 words of the staged frame row and funnel shifts.
struct WarpLayout {
  int gp, rs, mgroups, th, chunks, pitch_w, tp;
  int warp_row, warp_col;
};

// Byte offset into the staged template rows of the ldmatrix row lane `lane` supplies for M-group
// gi at image row r, chunk 0 (chunk c: + 32 c).
CUDAPREP_HD int a_row_offset(const WarpLayout& w, int lane, int gi, int r) {
  const int m = (lane & 7) + 8 * ((lane >> 3) & 1);
  const int j = r - w.warp_row - gi * w.rs - m / w.gp;
  return ((j + w.rs - 1) * w.gp + m % w.gp) * w.tp + 16 * (lane >> 4);
}
// Word index into the staged frame plane of B's word k (0, 1, 4 or 5) of lane `lane`, chunk c.
CUDAPREP_HD int b_word(const WarpLayout& w, int lane, int r, int c, int k) {
  return r * w.pitch_w + 8 * (w.warp_col + c) + (lane >> 2) + (lane & 3) + k;
}
// Image rows r in [first, end) meet M-group gi's output rows.
CUDAPREP_HD int live_first(const WarpLayout& w, int gi) { return w.warp_row + gi * w.rs; }
CUDAPREP_HD int live_end(const WarpLayout& w, int gi) { return w.warp_row + gi * w.rs + w.rs + w.th - 1; }
// Where the sums of slot `slot`, block row `row`, position x lie: [slot][block row][position],
// each row rotated by sum_rotation words, so that the 32 lanes of one accumulator store (8 slots
// or rows by 4 columns 8 apart, whatever the group) write 32 distinct banks. rs: the group's
// output rows an M-group (16 / gp), so that rs / 2 slots' rows meet in a store.
CUDAPREP_HD int sum_rotation(int rs, int slot, int row) {
  const int q = rs >> 1;
  return slot * q + (row & (q - 1));
}
CUDAPREP_HD int sum_at(int rs, int rows, int slot, int row, int x) {
  return (slot * rows + row) * kMmaTileX + ((x + sum_rotation(rs, slot, row)) & (kMmaTileX - 1));
}
// The sums' index of accumulator e of lane `lane`, M-group gi, shift s.
CUDAPREP_HD int sum_index(const WarpLayout& w, int rows, int lane, int gi, int s, int e) {
  const int m = (lane >> 2) + 8 * (e >> 1), n = 2 * (lane & 3) + (e & 1);
  const int row = w.warp_row + gi * w.rs + m / w.gp;
  const int x = 32 * w.warp_col + s + 4 * n;
  return sum_at(w.rs, rows, m % w.gp, row, x);
}

// What the plan needs of a member.
struct MemberShape {
  int tw, th, masked;
};

struct GroupPlan {
  GroupDev dev;
  std::vector<int> members;
};

// The group of members ids[0, count); mgroups 0: it does not fit a block of smem_optin bytes.
GroupDev make_group(const std::vector<MemberShape>& members, const int* ids, int count, int smem_optin);
// An estimate of what group g costs a frame position (its products and its staging), in
// products' time: what plan_groups minimises.
double group_cost(const GroupDev& g);
// Members ordered by (masked, chunks, height) and cut into the runs of up to 8 sharing the masked
// flag whose group_cost adds up least; a run of several fits two blocks an SM with at least two
// M-groups a warp; G is the largest that fits (two blocks an SM preferred).
std::vector<GroupPlan> plan_groups(const std::vector<MemberShape>& members, int smem_optin);
// A group's template rows as a block stages them (mma_shape(g).staged_bytes at out): super-row
// j + rs - 1 holds row j of every slot (tp bytes each, zero beyond the member's width and height),
// rs - 1 zero super-rows on each side; of M T (mask_only false) or of M (1 where counted).
void stage_group(const TemplateBank& bank, const GroupDev& g, bool mask_only, uint8_t* out);

}  // namespace bank_mma
}  // namespace cudaprep
