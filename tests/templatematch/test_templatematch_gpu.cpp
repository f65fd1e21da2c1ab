// GPU template matching, gray conversion and box drawing against the CPU path: identical scores
// (bit for bit), identical matches, identical bytes. No OpenCV, no GStreamer.
// Both correlation kernels are covered: tensor cores (default on sm_80+) and dp4a (forced through
// MatcherCudaOptions::Tuning), and both places of the non-maximum suppression: every test that
// matches also runs with every candidate list suppressed in the kernel (NmsInKernel).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <tuple>
#include <vector>
#include <string>

#include "cuda_device.h"
#include "templatematch.h"
#include "tm_test_util.h"

using namespace cudaprep;
using tmtest::Gray;

namespace {

#define CUDA_OK(expr)                                                      \
  do {                                                                     \
    cudaError_t e_ = (expr);                                               \
    ASSERT_EQ(e_, cudaSuccess) << #expr << ": " << cudaGetErrorString(e_); \
  } while (0)

// A device copy of a host image, with its own pitch (cudaMallocPitch) or a given one.
struct DevGray {
  uint8_t* base = nullptr;
  uint8_t* data = nullptr;
  size_t pitch = 0;
  int width = 0, height = 0;
  DevGray() = default;
  DevGray(const DevGray&) = delete;
  DevGray& operator=(const DevGray&) = delete;
  ~DevGray() {
    if (base) cudaFree(base);
  }
  // offset / forced_pitch: make a frame a texture cannot take directly (the staging path).
  void upload(const Gray& g, size_t forced_pitch = 0, size_t offset = 0) {
    width = g.width;
    height = g.height;
    if (forced_pitch) {
      pitch = forced_pitch;
      ASSERT_EQ(cudaMalloc(&base, pitch * height + offset + 64), cudaSuccess);
    } else {
      ASSERT_EQ(cudaMallocPitch(&base, &pitch, width, height), cudaSuccess);
    }
    data = base + offset;
    ASSERT_EQ(cudaMemcpy2D(data, pitch, g.px.data(), g.stride, width, height, cudaMemcpyHostToDevice), cudaSuccess);
  }
  GrayView view() const { return GrayView{data, static_cast<int64_t>(pitch), width, height}; }
};

// Mma: the defaults (64-wide tiles, template-row split chosen per size); Mma128: 128-wide tiles,
// no split; MmaKs4: every template split over 4 warp groups; Dp4a: the pre-Ampere kernel.
enum class Path { Mma, Mma128, MmaKs4, Dp4a };

MatcherCudaOptions options_for(Path p) {
  MatcherCudaOptions o;
  if (p == Path::Dp4a) o.tuning.dp4a = true;
  if (p == Path::Mma128) {
    o.tuning.tile_width = 128;
    o.tuning.row_split = 1;
  }
  if (p == Path::MmaKs4) o.tuning.row_split = 4;
  return o;
}

// The whole suite's second run: every candidate list that the kernel can hold is suppressed there.
MatcherCudaOptions with_nms_in_kernel(MatcherCudaOptions o, bool in_kernel) {
  if (in_kernel) o.tuning.nms_on_host_up_to = 0;
  return o;
}
const char* nms_suffix(bool in_kernel) { return in_kernel ? "NmsInKernel" : ""; }

const char* path_name(Path p) {
  switch (p) {
    case Path::Mma: return "tensor cores";
    case Path::Mma128: return "tensor cores, 128-wide tiles";
    case Path::MmaKs4: return "tensor cores, 4-way row split";
    default: return "dp4a";
  }
}

void expect_same_matches(const std::vector<Match>& a, const std::vector<Match>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].x, b[i].x) << i;
    EXPECT_EQ(a[i].y, b[i].y) << i;
    EXPECT_EQ(a[i].width, b[i].width);
    EXPECT_EQ(a[i].height, b[i].height);
    EXPECT_EQ(a[i].score, b[i].score) << i;
    EXPECT_EQ(a[i].sub_x, b[i].sub_x) << i;
    EXPECT_EQ(a[i].sub_y, b[i].sub_y) << i;
  }
}

