// The CUDA bank matcher against the CPU bank matcher: every member's score map bit for bit
// (no-score windows NaN on both), the same candidates, the same matches; banks of 1, 8 and 32
// templates of mixed sizes (4..256 px) with and without masks, on frames of odd sizes, pitches
// and offsets, with per-member regions, over consecutive frames; both kernels (tensor cores and
// the pre-Ampere dp4a one, forced); the element's engine against the CPU engine. No OpenCV, no
// GStreamer.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <ctime>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bank_match.h"
#include "match_engine.h"
#include "templatematch.h"
#include "cuda_device.h"
#include "tm_test_util.h"

using namespace cudaprep;
using tmtest::Gray;

namespace {

struct DevGray {
  uint8_t* base = nullptr;
  GrayView view;
  DevGray(const Gray& g, size_t pitch, size_t offset) {
    EXPECT_EQ(cudaMalloc(&base, pitch * g.height + offset + 64), cudaSuccess);
    uint8_t* data = base + offset;
    EXPECT_EQ(cudaMemcpy2D(data, pitch, g.px.data(), g.stride, g.width, g.height, cudaMemcpyHostToDevice), cudaSuccess);
    view = GrayView{data, static_cast<int64_t>(pitch), g.width, g.height};
  }
  ~DevGray() { cudaFree(base); }
};

// A bank of `count` templates cut from the frame (and from noise), mixed sizes, some masked.
TemplateBank make_bank(const Gray& frame, int count, int max_side, bool masks, uint32_t seed) {
  std::mt19937 rng(seed);
  TemplateBank bank;
  for (int k = 0; k < count; ++k) {
    BankTemplate t;
    t.label = "t" + std::to_string(k);
    t.threshold = 0.3 + 0.1 * (k % 5);
    t.max_matches = 1 + k % 4;
    bank.templates.push_back(t);
    BankMember m;
    m.template_index = k;
    MaskedGray& g = m.image;
    g.width = 4 + static_cast<int>(rng() % (std::min(max_side, frame.width) - 3));
    g.height = 4 + static_cast<int>(rng() % (std::min(max_side, frame.height) - 3));
    const int x = static_cast<int>(rng() % (frame.width - g.width + 1));
    const int y = static_cast<int>(rng() % (frame.height - g.height + 1));
    for (int j = 0; j < g.height; ++j)
      for (int i = 0; i < g.width; ++i) g.pixels.push_back(k % 7 == 6 ? rng() & 255 : frame.at(x + i, y + j));
    if (masks && k % 2 == 0) {
      const int kind = (k / 2) % 3;
      for (int j = 0; j < g.height; ++j)
        for (int i = 0; i < g.width; ++i) {
          const double dx = (i + 0.5) / g.width - 0.5, dy = (j + 0.5) / g.height - 0.5;
          uint8_t v = kind == 0 ? (rng() % 10 < 7) : kind == 1 ? (dx * dx + dy * dy <= 0.25) : (i + j) % 3 != 0;
          g.mask.push_back(v ? (kind == 1 ? 200 : 1) : 0);
        }
    }
    bank.members.push_back(std::move(m));
  }
  return bank;
}

bool same_float(float a, float b) { return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, 4) == 0; }

// The CPU's candidates that its suppression kept, in the order both paths list candidates.
std::vector<BankCandidate> kept_candidates(const std::vector<BankCandidate>& all, const std::vector<Match>& kept) {
  std::vector<BankCandidate> out;
  for (const BankCandidate& c : all)
    for (const Match& k : kept)
      if (k.member == c.member && k.x == c.x && k.y == c.y) out.push_back(c);
  sort_bank_candidates(&out);
  return out;
}

