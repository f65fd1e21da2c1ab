// Tensorize benchmark: 1920x1080 NV12 and BGR -> 640x640x3 fp32 NCHW letterbox.
//
// For each input it times, side by side in the same run:
//   * tensorize_cuda (the fused kernel of this project);
//   * a naive letterbox kernel of the kind common in TensorRT deployments (one thread per output
//     pixel, bilinear, the source read again for every channel, three plane writes);
//   * cudaMemcpyAsync device-to-device of the output tensor's bytes: the floor as the target
//     defines it (the fused kernel writes those bytes and also reads most of the input: about
//     2.4 MB of NV12, 4.1 MB of BGR at this 3:1 scale), and of (input + output) bytes;
//     "vs floor" is the ratio of per-frame times; a copy kernel on the SMs, in case the copy engine
//     that cudaMemcpyAsync may use is slower;
//   * batches (not with --warm): 8 x 1080p NV12 -> 8x3x640x640, 64 regions of 32-400 px of one
//     1080p frame or 8 of each of 8 cameras -> 64x3x224x224, 4 NV12 + 4 BGR of different sizes ->
//     8x3x640x640:
//     tensorize_batch_cuda (one upload + one launch a batch) vs the same slots as single-frame
//     launches vs the D2D copy of the batch's output bytes (a "frame" in the table is one batch),
//     all three enqueued on the stream without a graph: the batch path uploads its slot table
//     from pinned host memory per batch, which a graph cannot capture, and the single launches
//     then pay their launch overhead as a pipeline would;
//   * floors for the single frame: a letterbox-shaped kernel that reads one cold source byte per 4
//     outputs and writes the whole tensor (the least any letterbox kernel does), a write-only memset
//     of the output, and empty kernels on one block and on the fused kernel's grid.
// --batches runs the batch cases alone (a short run, e.g. under a profiler).
// Per-frame throughput: 100 frames back to back captured in a CUDA graph (so host launch cost
// does not limit it), replayed 20 times, timed with CUDA events. Single frame: one launch +
// cudaStreamSynchronize, host clock, median of 300; and the CUDA-event time of that one frame,
// twice: with the events recorded around the launch call (the GPU may reach the first event
// before the host has submitted the launch, so this includes part of the host's launch call),
// and with the launch queued behind a 30 us spin kernel (the GPU side only: front end, block
// dispatch, execution, drain). The host time of the launch call itself is reported too.
// Inputs (and outputs) rotate over enough distinct buffers (>= 8, >= 3x the L2 size) that L2
// never holds the next frame.
//
// Options: --warm turns the rotation off (L2 then holds the frame, as it may right after a decoder
// wrote it; not the target's method, for comparison only). --warps-per-block N (1..4; default:
// each launch's own, 2 single-frame and 4 batch) and --no-plane-routing time the kernels in
// another launch shape (TensorizeTuning).
// NPP is not used: the toolkit here ships without it.
// No OpenCV, no GStreamer.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tensorize.h"
#include "tensorize_batch.h"

using namespace cudaprep;

#define CK(x)                                                                                  \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

namespace {

__global__ void fill_kernel(uint8_t* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    // Smooth-ish content plus noise.
    p[i] = uint8_t((h & 31) + ((i / 7) & 127) + 40);
  }
}

// Busy-waits about `cycles` SM clocks: queued ahead of a timed launch so that the launch is
// already submitted when the GPU reaches the first event (the event pair then times the GPU
// side only, not the host's launch call).
__global__ void spin_kernel(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

__global__ void empty_kernel() {}

// An empty kernel with an argument as large as the fused kernel's, launched on the fused kernel's
// grid: what the launch itself (argument upload, block dispatch, drain) costs for that shape.
// 328 = sizeof the fused kernel's argument struct (tensorize_cuda.cu) when this was written; argument
// sizes from 0 to 328 bytes measured the same (dev/perf/tensorize.md, round 6).
constexpr int kFusedArgBytes = 328;
struct LargeArgs {
  unsigned char bytes[kFusedArgBytes];
};
__global__ void empty_args_kernel(const __grid_constant__ LargeArgs) {}

// The least a letterbox kernel can do, as a floor for the single frame: every thread writes four
// consecutive elements of one output plane row (16-byte store, 256-thread blocks, the best
// write-only shape measured); a thread in a sampled row first reads one byte of the cold source
// row it maps to (3:1, one byte per 4 outputs) and writes that. Padding rows read nothing.
__global__ void letterbox_floor_kernel(const uint8_t* src, int64_t pitch, int bpp, float* dst, int dw, int dh, int a0,
                                       int a1, float pad) {
  const size_t n4 = size_t(dw) * dh * 3 / 4, i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= n4) return;
  const size_t e = 4 * i;
  const int y = int((e / dw) % dh), x = int(e % dw);
  float v = pad;
  if (y >= a0 && y < a1) v = src[int64_t(3 * (y - a0) + 1) * pitch + int64_t(3 * x + 1) * bpp];
  reinterpret_cast<float4*>(dst)[i] = make_float4(v, v, v, v);
}