// Scores of the whole map (and of one search region), and the matches, GPU vs CPU.
void compare_paths(const Gray& frame, const Gray& templ, const MatcherCudaOptions& options, const std::string& what,
                   size_t forced_pitch = 0, size_t offset = 0, double threshold = 0.3) {
  SCOPED_TRACE(what);
  TemplateMatcherCpu cpu;
  ASSERT_TRUE(cpu.set_template(templ.view()).ok());
  DevGray dev;
  dev.upload(frame, forced_pitch, offset);
  void* stream = nullptr;
  ASSERT_TRUE(cuda::stream_create(&stream).ok());
  {
    TemplateMatcherCuda gpu;
    Status s = gpu.configure(frame.width, frame.height, stream, options);
    ASSERT_TRUE(s.ok()) << s.message();
    s = gpu.set_template(templ.view());
    ASSERT_TRUE(s.ok()) << s.message();

    std::vector<float> a, b;
    int aw, ah, bw, bh;
    ASSERT_TRUE(cpu.score_map(frame.view(), Rect{}, &a, &aw, &ah).ok());
    s = gpu.score_map(dev.view(), Rect{}, &b, &bw, &bh);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_EQ(aw, bw);
    ASSERT_EQ(ah, bh);
    size_t diff = 0, first = a.size();
    double max_diff = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) {
        ++diff;
        if (first == a.size()) first = i;
        max_diff = std::max(max_diff, std::abs(double(a[i]) - double(b[i])));
      }
    }
    EXPECT_EQ(diff, 0u) << "of " << a.size() << " scores; max difference " << max_diff << "; first at (" << (first % aw)
                        << "," << (first / aw) << ") cpu " << (first < a.size() ? a[first] : 0) << " gpu "
                        << (first < a.size() ? b[first] : 0);

    MatchSettings ms;
    ms.threshold = threshold;
    ms.max_matches = 16;
    std::vector<Match> ma, mb;
    ASSERT_TRUE(cpu.match(frame.view(), ms, &ma).ok());
    s = gpu.match(dev.view(), ms, &mb);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_FALSE(ma.empty());
    expect_same_matches(ma, mb);

    // A search region with odd offsets.
    if (frame.width > templ.width + 10 && frame.height > templ.height + 8) {
      ms.search = Rect{3, 5, frame.width - 7, frame.height - 6};
      ASSERT_TRUE(cpu.match(frame.view(), ms, &ma).ok());
      ASSERT_TRUE(gpu.match(dev.view(), ms, &mb).ok());
      expect_same_matches(ma, mb);
      ASSERT_TRUE(cpu.score_map(frame.view(), ms.search, &a, &aw, &ah).ok());
      ASSERT_TRUE(gpu.score_map(dev.view(), ms.search, &b, &bw, &bh).ok());
      ASSERT_EQ(a.size(), b.size());
      EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << "search region map";
    }
  }
  cuda::stream_destroy(stream);
}

// (path, every candidate list suppressed in the kernel)
class GpuMatch : public ::testing::TestWithParam<std::tuple<Path, bool>> {
 protected:
  Path path() const { return std::get<0>(GetParam()); }
  MatcherCudaOptions options() const { return with_nms_in_kernel(options_for(path()), std::get<1>(GetParam())); }
};

}  // namespace