// device_suppression: the device suppresses every frame (else only above its default count).
void expect_same_on(bool cuda_cores_only, bool device_suppression, const Gray& frame, const TemplateBank& bank,
                    size_t pitch, size_t offset, const BankSearch& search, bool across, const std::string& what) {
  SCOPED_TRACE(what + (cuda_cores_only ? " (dp4a kernel" : " (default kernel") +
               (device_suppression ? ", suppression on the device)" : ")"));
  BankMatcherCpu cpu;
  Status st = cpu.set_bank(bank);
  ASSERT_TRUE(st.ok()) << st.message();
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  {
    BankMatcherCuda gpu;
    gpu.use_cuda_cores_only(cuda_cores_only);
    if (device_suppression) gpu.suppress_on_device_above(0);
    ASSERT_TRUE(gpu.configure(frame.width, frame.height, stream).ok());
    st = gpu.set_bank(bank);
    ASSERT_TRUE(st.ok()) << st.message();
    DevGray dev(frame, pitch, offset);
    // Score maps, member by member, in each member's region.
    for (size_t m = 0; m < bank.members.size(); ++m) {
      if (search.regions[m].empty()) continue;
      std::vector<float> a, b;
      int aw, ah, bw, bh;
      ASSERT_TRUE(cpu.score_map(frame.view(), static_cast<int>(m), search.regions[m], &a, &aw, &ah).ok());
      st = gpu.score_map(dev.view, static_cast<int>(m), search.regions[m], &b, &bw, &bh);
      ASSERT_TRUE(st.ok()) << st.message();
      ASSERT_EQ(aw, bw);
      ASSERT_EQ(ah, bh);
      int differ = 0;
      for (size_t i = 0; i < a.size(); ++i) differ += !same_float(a[i], b[i]);
      EXPECT_EQ(differ, 0) << "member " << m << " (" << bank.members[m].image.width << "x"
                           << bank.members[m].image.height << ")";
    }
    // Matches, twice: the cells are cleared between frames.
    for (int round = 0; round < 2; ++round) {
      std::vector<Match> a, b;
      ASSERT_TRUE(cpu.match(frame.view(), search, across, &a).ok());
      st = gpu.match(dev.view, search, across, &b);
      ASSERT_TRUE(st.ok()) << st.message();
      // Suppressed on the device, the GPU's candidates are the kept matches, offsets included.
      const std::vector<BankCandidate> ca =
          gpu.last_candidates_suppressed() ? kept_candidates(cpu.last_candidates(), a) : cpu.last_candidates();
      const auto& cb = gpu.last_candidates();
      if (device_suppression) {
        EXPECT_TRUE(gpu.last_candidates_suppressed() || a.empty());
      }
      ASSERT_EQ(ca.size(), cb.size());
      for (size_t i = 0; i < ca.size(); ++i) {
        EXPECT_EQ(ca[i].member, cb[i].member);
        EXPECT_EQ(ca[i].x, cb[i].x);
        EXPECT_EQ(ca[i].y, cb[i].y);
        EXPECT_TRUE(same_float(ca[i].score, cb[i].score));
        EXPECT_EQ(ca[i].dx, cb[i].dx);
        EXPECT_EQ(ca[i].dy, cb[i].dy);
      }
      tmtest::expect_same_matches(a, b);
      if (round == 0) {
        EXPECT_FALSE(a.empty());
      }
    }
  }
  cudaStreamDestroy(stream);
}

void expect_same(const Gray& frame, const TemplateBank& bank, size_t pitch, size_t offset, const BankSearch& search,
                 bool across, const std::string& what) {
  for (bool cores : {false, true})
    for (bool device_suppression : {false, true})
      expect_same_on(cores, device_suppression, frame, bank, pitch, offset, search, across, what);
}

}  // namespace

