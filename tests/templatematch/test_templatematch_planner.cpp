// The CUDA template matcher's launch planner, without a GPU: given a GPU's figures (SM count,
// shared memory per SM and per block, compute capability), a model of its occupancy and the
// template and search region, it picks the documented kernel path, tile width, warp-group split
// (ks), cluster split (kz) and shared memory (kernels/templatematch/templatematch_planner.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "templatematch_planner.h"

using namespace cudaprep;
using tm::FramePlan;
using tm::GpuLimits;
using tm::LaunchPlanner;
using Tuning = MatcherCudaOptions::Tuning;
using Override = MatcherCudaOptions::Override;

namespace {

GpuLimits h200() { return GpuLimits{9, 132, 232448, 233472, 1024}; }
GpuLimits a100() { return GpuLimits{8, 108, 166912, 167936, 1024}; }
GpuLimits turing() { return GpuLimits{7, 40, 65536, 65536, 0}; }

// Occupancy as shared memory and threads allow (2048 threads and 32 blocks per SM; registers are
// not modelled); clusters: every SM holds per-SM blocks of any cluster (no GPC limits).
class ModelOccupancy : public tm::OccupancyQueries {
 public:
  explicit ModelOccupancy(const GpuLimits& g, bool answers_clusters = true) : g_(g), answers_(answers_clusters) {}
  Status blocks_per_sm(const tm::KernelVariant&, int threads, int smem, int* blocks) override {
    *blocks = std::min({2048 / threads, g_.smem_per_sm / (smem + g_.smem_reserved), 32});
    return Status();
  }
  bool active_clusters(const tm::KernelVariant& k, int threads, int smem, int kz, int* clusters) override {
    if (!answers_) return false;
    int per_sm = 0;
    blocks_per_sm(k, threads, smem, &per_sm);
    *clusters = g_.sm_count * per_sm / kz;
    return true;
  }

 private:
  GpuLimits g_;
  bool answers_;
};

struct Planned {
  LaunchPlanner planner;
  FramePlan plan;
};

// Plans one search region of a template of tw x th (kp: tw padded to 32).
Planned plan_for(const GpuLimits& gpu, int tw, int th, const Rect& region, const Tuning& tuning = Tuning(),
                 bool answers_clusters = true) {
  Planned p{LaunchPlanner(gpu, tuning), {}};
  ModelOccupancy occupancy(gpu, answers_clusters);
  const Status s = p.planner.set_template(tw, th, (tw + 31) / 32 * 32, false, occupancy);
  EXPECT_TRUE(s.ok()) << s.message();
  p.plan = p.planner.plan(region);
  return p;
}

const Rect kFullHd{0, 0, 1920, 1080};

}  // namespace

TEST(Planner, FullFrameSmallTemplateOnH200) {
  // 64 px: 64-wide tiles (two 32-column chunks), 30 x 16 tiles fill the GPU: no cluster split,
  // compiler-unrolled chunk loop.
  const Planned p = plan_for(h200(), 64, 64, kFullHd);
  EXPECT_TRUE(p.planner.use_mma());
  EXPECT_EQ(p.plan.pp, 1);
  EXPECT_EQ(p.plan.kz, 1);
  EXPECT_FALSE(p.plan.m16);
  EXPECT_FALSE(p.plan.pipe);
  EXPECT_FALSE(p.plan.scan);
  EXPECT_EQ(p.plan.grid_x, 30);
  EXPECT_EQ(p.plan.grid_y, 16);
  EXPECT_EQ(p.plan.grid_z, 1);
  EXPECT_EQ(p.plan.x_first, 0);
  EXPECT_EQ(p.plan.smem, tm::frame_layout(1, 64, 64, 64, 64, p.plan.ks).total);
  EXPECT_EQ(LaunchPlanner::block_threads(p.plan), 128 * p.plan.ks);
}

TEST(Planner, OneChunkTemplatesArePipelined) {
  const Planned p = plan_for(h200(), 16, 16, kFullHd);
  EXPECT_EQ(p.plan.pp, 1);
  EXPECT_EQ(p.plan.kz, 1);
  EXPECT_TRUE(p.plan.pipe);
  EXPECT_EQ(p.plan.ks, 1);  // 16 rows: a split would leave fewer than 16 per group
}

TEST(Planner, WideTilesFor65To128PxTemplatesOnFullGrids) {
  for (int side : {65, 96, 128}) {
    const Planned p = plan_for(h200(), side, side, kFullHd);
    EXPECT_EQ(p.plan.pp, 2) << side;
    EXPECT_EQ(p.plan.kz, 1) << side;
    EXPECT_EQ(p.plan.grid_x, 15) << side;
    EXPECT_LE(p.plan.ks, 2) << side;  // 128-wide blocks split at most in two
  }
  // Not for 64 or 256 px, nor on a grid that does not fill the GPU.
  EXPECT_EQ(plan_for(h200(), 256, 64, kFullHd).plan.pp, 1);
  EXPECT_EQ(plan_for(h200(), 128, 128, Rect{0, 0, 600, 400}).plan.pp, 1);
}