TEST_P(GpuMatch, SquareTemplatesRandomAndStructured) {
  const int sides[] = {8, 16, 31, 32, 64, 128, 256};
  uint32_t seed = 100;
  for (int side : sides) {
    // Odd frame sizes, a few tiles wide and tall; small enough for the CPU reference.
    const int w = side * 2 + 37 + (side < 64 ? 200 : 0), h = side + 53 + (side < 64 ? 100 : 0);
    const int ty = std::min(h / 5, h - side);
    Gray r = tmtest::random_gray(w, h, seed++);
    compare_paths(r, tmtest::crop(r, w / 3, ty, side, side), options(),
                  std::string(path_name(path())) + " random " + std::to_string(side));
    Gray s = tmtest::structured_gray(w, h, seed++);
    compare_paths(s, tmtest::crop(s, std::min(w / 2, w - side), std::min(h / 3, h - side), side, side), options(),
                  std::string(path_name(path())) + " structured " + std::to_string(side));
  }
}

TEST_P(GpuMatch, NonSquareTemplatesAndLargerFrames) {
  const int dims[][4] = {{8, 31, 401, 233}, {37, 16, 389, 211}, {200, 9, 517, 97}, {5, 3, 129, 67}, {64, 64, 643, 479}};
  uint32_t seed = 300;
  for (const auto& d : dims) {
    Gray f = tmtest::structured_gray(d[2], d[3], seed++);
    compare_paths(f, tmtest::crop(f, std::min(d[2] / 4, d[2] - d[0]), std::min(d[3] / 3, d[3] - d[1]), d[0], d[1]),
                  options(), std::string(path_name(path())) + " " + std::to_string(d[0]) + "x" + std::to_string(d[1]));
  }
}

TEST_P(GpuMatch, BrightFrameWithLargestTemplate) {
  // sum(T * I) of a 256 x 256 window reaches 65536 * 255^2 ~ 4.26e9: above 2^31, below 2^32.
  Gray f = tmtest::random_gray(300, 280, 7, 200, 255);
  compare_paths(f, tmtest::crop(f, 20, 10, 256, 256), options(), std::string(path_name(path())) + " bright 256");
}

TEST_P(GpuMatch, PitchesTexturesCannotTake) {
  // An odd pitch and an odd start: the frame is copied to the staging buffer first.
  Gray f = tmtest::structured_gray(203, 151, 9);
  compare_paths(f, tmtest::crop(f, 60, 40, 33, 27), options(), std::string(path_name(path())) + " odd pitch", 211, 3);
  compare_paths(f, tmtest::crop(f, 60, 40, 33, 27), options(), std::string(path_name(path())) + " odd start", 256, 5);
}

std::string gpu_match_name(const ::testing::TestParamInfo<std::tuple<Path, bool>>& i) {
  const char* names[] = {"TensorCores", "TensorCores128", "TensorCoresKs4", "Dp4a"};
  return std::string(names[static_cast<int>(std::get<0>(i.param))]) + nms_suffix(std::get<1>(i.param));
}

INSTANTIATE_TEST_SUITE_P(Kernels, GpuMatch,
                         ::testing::Combine(::testing::Values(Path::Mma, Path::Mma128, Path::MmaKs4, Path::Dp4a),
                                            ::testing::Bool()),
                         gpu_match_name);

namespace {

// Cluster-split cases: a region-sized frame with a 64 px template; odd sizes whose tiles are
// clipped on both sides; a tall thin template (th = 8 kz at kz 8: 8 template rows a block); a wide
// one (the row split's windows reach 191 columns).
void compare_cluster_split(const MatcherCudaOptions& o, uint32_t seed, const std::string& what) {
  struct Case {
    int w, h, tw, th, tx, ty;
    bool structured;
  };
  const Case cases[] = {{256, 256, 64, 64, 90, 70, true},
                        {203, 171, 37, 61, 101, 57, false},
                        {181, 150, 9, 64, 150, 40, true},
                        {311, 263, 128, 97, 60, 80, true}};
  for (const Case& c : cases) {
    Gray f = c.structured ? tmtest::structured_gray(c.w, c.h, seed++) : tmtest::random_gray(c.w, c.h, seed++);
    compare_paths(f, tmtest::crop(f, c.tx, c.ty, c.tw, c.th), o,
                  what + " " + std::to_string(c.tw) + "x" + std::to_string(c.th));
  }
}

}  // namespace