TEST(BankGpu, EqualsCpuForBanksOfMixedSizes) {
  struct Case {
    int w, h, count, max_side;
    bool masks;
    size_t pitch_extra, offset;
  } cases[] = {
      {333, 217, 1, 64, true, 0, 0},   {333, 217, 8, 64, false, 5, 3},  {401, 299, 8, 96, true, 64, 1},
      {517, 311, 32, 128, true, 0, 7}, {640, 480, 32, 40, false, 3, 0}, {300, 280, 3, 256, true, 0, 2},
  };
  for (const Case& c : cases) {
    Gray frame = tmtest::structured_gray(c.w, c.h, c.count * 31 + c.w);
    const TemplateBank bank = make_bank(frame, c.count, c.max_side, c.masks, c.w + c.count);
    const size_t pitch = c.w + c.pitch_extra;
    expect_same(frame, bank, pitch, c.offset, BankSearch::over(bank, Rect{0, 0, c.w, c.h}), false,
                std::to_string(c.w) + "x" + std::to_string(c.h) + " bank of " + std::to_string(c.count));
  }
}

TEST(BankGpu, EqualsCpuOnNoiseWithFlatPatchesAndRegions) {
  Gray frame = tmtest::random_gray(479, 361, 3);
  for (int y = 40; y < 140; ++y)
    for (int x = 60; x < 200; ++x) frame.at(x, y) = 90;  // windows with no variance
  TemplateBank bank = make_bank(frame, 12, 48, true, 9);
  BankSearch search = BankSearch::over(bank, Rect{0, 0, frame.width, frame.height});
  std::mt19937 rng(4);
  for (size_t m = 0; m < bank.members.size(); ++m) {
    const MaskedGray& g = bank.members[m].image;
    if (m % 4 == 3) {
      search.regions[m] = Rect{};  // not searched this frame
      continue;
    }
    const int w = g.width + static_cast<int>(rng() % 90), h = g.height + static_cast<int>(rng() % 70);
    search.regions[m] =
        Rect{static_cast<int>(rng() % (frame.width - w)), static_cast<int>(rng() % (frame.height - h)), w, h};
  }
  for (size_t t = 0; t < bank.templates.size(); ++t) search.thresholds[t] = -1.0;  // every cell a candidate
  expect_same(frame, bank, frame.width, 0, search, false, "regions");
  expect_same(frame, bank, frame.width + 1, 1, search, true, "regions, suppression across templates");
}

// Every way the tensor-core kernel packs members: groups of 2..8 and a last group of one (a
// member alone fills the 8 columns with 8 of its rows), masked and unmasked groups side by side,
// widths at and around the 32-byte chunks, and the largest member the bank takes.
TEST(BankGpu, EqualsCpuForEveryGroupShape) {
  const int counts[] = {2, 3, 5, 9, 17};
  for (int count : counts) {
    Gray frame = tmtest::structured_gray(287, 203, count);
    const TemplateBank bank = make_bank(frame, count, 70, count % 2 == 1, 100 + count);
    expect_same(frame, bank, frame.width + 3, 5, BankSearch::over(bank, Rect{0, 0, frame.width, frame.height}), false,
                "bank of " + std::to_string(count));
  }
  Gray frame = tmtest::structured_gray(300, 290, 77);
  TemplateBank bank = make_bank(frame, 6, 64, true, 5);
  const int widths[] = {31, 32, 33, 64, 65, 256};
  for (int k = 0; k < 6; ++k) {
    MaskedGray& g = bank.members[k].image;
    g.width = widths[k];
    g.height = k == 5 ? 256 : 9 + 7 * k;
    g.pixels.clear();
    for (int j = 0; j < g.height; ++j)
      for (int i = 0; i < g.width; ++i) g.pixels.push_back(frame.at(3 * k + i, 11 + j));
    if (g.masked()) {
      g.mask.clear();
      for (int j = 0; j < g.height; ++j)
        for (int i = 0; i < g.width; ++i) g.mask.push_back((i * 7 + j * 3) % 5 != 0);
    }
  }
  expect_same(frame, bank, frame.width, 0, BankSearch::over(bank, Rect{0, 0, frame.width, frame.height}), false,
              "chunk widths");
}

