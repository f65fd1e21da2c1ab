// CUDA template matcher. Per frame, on the caller's stream, with no allocation: ONE kernel launch
// (frame_kernel; replayed as a CUDA graph on the caller's own stream) and one wait
// (wait_for_candidates: a blocking event by default), then the host's final NMS pass
// (shared code). The kernel (templatematch_kernel.cuh)
//   - stages the template rows and the frame rows of a 64 x 64 (or 128 x 64) tile of positions in
//     shared memory; the frame is read through texture objects (templatematch_textures.h) cached
//     per (pointer, pitch): a buffer pool's frames reuse theirs;
//   - sums T * I, exact in 32 bits, on the tensor cores (int8 mma, u8 x u8 -> s32, sm_80+) or with
//     dp4a (older GPUs, or MatcherCudaOptions::Tuning::dp4a);
//   - computes the exact window sums S1 = sum I, S2 = sum I^2 from the same staged rows, and the
//     score in double from the exact sums (the formula the CPU path uses), stored as float; a
//     masked template's sums under the mask (sum M I, sum M I^2) come from the tensor cores too,
//     and its score is the bank matchers' (NaN where the window has no variance under the mask);
//   - finds each cell's best position (merged over tiles with a 64-bit atomicMax), and the last
//     block writes the candidates with their sub-pixel offsets straight into pinned host memory,
//     after non-maximum suppression of its own when more than 64 cells qualify (block_nms).
// The launch shape per template and search region comes from the planner
// (templatematch_planner.h); the graphs from templatematch_graphs.h; the diagnostics' stderr
// lines from templatematch_diagnostics.h. Settings: MatcherCudaOptions, given to configure().
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "cuda_device.h"
#include "cuda_status.h"
#include "templatematch_diagnostics.h"
#include "templatematch_graphs.h"
#include "templatematch_internal.h"
#include "templatematch_kernel.cuh"
#include "templatematch_planner.h"
#include "templatematch_textures.h"