TEST(Planner, SmallRegionRunsTheRowSplit) {
  // 256 x 256 region, 64 px: 4 x 4 tiles. The cluster split would take kz 8 (the largest with at
  // least 8 template rows a block and every cluster resident at once, one block per SM); a split
  // of 4 or more runs as the row split: 4 blocks a tile of 16 tile rows, every template row, no
  // cluster; 8 product warps and 4 window-sum warps.
  const Rect region{832, 412, 256, 256};
  const Planned p = plan_for(h200(), 64, 64, region);
  EXPECT_EQ(p.plan.grid_x, 4);
  EXPECT_EQ(p.plan.grid_y, 4);
  EXPECT_EQ(p.plan.x_first, 832);
  EXPECT_TRUE(p.plan.scan);
  EXPECT_EQ(p.plan.kz, 4);
  EXPECT_EQ(p.plan.grid_z, 4);
  EXPECT_EQ(p.plan.cluster, 1);
  EXPECT_TRUE(p.plan.m16);
  EXPECT_EQ(p.plan.ks, 1);
  EXPECT_TRUE(p.plan.pipe);
  EXPECT_EQ(LaunchPlanner::block_threads(p.plan), 384);
  EXPECT_EQ(p.plan.smem, tm::frame_layout(1, 64, 64, 64, 64, tm::kRowSegments, true).total);
  const tm::KernelVariant k = p.planner.kernel_of(p.plan);
  EXPECT_TRUE(k.mma && k.pipelined && k.m16 && k.scan);
  EXPECT_EQ(k.pp, 1);
  // Without it: the cluster of 8, one block per SM (just over half an SM's shared memory).
  Tuning t;
  t.small_row_split = false;
  const Planned c = plan_for(h200(), 64, 64, region, t);
  EXPECT_FALSE(c.plan.scan);
  EXPECT_EQ(c.plan.kz, 8);
  EXPECT_EQ(c.plan.cluster, 8);
  EXPECT_EQ(LaunchPlanner::block_threads(c.plan), 256);
  EXPECT_GT(c.plan.smem + 1024, 233472 / 2);
  // A forced split of 4 or more keeps its kz.
  t = Tuning();
  t.cluster_split = 6;
  const Planned f = plan_for(h200(), 64, 64, region, t);
  EXPECT_TRUE(f.plan.scan);
  EXPECT_EQ(f.plan.kz, 6);
  EXPECT_EQ(f.plan.cluster, 1);
}

TEST(Planner, ClustersPackedWhereOneBlockPerSmCannotBeHad) {
  // The GPU gives no cluster occupancy: the largest kz that fits, blocks packed as they come.
  Tuning t;
  t.small_row_split = false;
  const Planned p = plan_for(h200(), 64, 64, Rect{832, 412, 256, 256}, t, false);
  EXPECT_EQ(p.plan.kz, 8);
  EXPECT_EQ(p.plan.smem, tm::frame_layout(1, 64, 64, 64, 8, 1).total);
  // solo forced off: the same.
  t.solo = Override::Off;
  EXPECT_EQ(plan_for(h200(), 64, 64, Rect{832, 412, 256, 256}, t).plan.smem, p.plan.smem);
}

TEST(Planner, TinyRegionAndShortTemplate) {
  // One tile; 12 template rows: at least 8 rows a block allows no split.
  const Planned p = plan_for(h200(), 20, 12, Rect{5, 7, 40, 30});
  EXPECT_EQ(p.plan.grid_x * p.plan.grid_y, 1);
  EXPECT_EQ(p.plan.x_first, 0);
  EXPECT_EQ(p.plan.kz, 1);
  EXPECT_EQ(p.plan.ks, 1);
  // 16 rows: a split in two.
  EXPECT_EQ(plan_for(h200(), 20, 16, Rect{5, 7, 40, 30}).plan.kz, 2);
}