// A copy on the SMs (one 16-byte vector per thread, one wave): the copy floor without the copy
// engine that cudaMemcpyAsync may use.
__global__ void copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, size_t n) {
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

// ---- naive reference kernels (TensorRT-sample style) ------------------------------------------

struct NaiveArgs {
  const uint8_t* y;  // NV12 luma or BGR
  const uint8_t* uv;
  int64_t pitch_y, pitch_uv;
  int sw, sh;
  float* dst;
  int dw, dh;
  float m[6];  // tensor -> source, pixel-index coordinates
  float pad;   // normalised pad
};

__device__ float naive_bilinear(const uint8_t* img, int64_t pitch, int w, int h, int bpp, int c, float sx, float sy) {
  int x0 = int(floorf(sx)), y0 = int(floorf(sy));
  const float fx = sx - x0, fy = sy - y0;
  const int x1 = min(x0 + 1, w - 1), y1 = min(y0 + 1, h - 1);
  x0 = max(x0, 0);
  y0 = max(y0, 0);
  const float p00 = img[y0 * pitch + x0 * bpp + c], p01 = img[y0 * pitch + x1 * bpp + c];
  const float p10 = img[y1 * pitch + x0 * bpp + c], p11 = img[y1 * pitch + x1 * bpp + c];
  return (1 - fy) * ((1 - fx) * p00 + fx * p01) + fy * ((1 - fx) * p10 + fx * p11);
}

// One thread per output pixel: the affine map, padding outside the source, else channel c of the
// output (R, G, B) from sample(c, sx, sy) in [0, 255].
template <class Sample>
__device__ void naive_letterbox(const NaiveArgs& a, Sample sample) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= a.dw || y >= a.dh) return;
  const float sx = a.m[0] * x + a.m[1] * y + a.m[2], sy = a.m[3] * x + a.m[4] * y + a.m[5];
  const size_t area = size_t(a.dw) * a.dh, o = size_t(y) * a.dw + x;
  if (sx < -0.5f || sy < -0.5f || sx > a.sw - 0.5f || sy > a.sh - 0.5f) {
    a.dst[o] = a.dst[area + o] = a.dst[2 * area + o] = a.pad;
    return;
  }
  for (int c = 0; c < 3; ++c) a.dst[c * area + o] = sample(c, sx, sy) * (1.0f / 255);
}

__global__ void naive_letterbox_bgr(NaiveArgs a) {
  // Output R, G, B = source bytes 2, 1, 0.
  naive_letterbox(
      a, [&](int c, float sx, float sy) { return naive_bilinear(a.y, a.pitch_y, a.sw, a.sh, 3, 2 - c, sx, sy); });
}

__device__ float naive_yuv_channel(const NaiveArgs& a, int c, float sx, float sy) {
  const float Y = naive_bilinear(a.y, a.pitch_y, a.sw, a.sh, 1, 0, sx, sy);
  const float cx = (sx + 0.5f) * 0.5f - 0.5f, cy = (sy + 0.5f) * 0.5f - 0.5f;
  const float U = naive_bilinear(a.uv, a.pitch_uv, a.sw / 2, a.sh / 2, 2, 0, cx, cy) - 128.f;
  const float V = naive_bilinear(a.uv, a.pitch_uv, a.sw / 2, a.sh / 2, 2, 1, cx, cy) - 128.f;
  const float yy = 1.164383f * (Y - 16.f);
  float v = c == 0 ? yy + 1.596027f * V : (c == 1 ? yy - 0.391762f * U - 0.812968f * V : yy + 2.017232f * U);
  return fminf(fmaxf(v, 0.f), 255.f);
}

__global__ void naive_letterbox_nv12(NaiveArgs a) {
  naive_letterbox(a, [&](int c, float sx, float sy) { return naive_yuv_channel(a, c, sx, sy); });
}

// ---- harness ---------------------------------------------------------------------------------