namespace cudaprep {

namespace {

using FrameKernel = void (*)(const FrameParams);

// The one table from launch shape to kernel instantiation (scan only with m16; masked templates
// on 64-wide tensor-core tiles without software pipelining only).
FrameKernel frame_kernel_for(const tm::KernelVariant& k) {
  if (!k.mma) return frame_kernel<false, 2, false, false, false>;
  if (k.masked) return frame_kernel<true, 1, false, false, false, true>;  // (pipelined, it would spill)
  if (k.m16 && k.scan)
    return k.pipelined ? frame_kernel<true, 1, true, true, true> : frame_kernel<true, 1, false, true, true>;
  if (k.m16) return k.pipelined ? frame_kernel<true, 1, true, true, false> : frame_kernel<true, 1, false, true, false>;
  if (k.pp == 1)
    return k.pipelined ? frame_kernel<true, 1, true, false, false> : frame_kernel<true, 1, false, false, false>;
  return k.pipelined ? frame_kernel<true, 2, true, false, false> : frame_kernel<true, 2, false, false, false>;
}

// A thread-block cluster of kz blocks along z: the template-row split of one tile.
cudaLaunchAttribute cluster_of(int kz) {
  cudaLaunchAttribute a{};
  a.id = cudaLaunchAttributeClusterDimension;
  a.val.clusterDim.x = 1;
  a.val.clusterDim.y = 1;
  a.val.clusterDim.z = static_cast<unsigned>(kz);
  return a;
}

// The planner's occupancy questions, answered by the CUDA runtime.
class RuntimeOccupancy : public tm::OccupancyQueries {
 public:
  Status blocks_per_sm(const tm::KernelVariant& kernel, int threads, int smem, int* blocks) override {
    return cuda_status(cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, frame_kernel_for(kernel), threads, smem),
                       "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  }
  bool active_clusters(const tm::KernelVariant& kernel, int threads, int smem, int kz, int* clusters) override {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(1, 1, kz);
    cfg.blockDim = dim3(threads);
    cfg.dynamicSmemBytes = static_cast<size_t>(smem);
    cudaLaunchAttribute attr[1] = {cluster_of(kz)};
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    if (cudaOccupancyMaxActiveClusters(clusters, frame_kernel_for(kernel), &cfg) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    return true;
  }
};

Status device_attribute(int* value, cudaDeviceAttr attr, int dev) {
  return cuda_status(cudaDeviceGetAttribute(value, attr, dev), "cudaDeviceGetAttribute");
}

}  // namespace

struct TemplateMatcherCuda::Impl {
  cudaStream_t stream = nullptr;
  bool configured = false;
  int width = 0, height = 0;
  // Device properties.
  int device = 0;
  tm::GpuLimits gpu;
  int tex_pitch_align = 32;
  int tex_align = 512;
  tm::LaunchPlanner planner;  // per configure(); its occupancy tables per template
  GpuWait wait = GpuWait::Blocking;
  cuda::StreamWaiter waiter;  // the frame's wait, as `wait` says
  bool in_flight = false;     // a frame kernel may still be running (see settle())
  bool pending = false;       // enqueue() launched a frame whose finish() has not run
  Rect pending_region;        // that frame's search region and max-matches
  int pending_max_matches = 0;
  std::chrono::steady_clock::time_point host_t0, host_t1;  // diagnostics.host_time of that frame
  unsigned nms_host_up_to = 0;                             // tuning.nms_on_host_up_to (tests: 0 = always in the kernel)
  // Per caps.
  cuda::DeviceBuffer map, staging;
  int64_t spitch = 0;  // floats per row of map
  // Per template.
  bool has_template = false;
  int tw = 0, th = 0, kp = 0;
  int64_t n = 0, st = 0, var_t = 0;  // masked: over the mask's pixels
  cuda::DeviceBuffer templ;
  cuda::DeviceBuffer mask;       // a masked template's: th rows of kp bytes, 1 where set; else empty
  cuda::DeviceBuffer state;      // ticket, touched count, cell keys, touched cells: zero between frames
  cuda::PinnedBuffer host_out;   // OutHeader, then the candidates; written by the kernel (mapped)
  OutHeader* out_dev = nullptr;  // host_out as the device sees it
  int capacity = 0;              // cells of the full frame >= cells of any search region
  // Safe to destroy a texture once no kernel of this matcher is still in flight; no graph may
  // replay it.
  tm::TextureCache textures{[this](cudaTextureObject_t tex) {
    settle();
    graphs.drop_texture(tex);
  }};
  tm::GraphCache graphs;
  bool use_graphs = false;
  // Graphs are captured here, not on the caller's stream: a producer may enqueue its copies on
  // the caller's stream from its own thread (into a pool the element proposed), and would join
  // a capture there.
  void* capture_stream = nullptr;
  // Diagnostics.
  bool host_time = false;  // diagnostics.host_time: host-side times of match() on stderr
  bool profile = false;    // diagnostics.kernel_time
  cudaEvent_t events[2] = {};
  // diagnostics.trace: per-block phase clocks of the last launch, summarised on stderr.
  cuda::DeviceBuffer trace;
  int trace_capacity = 0;     // blocks
  unsigned trace_blocks = 0;  // of the last launch
  int trace_smem = 0;         // dynamic shared memory per block of the last launch
  int clock_khz = 0;

  // Per template and caps: the peak-search state and the pinned candidate buffer.
  Status alloc_peaks() {
    settle();
    host_out.reset();
    state.reset();
    out_dev = nullptr;
    capacity = 0;
    if (!configured || !has_template || tw > width || th > height) return Status();
    const int mw = width - tw + 1, mh = height - th + 1;
    const int cw = tm::cell_side(tw), ch = tm::cell_side(th);
    capacity = ((mw + cw - 1) / cw) * ((mh + ch - 1) / ch);
    CUDAPREP_RETURN_IF_ERROR(
        host_out.allocate(sizeof(OutHeader) + static_cast<size_t>(capacity) * sizeof(tm::Candidate)));
    void* dev = nullptr;
    CUDAPREP_RETURN_IF_ERROR(
        cuda_status(cudaHostGetDevicePointer(&dev, host_out.data(), 0), "cudaHostGetDevicePointer"));
    out_dev = static_cast<OutHeader*>(dev);
    const size_t state_bytes = 32 + static_cast<size_t>(capacity) * (sizeof(unsigned long long) + sizeof(unsigned));
    CUDAPREP_RETURN_IF_ERROR(state.allocate(state_bytes));
    CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaMemset(state.data(), 0, state_bytes), "cudaMemset"));
    return Status();
  }

  // Per template and caps: the planner's tables, then the peak-search buffers.
  Status prepare_template() {
    RuntimeOccupancy occupancy;
    CUDAPREP_RETURN_IF_ERROR(planner.set_template(tw, th, kp, mask.data() != nullptr, occupancy));
    return alloc_peaks();
  }