// The epilogue takes a group's box sizes in passes, by height then width, each size's column sums
// continuing the previous size's and each chunk's the previous chunk's: one group of runs of one
// size and of single sizes, equal heights of different widths, and regions whose first block rows
// some members do not search (their column sums start from the staged rows further down).
TEST(BankGpu, EqualsCpuForGroupsOfRunsOfOneBoxSize) {
  Gray frame = tmtest::structured_gray(331, 257, 12);
  TemplateBank bank = make_bank(frame, 8, 64, false, 21);
  const int sizes[8][2] = {{40, 30}, {33, 30}, {40, 45}, {40, 30}, {40, 45}, {50, 20}, {40, 45}, {36, 52}};
  for (int k = 0; k < 8; ++k) {
    MaskedGray& g = bank.members[k].image;
    g.width = sizes[k][0];
    g.height = sizes[k][1];
    g.pixels.clear();
    for (int j = 0; j < g.height; ++j)
      for (int i = 0; i < g.width; ++i) g.pixels.push_back(frame.at(20 * k + i, 7 * k + j));
  }
  BankSearch search = BankSearch::over(bank, Rect{0, 0, frame.width, frame.height});
  expect_same(frame, bank, frame.width + 7, 3, search, false, "runs of one box size");
  search.regions[1] = Rect{10, 19, 200, 150};
  search.regions[2] = Rect{0, 37, 331, 90};
  search.regions[4] = Rect{};
  search.regions[6] = Rect{64, 101, 120, 100};
  for (size_t t = 0; t < bank.templates.size(); ++t) search.thresholds[t] = -1.0;  // every cell a candidate
  expect_same(frame, bank, frame.width, 0, search, false, "runs of one box size, regions");
}

// The element's engine runs a bank of one template on the single-template kernel (masked too,
// where that kernel holds it: a masked template too large for it goes to the bank matcher), and
// a bank of several on the bank matcher. Its matches equal the CPU engine's (which runs banks of
// one member a template on its single-template matcher), frame after frame, with every wait mode
// and members left out of a frame.
TEST(BankGpu, EngineEqualsCpuEngine) {
  Gray frame = tmtest::structured_gray(383, 251, 21);
  for (int flat = 0; flat < 40; ++flat) frame.at(100 + flat, 60) = frame.at(100, 60);  // a flat run of pixels
  for (int count : {1, 9})
    for (int kind = 0; kind < 3; ++kind) {
      SCOPED_TRACE(std::to_string(count) + (kind == 0   ? " unmasked"
                                            : kind == 1 ? " masked"
                                                        : " with a masked member too large for the single kernel"));
      TemplateBank bank = make_bank(frame, count, 72, kind > 0, 44);
      if (kind == 2) {
        MaskedGray& g = bank.members[count == 1 ? 0 : 2].image;
        g.width = 200;
        g.height = 190;
        g.pixels.clear();
        g.mask.clear();
        for (int j = 0; j < g.height; ++j)
          for (int i = 0; i < g.width; ++i) {
            g.pixels.push_back(frame.at(30 + i, 20 + j));
            g.mask.push_back((i / 7 + j / 5) % 3 != 0);
          }
      }
      BankSearch search = BankSearch::over(bank, Rect{0, 0, frame.width, frame.height});
      for (size_t t = 0; t < bank.templates.size(); ++t) search.thresholds[t] = 0.2;
      cudaStream_t stream;
      ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
      {
        DevGray dev(frame, frame.width + 13, 3);
        std::unique_ptr<MatchEngine> cpu = make_match_engine_cpu();
        ASSERT_TRUE(cpu->configure(PixelFormat::GRAY8, frame.width, frame.height).ok());
        ASSERT_TRUE(cpu->set_bank(bank).ok());
        for (GpuWait wait : {GpuWait::Blocking, GpuWait::Spin, GpuWait::StreamSync, GpuWait::Poll}) {
          SCOPED_TRACE("wait mode " + std::to_string(static_cast<int>(wait)));
          std::unique_ptr<MatchEngine> gpu = make_match_engine_cuda(stream, wait);
          ASSERT_TRUE(gpu->configure(PixelFormat::GRAY8, frame.width, frame.height).ok());
          Status st = gpu->set_bank(bank);
          ASSERT_TRUE(st.ok()) << st.message();
          for (int round = 0; round < 3; ++round) {
            BankSearch s = search;
            if (count > 1) s.regions[(round * 4) % s.regions.size()] = Rect{};  // not searched this frame
            std::vector<Match> a, b;
            ASSERT_TRUE(cpu->match(frame.view(), s, false, &a).ok());
            st = gpu->match(dev.view, s, false, &b);
            ASSERT_TRUE(st.ok()) << st.message();
            ASSERT_FALSE(a.empty()) << "round " << round;
            tmtest::expect_same_matches(a, b);
          }
          // The single-template matcher ran (its texture objects) for a bank of one template it holds.
          const bool singles_ran = gpu->cache_summary().rfind("texture objects: 0 created", 0) != 0;
          EXPECT_EQ(singles_ran, count == 1 && kind < 2) << gpu->cache_summary();
        }
      }
      cudaStreamDestroy(stream);
    }
}

