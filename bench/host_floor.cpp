// host_floor: the host's floor under the elements' per-frame CPU, measured in the same run as the
// pipeline bench (bench/pipeline_bench.py prints it above its table). It times, on the element's kind of
// context (a GstCudaContext pushed for the call and popped after), only the calls an element
// cannot leave out of a frame: no pipeline, pool, map or meta.
//  - tensorize: the fused kernel's launch call (tensorize_cuda, 1080p NV12 -> 640x640 letterbox
//    fp32, as in the pipeline bench), left on the stream as a CUDA tensor is;
//  - match: cudatemplatematch's match() (64x64 template, whole 1080p frame, the element's default
//    wait: a blocking-sync event, the thread asleep meanwhile). The frame is noise with the
//    template cut out of it, so it finds one match; the pipeline's footage has more candidates.
// Two rhythms: back to back (the next frame at once, as in the kernel benches), and after 2 ms
// asleep (a streaming thread waits for the decoder's next frame between two; the clip decodes at
// about 1 ms a frame). Each frame also times a fixed arithmetic loop after the call (no memory, no
// system call): the host's speed at that moment, to tell a slow call from a slow machine.
// Output, one line per call and rhythm: "host-floor CALL RHYTHM n=N cpu_median_us=M
// cpu_p90_us=P wall_median_us=W loop_median_us=L" (cpu: the thread's CPU time in the call).
#include <cuda_runtime.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/gst.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "match_engine.h"
#include "tensorize.h"

namespace {

using namespace cudaprep;

constexpr int kWidth = 1920, kHeight = 1080, kTemplate = 64;

double thread_cpu_us() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[size_t(q * double(v.size() - 1))];
}

// About 2 us of dependent multiply-adds on a 3 GHz core.
__attribute__((noinline)) unsigned fixed_loop(unsigned x) {
  for (int i = 0; i < 4000; i++) x = x * 1664525u + 1013904223u;
  return x;
}

int fail(const char* what, const char* why) {
  std::fprintf(stderr, "host_floor: %s: %s\n", what, why);
  return 1;
}

// Times `call` (context pushed around it) in both rhythms and prints its two lines; `after`
// runs outside the timing (the stream drained). Returns false where a call failed.
unsigned loop_seed = 1;  // (the fixed loop's result, printed at the end so that it is computed)

template <typename Call, typename After>
bool time_call(const char* name, GstCudaContext* context, Call call, After after) {
  for (const int sleep_us : {0, 2000}) {
    std::vector<double> cpu, wall, loop;
    for (int f = -20; f < 400; f++) {
      if (sleep_us) {
        const timespec ts{0, sleep_us * 1000L};
        nanosleep(&ts, nullptr);
      }
      const double c0 = thread_cpu_us(), t0 = now_us();
      if (!gst_cuda_context_push(context)) {
        fail(name, "context push failed");
        return false;
      }
      const Status st = call();
      gst_cuda_context_pop(nullptr);
      const double t1 = now_us(), c1 = thread_cpu_us();
      loop_seed = fixed_loop(loop_seed);
      const double t2 = now_us();
      if (!st.ok() || !after()) {
        fail(name, st.ok() ? "the stream's work failed" : st.message().c_str());
        return false;
      }
      if (f < 0) continue;  // warm-up
      cpu.push_back(c1 - c0);
      wall.push_back(t1 - t0);
      loop.push_back(t2 - t1);
    }
    std::printf("host-floor %s %s n=%zu cpu_median_us=%.1f cpu_p90_us=%.1f wall_median_us=%.1f loop_median_us=%.1f\n",
                name, sleep_us ? "after-2ms-asleep" : "back-to-back", cpu.size(), quantile(cpu, 0.5),
                quantile(cpu, 0.9), quantile(wall, 0.5), quantile(loop, 0.5));
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  if (!gst_cuda_load_library()) return fail("CUDA", "the driver library could not be loaded");
  GstCudaContext* context = gst_cuda_context_new(0);
  if (!context) return fail("CUDA", "no context on device 0");
  if (!gst_cuda_context_push(context)) return fail("CUDA", "context push failed");

  // An NV12 frame of noise (its luma is the matcher's gray image) and the tensor.
  std::vector<uint8_t> host(size_t(kWidth) * kHeight * 3 / 2);
  std::mt19937 rng(7);
  for (uint8_t& b : host) b = uint8_t(rng());
  const size_t luma = size_t(kWidth) * kHeight;
  TensorizeConfig cfg;
  cfg.format = PixelFormat::NV12;
  cfg.src_width = kWidth;
  cfg.src_height = kHeight;
  cfg.dst_width = 640;
  cfg.dst_height = 640;
  TensorizePlan plan;
  const Status planned = make_tensorize_plan(cfg, &plan);
  if (!planned.ok()) return fail("plan", planned.message().c_str());
  uint8_t* frame_bytes = nullptr;
  void* tensor = nullptr;
  cudaStream_t stream = nullptr;
  if (cudaMalloc(&frame_bytes, host.size()) != cudaSuccess || cudaMalloc(&tensor, tensor_bytes(plan)) != cudaSuccess ||
      cudaMemcpy(frame_bytes, host.data(), host.size(), cudaMemcpyHostToDevice) != cudaSuccess ||
      cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess)
    return fail("CUDA", "allocation failed");
  ImageView frame;
  frame.format = PixelFormat::NV12;
  frame.width = kWidth;
  frame.height = kHeight;
  frame.planes[0] = {frame_bytes, kWidth};
  frame.planes[1] = {frame_bytes + luma, kWidth};

  std::unique_ptr<MatchEngine> engine = make_match_engine_cuda(stream, GpuWait::Blocking);
  std::vector<uint8_t> templ(size_t(kTemplate) * kTemplate);
  for (int y = 0; y < kTemplate; y++)
    std::copy_n(&host[size_t(500 + y) * kWidth + 900], kTemplate, &templ[size_t(y) * kTemplate]);
  GrayView gray;
  Status st = engine->configure(PixelFormat::NV12, kWidth, kHeight);
  TemplateBank bank;
  bank.templates.resize(1);
  bank.templates[0].label = "t";
  bank.members.resize(1);
  bank.members[0].image.pixels = templ;
  bank.members[0].image.width = bank.members[0].image.height = kTemplate;
  if (st.ok()) st = engine->set_bank(bank);
  if (st.ok()) st = engine->gray_of(frame, &gray);
  gst_cuda_context_pop(nullptr);
  if (!st.ok()) return fail("matcher", st.message().c_str());

  const auto drained = [&] { return cudaStreamSynchronize(stream) == cudaSuccess; };
  if (!time_call(
          "tensorize-launch", context,
          [&] { return tensorize_cuda(plan, frame, tensor, stream, TensorizeTuning(), PaddingRows::Write); }, drained))
    return 1;
  const BankSearch search = BankSearch::over(bank, Rect{0, 0, kWidth, kHeight});
  std::vector<Match> matches;
  if (!time_call(
          "match", context, [&] { return engine->match(gray, search, false, &matches); }, drained))
    return 1;
  if (matches.size() != 1 || matches[0].x != 900 || matches[0].y != 500)
    return fail("match", "did not find the template where it was cut out");

  gst_cuda_context_push(context);
  engine.reset();  // (the context current, as the engine requires)
  gst_cuda_context_pop(nullptr);
  gst_object_unref(context);
  std::fprintf(stderr, "(loop %u)\n", loop_seed);
  return 0;
}