  // A texture over the frame's plane; frames whose pointer or pitch a texture cannot take are
  // first copied into the staging buffer (allocated in configure()).
  Status texture_for(const GrayView& f, cudaTextureObject_t* out) {
    const bool usable = reinterpret_cast<uintptr_t>(f.data) % tex_align == 0 && f.stride % tex_pitch_align == 0 &&
                        f.stride >= tm::round_up(f.width, 16);
    if (usable && textures.get(f.data, f.stride, f.width, f.height, out).ok()) return Status();
    cudaGetLastError();  // a refused texture leaves no sticky error, but be tidy
    CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaMemcpy2DAsync(staging.data(), staging.pitch(), f.data, f.stride, f.width,
                                                           f.height, cudaMemcpyDeviceToDevice, stream),
                                         "cudaMemcpy2DAsync (staging)"));
    return textures.get(staging.data(), static_cast<int64_t>(staging.pitch()), f.width, f.height, out);
  }

  // One frame's launch: its kernel's parameters and launch shape.
  struct FrameLaunch {
    FrameParams params;
    tm::GraphCache::Shape shape;
  };
  FrameLaunch frame_launch(cudaTextureObject_t tex, const Rect& r, bool peaks, double threshold, int max_matches) {
    const tm::FramePlan pl = planner.plan(r);
    FrameLaunch l;
    FrameParams& p = l.params;
    p.tex = tex;
    p.templ = templ.data();
    p.mask = mask.data();  // null: unmasked
    p.tw = tw;
    p.th = th;
    p.kp = kp;
    p.n = n;
    p.st = st;
    p.var_t = var_t;
    p.sx = r.x;
    p.sy = r.y;
    p.mw = r.w - tw + 1;
    p.mh = r.h - th + 1;
    p.x_first = pl.x_first;
    p.kz = pl.kz;
    p.map = reinterpret_cast<float*>(map.data());
    p.mpitch = spitch;
    p.peaks = peaks ? 1 : 0;
    p.cw = tm::cell_side(tw);
    p.ch = tm::cell_side(th);
    p.ncx = (p.mw + p.cw - 1) / p.cw;
    p.threshold = threshold;
    p.max_matches = max_matches;
    p.nms_host_up_to = nms_host_up_to;
    p.progress = reinterpret_cast<unsigned long long*>(state.data());
    p.keys = reinterpret_cast<unsigned long long*>(state.data() + 32);
    p.touched = reinterpret_cast<unsigned*>(state.data() + 32 + static_cast<size_t>(capacity) * 8);
    p.out = out_dev;
    p.trace = nullptr;
    const dim3 grid(pl.grid_x, pl.grid_y, pl.grid_z);
    if (trace.data() && grid.x * grid.y * grid.z <= static_cast<unsigned>(trace_capacity)) {
      p.trace = reinterpret_cast<unsigned long long*>(trace.data());
      trace_blocks = grid.x * grid.y * grid.z;
      trace_smem = pl.smem;
    }
    l.shape.kernel = reinterpret_cast<const void*>(frame_kernel_for(planner.kernel_of(pl)));
    l.shape.grid = grid;
    l.shape.block = dim3(tm::LaunchPlanner::block_threads(pl));
    l.shape.smem = static_cast<size_t>(pl.smem);
    l.shape.cluster_z = static_cast<unsigned>(pl.cluster);
    return l;
  }

  // One launch: scores of the region into `map` and, with peaks, the candidates into the pinned
  // buffer (count first).
  Status launch_frame(cudaTextureObject_t tex, const Rect& r, bool peaks, double threshold, int max_matches) {
    const FrameLaunch l = frame_launch(tex, r, peaks, threshold, max_matches);
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = l.shape.grid;
    cfg.blockDim = l.shape.block;
    cfg.dynamicSmemBytes = l.shape.smem;
    cfg.stream = stream;
    const int kz = static_cast<int>(l.shape.cluster_z);
    cudaLaunchAttribute attr[1] = {cluster_of(kz)};
    if (kz > 1) {
      cfg.attrs = attr;
      cfg.numAttrs = 1;
    }
    mark(0);
    const cudaError_t e =
        cudaLaunchKernelEx(&cfg, reinterpret_cast<FrameKernel>(const_cast<void*>(l.shape.kernel)), l.params);
    if (e != cudaSuccess && kz > 1) {  // no cluster launch here: split nothing from now on
      cudaGetLastError();
      planner.disable_clusters();
      return launch_frame(tex, r, peaks, threshold, max_matches);
    }
    CUDAPREP_RETURN_IF_ERROR(cuda_status(e, "frame_kernel launch"));
    mark(1);
    return Status();
  }

  // The frame's launch, from the graph cache on the caller's own stream. Only for textures that
  // were cached already (a buffer pool), so that a stream of new buffers never pays a capture per
  // frame. Falls back to plain launches where capture is not possible or fails.
  Status enqueue_frame(cudaTextureObject_t tex, const Rect& r, double threshold, int max_matches, bool reused_texture) {
    if (!use_graphs || profile || trace.data() || !reused_texture)
      return launch_frame(tex, r, true, threshold, max_matches);
    const tm::GraphCache::Key key{tex, r, threshold, max_matches};
    Status launched;
    if (graphs.replay(key, stream, &launched)) return launched;
    FrameLaunch l = frame_launch(tex, r, true, threshold, max_matches);
    void* args[1] = {&l.params};
    if (graphs.update(key, l.shape, args, stream, &launched)) return launched;
    bool capture_failed = false;
    if (!capture_stream) CUDAPREP_RETURN_IF_ERROR(cuda::stream_create(&capture_stream));
    const cudaStream_t own = stream;
    stream = static_cast<cudaStream_t>(capture_stream);  // what launch_frame enqueues on
    const Status captured = graphs.capture(
        key, l.shape, stream, own, [&] { return launch_frame(tex, r, true, threshold, max_matches); }, &capture_failed);
    stream = own;
    CUDAPREP_RETURN_IF_ERROR(captured);
    if (!capture_failed) return Status();
    use_graphs = false;  // capture is not available here: plain launches from now on
    return launch_frame(tex, r, true, threshold, max_matches);
  }

  // The one host synchronisation of a frame. GpuWait::Spin: spin on the flag that the
  // kernel's last block sets in pinned memory after the candidates, asking the driver now and
  // then, so that a failed launch ends the wait with its error instead of hanging. Measured on an
  // H200: about 2 us sooner than GpuWait::StreamSync (cudaStreamSynchronize), which waits for the
  // whole kernel to retire and for the driver to notice.
  // GpuWait::Poll: sleeps through most of the kernel's usual time, then checks the flag.
  // GpuWait::Blocking: the thread sleeps until the kernel has ended (no core spins meanwhile).
  Status wait_for_candidates() {
    const volatile unsigned* done = &reinterpret_cast<volatile OutHeader*>(host_out.data())->done;
    CUDAPREP_RETURN_IF_ERROR(waiter.wait(stream, wait, done, "frame kernel"));
    // (Spin and Poll: in_flight stays, the kernel's last block may still be leaving.)
    if (wait == GpuWait::StreamSync || wait == GpuWait::Blocking) in_flight = false;
    return Status();
  }

  // Waits for this matcher's last kernel to end (before its resources are destroyed or reused
  // outside the stream's order). Only the pinned-flag wait returns before the kernel has ended.
  void settle() {
    if (in_flight) cudaStreamSynchronize(stream);
    in_flight = false;
  }

  // diagnostics.kernel_time: events around the kernel, its time printed after each match().
  void mark(int i) {
    if (profile) cudaEventRecord(events[i], stream);
  }
  void print_profile() {
    float k = 0;
    cudaEventSynchronize(events[1]);  // the flag wait can return before the kernel has ended
    cudaEventElapsedTime(&k, events[0], events[1]);
    tm::print_kernel_time(k);
  }

  void print_trace() {
    if (!trace_blocks) return;
    std::vector<unsigned long long> t(static_cast<size_t>(trace_blocks) * tm::kTraceSlots);
    if (cudaMemcpy(t.data(), trace.data(), t.size() * 8, cudaMemcpyDeviceToHost) != cudaSuccess) return;
    tm::print_trace(t.data(), trace_blocks, trace_smem, clock_khz);
  }

  Status check_frame(const GrayView& f) const {
    if (!configured) return Status::error("TemplateMatcherCuda: configure() first");
    if (!has_template) return Status::error("no template set");
    CUDAPREP_RETURN_IF_ERROR(tm::check_gray(f, "frame"));
    if (f.width > width || f.height > height)
      return Status::error("frame " + std::to_string(f.width) + "x" + std::to_string(f.height) +
                           " is larger than the configured " + std::to_string(width) + "x" + std::to_string(height));
    return Status();
  }

  // The current device's figures, and the kernels' dynamic shared-memory limit.
  Status read_device() {
    CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaGetDevice(&device), "cudaGetDevice"));
    CUDAPREP_RETURN_IF_ERROR(device_attribute(&gpu.cc_major, cudaDevAttrComputeCapabilityMajor, device));
    CUDAPREP_RETURN_IF_ERROR(device_attribute(&gpu.smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    CUDAPREP_RETURN_IF_ERROR(device_attribute(&tex_pitch_align, cudaDevAttrTexturePitchAlignment, device));
    if (tex_pitch_align < 16) tex_pitch_align = 16;
    CUDAPREP_RETURN_IF_ERROR(device_attribute(&tex_align, cudaDevAttrTextureAlignment, device));
    if (tex_align < tex_pitch_align) tex_align = tex_pitch_align;
    CUDAPREP_RETURN_IF_ERROR(device_attribute(&gpu.sm_count, cudaDevAttrMultiProcessorCount, device));
    CUDAPREP_RETURN_IF_ERROR(device_attribute(&gpu.smem_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
    CUDAPREP_RETURN_IF_ERROR(device_attribute(&gpu.smem_reserved, cudaDevAttrReservedSharedMemoryPerBlock, device));
    // The kernel has no static shared memory: its dynamic limit can be the whole opt-in size (set
    // once, to the maximum, so that matchers with different templates never fight over it).
    for (int i = 0; i < 64; ++i) {  // every (mma, pp, pipelined, m16, scan, masked) of the table
      const tm::KernelVariant v{(i & 1) != 0,        1 + ((i >> 1) & 1),  ((i >> 2) & 1) != 0,
                                ((i >> 3) & 1) != 0, ((i >> 4) & 1) != 0, ((i >> 5) & 1) != 0};
      const void* k = reinterpret_cast<const void*>(frame_kernel_for(v));
      const cudaError_t e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, gpu.smem_optin);
      CUDAPREP_RETURN_IF_ERROR(cuda_status(e, "cudaFuncSetAttribute"));
    }
    return Status();
  }

  Status enable_diagnostics(const MatcherCudaOptions::Diagnostics& d, int frame_width, int frame_height) {
    if (d.kernel_time) {
      for (cudaEvent_t& e : events) CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaEventCreate(&e), "cudaEventCreate"));
      profile = true;
    }
    host_time = d.host_time;
    if (d.trace) {
      trace_capacity = ((frame_width + 63) / 64 + 1) * ((frame_height + 63) / 64) * tm::kMaxKz;
      CUDAPREP_RETURN_IF_ERROR(trace.allocate(static_cast<size_t>(trace_capacity) * tm::kTraceSlots * 8));
      CUDAPREP_RETURN_IF_ERROR(device_attribute(&clock_khz, cudaDevAttrClockRate, device));
    }
    return Status();
  }

  void release() {
    settle();
    pending = false;
    graphs.clear();
    textures.clear();
    if (capture_stream) cuda::stream_destroy(capture_stream);
    capture_stream = nullptr;
    trace.reset();
    trace_capacity = 0;
    trace_blocks = 0;
    for (cudaEvent_t& e : events) {
      if (e) cudaEventDestroy(e);
      e = nullptr;
    }
    waiter.reset();
    profile = false;
    map.reset();
    staging.reset();
    state.reset();
    host_out.reset();
    out_dev = nullptr;
    capacity = 0;
    configured = false;
  }
};