// A masked template on the single-template kernel scores every position as the CPU bank matcher
// scores the member (bit for bit, NaN where the window has no variance under the mask) and finds
// the same matches: random, shaped and striped masks, non-binary mask values, sizes that are not
// multiples of the tile or the 32-byte chunks, odd pitches and offsets, whole frames and regions,
// and flat patches. Also the message for a template with no variance under its mask.
TEST(BankGpu, MaskedSingleTemplateEqualsCpuBankMember) {
  struct Case {
    int fw, fh, tw, th, kind;
    size_t pitch_extra, offset;
    Rect region;
  } cases[] = {
      {333, 217, 64, 64, 0, 0, 0, {}},
      {401, 299, 31, 17, 1, 5, 3, {}},
      {287, 203, 33, 40, 2, 64, 1, {}},
      {517, 311, 96, 80, 0, 3, 7, {}},
      {300, 290, 128, 128, 1, 0, 2, {}},
      {640, 480, 5, 7, 2, 1, 0, {}},
      {700, 500, 64, 64, 1, 0, 0, {211, 133, 320, 320}},
      {700, 500, 47, 61, 0, 7, 5, {64, 64, 130, 99}},
  };
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  int compared = 0, nan_positions = 0;
  for (const Case& c : cases) {
    const std::string what = std::to_string(c.tw) + "x" + std::to_string(c.th) + " mask kind " +
                             std::to_string(c.kind) + " on " + std::to_string(c.fw) + "x" + std::to_string(c.fh);
    SCOPED_TRACE(what);
    Gray frame = tmtest::structured_gray(c.fw, c.fh, c.fw + c.tw);
    for (int y = 10; y < 10 + c.th + 20 && y < c.fh; ++y)
      for (int x = 5; x < 5 + c.tw + 30 && x < c.fw; ++x) frame.at(x, y) = 77;  // windows with no variance
    std::mt19937 rng(c.tw * 7 + c.kind);
    TemplateBank bank;
    BankTemplate t;
    t.label = "masked";
    t.threshold = 0.3;
    t.max_matches = 4;
    bank.templates.push_back(t);
    BankMember m;
    MaskedGray& g = m.image;
    g.width = c.tw;
    g.height = c.th;
    const Rect area = c.region.empty() ? Rect{0, 0, c.fw, c.fh} : c.region;
    const int tx = area.x + area.w - c.tw - 9, ty = area.y + area.h - c.th - 4;  // a match in the region
    for (int j = 0; j < c.th; ++j)
      for (int i = 0; i < c.tw; ++i) {
        g.pixels.push_back(frame.at(tx + i, ty + j));
        const double dx = (i + 0.5) / c.tw - 0.5, dy = (j + 0.5) / c.th - 0.5;
        const bool in = c.kind == 0 ? rng() % 10 < 7 : c.kind == 1 ? dx * dx + dy * dy <= 0.25 : (i + 2 * j) % 5 != 0;
        g.mask.push_back(in ? (c.kind == 1 ? 200 : 1) : 0);
      }
    bank.members.push_back(m);
    BankMatcherCpu cpu;
    Status st = cpu.set_bank(bank);
    ASSERT_TRUE(st.ok()) << st.message();
    {
      DevGray dev(frame, c.fw + c.pitch_extra, c.offset);
      TemplateMatcherCuda gpu;
      ASSERT_TRUE(gpu.configure(c.fw, c.fh, stream).ok());
      st = gpu.set_template(GrayView{g.pixels.data(), c.tw, c.tw, c.th}, g.mask.data());
      ASSERT_TRUE(st.ok()) << st.message();
      std::vector<float> a, b;
      int aw, ah, bw, bh;
      ASSERT_TRUE(cpu.score_map(frame.view(), 0, c.region, &a, &aw, &ah).ok());
      st = gpu.score_map(dev.view, c.region, &b, &bw, &bh);
      ASSERT_TRUE(st.ok()) << st.message();
      ASSERT_EQ(aw, bw);
      ASSERT_EQ(ah, bh);
      int differ = 0;
      for (size_t i = 0; i < a.size(); ++i) {
        differ += !same_float(a[i], b[i]);
        nan_positions += std::isnan(a[i]);
      }
      EXPECT_EQ(differ, 0);
      compared += static_cast<int>(a.size());
      const BankSearch search = BankSearch::over(bank, area);  // (an empty region: not searched)
      MatchSettings settings;
      settings.search = c.region;
      settings.threshold = t.threshold;
      settings.max_matches = t.max_matches;
      for (int round = 0; round < 2; ++round) {
        std::vector<Match> ma, mb;
        ASSERT_TRUE(cpu.match(frame.view(), search, false, &ma).ok());
        st = gpu.match(dev.view, settings, &mb);
        ASSERT_TRUE(st.ok()) << st.message();
        ASSERT_FALSE(ma.empty());
        tmtest::expect_same_matches(ma, mb);
      }
    }
  }
  EXPECT_GT(compared, 500000);
  EXPECT_GT(nan_positions, 0);  // the flat patches left windows with no variance under the masks
  {
    Gray flat = tmtest::structured_gray(40, 30, 3);
    std::vector<uint8_t> mask(40 * 30, 0);
    for (int i = 0; i < 10; ++i) {
      flat.at(i, 0) = 9;
      mask[i] = 1;
    }
    TemplateMatcherCuda gpu;
    ASSERT_TRUE(gpu.configure(200, 100, stream).ok());
    EXPECT_EQ(gpu.set_template(flat.view(), mask.data()).message(), "template has no variance under its mask");
  }
  cudaStreamDestroy(stream);
}