TEST(Planner, LargestTemplate) {
  // 256 x 256 fits an H200's 227 KB per block, 64-wide tiles (eight 32-column chunks).
  const Planned p = plan_for(h200(), 256, 256, kFullHd);
  EXPECT_EQ(p.plan.pp, 1);
  EXPECT_EQ(p.plan.kz, 1);
  EXPECT_FALSE(p.plan.pipe);
  EXPECT_LE(p.plan.smem, 232448);
  // On a 300 x 280 frame (one tile) the row split (every template row a block) does not fit: the
  // rows are split over a cluster of 8.
  const Planned one_tile = plan_for(h200(), 256, 256, Rect{0, 0, 300, 280});
  EXPECT_GT(tm::frame_layout(1, 256, 256, 256, 256, tm::kRowSegments, true).total, 232448);
  EXPECT_FALSE(one_tile.plan.scan);
  EXPECT_EQ(one_tile.plan.kz, 8);
  EXPECT_EQ(one_tile.plan.cluster, 8);
  // 128 px: it fits.
  EXPECT_TRUE(plan_for(h200(), 128, 128, Rect{0, 0, 300, 280}).plan.scan);
  // An A100 (163 KB per block) cannot hold it: refused with the figures.
  LaunchPlanner a(a100(), Tuning());
  ModelOccupancy occupancy(a100());
  const Status s = a.set_template(256, 256, 256, false, occupancy);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "template 256x256 needs more shared memory than this GPU offers (180480 > 166912 bytes)");
}

TEST(Planner, OneSm) {
  GpuLimits g = h200();
  g.sm_count = 1;
  // Every grid fills the GPU: no cluster split, 128-wide tiles for 96 px.
  EXPECT_EQ(plan_for(g, 64, 64, Rect{0, 0, 200, 150}).plan.kz, 1);
  EXPECT_EQ(plan_for(g, 96, 96, Rect{0, 0, 200, 150}).plan.pp, 2);
  // One tile of one block: nothing to split it over.
  const Planned p = plan_for(g, 32, 64, Rect{0, 0, 64, 64});
  EXPECT_EQ(p.plan.kz, 1);
  EXPECT_EQ(p.plan.grid_x * p.plan.grid_y, 1);
}

TEST(Planner, NoClustersBelowCc9) {
  const Planned p = plan_for(a100(), 64, 64, Rect{832, 412, 256, 256});
  EXPECT_TRUE(p.planner.use_mma());
  EXPECT_FALSE(p.planner.clusters());
  EXPECT_EQ(p.plan.kz, 1);
  EXPECT_FALSE(p.plan.m16);
  EXPECT_GE(p.plan.ks, 1);
  // Not even when forced.
  Tuning t;
  t.cluster_split = 4;
  EXPECT_EQ(plan_for(a100(), 64, 64, Rect{832, 412, 256, 256}, t).plan.kz, 1);
}

TEST(Planner, Dp4aBelowCc8OrForced) {
  for (const Planned& p : {plan_for(turing(), 32, 32, kFullHd), plan_for(h200(), 32, 32, kFullHd, [] {
                             Tuning t;
                             t.dp4a = true;
                             return t;
                           }())}) {
    EXPECT_FALSE(p.planner.use_mma());
    EXPECT_EQ(p.plan.pp, 2);  // the dp4a kernel covers 128 positions a row
    EXPECT_EQ(p.plan.kz, 1);
    EXPECT_EQ(p.plan.ks, 1);
    EXPECT_FALSE(p.plan.pipe);
    EXPECT_EQ(LaunchPlanner::block_threads(p.plan), 128);
    EXPECT_FALSE(p.planner.kernel_of(p.plan).mma);
    // Only the (128 wide, kz 1, ks 1) shape exists.
    EXPECT_GT(p.planner.occupancy(2, 1, 0), 0);
    EXPECT_EQ(p.planner.occupancy(1, 1, 0), 0);
    EXPECT_EQ(p.planner.occupancy(2, 2, 0), 0);
  }
  // sm_75 offers 64 KB a block: a 64 px template's 128-wide tile does not fit.
  LaunchPlanner t(turing(), Tuning());
  ModelOccupancy occupancy(turing());
  EXPECT_EQ(t.set_template(64, 64, 64, false, occupancy).message(),
            "template 64x64 needs more shared memory than this GPU offers (75904 > 65536 bytes)");
}

