// Internal to the CUDA template matcher: the frame kernel's tile constants and shared-memory
// layout, written once for the kernel (templatematch_kernel.cuh) and for the launch planner
// (templatematch_planner.cpp, plain C++: no CUDA headers here).
#pragma once
#include "image.h"

namespace cudaprep {
namespace tm {

constexpr int kGroupThreads = 128;  // threads of one warp group (4 warps: a 64-row tile)
constexpr int kRows = 64;           // tile height in positions
constexpr int kChunk = 16;          // rows of window sums per pass
constexpr int kMaxKz = 8;           // cluster split (portable cluster size)

CUDAPREP_HD int round_up(int v, int m) { return (v + m - 1) / m * m; }

// Shared-memory layout of the frame kernel: the staged frame rows (th + 63 rows of rw bytes), then
// one area that holds the template rows during the correlation (`rows` rows in `groups` segments,
// each between 16 zero rows: the warps' ldmatrix rows are linear in the image row, rows just
// outside a segment read zeros) and afterwards the 32-bit tile
// (64 rows of cp words) and the vertical sums of one pass: kChunk rows of vp words (sum I^2) and
// kChunk rows of vh half-words (sum I <= 256 * 255 fits 16 bits; smaller blocks, more per SM).
// With `scan` (box_scores' prefix-sum pass) the sums of I take kChunk rows of vp words instead:
// their prefix sums need 32 bits.
// A masked template (64-wide tiles, no cluster split) sums four products instead, so nothing
// aliases: two frame planes (I; then the high and the low bytes of I^2), the template rows and
// the mask rows (each in the staged layout above), and three tiles (sum M T I, sum M I, sum M I^2).
struct FrameLayout {
  int rw, tp, cp, vp, vh, region, area, total;
  int plane;  // bytes of one staged frame plane
  int tmpl;   // bytes of the staged template rows (the mask rows follow them)
  int tiles;  // offset of the 32-bit tiles from the area's start
};
CUDAPREP_HD FrameLayout frame_layout(int pp, int tw, int th, int kp, int rows, int groups, bool scan = false,
                                     bool masked = false) {
  FrameLayout l;
  l.rw = 64 * pp + kp;
  l.tp = kp + 16;      // template row pitch (keeps ldmatrix conflict-free)
  l.cp = 64 * pp + 1;  // odd: a warp's 16 rows x 2 segments hit distinct banks
  const int ncols = 64 * pp - 1 + tw;
  l.vp = ncols | 1;               // odd, as cp
  l.vh = ((ncols + 1) & ~3) + 2;  // 2 mod 4 half-words: 16 rows x 2 segments in distinct banks too
  l.plane = round_up(l.rw * (th + kRows - 1), 128);
  l.tmpl = round_up((rows + 16 * (groups + 1)) * l.tp, 128);
  if (masked) {
    l.region = 2 * l.plane;
    l.tiles = 2 * l.tmpl;
    l.area = l.tiles + round_up(3 * kRows * l.cp * 4, 128);
  } else {
    l.region = l.plane;
    l.tiles = 0;  // the tile replaces the template rows
    const int work =
        kRows * l.cp * 4 + kChunk * l.vp * 4 + (scan ? kChunk * l.vp * 4 : round_up(kChunk * l.vh * 2, 16));
    l.area = round_up(l.tmpl > work ? l.tmpl : work, 128);
  }
  l.total = l.region + l.area;
  return l;
}

}  // namespace tm
}  // namespace cudaprep