// Every split of a tile over kz blocks (non-powers of two too: uneven template-row and tile-row
// shares), with and without one block per SM, as a cluster split and, for kz >= 4, as the row
// split, against the CPU. Forced splits apply whatever the grid size (sm_90; elsewhere the
// default path runs).
// (kz, every candidate list suppressed in the kernel); one instance each for racecheck filters.
class GpuClusterSplit : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(GpuClusterSplit, EqualsCpu) {
  const int kz = std::get<0>(GetParam());
  uint32_t seed = 900 + 100 * kz;
  for (bool solo : {false, true})
    for (bool row_split : {false, true}) {
      MatcherCudaOptions o = with_nms_in_kernel(MatcherCudaOptions(), std::get<1>(GetParam()));
      o.tuning.cluster_split = kz;
      o.tuning.solo = solo ? MatcherCudaOptions::Override::On : MatcherCudaOptions::Override::Off;
      o.tuning.small_row_split = row_split;
      compare_cluster_split(
          o, seed,
          "kz " + std::to_string(kz) + " solo " + std::to_string(solo) + " row split " + std::to_string(row_split));
      seed += 3;
    }
}

INSTANTIATE_TEST_SUITE_P(Kz, GpuClusterSplit, ::testing::Combine(::testing::Range(2, 9), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<int, bool>>& i) {
                           return "Kz" + std::to_string(std::get<0>(i.param)) + nms_suffix(std::get<1>(i.param));
                         });

// The split kernels the defaults never launch: without software pipelining (one 16-row M-group
// per warp; cluster splits, and at kz 8 also the row split), and with two M-groups per warp.
TEST(GpuClusterSplitVariants, NotPipelinedOrTwoMGroupsEqualsCpu) {
  for (int kz : {3, 8}) {
    MatcherCudaOptions o;
    o.tuning.cluster_split = kz;
    o.tuning.pipelining = MatcherCudaOptions::Override::Off;
    for (bool row_split : {false, true}) {
      o.tuning.small_row_split = row_split;
      compare_cluster_split(o, 2000 + 10 * kz,
                            "kz " + std::to_string(kz) + " not pipelined, row split " + std::to_string(row_split));
    }
    o = MatcherCudaOptions();
    o.tuning.cluster_split = kz;
    o.tuning.m16 = false;
    compare_cluster_split(o, 2100 + 10 * kz, "kz " + std::to_string(kz) + " two M-groups per warp");
  }
}

TEST(GpuMatchMisc, PastedCopiesAndThresholds) {
  Gray f = tmtest::random_gray(640, 360, 1, 100, 140);
  Gray t = tmtest::random_gray(40, 30, 2);
  const int at[][2] = {{10, 10}, {300, 12}, {590, 320}, {200, 200}, {450, 100}};
  for (const auto& a : at) tmtest::paste(f, t, a[0], a[1]);
  DevGray dev;
  dev.upload(f);
  TemplateMatcherCpu cpu;
  TemplateMatcherCuda gpu;
  ASSERT_TRUE(cpu.set_template(t.view()).ok());
  void* stream = nullptr;
  ASSERT_TRUE(cuda::stream_create(&stream).ok());
  ASSERT_TRUE(gpu.configure(640, 360, stream).ok());  // own stream: replays of cached graphs with changing settings
  ASSERT_TRUE(gpu.set_template(t.view()).ok());
  for (double thr : {0.5, 0.9, 1.01, -1.0}) {
    for (int maxm : {1, 3, 64}) {
      MatchSettings s;
      s.threshold = thr;
      s.max_matches = maxm;
      std::vector<Match> a, b;
      ASSERT_TRUE(cpu.match(f.view(), s, &a).ok());
      ASSERT_TRUE(gpu.match(dev.view(), s, &b).ok());
      expect_same_matches(a, b);
      if (thr == 0.5) {
        EXPECT_EQ(b.size(), size_t(std::min(maxm, 5)));
      }
    }
  }
  // Replays of the cached graphs, in another order, and a search region.
  for (double thr : {0.9, 0.5, 0.9}) {
    MatchSettings s;
    s.threshold = thr;
    s.max_matches = 64;
    s.search = thr == 0.5 ? Rect{0, 0, 400, 250} : Rect{};
    std::vector<Match> a, b;
    ASSERT_TRUE(cpu.match(f.view(), s, &a).ok());
    ASSERT_TRUE(gpu.match(dev.view(), s, &b).ok());
    expect_same_matches(a, b);
  }
  gpu.release();
  cuda::stream_destroy(stream);
}