TemplateMatcherCuda::TemplateMatcherCuda() : impl_(new Impl) {}
TemplateMatcherCuda::~TemplateMatcherCuda() {
  if (impl_) {
    release();
    impl_->templ.reset();
    impl_->mask.reset();
  }
}

bool TemplateMatcherCuda::has_template() const { return impl_->has_template; }
int TemplateMatcherCuda::template_width() const { return impl_->tw; }
int TemplateMatcherCuda::template_height() const { return impl_->th; }

TemplateMatcherCuda::TextureCacheStats TemplateMatcherCuda::texture_cache_stats() const {
  return impl_->textures.stats();
}

TemplateMatcherCuda::LaunchGraphStats TemplateMatcherCuda::launch_graph_stats() const { return impl_->graphs.stats(); }

Status TemplateMatcherCuda::configure(int frame_width, int frame_height, void* stream, const Options& options) {
  Impl& m = *impl_;
  m.release();
  if (frame_width <= 0 || frame_height <= 0)
    return Status::error("invalid frame size " + std::to_string(frame_width) + "x" + std::to_string(frame_height));
  CUDAPREP_RETURN_IF_ERROR(tm::check_tuning(options.tuning));
  m.stream = static_cast<cudaStream_t>(stream);
  CUDAPREP_RETURN_IF_ERROR(m.read_device());
  CUDAPREP_RETURN_IF_ERROR(m.enable_diagnostics(options.diagnostics, frame_width, frame_height));
  m.planner = tm::LaunchPlanner(m.gpu, options.tuning);
  // Graphs need a stream of the caller's own (the legacy stream cannot be captured).
  m.use_graphs = m.stream != nullptr && options.tuning.graphs;
  m.wait = options.wait;
  m.nms_host_up_to = options.tuning.nms_on_host_up_to;
  m.width = frame_width;
  m.height = frame_height;
  m.spitch = tm::round_up(frame_width, 4);
  CUDAPREP_RETURN_IF_ERROR(m.map.allocate(static_cast<size_t>(m.spitch) * frame_height * sizeof(float)));
  CUDAPREP_RETURN_IF_ERROR(m.staging.allocate_pitched(tm::round_up(frame_width, 16), frame_height));
  m.configured = true;
  if (m.has_template) CUDAPREP_RETURN_IF_ERROR(m.prepare_template());
  return Status();
}