// enqueue() and finish() come in pairs; a frame the matcher refuses launches nothing, and the
// matcher stays usable.
TEST(BankGpu, SingleMatcherEnqueueAndFinishComeInPairs) {
  Gray frame = tmtest::structured_gray(200, 150, 8);
  Gray templ = tmtest::structured_gray(24, 20, 9);
  for (int j = 0; j < templ.height; ++j)
    for (int i = 0; i < templ.width; ++i) templ.at(i, j) = frame.at(50 + i, 40 + j);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  {
    DevGray dev(frame, frame.width, 0);
    TemplateMatcherCuda m;
    ASSERT_TRUE(m.configure(frame.width, frame.height, stream).ok());
    ASSERT_TRUE(m.set_template(templ.view()).ok());
    std::vector<Match> matches(3);
    Status st = m.finish(&matches);
    EXPECT_EQ(st.message(), "TemplateMatcherCuda: finish() without a frame from enqueue()");
    EXPECT_TRUE(matches.empty());
    MatchSettings settings;
    settings.search = Rect{0, 0, 300, 100};  // larger than the frame
    st = m.enqueue(dev.view, settings);
    EXPECT_FALSE(st.ok());
    settings.search = Rect{};
    ASSERT_TRUE(m.enqueue(dev.view, settings).ok());
    st = m.enqueue(dev.view, settings);
    EXPECT_EQ(st.message(), "TemplateMatcherCuda: enqueue() while the previous frame awaits its finish()");
    st = m.finish(&matches);
    ASSERT_TRUE(st.ok()) << st.message();
    ASSERT_EQ(matches.size(), 1u);
    EXPECT_EQ(matches[0].x, 50);
    EXPECT_EQ(matches[0].y, 40);
    std::vector<Match> again;
    ASSERT_TRUE(m.match(dev.view, settings, &again).ok());
    ASSERT_EQ(again.size(), 1u);
    EXPECT_EQ(again[0].score, matches[0].score);
  }
  cudaStreamDestroy(stream);
}