struct Row {
  std::string input, method;
  double per_frame_us, gbps, single_gpu_us, queued_gpu_us, latency_us, call_us, vs_out_copy, vs_inout_copy, vs_in_copy;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename Launch>
void time_method(const char* input, const char* method, size_t moved_bytes, Launch launch, cudaStream_t s,
                 std::vector<Row>* rows, bool use_graph = true) {
  // Warm up.
  for (int i = 0; i < 20; ++i) launch(i);
  CK(cudaStreamSynchronize(s));
  // Throughput: 100 frames in a graph, replayed; or, without a graph, enqueued back to back on
  // the stream (the batch path uploads its slot table from host memory per batch: not capturable).
  const int kFrames = 100, kReplays = 20;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  if (use_graph) {
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < kFrames; ++i) launch(i);
    CK(cudaStreamEndCapture(s, &graph));
    CK(cudaGraphInstantiate(&exec, graph, 0));
    CK(cudaGraphLaunch(exec, s));
    CK(cudaStreamSynchronize(s));
  }
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaEventRecord(e0, s));
  for (int r = 0; r < kReplays; ++r) {
    if (use_graph) {
      CK(cudaGraphLaunch(exec, s));
    } else {
      for (int i = 0; i < kFrames; ++i) launch(r * kFrames + i);
    }
  }
  CK(cudaEventRecord(e1, s));
  CK(cudaEventSynchronize(e1));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, e0, e1));
  const double per_frame_us = 1000.0 * ms / (kFrames * kReplays);
  // Single frame: launch + sync (host clock) and the event time of that frame.
  std::vector<double> lat, gpu, call;
  for (int i = 0; i < 300; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    CK(cudaEventRecord(e0, s));
    const auto c0 = std::chrono::steady_clock::now();
    launch(i);
    call.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - c0).count());
    CK(cudaEventRecord(e1, s));
    CK(cudaStreamSynchronize(s));
    const auto t1 = std::chrono::steady_clock::now();
    lat.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    CK(cudaEventElapsedTime(&ms, e0, e1));
    gpu.push_back(1000.0 * ms);
  }
  // Single frame, GPU side only: the launch is queued behind a spin kernel before the GPU records e0.
  std::vector<double> queued;
  for (int i = 0; i < 200; ++i) {
    spin_kernel<<<1, 1, 0, s>>>(60000);
    CK(cudaEventRecord(e0, s));
    launch(i);
    CK(cudaEventRecord(e1, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaEventElapsedTime(&ms, e0, e1));
    queued.push_back(1000.0 * ms);
  }
  if (use_graph) {
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(graph));
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  rows->push_back({input, method, per_frame_us, moved_bytes / (per_frame_us * 1e3), median(gpu), median(queued),
                   median(lat), median(call), 0, 0, 0});
}

// ---- batches -------------------------------------------------------------------------------

// One slot of a batch case: a source frame (format, size) and a region of it (empty = whole).
struct BatchSlotCase {
  PixelFormat format;
  int w, h;
  Rect roi;
};

size_t frame_bytes(PixelFormat f, int w, int h) {
  size_t n = 0;
  for (int p = 0; p < plane_count(f); ++p) n += size_t(plane_row_bytes(f, p, w)) * size_t(plane_rows(f, p, h));
  return n;
}

// A w x h frame of format f whose planes follow each other from `base`, rows unpadded.
ImageView stacked_frame(PixelFormat f, int w, int h, const uint8_t* base) {
  ImageView v;
  v.format = f;
  v.width = w;
  v.height = h;
  for (int p = 0; p < plane_count(f); ++p) {
    v.planes[p] = {base, plane_row_bytes(f, p, w)};
    base += size_t(plane_row_bytes(f, p, w)) * size_t(plane_rows(f, p, h));
  }
  return v;
}

// The table's case: a 1920x1080 frame of `fmt` -> 640x640 letterbox, default settings.
TensorizePlan full_hd_plan(PixelFormat fmt) {
  TensorizeConfig cfg;
  cfg.format = fmt;
  cfg.src_width = 1920;
  cfg.src_height = 1080;
  cfg.dst_width = 640;
  cfg.dst_height = 640;
  TensorizePlan plan;
  const Status st = make_tensorize_plan(cfg, &plan);
  if (!st.ok()) {
    std::fprintf(stderr, "plan: %s\n", st.message().c_str());
    std::exit(1);
  }
  return plan;
}