// Every wait gives the CPU's matches, frame after frame (the flag is reset and the event
// re-recorded each time), and blocking is the default.
TEST(GpuMatchMisc, EveryWaitEqualsCpu) {
  EXPECT_EQ(MatcherCudaOptions().wait, GpuWait::Blocking);
  Gray f = tmtest::random_gray(640, 360, 11, 60, 200);
  Gray t = tmtest::random_gray(64, 64, 12);
  tmtest::paste(f, t, 100, 50);
  tmtest::paste(f, t, 500, 250);
  DevGray dev;
  dev.upload(f);
  TemplateMatcherCpu cpu;
  ASSERT_TRUE(cpu.set_template(t.view()).ok());
  MatchSettings s;
  s.threshold = 0.5;
  s.max_matches = 4;
  std::vector<Match> a;
  ASSERT_TRUE(cpu.match(f.view(), s, &a).ok());
  ASSERT_EQ(a.size(), 2u);
  void* stream = nullptr;
  ASSERT_TRUE(cuda::stream_create(&stream).ok());
  for (GpuWait wait : {GpuWait::Blocking, GpuWait::Spin, GpuWait::StreamSync, GpuWait::Poll}) {
    SCOPED_TRACE("wait " + std::to_string(static_cast<int>(wait)));
    TemplateMatcherCuda gpu;
    MatcherCudaOptions o;
    o.wait = wait;
    ASSERT_TRUE(gpu.configure(640, 360, stream, o).ok());
    ASSERT_TRUE(gpu.set_template(t.view()).ok());
    for (int frame = 0; frame < 20; ++frame) {
      std::vector<Match> b;
      ASSERT_TRUE(gpu.match(dev.view(), s, &b).ok());
      expect_same_matches(a, b);
    }
  }
  cuda::stream_destroy(stream);
}

class GpuCache : public ::testing::TestWithParam<bool> {};

TEST_P(GpuCache, TextureCacheReuseAcrossBuffers) {
  Gray f = tmtest::structured_gray(320, 240, 4);
  Gray t = tmtest::crop(f, 100, 80, 24, 24);
  TemplateMatcherCuda gpu;
  void* stream = nullptr;  // the legacy stream: plain launches; an own stream: CUDA graphs (the default)
  if (GetParam()) {
    ASSERT_TRUE(cuda::stream_create(&stream).ok());
  }
  ASSERT_TRUE(gpu.configure(320, 240, stream).ok());
  ASSERT_TRUE(gpu.set_template(t.view()).ok());
  TemplateMatcherCpu cpu;
  ASSERT_TRUE(cpu.set_template(t.view()).ok());
  std::vector<Match> want;
  MatchSettings s;
  ASSERT_TRUE(cpu.match(f.view(), s, &want).ok());
  // A pool of 3 buffers cycled 4 times: 3 texture objects, then only hits.
  DevGray pool[3];
  for (auto& d : pool) d.upload(f);
  for (int round = 0; round < 4; ++round)
    for (auto& d : pool) {
      std::vector<Match> got;
      ASSERT_TRUE(gpu.match(d.view(), s, &got).ok());
      expect_same_matches(want, got);
    }
  auto st = gpu.texture_cache_stats();
  EXPECT_EQ(st.created, 3);
  EXPECT_EQ(st.entries, 3);
  EXPECT_EQ(st.hits, 9);
  // 20 distinct buffers: the cache keeps 16 and stays correct.
  DevGray many[20];
  for (auto& d : many) d.upload(f);
  for (int round = 0; round < 2; ++round)
    for (auto& d : many) {
      std::vector<Match> got;
      ASSERT_TRUE(gpu.match(d.view(), s, &got).ok());
      expect_same_matches(want, got);
    }
  st = gpu.texture_cache_stats();
  EXPECT_EQ(st.entries, 16);
  EXPECT_EQ(st.created, 3 + 40);  // LRU over a cycle longer than the cache: every lookup misses
  // release() drops them all; a later configure starts afresh.
  gpu.release();
  EXPECT_EQ(gpu.texture_cache_stats().entries, 0);
  ASSERT_TRUE(gpu.configure(320, 240, stream).ok());
  std::vector<Match> got;
  ASSERT_TRUE(gpu.match(pool[0].view(), s, &got).ok());
  expect_same_matches(want, got);
  gpu.release();
  if (stream) cuda::stream_destroy(stream);
}