Status TemplateMatcherCuda::set_template(const GrayView& t, const uint8_t* mask_pixels) {
  Impl& m = *impl_;
  CUDAPREP_RETURN_IF_ERROR(tm::check_gray(t, "template"));
  if (t.width > kMaxTemplateSide || t.height > kMaxTemplateSide)
    return Status::error("template " + std::to_string(t.width) + "x" + std::to_string(t.height) +
                         " is larger than the maximum of " + std::to_string(kMaxTemplateSide) + "x" +
                         std::to_string(kMaxTemplateSide));
  const int kp = tm::round_up(t.width, 32);
  std::vector<uint8_t> padded(static_cast<size_t>(kp) * t.height, 0);
  std::vector<uint8_t> mask_rows(mask_pixels ? padded.size() : 0, 0);
  int64_t n = 0, sum = 0, sum_sq = 0;
  for (int y = 0; y < t.height; ++y)
    for (int x = 0; x < t.width; ++x) {
      if (mask_pixels && !mask_pixels[static_cast<size_t>(y) * t.width + x]) continue;
      const uint8_t v = t.data[y * t.stride + x];
      padded[static_cast<size_t>(y) * kp + x] = v;
      if (mask_pixels) mask_rows[static_cast<size_t>(y) * kp + x] = 1;
      ++n;
      sum += v;
      sum_sq += static_cast<int64_t>(v) * v;
    }
  if (n * sum_sq - sum * sum <= 0)
    return Status::error(mask_pixels ? "template has no variance under its mask" : tm::kFlatTemplateMessage);
  m.settle();
  m.has_template = false;
  m.graphs.clear();
  CUDAPREP_RETURN_IF_ERROR(m.templ.allocate(padded.size()));
  CUDAPREP_RETURN_IF_ERROR(
      cuda_status(cudaMemcpy(m.templ.data(), padded.data(), padded.size(), cudaMemcpyHostToDevice), "cudaMemcpy"));
  m.mask.reset();
  if (mask_pixels) {
    CUDAPREP_RETURN_IF_ERROR(m.mask.allocate(mask_rows.size()));
    CUDAPREP_RETURN_IF_ERROR(cuda_status(
        cudaMemcpy(m.mask.data(), mask_rows.data(), mask_rows.size(), cudaMemcpyHostToDevice), "cudaMemcpy"));
  }
  m.tw = t.width;
  m.th = t.height;
  m.kp = kp;
  m.n = n;  // the mask's pixels, or all
  m.st = sum;
  m.var_t = n * sum_sq - sum * sum;
  m.has_template = true;
  if (m.configured) {
    const Status s = m.prepare_template();
    if (!s.ok()) {
      m.has_template = false;
      return s;
    }
  }
  return Status();
}

