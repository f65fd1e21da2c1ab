// The launch planner of the CUDA template matcher (see templatematch_planner.h).
#include "templatematch_planner.h"

#include <algorithm>
#include <string>

namespace cudaprep {
namespace tm {

namespace {
int override_value(MatcherCudaOptions::Override o) {
  return o == MatcherCudaOptions::Override::Auto ? -1 : o == MatcherCudaOptions::Override::On ? 1 : 0;
}
}  // namespace

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

LaunchPlanner::LaunchPlanner(const GpuLimits& gpu, const MatcherCudaOptions::Tuning& tuning)
    : gpu_(gpu),
      use_mma_(gpu.cc_major >= 8 && !tuning.dp4a),
      clusters_(gpu.cc_major >= 9),
      force_pp_(tuning.tile_width / 64),
      force_ks_(tuning.row_split),
      force_kz_(tuning.cluster_split),
      force_solo_(override_value(tuning.solo)),
      scan_split_(tuning.small_row_split),
      force_pipe_(override_value(tuning.pipelining)),
      m16_split_(tuning.m16) {}

// The kernels may use up to the device's opt-in limit; the template must fit with the narrowest
// tile the path has.
Status LaunchPlanner::set_template(int tw, int th, int kp, bool masked, OccupancyQueries& queries) {
  tw_ = tw;
  th_ = th;
  kp_ = kp;
  masked_ = masked;
  const std::string name = (masked ? "masked template " : "template ") + std::to_string(tw) + "x" + std::to_string(th);
  if (masked && !use_mma_) return Status::error(name + " needs the tensor cores (compute capability 8.0 or newer)");
  const int need = frame_layout(use_mma_ ? 1 : 2, tw, th, kp, th, 1, false, masked).total;
  if (need > gpu_.smem_optin)
    return Status::error(name + " needs more shared memory than this GPU offers (" + std::to_string(need) + " > " +
                         std::to_string(gpu_.smem_optin) + " bytes)");
  return compute_occupancy(queries);
}

// Resident blocks per SM for each tile width, cluster split and warp-group split (per template).
// The software-pipelined kernels use a few more registers: their occupancy bounds both.
Status LaunchPlanner::compute_occupancy(OccupancyQueries& queries) {
  for (int pp = 1; pp <= 2; ++pp)
    for (int kz = 1; kz <= kMaxKz; ++kz)
      for (int i = 0; i < 3; ++i) {
        int& o = occ_[pp - 1][kz][i];
        o = 0;
        const int ks = 1 << i;
        if ((pp == 2 && ks > 2) || kz > th_ || (!use_mma_ && (pp == 1 || kz > 1 || ks > 1))) continue;
        if (masked_ && (pp > 1 || kz > 1)) continue;
        const int smem = frame_layout(pp, tw_, th_, kp_, (th_ + kz - 1) / kz, ks, false, masked_).total;
        if (smem > gpu_.smem_optin) continue;
        const KernelVariant k{use_mma_, pp, !masked_, false, false, masked_};
        CUDAPREP_RETURN_IF_ERROR(queries.blocks_per_sm(k, kGroupThreads * ks, smem, &o));
      }
  return compute_solo(queries);
}

// Cluster-split launches are short chains of dependent phases, and a cluster waits for its
// slowest block: two blocks sharing an SM (the cluster scheduler packs them where shared memory
// allows) make the whole cluster wait. Asking for just over half an SM's shared memory keeps
// one block per SM; plan() does so where every cluster of the launch still fits at once.
Status LaunchPlanner::compute_solo(OccupancyQueries& queries) {
  for (int kz = 0; kz <= kMaxKz; ++kz) solo_clusters_[kz] = solo_smem_[kz] = 0;
  if (!use_mma_ || !clusters_ || masked_ || gpu_.smem_per_sm <= 0) return Status();
  const int threads = block_threads_of(m16_split_, 1, false);
  for (int kz = 2; kz <= std::min(kMaxKz, th_); ++kz) {
    const int need = frame_layout(1, tw_, th_, kp_, (th_ + kz - 1) / kz, 1).total;
    const int smem = std::max(need, round_up(gpu_.smem_per_sm / 2 - gpu_.smem_reserved + 1, 128));
    if (smem > gpu_.smem_optin) continue;
    const KernelVariant k{true, 1, true, m16_split_, false};
    int per_sm = 0;
    CUDAPREP_RETURN_IF_ERROR(queries.blocks_per_sm(k, threads, smem, &per_sm));
    if (per_sm != 1) continue;
    int n = 0;
    if (!queries.active_clusters(k, threads, smem, kz, &n)) continue;  // no answer: no padding for this split
    solo_clusters_[kz] = n;
    solo_smem_[kz] = smem;
  }
  return Status();
}

// Launch shape for a search region (measured on an H200; dev/perf/templatematch.md):
//  - tile width: 64; 128 for templates 65..128 px wide on a grid that fills the GPU (half the
//    template loads per mma; faster at 128 px, slower at 64 and 256 px and on small grids);
//  - cluster split kz: where the tiles fill less than half the GPU, the template rows are split
//    over kz blocks per tile (up to 8, at least 8 rows each): small regions use more SMs and
//    shorter serial chains (256 x 256 region, 64 px: 42 -> 24 us of kernel time); the largest kz
//    whose clusters all fit with one block per SM (compute_solo), else the largest that fits;
//  - with a cluster split (64-wide tiles): 8 warps of one 16-row M-group each (m16), whose
//    serial chains are th / kz + 15 row steps instead of th / kz + 31;
//  - a split of 4 or more runs as the row split where it fits (scan): 4 blocks a tile of 16 tile
//    rows each, every template row in 4 segments of 8 warps, 4 more warps summing the windows, no
//    cluster and no partial sums between blocks (320 x 320 region, 64 px: 0.0237 -> 0.0207 ms);
//  - otherwise ks warp groups per block (choose_ks);
//  - software pipelining of the tensor-core loop where a row step is one 32-column chunk and on
//    small grids; for wider templates on full frames the compiler's own unrolling of the chunk
//    loop is faster (64 px -4%, 128 px -13% at 128 wide, 256 px -19% at 64 wide).
FramePlan LaunchPlanner::plan(const Rect& r) const {
  FramePlan pl;
  const int mw = r.w - tw_ + 1, mh = r.h - th_ + 1, nc = kp_ / 32;
  auto tiles_for = [&](int pp, int* gx, int* gy) {
    const int tile = 64 * pp;
    *gx = (r.x + mw + tile - 1) / tile - r.x / tile;
    *gy = (mh + kRows - 1) / kRows;
    return *gx * *gy;
  };
  int gx = 0, gy = 0;
  if (!use_mma_) {
    pl.pp = 2;  // the dp4a kernel covers 128 positions per row
  } else {
    pl.pp = force_pp_ ? force_pp_ : (nc >= 3 && nc <= 4 && tiles_for(2, &gx, &gy) >= gpu_.sm_count) ? 2 : 1;
    if (pl.pp == 2 && occ_[1][1][0] == 0) pl.pp = 1;  // 128-wide tiles (kz 1, ks 1) do not fit (or masked)
  }
  const int tiles = tiles_for(pl.pp, &gx, &gy);
  pl.x_first = r.x / (64 * pl.pp) * (64 * pl.pp);
  int kz = 1;
  bool solo = false;
  if (use_mma_ && clusters_ && !masked_) {
    auto fits_solo = [&](int k) { return pl.pp == 1 && solo_smem_[k] > 0 && solo_clusters_[k] >= tiles; };
    if (force_kz_ > 0) {
      kz = std::min(force_kz_, th_);
      solo = kz > 1 && (force_solo_ == 1 ? pl.pp == 1 && solo_smem_[kz] > 0 : force_solo_ != 0 && fits_solo(kz));
    } else {
      int packed = 1;
      for (int k = 2; k <= kMaxKz; ++k) {
        if (tiles * k > gpu_.sm_count || th_ < 8 * k || occ_[pl.pp - 1][k][0] == 0) continue;
        packed = k;
        if (force_solo_ != 0 && fits_solo(k)) kz = k;
      }
      solo = kz > 1;
      if (kz == 1) kz = packed;
    }
    while (kz > 1 && occ_[pl.pp - 1][kz][0] == 0) --kz, solo = false;  // does not fit
  }
  pl.kz = kz;
  pl.m16 = use_mma_ && pl.kz > 1 && pl.pp == 1 && m16_split_;
  // A split into 4 or more blocks a tile runs as the row split where it fits: 4 blocks of 16
  // tile rows each unless forced (more would repeat the same 16-row products).
  pl.scan = pl.m16 && scan_split_ && pl.kz >= kRowSplitBlocks &&
            frame_layout(pl.pp, tw_, th_, kp_, th_, kRowSegments, true).total <= gpu_.smem_optin;
  if (pl.scan && force_kz_ == 0) pl.kz = kRowSplitBlocks;
  pl.cluster = pl.scan ? 1 : pl.kz;
  pl.ks = use_mma_ && !pl.m16 ? choose_ks(pl.pp, pl.kz, tiles * pl.kz) : 1;
  // (A masked template's pipelined loop would hold two products' fragments: it spills.)
  pl.pipe = use_mma_ && !masked_ && (force_pipe_ >= 0 ? force_pipe_ == 1 : (nc == 1 || pl.kz > 1));
  pl.grid_x = gx;
  pl.grid_y = gy;
  pl.grid_z = pl.kz;
  if (pl.scan) {
    pl.smem = frame_layout(pl.pp, tw_, th_, kp_, th_, kRowSegments, true).total;
  } else {
    pl.smem = frame_layout(pl.pp, tw_, th_, kp_, (th_ + pl.kz - 1) / pl.kz, pl.ks, false, masked_).total;
    if (solo) pl.smem = std::max(pl.smem, solo_smem_[pl.kz]);  // one block per SM
  }
  return pl;
}

KernelVariant LaunchPlanner::kernel_of(const FramePlan& pl) const {
  return KernelVariant{use_mma_, pl.pp, pl.pipe, pl.m16, pl.scan, masked_};
}

// Template-row split between warp groups of a block. The tensor-core loop is latency-bound (a
// warp's serial chain of row steps, rows / ks + 31 of them, sets its time when all blocks are
// resident). Splitting shortens the chain but makes blocks larger, so fewer fit on an SM: pick
// the ks with the least waves x chain length. Equal: the smaller ks (less work).
int LaunchPlanner::choose_ks(int pp, int kz, int blocks) const {
  const int rows = th_ / kz, max_i = pp == 1 ? 2 : 1;
  if (force_ks_ > 0) {
    int i = 0;
    while (i < max_i && (2 << i) <= force_ks_ && (2 << i) <= rows && occ_[pp - 1][kz][i + 1] > 0) ++i;
    return 1 << i;
  }
  int best = 1;
  double best_cost = 0;
  for (int i = 0; i <= max_i; ++i) {
    const int ks = 1 << i;
    if (ks > 1 && rows / ks < 16) break;  // below 16 rows a split mostly adds work
    if (occ_[pp - 1][kz][i] == 0) break;
    const int per_wave = occ_[pp - 1][kz][i] * gpu_.sm_count;
    const double cost = static_cast<double>((blocks + per_wave - 1) / per_wave) * (rows / ks + 31);
    if (i == 0 || cost < best_cost) {
      best = ks;
      best_cost = cost;
    }
  }
  return best;
}

}  // namespace tm
}  // namespace cudaprep