// Times one batch case side by side: the one-launch batch, the same slots as single-frame
// launches, and the device-to-device copy of the batch's output bytes (the floor). Each run of
// `per_frame` consecutive slots reads one frame (regions of a camera's frame); with several frames
// of several regions each, also one batch launch per frame (what one cudatensorize roi-meta
// element per camera launches). Inputs and outputs rotate over enough sets that L2 never holds
// the next batch.
void bench_batch(const char* name, const std::vector<BatchSlotCase>& cases, int per_frame, int dst_w, int dst_h,
                 const cudaDeviceProp& prop, const TensorizeTuning& tuning, cudaStream_t s, std::vector<Row>* rows) {
  TensorOutputSpec spec;
  spec.dst_width = dst_w;
  spec.dst_height = dst_h;
  TensorOutputPlan output;
  if (!make_output_plan(spec, &output).ok()) std::exit(1);
  const int n = int(cases.size());
  const int frames = (n + per_frame - 1) / per_frame;
  std::vector<size_t> in_off(frames + 1, 0);
  for (int f = 0; f < frames; ++f) {
    const BatchSlotCase& c = cases[size_t(f) * per_frame];
    in_off[f + 1] = in_off[f] + frame_bytes(c.format, c.w, c.h);
  }
  const size_t in_bytes = in_off[frames], out_bytes = batch_bytes(output, n);
  const size_t l2 = size_t(std::max(prop.l2CacheSize, 1 << 20));
  const int sets = int(std::max<size_t>(4, (3 * l2 + in_bytes + out_bytes - 1) / (in_bytes + out_bytes)));
  uint8_t *in = nullptr, *out = nullptr, *copy_src = nullptr, *copy_dst = nullptr;
  CK(cudaMalloc(&in, in_bytes * sets));
  CK(cudaMalloc(&out, out_bytes * sets));
  CK(cudaMalloc(&copy_src, out_bytes * sets));
  CK(cudaMalloc(&copy_dst, out_bytes * sets));
  fill_kernel<<<1024, 256, 0, s>>>(in, in_bytes * sets, 4321u);
  CK(cudaGetLastError());
  // Slot plans and the slot arrays of every set.
  std::vector<std::vector<BatchSlot>> slots(sets, std::vector<BatchSlot>(n));
  for (int i = 0; i < n; ++i) {
    const BatchSlotCase& c = cases[i];
    SlotSourceSpec src;
    src.format = c.format;
    src.src_width = c.w;
    src.src_height = c.h;
    src.roi = c.roi;
    SlotPlan plan;
    const Status st = make_slot_plan(spec, src, &plan);
    if (!st.ok()) {
      std::fprintf(stderr, "%s slot %d: %s\n", name, i, st.message().c_str());
      std::exit(1);
    }
    for (int k = 0; k < sets; ++k) {
      slots[k][i].plan = plan;
      slots[k][i].src = stacked_frame(c.format, c.w, c.h, in + size_t(k) * in_bytes + in_off[i / per_frame]);
    }
  }
  BatchSlotTable table;
  if (!table.reserve(n).ok()) std::exit(1);
  const size_t first_row = rows->size();
  time_method(
      name, "tensorize_batch_cuda (one launch)", in_bytes + out_bytes,
      [&](int i) {
        TensorizeBatch b;
        b.output = output;
        b.slots = slots[i % sets].data();
        b.count = n;
        const Status r = tensorize_batch_cuda(b, out + size_t(i % sets) * out_bytes, out_bytes, s, &table, tuning);
        if (!r.ok()) {
          std::fprintf(stderr, "tensorize_batch_cuda: %s\n", r.message().c_str());
          std::exit(1);
        }
      },
      s, rows, false);
  if (frames > 1 && per_frame > 1) {
    char per_camera[80];
    std::snprintf(per_camera, sizeof(per_camera), "%d x tensorize_batch_cuda (a launch per frame)", frames);
    std::vector<BatchSlotTable> tables(frames);
    for (BatchSlotTable& t : tables)
      if (!t.reserve(per_frame).ok()) std::exit(1);
    time_method(
        name, per_camera, in_bytes + out_bytes,
        [&](int i) {
          for (int f = 0; f < frames; ++f) {
            TensorizeBatch b;
            b.output = output;
            b.slots = slots[i % sets].data() + size_t(f) * per_frame;
            b.count = std::min(per_frame, n - f * per_frame);
            const Status r =
                tensorize_batch_cuda(b, out + size_t(i % sets) * out_bytes + slot_bytes(output) * f * per_frame,
                                     slot_bytes(output) * b.count, s, &tables[f], tuning);
            if (!r.ok()) std::exit(1);
          }
        },
        s, rows, false);
  }
  char single[64];
  std::snprintf(single, sizeof(single), "%d x tensorize_cuda (single launches)", n);
  const size_t slot = slot_bytes(output);
  time_method(
      name, single, in_bytes + out_bytes,
      [&](int i) {
        for (int k = 0; k < n; ++k) {
          const BatchSlot& b = slots[i % sets][k];
          const Status r = tensorize_cuda(combine_plan(output, b.plan), b.src,
                                          out + size_t(i % sets) * out_bytes + slot * k, s, tuning);
          if (!r.ok()) std::exit(1);
        }
      },
      s, rows, false);
  time_method(
      name, "cudaMemcpy D2D (out bytes) = floor", 2 * out_bytes,
      [&](int i) {
        CK(cudaMemcpyAsync(copy_dst + size_t(i % sets) * out_bytes, copy_src + size_t((i + 1) % sets) * out_bytes,
                           out_bytes, cudaMemcpyDeviceToDevice, s));
      },
      s, rows, false);
  const double floor_us = rows->back().per_frame_us, batch_us = (*rows)[first_row].per_frame_us;
  for (size_t k = first_row; k < rows->size(); ++k) {
    (*rows)[k].vs_out_copy = (*rows)[k].per_frame_us / floor_us;
    (*rows)[k].vs_inout_copy = 0;  // not measured for batches ("-")
    (*rows)[k].vs_in_copy = 0;
  }
  std::printf("%s: one launch = %.2fx the copy floor", name, batch_us / floor_us);
  for (size_t k = first_row + 1; k + 1 < rows->size(); ++k)
    std::printf(", %.2fx %s", batch_us / (*rows)[k].per_frame_us, (*rows)[k].method.c_str());
  std::printf("\n");
  CK(cudaFree(in));
  CK(cudaFree(out));
  CK(cudaFree(copy_src));
  CK(cudaFree(copy_dst));
}

