// Template-bank benchmark on a 1920x1080 frame, host wall time of match() (scores, peaks,
// suppression, one wait: a blocking-sync event, the elements' default, unless a row says spin), medians: the bank
// matcher (2 and 8 x 64 px, 8 masked, 32 mixed 16..128 px, a masked 64 px, a tracking window) beside the
// single-template matcher (one template; the same templates one launch each) and NPP's nppiCrossCorrValid_NormLevel
// (one call per template, no mask, score maps only). A markdown table last, with the targets as ratios.
//
//   template_bank_bench [iterations] [only: measure just the rows whose name has this text]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bank_match.h"
#include "match_engine.h"
#include "npp_cross_corr.h"
#include "templatematch.h"

using namespace cudaprep;

namespace {

#define CK(expr)                                                                                 \
  do {                                                                                           \
    cudaError_t e_ = (expr);                                                                     \
    if (e_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #expr, cudaGetErrorString(e_)); \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)

void check(const Status& st, const char* what) {
  if (!st.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, st.message().c_str());
    std::exit(1);
  }
}

const int kW = 1920, kH = 1080;

// Smooth content with texture: every window has variance.
std::vector<uint8_t> make_frame(uint32_t seed) {
  std::vector<uint8_t> f(static_cast<size_t>(kW) * kH);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> noise(0, 20);
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) {
      const double v = 128 + 50 * std::sin(x * 0.031 + y * 0.017) + 30 * std::sin(x * 0.113 - y * 0.071);
      f[static_cast<size_t>(y) * kW + x] = static_cast<uint8_t>(std::min(255.0, std::max(0.0, v + noise(rng))));
    }
  return f;
}

MaskedGray cut(const std::vector<uint8_t>& f, int x, int y, int w, int h) {
  MaskedGray g;
  g.width = w;
  g.height = h;
  for (int j = 0; j < h; ++j)
    for (int i = 0; i < w; ++i) g.pixels.push_back(f[static_cast<size_t>(y + j) * kW + x + i]);
  return g;
}

TemplateBank bank_of(const std::vector<MaskedGray>& members) {
  TemplateBank b;
  for (size_t i = 0; i < members.size(); ++i) {
    BankTemplate t;
    t.label = "t" + std::to_string(i);
    t.threshold = 0.9;
    t.max_matches = 4;
    b.templates.push_back(t);
    BankMember m;
    m.image = members[i];
    m.template_index = static_cast<int>(i);
    b.members.push_back(m);
  }
  return b;
}

double median_ms(int iterations, const std::function<void()>& call) {
  for (int i = 0; i < 3; ++i) call();  // warm-up: first launches, caches
  std::vector<double> t;
  for (int i = 0; i < iterations; ++i) {
    const auto a = std::chrono::steady_clock::now();
    call();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Row {
  std::string name;
  double ms;
  int templates;
};

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 50;
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s\n", prop.name);
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const std::vector<uint8_t> host = make_frame(1);
  uint8_t* dev = nullptr;
  size_t pitch = 0;
  CK(cudaMallocPitch(&dev, &pitch, kW, kH));
  CK(cudaMemcpy2D(dev, pitch, host.data(), kW, kW, kH, cudaMemcpyHostToDevice));
  const GrayView frame{dev, static_cast<int64_t>(pitch), kW, kH};
  const Rect whole{0, 0, kW, kH};
  std::vector<Match> matches;
  std::vector<Row> rows;
  // Rows whose name lacks `only` (the second argument) are not measured.
  const std::string only = argc > 2 ? argv[2] : "";
  auto add = [&](const char* name, int templates, const std::function<double()>& measure) {
    if (only.empty() || std::string(name).find(only) != std::string::npos) rows.push_back({name, measure(), templates});
  };

  // Templates: 8 of 64 px; 32 of 16..128 px; one 64 px with an elliptic mask.
  std::mt19937 rng(7);
  auto place = [&](int w, int h) {
    return std::make_pair(static_cast<int>(rng() % (kW - w)), static_cast<int>(rng() % (kH - h)));
  };
  std::vector<MaskedGray> eight, mixed;
  std::vector<std::pair<int, int>> eight_at;
  for (int i = 0; i < 8; ++i) {
    eight_at.push_back(place(64, 64));
    eight.push_back(cut(host, eight_at.back().first, eight_at.back().second, 64, 64));
  }
  for (int i = 0; i < 32; ++i) {
    const int s = 16 + static_cast<int>(rng() % 113);
    auto p = place(s, s);
    mixed.push_back(cut(host, p.first, p.second, s, s));
  }
  std::vector<MaskedGray> eight_masked = eight;
  for (MaskedGray& m : eight_masked)
    for (int j = 0; j < 64; ++j)
      for (int i = 0; i < 64; ++i) {
        const double dx = (i + 0.5) / 64 - 0.5, dy = (j + 0.5) / 64 - 0.5;
        m.mask.push_back(dx * dx + dy * dy <= 0.25 ? 1 : 0);
      }
  const MaskedGray masked = eight_masked[0];
  const std::vector<MaskedGray> two(eight.begin(), eight.begin() + 2);

  // The single-template matcher: one template, then each of the 8 and the 32 in turn.
  // regions: one per call in turn (a tracking window moves with its target).
  auto singles_over = [&](const std::vector<MaskedGray>& ts, const std::vector<Rect>& regions,
                          const TemplateMatcherCuda::Options& options) {
    std::vector<std::unique_ptr<TemplateMatcherCuda>> ms;
    for (const MaskedGray& t : ts) {
      ms.emplace_back(new TemplateMatcherCuda);
      check(ms.back()->configure(kW, kH, stream, options), "configure");
      check(ms.back()->set_template(GrayView{t.pixels.data(), t.width, t.width, t.height},
                                    t.masked() ? t.mask.data() : nullptr),
            "set_template");
    }
    MatchSettings s;
    s.threshold = 0.9;
    s.max_matches = 4;
    size_t call = 0;
    return median_ms(iterations, [&] {
      s.search = regions[call++ % regions.size()];
      for (auto& m : ms) check(m->match(frame, s, &matches), "match");
    });
  };
  auto singles = [&](const std::vector<MaskedGray>& ts, const Rect& region) {
    return singles_over(ts, {region}, TemplateMatcherCuda::Options());
  };
  auto bank = [&](const std::vector<MaskedGray>& ts, const Rect& region) {
    BankMatcherCuda m;
    check(m.configure(kW, kH, stream), "configure");
    const TemplateBank b = bank_of(ts);
    check(m.set_bank(b), "set_bank");
    const BankSearch search = BankSearch::over(b, region);
    const double ms = median_ms(iterations, [&] { check(m.match(frame, search, false, &matches), "bank match"); });
    std::fprintf(stderr, "bank of %zu: %zu candidates (%s), %zu matches\n", ts.size(), m.last_candidates().size(),
                 m.last_candidates_suppressed() ? "suppressed on the device" : "all", matches.size());
    return ms;
  };
  // The element's engine: banks of one member a template run one single-template launch each.
  auto engine = [&](const std::vector<MaskedGray>& ts, const Rect& region, GpuWait wait = GpuWait::Blocking) {
    std::unique_ptr<MatchEngine> e = make_match_engine_cuda(stream, wait);
    check(e->configure(PixelFormat::GRAY8, kW, kH), "engine configure");
    const TemplateBank b = bank_of(ts);
    check(e->set_bank(b), "engine set_bank");
    const BankSearch search = BankSearch::over(b, region);
    return median_ms(iterations, [&] { check(e->match(frame, search, false, &matches), "engine match"); });
  };
  const double single64 = singles({eight[0]}, whole);
  add("single template 64 px (single-template matcher)", 1, [&] { return single64; });
  add("bank of 1: 64 px (bank matcher)", 1, [&] { return bank({eight[0]}, whole); });
  add("bank of 1: 64 px masked", 1, [&] { return bank({masked}, whole); });
  add("64 px masked: the element's engine (single-template kernel)", 1, [&] { return engine({masked}, whole); });
  add("2 x 64 px: one bank", 2, [&] { return bank(two, whole); });
  add("2 x 64 px: 2 single-template launches", 2, [&] { return singles(two, whole); });
  add("8 x 64 px: one bank", 8, [&] { return bank(eight, whole); });
  add("8 x 64 px: the element's engine", 8, [&] { return engine(eight, whole); });
  add("8 x 64 px: 8 single-template launches", 8, [&] { return singles(eight, whole); });
  add("8 x 64 px masked: one bank", 8, [&] { return bank(eight_masked, whole); });
  add("8 x 64 px masked: 8 single-template launches", 8, [&] { return singles(eight_masked, whole); });
  add("32 x 16..128 px: one bank", 32, [&] { return bank(mixed, whole); });
  add("32 x 16..128 px: the element's engine", 32, [&] { return engine(mixed, whole); });
  add("32 x 16..128 px: 32 single-template launches", 32, [&] { return singles(mixed, whole); });
  const Rect window{800, 400, 64 + 4 * 64, 64 + 4 * 64};  // a 2-template-size margin around a 64 px match
  add("tracking window 320x320, 64 px (single-template matcher)", 1, [&] { return singles({eight[0]}, window); });
  add("tracking window 320x320, 64 px masked (bank)", 1, [&] { return bank({masked}, window); });
  add("tracking window 320x320, 64 px masked: the element's engine", 1, [&] { return engine({masked}, window); });
  {  // Windows around the target, moving by a few pixels each frame as a tracked target does.
    const int tx = eight_at[0].first, ty = eight_at[0].second;
    std::vector<Rect> moving;
    for (int i = 0; i < 4; ++i) {
      const int x = std::max(0, std::min(kW - 320, tx - 128 + 3 * i)),
                y = std::max(0, std::min(kH - 320, ty - 128 + 2 * i));
      moving.push_back(Rect{x, y, 320, 320});
    }
    TemplateMatcherCuda::Options spin;
    spin.wait = GpuWait::Spin;
    add("tracking window around the target, still", 1, [&] { return singles_over({eight[0]}, {moving[0]}, {}); });
    add("tracking window around the target, moving", 1, [&] { return singles_over({eight[0]}, moving, {}); });
    add("tracking window around the target, moving, spin wait", 1,
        [&] { return singles_over({eight[0]}, moving, spin); });
    // A tracked target seldom comes back to a window it had: 64 windows along its path, more than
    // the matcher keeps launch graphs of, each searched once in turn.
    std::vector<Rect> path;
    for (int i = 0; i < 64; ++i) {
      const int x = std::max(0, std::min(kW - 320, tx - 128 - 96 + 3 * i)),
                y = std::max(0, std::min(kH - 320, ty - 128 - 64 + 2 * i));
      path.push_back(Rect{x, y, 320, 320});
    }
    TemplateMatcherCuda::Options spin_plain = spin;
    spin_plain.tuning.graphs = false;
    add("tracking window following the target (a new window every frame), spin wait", 1,
        [&] { return singles_over({eight[0]}, path, spin); });
    add("tracking window following the target, spin wait, no launch graphs", 1,
        [&] { return singles_over({eight[0]}, path, spin_plain); });
    add("tracking window following the target (a new window every frame)", 1,
        [&] { return singles_over({eight[0]}, path, {}); });
    add("single template 64 px, spin wait", 1, [&] { return singles_over({eight[0]}, {whole}, spin); });
    add("8 x 64 px: the element's engine, spin wait", 8, [&] { return engine(eight, whole, GpuWait::Spin); });
    if (only.empty()) {  // the host's times of a tracking window's match() on stderr
      TemplateMatcherCuda::Options timed;
      timed.diagnostics.host_time = true;
      std::fflush(stdout);
      singles_over({eight[0]}, moving, timed);
      timed.wait = GpuWait::Spin;
      singles_over({eight[0]}, moving, timed);
    }
  }

  nppbench::Npp npp;
  if (npp.load()) {
    nppbench::NppStreamContext ctx = nppbench::npp_context(stream);
    float* map = nullptr;
    size_t map_pitch = 0;
    CK(cudaMallocPitch(reinterpret_cast<void**>(&map), &map_pitch, kW * sizeof(float), kH));
    size_t buffer_bytes = 0;
    nppbench::NppiSize src{kW, kH}, tpl{64, 64};
    npp.buffer_size(src, &buffer_bytes, ctx);
    uint8_t* buffer = nullptr;
    CK(cudaMalloc(&buffer, std::max<size_t>(buffer_bytes, 1)));
    std::vector<uint8_t*> templ(8);
    for (int i = 0; i < 8; ++i) {
      CK(cudaMalloc(&templ[i], 64 * 64));
      CK(cudaMemcpy(templ[i], eight[i].pixels.data(), 64 * 64, cudaMemcpyHostToDevice));
    }
    auto npp_calls = [&](int n) {
      return median_ms(iterations, [&] {
        for (int i = 0; i < n; ++i)
          npp.cross_corr(dev, static_cast<int>(pitch), src, templ[i], 64, tpl, map, static_cast<int>(map_pitch), buffer,
                         ctx);
        CK(cudaStreamSynchronize(stream));
      });
    };
    add("NPP CrossCorrValid_NormLevel, 1 x 64 px (score map only)", 1, [&] { return npp_calls(1); });
    add("NPP CrossCorrValid_NormLevel, 8 x 64 px (score maps only)", 8, [&] { return npp_calls(8); });
  } else {
    std::printf("NPP not loaded: %s\n", npp.error.c_str());
  }

  std::printf("\n| %s | case | ms per frame | ms per template | vs one 64 px template |\n|---|---|---|---|---|\n",
              prop.name);
  for (const Row& r : rows)
    std::printf("| | %s | %.4f | %.4f | %.2fx |\n", r.name.c_str(), r.ms, r.ms / r.templates, r.ms / single64);
  return 0;
}