Status TemplateMatcherCuda::match(const GrayView& f, const MatchSettings& settings, std::vector<Match>* matches) {
  matches->clear();
  CUDAPREP_RETURN_IF_ERROR(enqueue(f, settings));
  return finish(matches);
}

Status TemplateMatcherCuda::enqueue(const GrayView& f, const MatchSettings& settings) {
  Impl& m = *impl_;
  if (m.pending) return Status::error("TemplateMatcherCuda: enqueue() while the previous frame awaits its finish()");
  CUDAPREP_RETURN_IF_ERROR(tm::check_match_settings(settings));
  CUDAPREP_RETURN_IF_ERROR(m.check_frame(f));
  Rect r;
  CUDAPREP_RETURN_IF_ERROR(resolve_search_region(f.width, f.height, m.tw, m.th, settings.search, &r));
  cudaTextureObject_t tex = 0;
  const int64_t hits = m.textures.stats().hits;
  CUDAPREP_RETURN_IF_ERROR(m.texture_for(f, &tex));
  const bool reused_texture = m.textures.stats().hits > hits;
  m.host_t0 = std::chrono::steady_clock::now();
  volatile OutHeader* header = reinterpret_cast<volatile OutHeader*>(m.host_out.data());
  header->done = 0;  // before the launch: the kernel sets it once the candidates are written
  CUDAPREP_RETURN_IF_ERROR(m.enqueue_frame(tex, r, settings.threshold, settings.max_matches, reused_texture));
  m.host_t1 = std::chrono::steady_clock::now();
  m.in_flight = true;  // until a wait sees the kernel end (see settle())
  m.pending = true;
  m.pending_region = r;
  m.pending_max_matches = settings.max_matches;
  return Status();
}