// The batch cases: cameras, regions of one frame, regions of 8 cameras, mixed formats.
void bench_batches(const cudaDeviceProp& prop, const TensorizeTuning& tuning, cudaStream_t s, std::vector<Row>* rows) {
  std::vector<BatchSlotCase> cams(8, BatchSlotCase{PixelFormat::NV12, 1920, 1080, Rect()});
  bench_batch("batch: 8 x NV12 1920x1080 -> 8x3x640x640", cams, 1, 640, 640, prop, tuning, s, rows);

  std::vector<BatchSlotCase> regions;
  uint32_t seed = 7;
  auto next = [&seed](int m) {
    seed = seed * 1664525u + 1013904223u;
    return int((seed >> 8) % uint32_t(m));
  };
  for (int i = 0; i < 64; ++i) {
    Rect r;
    r.w = 32 + next(369);
    r.h = 32 + next(369);
    r.x = next(1920 - r.w);
    r.y = next(1080 - r.h);
    regions.push_back({PixelFormat::NV12, 1920, 1080, r});
  }
  bench_batch("batch: 64 regions 32-400 px of one NV12 1080p -> 64x3x224x224", regions, 64, 224, 224, prop, tuning, s,
              rows);

  // A second stage over 8 cameras: 8 regions of each camera's frame in one classifier batch.
  std::vector<BatchSlotCase> camera_regions;
  for (int i = 0; i < 64; ++i) camera_regions.push_back({PixelFormat::NV12, 1920, 1080, regions[i].roi});
  bench_batch("batch: 8 cameras NV12 1080p x 8 regions 32-400 px -> 64x3x224x224", camera_regions, 8, 224, 224, prop,
              tuning, s, rows);

  const std::vector<BatchSlotCase> mixed = {
      {PixelFormat::NV12, 1920, 1080, Rect()}, {PixelFormat::NV12, 1280, 720, Rect()},
      {PixelFormat::NV12, 3840, 2160, Rect()}, {PixelFormat::NV12, 1279, 719, Rect()},
      {PixelFormat::BGR, 1920, 1080, Rect()},  {PixelFormat::BGR, 640, 480, Rect()},
      {PixelFormat::BGR, 1280, 720, Rect()},   {PixelFormat::BGR, 1001, 777, Rect()}};
  bench_batch("batch: mixed 4 NV12 + 4 BGR, sizes 640x480..3840x2160 -> 8x3x640x640", mixed, 1, 640, 640, prop, tuning,
              s, rows);
}

struct Options {
  bool warm = false;
  bool batches_only = false;  // only the batch cases (a short run, e.g. under a profiler)
  TensorizeTuning tuning;
};

bool parse_options(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--warm")) {
      o->warm = true;
    } else if (!std::strcmp(argv[i], "--batches")) {
      o->batches_only = true;
    } else if (!std::strcmp(argv[i], "--no-plane-routing")) {
      o->tuning.plane_routing = false;
    } else if (!std::strcmp(argv[i], "--warps-per-block") && i + 1 < argc) {
      o->tuning.warps_per_block = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--warm | --batches] [--warps-per-block N] [--no-plane-routing]\n", argv[0]);
      return false;
    }
  }
  return true;
}

}  // namespace

// ---- camera and decoder formats, output types ---------------------------------------------------

