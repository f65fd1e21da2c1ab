// Template matching benchmark: TemplateMatcherCuda::match() (scores + peaks + NMS, one sync) on a
// 1920x1080 frame, for each variant of MatcherCudaOptions that configure() is given (kVariants; the
// default first and again last), side by side with a naive one-thread-per-position
// texture kernel and with NPP's nppiCrossCorrValid_NormLevel_8u32f_C1R_Ctx (loaded at run time when
// the library is present; NPP computes the score map only, no peaks). Host wall time of match() and
// the kernels' GPU time (CUDA events), medians; every variant's score map is compared bit for bit
// with the default's. Per case, three traced match() calls of the default (diagnostics.trace:
// per-block phase times on stderr). A markdown table last.
//
//   templatematch_bench [iterations] [case substring] [variant name]   (filters: e.g. for ncu)
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

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

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// ---- Naive baseline: one thread per position, every pixel a texture fetch --------------------
__global__ void naive_kernel(cudaTextureObject_t tex, const uint8_t* __restrict templ, int tw, int th, int sx, int sy,
                             int mw, int mh, int64_t n, int64_t st, int64_t var_t, float* out) {
  const int u = blockIdx.x * blockDim.x + threadIdx.x, v = blockIdx.y * blockDim.y + threadIdx.y;
  if (u >= mw || v >= mh) return;
  uint32_t si = 0, sii = 0, sti = 0;
  for (int j = 0; j < th; ++j)
    for (int i = 0; i < tw; ++i) {
      const uint32_t p = tex2D<unsigned char>(tex, sx + u + i + 0.5f, sy + v + j + 0.5f);
      si += p;
      sii += p * p;
      sti += p * templ[j * tw + i];
    }
  const int64_t var_i = n * static_cast<int64_t>(sii) - static_cast<int64_t>(si) * si;
  double r = 0;
  if (var_i > 0) {
    const int64_t num = n * static_cast<int64_t>(sti) - st * static_cast<int64_t>(si);
    r = static_cast<double>(num) / sqrt(static_cast<double>(var_t) * static_cast<double>(var_i));
    r = fmin(1.0, fmax(-1.0, r));
  }
  out[v * mw + u] = static_cast<float>(r);
}

__global__ void empty_kernel(int* p) {
  if (p && threadIdx.x == 1234567) *p = 0;
}