Status TemplateMatcherCuda::finish(std::vector<Match>* matches) {
  Impl& m = *impl_;
  matches->clear();
  if (!m.pending) return Status::error("TemplateMatcherCuda: finish() without a frame from enqueue()");
  m.pending = false;
  CUDAPREP_RETURN_IF_ERROR(m.wait_for_candidates());
  const auto t2 = std::chrono::steady_clock::now();
  if (m.profile) m.print_profile();
  if (m.trace.data()) m.print_trace();
  // The kernel wrote the candidates into the pinned buffer, then their count + 1 as the flag.
  const volatile OutHeader* header = reinterpret_cast<volatile OutHeader*>(m.host_out.data());
  const int count = std::min<int>(static_cast<int>(header->done) - 1, m.capacity);
  tm::Candidate* c = reinterpret_cast<tm::Candidate*>(m.host_out.data() + sizeof(OutHeader));
  tm::select_matches(c, std::max(count, 0), m.pending_region, m.tw, m.th, m.pending_max_matches, matches);
  if (m.host_time) {
    const auto t3 = std::chrono::steady_clock::now();
    using us = std::chrono::duration<double, std::micro>;
    tm::print_host_times(us(m.host_t1 - m.host_t0).count(), us(t2 - m.host_t1).count(), us(t3 - t2).count(), count);
  }
  return Status();
}

Status TemplateMatcherCuda::score_map(const GrayView& f, const Rect& search, std::vector<float>* scores, int* map_w,
                                      int* map_h) {
  Impl& m = *impl_;
  CUDAPREP_RETURN_IF_ERROR(m.check_frame(f));
  Rect r;
  CUDAPREP_RETURN_IF_ERROR(resolve_search_region(f.width, f.height, m.tw, m.th, search, &r));
  cudaTextureObject_t tex = 0;
  CUDAPREP_RETURN_IF_ERROR(m.texture_for(f, &tex));
  CUDAPREP_RETURN_IF_ERROR(m.launch_frame(tex, r, false, 0.0, 0));
  const int mw = r.w - m.tw + 1, mh = r.h - m.th + 1;
  scores->resize(static_cast<size_t>(mw) * mh);
  CUDAPREP_RETURN_IF_ERROR(
      cuda_status(cudaMemcpy2DAsync(scores->data(), mw * sizeof(float), m.map.data(), m.spitch * sizeof(float),
                                    mw * sizeof(float), mh, cudaMemcpyDeviceToHost, m.stream),
                  "cudaMemcpy2DAsync (scores)"));
  CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaStreamSynchronize(m.stream), "cudaStreamSynchronize"));
  *map_w = mw;
  *map_h = mh;
  return Status();
}

void TemplateMatcherCuda::release() {
  if (impl_) impl_->release();
}

}  // namespace cudaprep