// The fused kernel on 1080p YUY2 (USB / GMSL cameras) and P010 (HEVC Main10, HDR) -> 640x640
// letterbox fp32 NCHW, and NV12 into the tensors quantised models take (uint8 NHWC, the pixels)
// and gray fp32; each beside the device-to-device copy of its output's bytes (the floor of the
// main rows: for the 1-byte and 1-channel outputs the source read outweighs it).
void bench_camera_formats(const TensorizeTuning& tuning, bool warm, size_t l2, cudaStream_t s, std::vector<Row>* rows) {
  const int SW = 1920, SH = 1080, DW = 640, DH = 640;
  struct Case {
    PixelFormat fmt;
    DType dtype;
    Layout layout;
    int channels;
    const char* what;
  } cases[] = {{PixelFormat::YUY2, DType::Float32, Layout::NCHW, 3, ""},
               {PixelFormat::P010_10LE, DType::Float32, Layout::NCHW, 3, ""},
               {PixelFormat::NV12, DType::UInt8, Layout::NHWC, 3, " -> uint8 NHWC"},
               {PixelFormat::NV12, DType::Float32, Layout::NCHW, 1, " -> gray fp32"}};
  for (const Case& k : cases) {
    const PixelFormat fmt = k.fmt;
    const size_t out_bytes = size_t(DW) * DH * size_t(k.channels) * size_t(dtype_bytes(k.dtype));
    const std::string name = std::string(pixel_format_name(fmt)) + " 1920x1080" + k.what;
    const size_t in_bytes = frame_bytes(fmt, SW, SH);
    const int n_in = warm ? 1 : int(std::max<size_t>(8, (3 * l2 + in_bytes - 1) / in_bytes));
    const int n_out = warm ? 1 : int(std::max<size_t>(8, (3 * l2 + out_bytes - 1) / out_bytes));
    uint8_t *in = nullptr, *out = nullptr, *copy_src = nullptr;
    CK(cudaMalloc(&in, in_bytes * n_in));
    CK(cudaMalloc(&out, out_bytes * n_out));
    CK(cudaMalloc(&copy_src, out_bytes * n_out));
    fill_kernel<<<1024, 256, 0, s>>>(in, in_bytes * n_in, 4321u);
    CK(cudaGetLastError());
    TensorizeConfig cfg;
    cfg.format = fmt;
    cfg.src_width = SW;
    cfg.src_height = SH;
    cfg.dst_width = DW;
    cfg.dst_height = DH;
    cfg.dtype = k.dtype;
    cfg.layout = k.layout;
    cfg.channels = k.channels;
    cfg.scale = default_normalisation(k.dtype).scale;
    TensorizePlan plan;
    if (!make_tensorize_plan(cfg, &plan).ok()) std::exit(1);
    auto view_of = [&](int i) { return stacked_frame(fmt, SW, SH, in + size_t(i % n_in) * in_bytes); };
    const size_t first_row = rows->size();
    time_method(
        name.c_str(), "tensorize_cuda (fused)", in_bytes + out_bytes,
        [&](int i) {
          const Status r = tensorize_cuda(plan, view_of(i), out + size_t(i % n_out) * out_bytes, s, tuning);
          if (!r.ok()) {
            std::fprintf(stderr, "tensorize_cuda: %s\n", r.message().c_str());
            std::exit(1);
          }
        },
        s, rows);
    time_method(
        name.c_str(), "cudaMemcpy D2D (out bytes) = floor", 2 * out_bytes,
        [&](int i) {
          CK(cudaMemcpyAsync(out + size_t(i % n_out) * out_bytes, copy_src + size_t((i + 3) % n_out) * out_bytes,
                             out_bytes, cudaMemcpyDeviceToDevice, s));
        },
        s, rows);
    for (size_t k = first_row; k < rows->size(); ++k)
      (*rows)[k].vs_out_copy = (*rows)[k].per_frame_us / rows->back().per_frame_us;
    CK(cudaFree(in));
    CK(cudaFree(out));
    CK(cudaFree(copy_src));
  }
}