INSTANTIATE_TEST_SUITE_P(Streams, GpuCache, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return std::string(i.param ? "OwnStream" : "LegacyStream");
                         });

// A tracking window moves every frame: each new window takes over the launch graph of its
// texture and launch shape with new parameters (region) instead of a capture of its own, and every
// frame still gets the CPU's matches. A buffer pool searched over one region keeps a graph per
// buffer, replayed as it is.
TEST(GpuCache, MovingWindowsUpdateLaunchGraphs) {
  Gray f = tmtest::structured_gray(640, 360, 9);
  Gray t = tmtest::crop(f, 300, 150, 32, 32);
  TemplateMatcherCpu cpu;
  ASSERT_TRUE(cpu.set_template(t.view()).ok());
  void* stream = nullptr;
  ASSERT_TRUE(cuda::stream_create(&stream).ok());
  TemplateMatcherCuda gpu;
  ASSERT_TRUE(gpu.configure(640, 360, stream).ok());
  ASSERT_TRUE(gpu.set_template(t.view()).ok());
  DevGray pool[2];
  for (auto& d : pool) d.upload(f);
  MatchSettings s;
  s.threshold = 0.6;
  s.max_matches = 3;
  auto check = [&](const DevGray& d, const Rect& window) {
    s.search = window;
    std::vector<Match> want, got;
    ASSERT_TRUE(cpu.match(f.view(), s, &want).ok());
    ASSERT_TRUE(gpu.match(d.view(), s, &got).ok());
    expect_same_matches(want, got);
  };
  const Rect whole{0, 0, 640, 360};
  for (auto& d : pool) check(d, whole);  // each texture's first frame: a plain launch
  EXPECT_EQ(gpu.launch_graph_stats().captured, 0);
  for (int frame = 0; frame < 40; ++frame) {  // more windows than the matcher keeps graphs of
    SCOPED_TRACE("frame " + std::to_string(frame));
    check(pool[frame % 2], Rect{200 + 3 * frame, 100 + frame, 160, 128});
  }
  // A capture per texture and launch shape (the planner's tiles of a window depend on where it
  // lies), the other frames updates.
  const TemplateMatcherCuda::LaunchGraphStats moved = gpu.launch_graph_stats();
  EXPECT_EQ(moved.captured + moved.updated, 40);
  EXPECT_LE(moved.captured, 6);
  EXPECT_EQ(moved.replayed, 0);
  // The pool over the whole frame: a graph each, then replays.
  for (int frame = 0; frame < 6; ++frame) check(pool[frame % 2], whole);
  const TemplateMatcherCuda::LaunchGraphStats pooled = gpu.launch_graph_stats();
  EXPECT_EQ(pooled.captured, moved.captured + 2);
  EXPECT_EQ(pooled.replayed, 4);
  EXPECT_EQ(pooled.updated, moved.updated);
  gpu.release();
  cuda::stream_destroy(stream);
}