// More cells reaching their thresholds than a frame can list (262144): one clear error, and the
// next frame, with a threshold that few cells reach, matches as the CPU does (the cells the full
// list left behind are cleared).
TEST(BankGpu, TooManyCellsReachingTheThresholdIsAnErrorAndTheNextFrameIsClean) {
  Gray frame = tmtest::random_gray(1920, 1080, 12);
  TemplateBank bank;
  for (int k = 0; k < 3; ++k) {
    BankTemplate t;
    t.label = "t" + std::to_string(k);
    bank.templates.push_back(t);
    BankMember m;
    m.template_index = k;
    m.image.width = m.image.height = 4;  // cells of 4 x 4 positions: 480 x 270 a member
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 4; ++i) m.image.pixels.push_back(frame.at(100 * k + i, 50 + j));
    bank.members.push_back(std::move(m));
  }
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  {
    BankMatcherCuda gpu;
    ASSERT_TRUE(gpu.configure(frame.width, frame.height, stream).ok());
    ASSERT_TRUE(gpu.set_bank(bank).ok());
    DevGray dev(frame, frame.width, 0);
    BankSearch every = BankSearch::over(bank, Rect{0, 0, frame.width, frame.height});
    for (double& t : every.thresholds) t = -1.0;
    std::vector<Match> matches;
    const Status st = gpu.match(dev.view, every, false, &matches);
    EXPECT_FALSE(st.ok());
    EXPECT_EQ(st.message(),
              "388800 cells reach their threshold, more than the 262144 a frame can hold: raise the threshold");
    BankSearch few = BankSearch::over(bank, Rect{0, 0, frame.width, frame.height});
    for (double& t : few.thresholds) t = 0.999;
    BankMatcherCpu cpu;
    ASSERT_TRUE(cpu.set_bank(bank).ok());
    std::vector<Match> a, b;
    ASSERT_TRUE(cpu.match(frame.view(), few, false, &a).ok());
    ASSERT_TRUE(gpu.match(dev.view, few, false, &b).ok());
    EXPECT_FALSE(a.empty());
    tmtest::expect_same_matches(a, b);
  }
  cudaStreamDestroy(stream);
}

// Frame sizes the bank matcher takes: 1 to 65535 pixels a side (its cell rows are computed in
// single precision, exact below 2^16), else one message.
TEST(BankGpu, FrameSidesAbove65535AreRefused) {
  BankMatcherCuda gpu;
  const Status st = gpu.configure(70000, 16, nullptr);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "invalid frame size 70000x16 (the bank matcher takes 1 to 65535 pixels a side)");
  EXPECT_TRUE(gpu.configure(65535, 16, nullptr).ok());
}