// Issue 11's bound for a system-memory tensor: the device-to-host copy of the 640x640x3 fp32
// tensor into pinned memory, as the element downloads it. Per copy back to back (events), and one
// copy waited for by the host (what one frame costs at best).
static void bench_download(cudaStream_t s) {
  const size_t bytes = size_t(640) * 640 * 3 * 4;
  uint8_t *dev = nullptr, *host = nullptr;
  CK(cudaMalloc(&dev, bytes));
  CK(cudaMallocHost(&host, bytes));
  CK(cudaMemsetAsync(dev, 1, bytes, s));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < 5; i++) CK(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, s));
  const int n = 50;
  CK(cudaEventRecord(a, s));
  for (int i = 0; i < n; i++) CK(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, s));
  CK(cudaEventRecord(b, s));
  CK(cudaEventSynchronize(b));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  const double per_copy = 1000.0 * ms / n;
  std::vector<double> host_us;
  for (int i = 0; i < 30; i++) {
    const auto t0 = std::chrono::steady_clock::now();
    CK(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    host_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(host_us.begin(), host_us.end());
  std::printf(
      "download of a 640x640x3 fp32 tensor (%zu B) into pinned memory: %.1f us per copy back to back "
      "(%.1f GB/s); one copy and a host wait: median %.1f us\n",
      bytes, per_copy, bytes / per_copy / 1e3, host_us[host_us.size() / 2]);
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  CK(cudaFreeHost(host));
  CK(cudaFree(dev));
}

int main(int argc, char** argv) {
  Options opt;
  if (!parse_options(argc, argv, &opt)) return 2;
  int dev = 0;
  CK(cudaSetDevice(dev));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int SW = 1920, SH = 1080, DW = 640, DH = 640;
  const size_t out_bytes = size_t(DW) * DH * 3 * sizeof(float);
  std::printf("device: %s, %d SMs, L2 %d MiB, memory bus %d bit\n", prop.name, prop.multiProcessorCount,
              prop.l2CacheSize >> 20, prop.memoryBusWidth);
  int wpb = 0;  // the fused kernel's, for the printout and the empty kernel on its grid
  const Status tuning_ok = warps_per_block_of(opt.tuning, kSingleFrameWarpsPerBlock, &wpb);
  if (!tuning_ok.ok()) {
    std::fprintf(stderr, "%s\n", tuning_ok.message().c_str());
    return 2;
  }
  std::printf("inputs %s; fused kernel: %d warps per block, plane routing %s\n",
              opt.warm ? "warm (no rotation)" : "rotated (cold L2)", wpb, opt.tuning.plane_routing ? "on" : "off");

  std::vector<Row> rows;
  for (PixelFormat fmt : {PixelFormat::NV12, PixelFormat::BGR}) {
    if (opt.batches_only) break;
    const bool nv12 = fmt == PixelFormat::NV12;
    const char* name = nv12 ? "NV12 1920x1080" : "BGR 1920x1080";
    const size_t in_bytes = nv12 ? size_t(SW) * SH * 3 / 2 : size_t(SW) * SH * 3;
    const size_t l2 = size_t(std::max(prop.l2CacheSize, 1 << 20));
    // --warm: one input; two outputs, since the sanity check below writes two different ones.
    const bool warm = opt.warm;
    const int n_in = warm ? 1 : int(std::max<size_t>(8, (3 * l2 + in_bytes - 1) / in_bytes));
    const int n_out = warm ? 2 : int(std::max<size_t>(8, (3 * l2 + out_bytes - 1) / out_bytes));
    const size_t copy_bytes = in_bytes + out_bytes;  // the larger of the two copies
    const int n_copy = warm ? 1 : int(std::max<size_t>(8, (3 * l2 + copy_bytes - 1) / copy_bytes));

    uint8_t *in = nullptr, *copy_src = nullptr, *copy_dst = nullptr;
    float* out = nullptr;
    CK(cudaMalloc(&in, in_bytes * n_in));
    CK(cudaMalloc(&out, out_bytes * n_out));
    CK(cudaMalloc(&copy_src, copy_bytes * n_copy));
    CK(cudaMalloc(&copy_dst, copy_bytes * n_copy));
    fill_kernel<<<1024, 256, 0, s>>>(in, in_bytes * n_in, 1234u);
    fill_kernel<<<1024, 256, 0, s>>>(copy_src, copy_bytes * n_copy, 99u);
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(s));

    const TensorizePlan plan = full_hd_plan(fmt);
    auto view_of = [&](int i) { return stacked_frame(fmt, SW, SH, in + size_t(i % n_in) * in_bytes); };
    auto out_of = [&](int i) { return reinterpret_cast<uint8_t*>(out) + size_t(i % n_out) * out_bytes; };

    std::printf("%s: %d input frames, %d outputs, %d copy buffers rotated\n", name, n_in, n_out, n_copy);
    auto fused = [&](int i) {
      Status r = tensorize_cuda(plan, view_of(i), out_of(i), s, opt.tuning);
      if (!r.ok()) {
        std::fprintf(stderr, "tensorize_cuda: %s\n", r.message().c_str());
        std::exit(1);
      }
    };
    time_method(name, "tensorize_cuda (fused)", in_bytes + out_bytes, fused, s, &rows);
    const size_t first_row = rows.size() - 1;
    NaiveArgs na{};
    na.sw = SW;
    na.sh = SH;
    na.dw = DW;
    na.dh = DH;
    for (int k = 0; k < 6; ++k) na.m[k] = plan.inv[k];
    na.pad = plan.pad_out[0];
    // The naive kernel on input frame i into output buffer `out_index`.
    auto naive = [&](int i, int out_index) {
      NaiveArgs a = na;
      const ImageView v = view_of(i);
      a.y = v.planes[0].data;
      a.pitch_y = v.planes[0].stride;
      a.uv = v.planes[1].data;
      a.pitch_uv = v.planes[1].stride;
      a.dst = reinterpret_cast<float*>(out_of(out_index));
      const dim3 block(16, 16), grid((DW + 15) / 16, (DH + 15) / 16);
      if (nv12)
        naive_letterbox_nv12<<<grid, block, 0, s>>>(a);
      else
        naive_letterbox_bgr<<<grid, block, 0, s>>>(a);
      CK(cudaGetLastError());
    };
    time_method(
        name, "naive 1 thread/pixel", in_bytes + out_bytes, [&](int i) { naive(i, i); }, s, &rows);
    // The floors: device-to-device copies of the output's bytes, of input + output bytes and of the
    // input's bytes (the target's "copy of the same bytes" read either way); and a write-only pass
    // over the output's bytes (memset), the least a kernel that writes the tensor can take.
    double floor_us[3] = {0, 0, 0};
    const size_t floor_bytes[3] = {out_bytes, in_bytes + out_bytes, in_bytes};
    const char* floor_name[3] = {"cudaMemcpy D2D (out bytes) = floor", "cudaMemcpy D2D (in+out bytes)",
                                 "cudaMemcpy D2D (in bytes)"};
    for (int f = 0; f < 3; ++f) {
      const size_t nb = floor_bytes[f];
      time_method(
          name, floor_name[f], 2 * nb,
          [&](int i) {
            CK(cudaMemcpyAsync(copy_dst + size_t(i % n_copy) * copy_bytes,
                               copy_src + size_t((i + 3) % n_copy) * copy_bytes, nb, cudaMemcpyDeviceToDevice, s));
          },
          s, &rows);
      floor_us[f] = rows.back().per_frame_us;
    }
    {
      const size_t n = out_bytes / 16;
      time_method(
          name, "copy kernel on the SMs (out bytes)", 2 * out_bytes,
          [&](int i) {
            copy_kernel<<<unsigned((n + 255) / 256), 256, 0, s>>>(
                reinterpret_cast<const uint4*>(copy_src + size_t((i + 3) % n_copy) * copy_bytes),
                reinterpret_cast<uint4*>(copy_dst + size_t(i % n_copy) * copy_bytes), n);
            CK(cudaGetLastError());
          },
          s, &rows);
    }
    {
      const size_t n4 = out_bytes / 16;
      time_method(
          name, "floor kernel: letterbox writes, 1 cold source byte per 4 outputs", in_bytes / 3 + out_bytes,
          [&](int i) {
            const ImageView v = view_of(i);
            letterbox_floor_kernel<<<unsigned((n4 + 255) / 256), 256, 0, s>>>(
                v.planes[0].data, v.planes[0].stride, nv12 ? 1 : 3, reinterpret_cast<float*>(out_of(i)), DW, DH,
                plan.active_y0, plan.active_y1, 0.5f);
            CK(cudaGetLastError());
          },
          s, &rows);
    }
    time_method(
        name, "cudaMemsetAsync (out bytes, write only)", out_bytes,
        [&](int i) { CK(cudaMemsetAsync(out_of(i), 0, out_bytes, s)); }, s, &rows);
    time_method(
        name, "empty kernel, 1 block (launch overhead)", 0,
        [&](int) {
          empty_kernel<<<1, 32, 0, s>>>();
          CK(cudaGetLastError());
        },
        s, &rows);
    {
      // The fused kernel's grid: one warp per 64-pixel segment of a sampling row and one per
      // padding row (tensorize_cuda.cu), in blocks of the tuning's warps.
      const int n_act = plan.active_y1 - plan.active_y0, warps = n_act * ((DW + 63) / 64) + (DH - n_act);
      const LargeArgs args{};
      time_method(
          name, "empty kernel, fused grid and argument size", 0,
          [&](int) {
            empty_args_kernel<<<unsigned((warps + wpb - 1) / wpb), 32 * wpb, 0, s>>>(args);
            CK(cudaGetLastError());
          },
          s, &rows);
    }
    for (size_t k = first_row; k < rows.size(); ++k) {
      rows[k].vs_out_copy = rows[k].per_frame_us / floor_us[0];
      rows[k].vs_inout_copy = rows[k].per_frame_us / floor_us[1];
      rows[k].vs_in_copy = rows[k].per_frame_us / floor_us[2];
    }

    // Sanity: the naive kernel computes the same thing (up to its own rounding / colour constants).
    {
      std::vector<float> a(out_bytes / 4), b(out_bytes / 4);
      Status r = tensorize_cuda(plan, view_of(0), out_of(0), s, opt.tuning);
      if (!r.ok()) return 1;
      naive(0, 1);
      CK(cudaMemcpyAsync(a.data(), out_of(0), out_bytes, cudaMemcpyDeviceToHost, s));
      CK(cudaMemcpyAsync(b.data(), out_of(1), out_bytes, cudaMemcpyDeviceToHost, s));
      CK(cudaStreamSynchronize(s));
      double worst = 0;
      for (size_t k = 0; k < a.size(); ++k) worst = std::max(worst, double(std::fabs(a[k] - b[k])));
      std::printf("%s: max |fused - naive| = %.2g (x255 = %.2g grey levels)\n", name, worst, worst * 255);
    }
    CK(cudaFree(in));
    CK(cudaFree(out));
    CK(cudaFree(copy_src));
    CK(cudaFree(copy_dst));
  }
  if (!opt.batches_only)
    bench_camera_formats(opt.tuning, opt.warm, size_t(std::max(prop.l2CacheSize, 1 << 20)), s, &rows);
  if (!opt.warm) bench_batches(prop, opt.tuning, s, &rows);
  if (!opt.batches_only) bench_download(s);
  CK(cudaStreamDestroy(s));

  std::printf("\n%s, 1920x1080 -> 640x640x3 fp32 NCHW letterbox (bilinear, RGB, /255)\n\n", prop.name);
  std::printf(
      "| input | method | per frame, back to back (us) | GB/s moved | single frame, GPU (us) | single frame, GPU, "
      "launch queued (us) | single frame, launch+sync (us) | launch call, host (us) | vs floor (out copy) | vs in+out "
      "copy | vs in copy |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  auto ratio = [](double v) {
    char b[32];
    if (v > 0)
      std::snprintf(b, sizeof(b), "%.2fx", v);
    else
      std::snprintf(b, sizeof(b), "-");
    return std::string(b);
  };
  for (const Row& r : rows)
    std::printf("| %s | %s | %.2f | %.0f | %.2f | %.2f | %.1f | %.2f | %s | %s | %s |\n", r.input.c_str(),
                r.method.c_str(), r.per_frame_us, r.gbps, r.single_gpu_us, r.queued_gpu_us, r.latency_us, r.call_us,
                ratio(r.vs_out_copy).c_str(), ratio(r.vs_inout_copy).c_str(), ratio(r.vs_in_copy).c_str());
  std::printf("\nGB/s moved: input + output bytes per frame (memcpy: 2 x its size, read + write) / time.\n");
  std::printf(
      "Floor (the target's): a device-to-device copy of the output tensor's bytes; target <= 1.3x, and a\n"
      "single frame <= 6 us on the GPU.\n");
  return 0;
}
