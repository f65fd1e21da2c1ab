// Internal to the CUDA template matcher: the frame kernel's tile constants and shared-memory
// layout, written once for the kernel (templatematch_kernel.cuh) and for the launch planner
// (templatematch_planner.cpp, plain C++: no CUDA headers here).
#pragma once
#include "image.h"

namespace cudaprep {
namespace tm {

constexpr int kGroupThreads = 128;                 // threads of one warp group (4 warps: a 64-row tile)
constexpr int kRows = 64;                          // tile height in positions
constexpr int kChunk = 16;                         // rows of window sums per pass
constexpr int kMaxKz = 8;                          // cluster split (portable cluster size)
constexpr int kM16Rows = 16;                       // output rows of one M-group
constexpr int kRowSegments = 4;                    // row split: template-row segments of a block (a warp pair each)
constexpr int kSumWarps = 4;                       // row split: the window-sum warps of a block
constexpr int kRowSplitBlocks = kRows / kM16Rows;  // row split: blocks a tile unless forced

CUDAPREP_HD int round_up(int v, int m) { return (v + m - 1) / m * m; }

// Shared-memory layout of the frame kernel: the staged frame rows (th + 63 rows of rw bytes), then
// one area that holds the template rows during the correlation (`rows` rows in `groups` segments,
// each between 16 zero rows: the warps' ldmatrix rows are linear in the image row, rows just
// outside a segment read zeros) and afterwards the 32-bit tile
// (64 rows of cp words) and the vertical sums of one pass: kChunk rows of vp words (sum I^2) and
// kChunk rows of vh half-words (sum I <= 256 * 255 fits 16 bits; smaller blocks, more per SM).
// With `scan` (the row split: window-sum warps beside the product warps) the frame rows reach
// 16 rows further (the last block's M-group), and nothing that the window sums or the segments'
// sums use aliases what the products read: the area holds the template rows, then the tile; the
// column sums of the block's rows (then their prefix sums) and the segments' parts follow it.
// A masked template (64-wide tiles, no cluster split) sums four products instead, so nothing
// aliases: two frame planes (I; then the high and the low bytes of I^2), the template rows and
// the mask rows (each in the staged layout above), and three tiles (sum M T I, sum M I, sum M I^2).
struct FrameLayout {
  int rw, tp, cp, vp, vh, rp, region, area, total;
  int plane;  // bytes of one staged frame plane
  int tmpl;   // bytes of the staged template rows (the mask rows follow them)
  int tiles;  // offset of the 32-bit tiles from the area's start
  // scan (the row split) only, byte offsets:
  int sums;   // the column sums of I and of I^2 of the block's rows (kM16Rows rows of vp words each)
  int parts;  // sums T * I of the block's M-group rows, one part per template-row segment (rp words a row)
};
CUDAPREP_HD FrameLayout frame_layout(int pp, int tw, int th, int kp, int rows, int groups, bool scan = false,
                                     bool masked = false) {
  FrameLayout l;
  l.rw = 64 * pp + kp;
  l.tp = kp + 16;      // template row pitch (keeps ldmatrix conflict-free)
  l.cp = 64 * pp + 1;  // odd: a warp's 16 rows x 2 segments hit distinct banks
  l.rp = 64 * pp + 4;  // the segments' parts: 16-byte rows
  const int ncols = 64 * pp - 1 + tw;
  l.vp = ncols | 1;               // odd, as cp
  l.vh = ((ncols + 1) & ~3) + 2;  // 2 mod 4 half-words: 16 rows x 2 segments in distinct banks too
  l.plane = round_up(l.rw * (th + kRows - 1 + (scan ? kM16Rows : 0)), 128);
  l.tmpl = round_up((rows + 16 * (groups + 1)) * l.tp, 128);
  if (masked) {
    l.region = 2 * l.plane;
    l.tiles = 2 * l.tmpl;
    l.area = l.tiles + round_up(3 * kRows * l.cp * 4, 128);
  } else {
    l.region = l.plane;
    l.tiles = 0;  // the tile replaces the template rows
    const int work = kRows * l.cp * 4 + (scan ? 0 : kChunk * l.vp * 4 + round_up(kChunk * l.vh * 2, 16));
    l.area = round_up(l.tmpl > work ? l.tmpl : work, 128);
  }
  l.total = l.region + l.area;
  l.sums = l.parts = 0;
  if (scan && !masked) {
    l.sums = l.total;
    l.parts = l.sums + round_up(2 * kM16Rows * l.vp * 4, 128);
    l.total = l.parts + round_up(kRowSegments * kM16Rows * l.rp * 4, 128);
  }
  return l;
}

}  // namespace tm
}  // namespace cudaprep