TEST(Planner, ForcedShapes) {
  Tuning t;
  t.tile_width = 128;
  t.row_split = 1;
  const Planned wide = plan_for(h200(), 64, 64, kFullHd, t);
  EXPECT_EQ(wide.plan.pp, 2);
  EXPECT_EQ(wide.plan.ks, 1);
  EXPECT_EQ(wide.plan.grid_x, 15);

  t = Tuning();
  t.row_split = 4;
  EXPECT_EQ(plan_for(h200(), 64, 64, kFullHd, t).plan.ks, 4);
  EXPECT_EQ(plan_for(h200(), 64, 64, kFullHd, t).plan.smem, tm::frame_layout(1, 64, 64, 64, 64, 4).total);
  EXPECT_EQ(plan_for(h200(), 16, 2, kFullHd, t).plan.ks, 2);  // no more groups than template rows

  t = Tuning();
  t.cluster_split = 3;  // forced on a full frame too
  const Planned kz3 = plan_for(h200(), 64, 64, kFullHd, t);
  EXPECT_EQ(kz3.plan.kz, 3);
  EXPECT_EQ(kz3.plan.grid_z, 3);
  EXPECT_TRUE(kz3.plan.m16);
  EXPECT_TRUE(kz3.plan.pipe);
  t.cluster_split = 8;
  EXPECT_EQ(plan_for(h200(), 9, 5, kFullHd, t).plan.kz, 5);  // no more blocks than template rows

  t = Tuning();
  t.cluster_split = 3;
  t.solo = Override::On;
  const Planned solo = plan_for(h200(), 64, 64, kFullHd, t);
  EXPECT_GT(solo.plan.smem + 1024, 233472 / 2);

  t = Tuning();
  t.m16 = false;
  t.small_row_split = false;
  const Planned two_groups = plan_for(h200(), 64, 64, Rect{832, 412, 256, 256}, t);
  EXPECT_GT(two_groups.plan.kz, 1);
  EXPECT_FALSE(two_groups.plan.m16);
  EXPECT_FALSE(two_groups.plan.scan);

  t = Tuning();
  t.small_row_split = false;
  EXPECT_FALSE(plan_for(h200(), 64, 64, Rect{832, 412, 256, 256}, t).plan.scan);

  t = Tuning();
  t.pipelining = Override::Off;
  EXPECT_FALSE(plan_for(h200(), 16, 16, kFullHd, t).plan.pipe);
  t.pipelining = Override::On;
  EXPECT_TRUE(plan_for(h200(), 64, 64, kFullHd, t).plan.pipe);
}

TEST(Planner, InvalidTuningIsRefused) {
  Tuning t;
  EXPECT_TRUE(tm::check_tuning(t).ok());
  t.tile_width = 96;
  EXPECT_EQ(tm::check_tuning(t).message(), "TemplateMatcherCuda: tuning.tile_width 96 is invalid");
  t = Tuning();
  t.row_split = 3;
  EXPECT_FALSE(tm::check_tuning(t).ok());
  t = Tuning();
  t.cluster_split = 9;
  EXPECT_FALSE(tm::check_tuning(t).ok());
  t.cluster_split = 8;
  EXPECT_TRUE(tm::check_tuning(t).ok());
}

// A masked template: 64-wide tensor-core tiles, never a cluster split (not even on a small region
// or when forced), no software pipelining, its four products' shared memory; refused without tensor cores and where it
// does not fit, with the figures.
TEST(Planner, MaskedTemplates) {
  for (const Rect& region : {kFullHd, Rect{832, 412, 320, 320}}) {
    Tuning t;
    t.cluster_split = 4;
    t.tile_width = 128;
    for (const Tuning& tuning : {Tuning(), t}) {
      LaunchPlanner planner(h200(), tuning);
      ModelOccupancy occupancy(h200());
      const Status s = planner.set_template(64, 64, 64, true, occupancy);
      ASSERT_TRUE(s.ok()) << s.message();
      const FramePlan plan = planner.plan(region);
      EXPECT_EQ(plan.pp, 1);
      EXPECT_EQ(plan.kz, 1);
      EXPECT_FALSE(plan.m16);
      EXPECT_FALSE(plan.scan);
      EXPECT_FALSE(plan.pipe);
      EXPECT_TRUE(planner.kernel_of(plan).masked);
      EXPECT_EQ(plan.smem, tm::frame_layout(1, 64, 64, 64, 64, plan.ks, false, true).total);
      EXPECT_GT(plan.smem, tm::frame_layout(1, 64, 64, 64, 64, plan.ks).total);
    }
  }
  // An unmasked template's plan says so.
  EXPECT_FALSE(plan_for(h200(), 64, 64, kFullHd).planner.kernel_of(plan_for(h200(), 64, 64, kFullHd).plan).masked);
  LaunchPlanner t(turing(), Tuning());
  ModelOccupancy turing_occupancy(turing());
  EXPECT_EQ(t.set_template(16, 16, 32, true, turing_occupancy).message(),
            "masked template 16x16 needs the tensor cores (compute capability 8.0 or newer)");
  LaunchPlanner h(h200(), Tuning());
  ModelOccupancy occupancy(h200());
  const int need = tm::frame_layout(1, 200, 200, 224, 200, 1, false, true).total;
  EXPECT_EQ(h.set_template(200, 200, 224, true, occupancy).message(),
            "masked template 200x200 needs more shared memory than this GPU offers (" + std::to_string(need) +
                " > 232448 bytes)");
  EXPECT_TRUE(h.set_template(128, 128, 128, true, occupancy).ok());
}