// Both suppression paths give the CPU's matches: in the kernel (long candidate lists; a bound of 0
// forces it for short ones too) and on the host (short lists, lists longer than the kernel keeps
// in registers, or a large bound). Threshold -1 makes every cell a candidate.
TEST(GpuMatchMisc, SuppressionInKernelOrOnHostEqualsCpu) {
  Gray f = tmtest::random_gray(640, 360, 3, 40, 220);
  const Gray templates[] = {tmtest::random_gray(8, 6, 4), tmtest::random_gray(40, 30, 5),
                            tmtest::random_gray(64, 64, 6)};
  tmtest::paste(f, templates[1], 100, 50);
  tmtest::paste(f, templates[1], 400, 200);
  DevGray dev;
  dev.upload(f);
  void* stream = nullptr;
  ASSERT_TRUE(cuda::stream_create(&stream).ok());
  for (unsigned bound : {0u, 64u, 100000u}) {
    for (const Gray& t : templates) {
      SCOPED_TRACE("bound " + std::to_string(bound) + ", template " + std::to_string(t.width) + "x" +
                   std::to_string(t.height));
      TemplateMatcherCpu cpu;
      TemplateMatcherCuda gpu;
      ASSERT_TRUE(cpu.set_template(t.view()).ok());
      MatcherCudaOptions o;
      o.tuning.nms_on_host_up_to = bound;
      ASSERT_TRUE(gpu.configure(640, 360, stream, o).ok());
      ASSERT_TRUE(gpu.set_template(t.view()).ok());
      for (double thr : {-1.0, 0.2, 0.95}) {
        for (int maxm : {1, 5, 64}) {
          MatchSettings s;
          s.threshold = thr;
          s.max_matches = maxm;
          std::vector<Match> a, b;
          ASSERT_TRUE(cpu.match(f.view(), s, &a).ok());
          for (int rep = 0; rep < 2; ++rep) {  // the second time from the cached graph
            ASSERT_TRUE(gpu.match(dev.view(), s, &b).ok());
            expect_same_matches(a, b);
          }
          if (thr == -1.0 && maxm <= 5) {
            EXPECT_EQ(b.size(), size_t(maxm));
          }
        }
      }
    }
  }
  cuda::stream_destroy(stream);
}

TEST(GpuMatchMisc, Errors) {
  TemplateMatcherCuda gpu;
  Gray flat(16, 16);
  std::fill(flat.px.begin(), flat.px.end(), 9);
  EXPECT_EQ(gpu.set_template(flat.view()).message(),
            "template has no variance (flat): TM_CCOEFF_NORMED is undefined for it");
  Gray f = tmtest::random_gray(100, 80, 3);
  DevGray dev;
  dev.upload(f);
  std::vector<Match> out;
  EXPECT_FALSE(gpu.match(dev.view(), MatchSettings{}, &out).ok());
  ASSERT_TRUE(gpu.configure(64, 64, nullptr).ok());
  ASSERT_TRUE(gpu.set_template(tmtest::crop(f, 0, 0, 10, 10).view()).ok());
  EXPECT_EQ(gpu.match(dev.view(), MatchSettings{}, &out).message(), "frame 100x80 is larger than the configured 64x64");
  ASSERT_TRUE(gpu.configure(100, 80, nullptr).ok());
  MatchSettings s;
  s.search = Rect{95, 0, 10, 10};
  EXPECT_EQ(gpu.match(dev.view(), s, &out).message(), "search region (95,0 10x10) lies outside the frame 100x80");
  s.search = Rect{};
  EXPECT_TRUE(gpu.match(dev.view(), s, &out).ok());
}

// ---------------------------------------------------------------------------------------------
// to_gray and draw_boxes

