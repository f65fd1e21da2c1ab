// Internal to the CUDA template matcher: the launch planner, which picks the frame kernel's
// shape for a template and a search region. Plain C++ (no CUDA headers): the matcher hands it
// the GPU's figures and answers its occupancy questions, so the CPU tests can drive it with a
// model of any GPU.
//
// Launch shape (measured on an H200, see dev/perf/templatematch.md): 64-wide tiles,
// 128-wide for templates 65..128 px wide on grids that fill the GPU; where the tiles fill less
// than half the GPU, the template rows are split over a thread-block cluster of up to 8 blocks per
// tile (sm_90), summed through distributed shared memory, and such blocks run 8 warps of one
// 16-row M-group each (shorter serial chains); where that split would be 4 or more blocks, the
// row split instead: 4 blocks a tile of 16 tile rows each, every template row, no cluster, with
// 4 warps summing the windows beside the 8 that multiply; otherwise ks warp groups per block split the rows
// again where the occupancy allows (choose_ks). The tensor-core loop is software-pipelined (next
// step's fragments loaded during the current step's mma) where a row step has one 32-column
// chunk or the grid is small; otherwise the compiler's own unrolling of the chunk loop is faster.
#pragma once
#include "image.h"
#include "status.h"
#include "templatematch.h"
#include "templatematch_layout.h"

namespace cudaprep {
namespace tm {

// The GPU's figures that the launch shape depends on.
struct GpuLimits {
  int cc_major = 0;  // compute capability: tensor cores from 8, clusters from 9
  int sm_count = 1;
  int smem_optin = 48 << 10;  // shared memory a block may opt in to
  int smem_per_sm = 0;        // shared memory of an SM
  int smem_reserved = 0;      // of which the driver reserves this much per block
};

// One instantiation of the frame kernel (the matcher maps it to the function).
struct KernelVariant {
  bool mma = false;  // tensor cores; dp4a otherwise
  int pp = 1;        // tile width / 64
  bool pipelined = false, m16 = false, scan = false;
  bool masked = false;  // four products a block (64-wide tiles, no cluster split)
};

// The occupancy questions the planner asks of the GPU (cudaOccupancy* in the matcher).
class OccupancyQueries {
 public:
  virtual ~OccupancyQueries() = default;
  // Resident blocks per SM of `kernel` with `threads` threads and `smem` bytes of dynamic shared memory.
  virtual Status blocks_per_sm(const KernelVariant& kernel, int threads, int smem, int* blocks) = 0;
  // Clusters of kz such blocks that can be resident at once; false where the GPU gives no answer.
  virtual bool active_clusters(const KernelVariant& kernel, int threads, int smem, int kz, int* clusters) = 0;
};

// Refuses tuning values outside their documented ranges.
Status check_tuning(const MatcherCudaOptions::Tuning& tuning);

// The launch of one frame.
struct FramePlan {
  int pp = 1, kz = 1, ks = 1, smem = 0, x_first = 0;
  int cluster = 1;  // blocks of a thread-block cluster: kz for a template-row split, else 1
  bool pipe = false, m16 = false, scan = false;  // scan: the row split
  int grid_x = 0, grid_y = 0, grid_z = 1;        // tiles across, tiles down, kz
};

class LaunchPlanner {
 public:
  LaunchPlanner() = default;
  LaunchPlanner(const GpuLimits& gpu, const MatcherCudaOptions::Tuning& tuning);

  bool use_mma() const { return use_mma_; }
  bool clusters() const { return clusters_; }
  // The GPU refused a cluster launch: no cluster splits from now on.
  void disable_clusters() { clusters_ = false; }

  // Per template (kp: its width padded to 32): refuses one that does not fit the GPU's shared
  // memory even in the narrowest tile, then fills the occupancy tables through `queries`.
  // A masked template runs on 64-wide tiles without cluster split, and needs the tensor cores.
  Status set_template(int tw, int th, int kp, bool masked, OccupancyQueries& queries);

  FramePlan plan(const Rect& region) const;
  KernelVariant kernel_of(const FramePlan& plan) const;
  static int block_threads(const FramePlan& plan) { return block_threads_of(plan.m16, plan.ks, plan.scan); }

  // Blocks per SM for [tile width / 64 - 1][kz][log2 ks] (0: does not fit), for tests.
  int occupancy(int pp, int kz, int log2_ks) const { return occ_[pp - 1][kz][log2_ks]; }

 private:
  // m16: 8 warps; scan (the row split): the window-sum warps and a warp pair a template-row segment.
  static int block_threads_of(bool m16, int ks, bool scan) {
    return scan ? 32 * (kSumWarps + 2 * kRowSegments) : kGroupThreads * (m16 ? 2 : ks);
  }
  Status compute_occupancy(OccupancyQueries& queries);
  Status compute_solo(OccupancyQueries& queries);
  int choose_ks(int pp, int kz, int blocks) const;

  GpuLimits gpu_;
  bool use_mma_ = false;   // tensor cores (sm_80+); dp4a otherwise
  bool clusters_ = false;  // sm_90+: template rows split over a cluster where the grid is small
  // From MatcherCudaOptions::Tuning (0 / -1: chosen per template and grid).
  int force_pp_ = 0;        // tile_width / 64: 1 (64 wide) or 2 (128 wide)
  int force_ks_ = 0;        // row_split: 1, 2 or 4
  int force_kz_ = 0;        // cluster_split: 1..8
  int force_solo_ = -1;     // solo: 0 or 1 (one block per SM in cluster-split launches)
  bool scan_split_ = true;  // tuning.small_row_split
  int force_pipe_ = -1;     // pipelining: 0 or 1
  bool m16_split_ = true;   // m16 = false: cluster-split blocks keep 4 warps of two M-groups
  // Per template.
  int tw_ = 0, th_ = 0, kp_ = 0;
  bool masked_ = false;
  int occ_[2][kMaxKz + 1][3] = {};  // blocks per SM: [tile width / 64 - 1][kz][log2 ks]; 0: does not fit
  // Per cluster split kz (64-wide tiles): clusters that can be resident at once with one block per
  // SM, and the dynamic shared memory that makes it one (0: not possible).
  int solo_clusters_[kMaxKz + 1] = {}, solo_smem_[kMaxKz + 1] = {};
};

}  // namespace tm
}  // namespace cudaprep