// Host-side cost of submitting work on this machine: a floor under any per-frame pipeline.
void launch_overhead(cudaStream_t s) {
  void* pinned = nullptr;
  void* dev = nullptr;
  CK(cudaMallocHost(&pinned, 64));
  CK(cudaMalloc(&dev, 64));
  auto time_it = [&](auto&& body) {
    std::vector<double> t;
    for (int i = 0; i < 200; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      body();
      CK(cudaStreamSynchronize(s));
      t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    return median(t);
  };
  const double one = time_it([&] { empty_kernel<<<1, 32, 0, s>>>(nullptr); });
  const double four = time_it([&] {
    for (int i = 0; i < 3; ++i) empty_kernel<<<1, 32, 0, s>>>(nullptr);
    CK(cudaMemcpyAsync(pinned, dev, 64, cudaMemcpyDeviceToHost, s));
  });
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < 3; ++i) empty_kernel<<<1, 32, 0, s>>>(nullptr);
  CK(cudaMemcpyAsync(pinned, dev, 64, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamEndCapture(s, &g));
  CK(cudaGraphInstantiate(&ge, g, 0));
  const double graph = time_it([&] { CK(cudaGraphLaunch(ge, s)); });
  std::printf(
      "submission floor (us, median wall incl. sync): 1 empty kernel %.1f; 3 kernels + 64 B copy %.1f; same as a graph "
      "%.1f\n",
      one, four, graph);
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  cudaFreeHost(pinned);
  cudaFree(dev);
}

// Variants of TemplateMatcherCuda, as the options configure() is given; the first is the
// default, timed again last to show the run-to-run spread.
using Options = MatcherCudaOptions;
using Override = MatcherCudaOptions::Override;
struct Variant {
  const char* name;
  void (*apply)(Options&);
};
const Variant kVariants[] = {
    {"default", [](Options&) {}},
    {"plain launches", [](Options& o) { o.tuning.graphs = false; }},
    {"pipelined",
     [](Options& o) {
       o.tuning.pipelining = Override::On;
       o.tuning.tile_width = 64;
     }},
    {"not pipelined",
     [](Options& o) {
       o.tuning.pipelining = Override::Off;
       o.tuning.tile_width = 64;
     }},
    {"128 wide", [](Options& o) { o.tuning.tile_width = 128; }},
    {"128 wide, not pipelined",
     [](Options& o) {
       o.tuning.tile_width = 128;
       o.tuning.pipelining = Override::Off;
     }},
    {"ks 1", [](Options& o) { o.tuning.row_split = 1; }},
    {"ks 2", [](Options& o) { o.tuning.row_split = 2; }},
    {"kz 1", [](Options& o) { o.tuning.cluster_split = 1; }},
    {"kz 4", [](Options& o) { o.tuning.cluster_split = 4; }},
    {"kz 8, packed, no row split (before)",
     [](Options& o) {
       o.tuning.cluster_split = 8;
       o.tuning.solo = Override::Off;
       o.tuning.small_row_split = false;
     }},
    {"kz 8, packed",
     [](Options& o) {
       o.tuning.cluster_split = 8;
       o.tuning.solo = Override::Off;
     }},
    {"kz 8, solo (2 waves)",
     [](Options& o) {
       o.tuning.cluster_split = 8;
       o.tuning.solo = Override::On;
     }},
    {"kz 7, packed",
     [](Options& o) {
       o.tuning.cluster_split = 7;
       o.tuning.solo = Override::Off;
     }},
    {"kz 6", [](Options& o) { o.tuning.cluster_split = 6; }},
    {"kz 5", [](Options& o) { o.tuning.cluster_split = 5; }},
    {"no row split", [](Options& o) { o.tuning.small_row_split = false; }},
    {"two M-groups per warp", [](Options& o) { o.tuning.m16 = false; }},
    {"dp4a", [](Options& o) { o.tuning.dp4a = true; }},
    {"wait: spin (lowest latency)", [](Options& o) { o.wait = GpuWait::Spin; }},
    {"wait: stream sync", [](Options& o) { o.wait = GpuWait::StreamSync; }},
    {"suppression on the host", [](Options& o) { o.tuning.nms_on_host_up_to = 100000; }},
    {"default again", [](Options&) {}},
};
constexpr int kNumVariants = sizeof(kVariants) / sizeof(kVariants[0]);

Options options_of(const Variant& v) {
  Options o;
  v.apply(o);
  return o;
}

// The stderr lines of `calls` calls (the matcher's diagnostics), captured through a temporary file.
template <class F>
std::vector<std::string> stderr_lines(int calls, F&& call) {
  std::vector<std::string> lines;
  std::fflush(stderr);
  char path[] = "/tmp/tm_stderr_XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return lines;
  const int saved = dup(2);
  dup2(fd, 2);
  for (int i = 0; i < calls; ++i) call();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(fd);
  if (FILE* f = std::fopen(path, "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f)) lines.emplace_back(line);
    std::fclose(f);
  }
  unlink(path);
  return lines;
}

// Median kernel time of `calls` match() calls with diagnostics.kernel_time (events around the launch).
template <class F>
double profiled_kernel_ms(int calls, F&& call) {
  std::vector<double> t;
  for (const std::string& line : stderr_lines(calls, call)) {
    float k;
    if (std::sscanf(line.c_str(), "tm profile (ms): kernel %f", &k) == 1) t.push_back(k);
  }
  return median(t);
}

// Medians of match()'s host-side phases with diagnostics.host_time: launch call, wait, NMS.
struct HostTimes {
  double enqueue = NAN, wait = NAN, select = NAN;
  int candidates = 0;
};
template <class F>
HostTimes host_times(int calls, F&& call) {
  std::vector<double> e, w, s;
  HostTimes h;
  for (const std::string& line : stderr_lines(calls, call)) {
    float a, b, c;
    int n;
    if (std::sscanf(line.c_str(), "tm host (us): enqueue %f wait %f select %f candidates %d", &a, &b, &c, &n) == 4) {
      e.push_back(a);
      w.push_back(b);
      s.push_back(c);
      h.candidates = n;
    }
  }
  h.enqueue = median(e);
  h.wait = median(w);
  h.select = median(s);
  return h;
}

struct Row {
  std::string name;
  double wall[kNumVariants], kernel[kNumVariants];
  size_t mismatches[kNumVariants];
  double naive = NAN, npp = NAN;
  double naive_diff = NAN, npp_diff = NAN;
  bool found = false;
};

}  // namespace

int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::max(5, std::atoi(argv[1])) : 50;
  const std::string case_filter = argc > 2 ? argv[2] : "", variant_filter = argc > 3 ? argv[3] : "";
  int dev = 0;
  if (cudaGetDeviceCount(&dev) != cudaSuccess || dev == 0) {
    std::printf("no CUDA device\n");
    return 77;
  }
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  const int W = 1920, H = 1080;

  // A structured frame (smooth waves + noise), on the device with cudaMallocPitch.
  std::vector<uint8_t> host(static_cast<size_t>(W) * H);
  {
    std::mt19937 rng(1);
    std::uniform_int_distribution<int> noise(-12, 12);
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) {
        double v = 128 + 45 * std::sin(0.031 * x + 0.017 * y) + 35 * std::sin(0.011 * x * 1.3 - 0.043 * y) + noise(rng);
        host[static_cast<size_t>(y) * W + x] = static_cast<uint8_t>(std::min(255.0, std::max(0.0, v)));
      }
  }
  uint8_t* frame = nullptr;
  size_t pitch = 0;
  CK(cudaMallocPitch(&frame, &pitch, W, H));
  CK(cudaMemcpy2D(frame, pitch, host.data(), W, W, H, cudaMemcpyHostToDevice));
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));

  cudaTextureObject_t tex8 = 0;
  {
    cudaResourceDesc res{};
    res.resType = cudaResourceTypePitch2D;
    res.res.pitch2D.devPtr = frame;
    res.res.pitch2D.desc = cudaCreateChannelDesc<unsigned char>();
    res.res.pitch2D.width = W;
    res.res.pitch2D.height = H;
    res.res.pitch2D.pitchInBytes = pitch;
    cudaTextureDesc td{};
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModePoint;
    td.readMode = cudaReadModeElementType;
    CK(cudaCreateTextureObject(&tex8, &res, &td, nullptr));
  }

  nppbench::Npp npp;
  const bool have_npp = npp.load();
  std::printf("device: %s (sm_%d%d, %d SMs)\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount);
  std::printf("NPP: %s\n", have_npp ? npp.from.c_str() : ("not found (column left empty): " + npp.error).c_str());
  launch_overhead(stream);
  float* dmap = nullptr;
  CK(cudaMalloc(&dmap, sizeof(float) * W * H));
  uint8_t* npp_buf = nullptr;
  size_t npp_buf_bytes = 0;

  struct Case {
    std::string name;
    int side;
    Rect search;
  };
  std::vector<Case> cases = {{"1920x1080, 16 px", 16, {}},
                             {"1920x1080, 32 px", 32, {}},
                             {"1920x1080, 64 px", 64, {}},
                             {"1920x1080, 128 px", 128, {}},
                             {"1920x1080, 256 px", 256, {}},
                             {"256x256 region, 64 px", 64, {832, 412, 256, 256}},
                             // a tracking window: a 2-template-size margin around a 64 px match
                             {"320x320 region, 64 px", 64, {900 - 128, 450 - 128, 320, 320}}};
  std::vector<Row> rows;
  for (const Case& k : cases) {
    if (!case_filter.empty() && k.name.find(case_filter) == std::string::npos) continue;
    Row row;
    row.name = k.name;
    const int tw = k.side, th = k.side;
    const int tx = 900, ty = 450;  // the template is cut here (inside the region case too)
    std::vector<uint8_t> t(static_cast<size_t>(tw) * th);
    for (int j = 0; j < th; ++j)
      std::memcpy(&t[static_cast<size_t>(j) * tw], &host[static_cast<size_t>(ty + j) * W + tx], tw);
    GrayView tv{t.data(), tw, tw, th};
    const Rect region = k.search.empty() ? Rect{0, 0, W, H} : k.search;
    const int mw = region.w - tw + 1, mh = region.h - th + 1;
    MatchSettings ms;
    ms.search = k.search;
    ms.threshold = 0.8;
    ms.max_matches = 8;
    GrayView fv{frame, static_cast<int64_t>(pitch), W, H};

    // Ours: every variant; score maps compared with the default's, bit for bit.
    std::vector<float> ours_map;
    for (int vi = 0; vi < kNumVariants; ++vi) {
      row.wall[vi] = row.kernel[vi] = NAN;
      row.mismatches[vi] = 0;
      if (!variant_filter.empty() && variant_filter != kVariants[vi].name) continue;
      const Options variant = options_of(kVariants[vi]);
      TemplateMatcherCuda m;
      Status s = m.configure(W, H, stream, variant);
      if (s.ok()) s = m.set_template(tv);
      if (!s.ok()) {
        std::printf("%s, %s: %s\n", k.name.c_str(), kVariants[vi].name, s.message().c_str());
        continue;
      }
      std::vector<Match> out;
      for (int i = 0; i < 3; ++i) m.match(fv, ms, &out);
      std::vector<double> wall;
      for (int i = 0; i < iters; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        s = m.match(fv, ms, &out);
        const auto t1 = std::chrono::steady_clock::now();
        if (!s.ok()) {
          std::printf("match: %s\n", s.message().c_str());
          return 1;
        }
        wall.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      }
      row.wall[vi] = median(wall);
      const bool found = !out.empty() && out[0].x == tx && out[0].y == ty;
      if (vi == 0)
        row.found = found;
      else if (found != row.found)
        std::printf("%s, %s: found=%d differs\n", k.name.c_str(), kVariants[vi].name, found);
      std::vector<float> map;
      int w2 = 0, h2 = 0;
      s = m.score_map(fv, k.search, &map, &w2, &h2);
      if (!s.ok()) std::printf("score_map: %s\n", s.message().c_str());
      if (vi == 0) {
        ours_map = map;
      } else {
        for (size_t i = 0; i < map.size() && map.size() == ours_map.size(); ++i)
          row.mismatches[vi] += std::memcmp(&map[i], &ours_map[i], 4) != 0;
        if (map.size() != ours_map.size()) row.mismatches[vi] = size_t(-1);
      }
      {  // match()'s host side: launch call, wait for the candidates, NMS (graphs as configured)
        Options o = variant;
        o.diagnostics.host_time = true;
        TemplateMatcherCuda mh;
        if (mh.configure(W, H, stream, o).ok() && mh.set_template(tv).ok()) {
          for (int i = 0; i < 3; ++i) mh.match(fv, ms, &out);
          const HostTimes h = host_times(21, [&] { mh.match(fv, ms, &out); });
          std::printf("host (us), %s, %s: enqueue %.2f, wait %.2f, select %.2f (%d candidates)\n", k.name.c_str(),
                      kVariants[vi].name, h.enqueue, h.wait, h.select, h.candidates);
        }
      }
      {  // the kernel alone (profiling launches it without a graph)
        Options o = variant;
        o.diagnostics.kernel_time = true;
        TemplateMatcherCuda mp;
        if (mp.configure(W, H, stream, o).ok() && mp.set_template(tv).ok())
          row.kernel[vi] = profiled_kernel_ms(21, [&] { mp.match(fv, ms, &out); });
      }
      if ((vi == 0 || std::strstr(kVariants[vi].name, "(before)")) &&
          variant_filter.empty()) {  // phase times per block
        Options o = variant;
        o.diagnostics.trace = true;
        TemplateMatcherCuda mt;
        std::fflush(stdout);
        std::fprintf(stderr, "%s, %s:\n", k.name.c_str(), kVariants[vi].name);
        if (mt.configure(W, H, stream, o).ok() && mt.set_template(tv).ok())
          for (int i = 0; i < 3; ++i) mt.match(fv, ms, &out);
        std::fflush(stderr);
      }
    }

    // Naive texture kernel.
    {
      uint8_t* dt = nullptr;
      CK(cudaMalloc(&dt, t.size()));
      CK(cudaMemcpy(dt, t.data(), t.size(), cudaMemcpyHostToDevice));
      int64_t st = 0, stt = 0;
      for (uint8_t p : t) {
        st += p;
        stt += int64_t(p) * p;
      }
      const int64_t n = int64_t(tw) * th;
      const dim3 block(32, 8), grid((mw + 31) / 32, (mh + 7) / 8);
      const int reps = k.side >= 128 ? 2 : 5;
      std::vector<double> times;
      for (int i = 0; i < reps + 1; ++i) {
        CK(cudaEventRecord(e0, stream));
        naive_kernel<<<grid, block, 0, stream>>>(tex8, dt, tw, th, region.x, region.y, mw, mh, n, st, n * stt - st * st,
                                                 dmap);
        CK(cudaEventRecord(e1, stream));
        CK(cudaEventSynchronize(e1));
        CK(cudaGetLastError());
        float ms_ = 0;
        CK(cudaEventElapsedTime(&ms_, e0, e1));
        if (i > 0) times.push_back(ms_);
      }
      row.naive = median(times);
      std::vector<float> nm(static_cast<size_t>(mw) * mh);
      CK(cudaMemcpy(nm.data(), dmap, nm.size() * 4, cudaMemcpyDeviceToHost));
      if (nm.size() == ours_map.size()) {
        double d = 0;
        for (size_t i = 0; i < nm.size(); ++i) d = std::max(d, std::abs(double(nm[i]) - ours_map[i]));
        row.naive_diff = d;
      }
      cudaFree(dt);
    }

    // NPP.
    if (have_npp) {
      uint8_t* dt = nullptr;
      CK(cudaMalloc(&dt, t.size()));
      CK(cudaMemcpy(dt, t.data(), t.size(), cudaMemcpyHostToDevice));
      nppbench::NppStreamContext ctx = nppbench::npp_context(stream);
      nppbench::NppiSize src{region.w, region.h}, tpl{tw, th};
      size_t need = 0;
      if (npp.buffer_size) npp.buffer_size(src, &need, ctx);
      need = std::max<size_t>(need, 64u << 20);
      if (need > npp_buf_bytes) {
        if (npp_buf) cudaFree(npp_buf);
        CK(cudaMalloc(&npp_buf, need));
        npp_buf_bytes = need;
      }
      const uint8_t* src_ptr = frame + static_cast<size_t>(region.y) * pitch + region.x;
      std::vector<double> times;
      int status = 0;
      for (int i = 0; i < 21; ++i) {
        CK(cudaEventRecord(e0, stream));
        status = npp.cross_corr(src_ptr, static_cast<int>(pitch), src, dt, tw, tpl, dmap, mw * 4, npp_buf, ctx);
        CK(cudaEventRecord(e1, stream));
        CK(cudaEventSynchronize(e1));
        float ms_ = 0;
        CK(cudaEventElapsedTime(&ms_, e0, e1));
        if (i > 0) times.push_back(ms_);
        if (status != 0) break;
      }
      if (status == 0) {
        row.npp = median(times);
        std::vector<float> nm(static_cast<size_t>(mw) * mh);
        CK(cudaMemcpy(nm.data(), dmap, nm.size() * 4, cudaMemcpyDeviceToHost));
        double d = 0;
        for (size_t i = 0; i < nm.size() && nm.size() == ours_map.size(); ++i)
          d = std::max(d, std::abs(double(nm[i]) - ours_map[i]));
        row.npp_diff = d;
      } else {
        std::printf("%s: NPP returned status %d\n", k.name.c_str(), status);
      }
      cudaFree(dt);
    }
    rows.push_back(row);
    std::printf("%-24s", row.name.c_str());
    for (int vi = 0; vi < kNumVariants; ++vi)
      std::printf(" | %s %.4f (k %.4f, diff %zu)", kVariants[vi].name, row.wall[vi], row.kernel[vi],
                  row.mismatches[vi]);
    std::printf(" | naive %.3f npp %.3f found=%d |naive-ours| %.2g |npp-ours| %.2g\n", row.naive, row.npp, row.found,
                row.naive_diff, row.npp_diff);
  }

  std::printf("\n### Template matching, %s, median of %d (ms)\n\n", prop.name, iters);
  std::printf(
      "match(): scores + peaks + candidates + one sync + NMS on the host, host wall time. In brackets: the "
      "GPU time of the kernel alone (events, diagnostics.kernel_time). Naive and NPP: score map only, events.\n\n");
  std::printf("| case |");
  for (int vi = 0; vi < kNumVariants; ++vi) std::printf(" %s |", kVariants[vi].name);
  std::printf(" naive | NPP |\n|---|");
  for (int vi = 0; vi < kNumVariants; ++vi) std::printf("---|");
  std::printf("---|---|\n");
  for (const Row& r : rows) {
    std::printf("| %s |", r.name.c_str());
    for (int vi = 0; vi < kNumVariants; ++vi) {
      if (std::isnan(r.kernel[vi]))
        std::printf(" %.4f |", r.wall[vi]);
      else
        std::printf(" %.4f (%.4f) |", r.wall[vi], r.kernel[vi]);
    }
    std::printf(" %.3f | %s |\n", r.naive, std::isnan(r.npp) ? "n/a" : std::to_string(r.npp).substr(0, 5).c_str());
  }
  bool all_same = true;
  for (const Row& r : rows)
    for (int vi = 1; vi < kNumVariants; ++vi) all_same = all_same && r.mismatches[vi] == 0;
  std::printf("\nscore maps of all variants bit-identical to the default's: %s; best match found in every case: %s\n",
              all_same ? "yes" : "NO",
              std::all_of(rows.begin(), rows.end(), [](const Row& r) { return r.found; }) ? "yes" : "NO");
  return 0;
}