// A frame in which no member is searched (every region empty) launches nothing: each wait
// returns at once with no match, and the next frame's wait is not misled by it.
TEST(BankGpu, AFrameWithNoMemberSearchedEndsUnderEveryWait) {
  const Gray frame = tmtest::structured_gray(320, 200, 3);
  const TemplateBank bank = make_bank(frame, 3, 40, false, 5);
  const BankSearch all = BankSearch::over(bank, Rect{0, 0, frame.width, frame.height});
  BankSearch none = all;
  for (Rect& r : none.regions) r = Rect{};
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  {
    DevGray dev(frame, frame.width, 0);
    for (GpuWait wait : {GpuWait::Spin, GpuWait::StreamSync, GpuWait::Blocking, GpuWait::Poll}) {
      SCOPED_TRACE("gpu-wait " + std::to_string(static_cast<int>(wait)));
      BankMatcherCuda gpu;
      ASSERT_TRUE(gpu.configure(frame.width, frame.height, stream, wait).ok());
      ASSERT_TRUE(gpu.set_bank(bank).ok());
      std::vector<Match> matches(2), expected;
      Status st = gpu.match(dev.view, none, false, &matches);
      EXPECT_TRUE(st.ok()) << st.message();
      EXPECT_TRUE(matches.empty());
      st = gpu.match(dev.view, all, false, &expected);
      ASSERT_TRUE(st.ok()) << st.message();
      EXPECT_FALSE(expected.empty());
      st = gpu.match(dev.view, none, false, &matches);
      EXPECT_TRUE(st.ok()) << st.message();
      EXPECT_TRUE(matches.empty());
      st = gpu.match(dev.view, all, false, &matches);
      ASSERT_TRUE(st.ok()) << st.message();
      EXPECT_EQ(matches.size(), expected.size());
    }
  }
  cudaStreamDestroy(stream);
}

// The engine waits for a bank's matches as its gpu-wait says: with `Blocking` the thread sleeps
// through the GPU work (its CPU time is a small part of the wall time), with `Spin` it is busy
// all along. (The bank kernel once waited with cudaStreamSynchronize whatever the mode, which
// spins in a process with few contexts.)
TEST(BankGpu, EngineWaitsForABankAsItsGpuWaitSays) {
  const Gray frame = tmtest::structured_gray(3840, 2160, 5);
  const TemplateBank bank = make_bank(frame, 8, 96, false, 9);
  const BankSearch search = BankSearch::over(bank, Rect{0, 0, frame.width, frame.height});
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  {
    DevGray dev(frame, frame.width, 0);
    auto cpu_share = [&](GpuWait wait) {
      std::unique_ptr<MatchEngine> gpu = make_match_engine_cuda(stream, wait);
      EXPECT_TRUE(gpu->configure(PixelFormat::GRAY8, frame.width, frame.height).ok());
      EXPECT_TRUE(gpu->set_bank(bank).ok());
      std::vector<Match> matches;
      EXPECT_TRUE(gpu->match(dev.view, search, false, &matches).ok());  // first launches
      timespec cpu0{}, cpu1{}, wall0{}, wall1{};
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
      clock_gettime(CLOCK_MONOTONIC, &wall0);
      for (int i = 0; i < 20; ++i) EXPECT_TRUE(gpu->match(dev.view, search, false, &matches).ok());
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
      clock_gettime(CLOCK_MONOTONIC, &wall1);
      auto seconds = [](const timespec& a, const timespec& b) {
        return (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9;
      };
      const double wall = seconds(wall0, wall1);
      EXPECT_GT(wall, 0.01) << "too little GPU work to tell the waits apart";
      return seconds(cpu0, cpu1) / wall;
    };
    EXPECT_LT(cpu_share(GpuWait::Blocking), 0.5);
    EXPECT_GT(cpu_share(GpuWait::Spin), 0.8);
  }
  cudaStreamDestroy(stream);
}