namespace {
struct DevImage {
  PixelFormat format;
  int width, height;
  std::vector<std::vector<uint8_t>> host;  // per plane, pitch * rows
  int64_t pitch[3] = {0, 0, 0};
  int rows[3] = {0, 0, 0};
  uint8_t* dev[3] = {nullptr, nullptr, nullptr};
  DevImage(PixelFormat f, int w, int h, uint32_t seed) : format(f), width(w), height(h) {
    const int n = plane_count(f);
    std::mt19937 rng(seed);
    for (int i = 0; i < n; ++i) {
      pitch[i] = plane_row_bytes(f, i, w) + 13;  // odd padding that must survive
      rows[i] = static_cast<int>(plane_rows(f, i, h));
      host.emplace_back(pitch[i] * rows[i]);
      for (auto& b : host.back()) b = uint8_t(rng());
      EXPECT_EQ(cudaMalloc(&dev[i], host.back().size()), cudaSuccess);
      EXPECT_EQ(cudaMemcpy(dev[i], host.back().data(), host.back().size(), cudaMemcpyHostToDevice), cudaSuccess);
    }
  }
  ~DevImage() {
    for (auto* p : dev)
      if (p) cudaFree(p);
  }
  ImageView host_view() {
    ImageView v;
    v.format = format;
    v.width = width;
    v.height = height;
    for (size_t i = 0; i < host.size(); ++i) v.planes[i] = Plane{host[i].data(), pitch[i]};
    return v;
  }
  ImageView dev_view() {
    ImageView v = host_view();
    for (size_t i = 0; i < host.size(); ++i) v.planes[i].data = dev[i];
    return v;
  }
  std::vector<uint8_t> download(int i) {
    std::vector<uint8_t> out(host[i].size());
    EXPECT_EQ(cudaMemcpy(out.data(), dev[i], out.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }
};
// Every format of the table (YUY2, UYVY, NV21 and P010 included).
const std::vector<PixelFormat> kAllFormats = [] {
  std::vector<PixelFormat> formats;
  for (const PixelFormatInfo& f : kPixelFormats) formats.push_back(f.format);
  return formats;
}();
}  // namespace

TEST(GpuGray, EqualsCpuForEveryFormat) {
  for (PixelFormat f : kAllFormats) {
    DevImage img(f, 333, 97, 5);
    const int64_t ds = 340;
    std::vector<uint8_t> want(ds * 97, 0), got(ds * 97, 0);
    ASSERT_TRUE(to_gray_cpu(img.host_view(), want.data(), ds).ok());
    uint8_t* d = nullptr;
    CUDA_OK(cudaMalloc(&d, got.size()));
    CUDA_OK(cudaMemset(d, 0, got.size()));
    Status s = to_gray_cuda(img.dev_view(), d, ds, nullptr);
    ASSERT_TRUE(s.ok()) << s.message();
    CUDA_OK(cudaMemcpy(got.data(), d, got.size(), cudaMemcpyDeviceToHost));
    cudaFree(d);
    EXPECT_EQ(want, got) << pixel_format_name(f);
  }
}

TEST(GpuDraw, EqualsCpuByteForByte) {
  const Rect boxes[] = {
      {5, 6, 40, 30}, {300, 80, 50, 40} /* clipped */, {-10, -4, 30, 20}, {100, 50, 3, 2}, {200, 10, 60, 60}};
  for (PixelFormat f : kAllFormats) {
    for (int thickness : {1, 2, 5}) {
      DevImage img(f, 333, 97, 6);
      BoxStyle style;
      style.r = 250;
      style.g = 30;
      style.b = 90;
      style.thickness = thickness;
      draw_boxes_cpu(img.host_view(), boxes, 5, style);
      Status s = draw_boxes_cuda(img.dev_view(), boxes, 5, style, nullptr);
      ASSERT_TRUE(s.ok()) << s.message();
      CUDA_OK(cudaDeviceSynchronize());
      for (int i = 0; i < plane_count(f); ++i)
        EXPECT_EQ(img.download(i), img.host[i]) << pixel_format_name(f) << " plane " << i << " thickness " << thickness;
    }
  }
}
