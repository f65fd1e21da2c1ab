// Template matching with OpenCV's TM_CCOEFF_NORMED score on 8-bit gray images.
//
//   R(x, y) = sum(T'(i, j) * I'(x + i, y + j)) / sqrt(sum T'^2 * sum I'^2)
//   with T' = T - mean(T) and I' = I - mean of the window under the template.
//
// Both paths compute the sums exactly in integers (sum T*I, window sum and sum of squares)
// and evaluate the quotient once in double, so CPU and GPU scores are identical and
// deterministic. A window with no variance scores 0. A template with no variance is refused.
//
// Peaks: the score map is split into cells no larger than the template; each cell contributes
// its best position (ties: lowest y, then lowest x) if it reaches the threshold. Candidates are
// then taken best first (ties by position), dropping any whose box overlaps (IoU > 0) an already
// accepted match, until max_matches are accepted. Sub-pixel position: a parabola through the
// peak and its two neighbours along each axis (offset clamped to +-0.5; 0 at the map's edge).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "gpu_wait.h"
#include "image.h"
#include "status.h"

namespace cudaprep {

namespace tm {
struct Candidate;  // templatematch_internal.h
}

struct Match {
  int x = 0, y = 0;             // top-left of the template in frame pixels
  int width = 0, height = 0;    // template size
  double sub_x = 0, sub_y = 0;  // sub-pixel top-left
  double score = 0;
  int member = 0;  // the bank member that matched (0 for a single template)
};

struct MatchSettings {
  Rect search;  // empty = whole frame
  double threshold = 0.8;
  int max_matches = 1;
};

constexpr int kMaxTemplateSide = 256;  // keeps sum(T*I) within 32 bits
constexpr int kMaxMatches = 64;

// Resolves an empty search region to the frame and checks that the template fits in it.
Status resolve_search_region(int frame_w, int frame_h, int templ_w, int templ_h, const Rect& requested, Rect* resolved);

// cv::cvtColor(COLOR_BGR2GRAY / RGB2GRAY / ...) on 8-bit input, same fixed-point rounding.
// YUV formats give their luma: NV12 / NV21 / I420 the Y plane as is, YUY2 / UYVY every Y byte,
// P010 its 16-bit luma rounded to 8 bits. dst must hold width x height bytes at dst_stride.
Status to_gray_cpu(const ImageView& src, uint8_t* dst, int64_t dst_stride);
Status to_gray_cuda(const ImageView& src, uint8_t* dst, int64_t dst_stride, void* stream);

// True where a frame's gray image is its first plane as it is (a plane of 8-bit luma, GRAY8):
// to_gray_* copy that plane, and a caller may read it in place instead.
constexpr bool gray_is_first_plane(PixelFormat f) {
  return is_valid_pixel_format(f) &&
         ((is_yuv(f) && pixel_format_info(f).luma_step == 1) || packed_bytes_per_pixel(f) == 1);
}

// CPU path. Allocation-free per frame once a frame of the same size was matched: the score map,
// the per-worker row sums and the candidate list are kept and only grown, and the rows of a
// score map are spread over the shared worker pool (worker_pool.h), whose threads outlive the
// frame. Calls may come from different threads, one at a time. Movable, not copyable.
class TemplateMatcherCpu {
 public:
  TemplateMatcherCpu();
  ~TemplateMatcherCpu();
  TemplateMatcherCpu(TemplateMatcherCpu&&) noexcept;
  TemplateMatcherCpu& operator=(TemplateMatcherCpu&&) noexcept;
  TemplateMatcherCpu(const TemplateMatcherCpu&) = delete;
  TemplateMatcherCpu& operator=(const TemplateMatcherCpu&) = delete;

  // Copies the template and computes its statistics once. Flat template -> error.
  Status set_template(const GrayView& templ);
  bool has_template() const { return width_ > 0; }
  int template_width() const { return width_; }
  int template_height() const { return height_; }

  Status match(const GrayView& frame, const MatchSettings& settings, std::vector<Match>* matches);

  // Scores of every position in the (resolved) search region, row-major,
  // (search.w - tw + 1) x (search.h - th + 1) entries.
  Status score_map(const GrayView& frame, const Rect& search, std::vector<float>* scores, int* map_w, int* map_h);

 private:
  std::vector<uint8_t> pixels_;
  int width_ = 0, height_ = 0;
  int64_t sum_ = 0, sum_sq_ = 0;
  std::vector<float> scratch_;      // match(): the score map
  std::vector<uint32_t> row_sums_;  // column sums and correlation row, one slice per worker
  std::vector<tm::Candidate> candidates_;
};

// Settings of a TemplateMatcherCuda, fixed at configure(). The defaults are the production
// behaviour; `tuning` and `diagnostics` are for tests and benchmarks.
struct MatcherCudaOptions {
  // How match() waits for the kernel's matches (gpu_wait.h). Spin spins on the flag the kernel
  // writes into pinned memory after the matches (about 2 us sooner per frame on an H200 than
  // StreamSync: it need not wait for the kernel to retire); Poll checks that flag.
  GpuWait wait = GpuWait::Blocking;

  // Auto: the launch planner decides (per template and search region).
  enum class Override { Auto, Off, On };

  // Launch shapes forced regardless of the planner's choice (0 / Auto: its choice). A forced
  // shape that the template or the GPU cannot take falls back to the nearest that it can.
  struct Tuning {
    bool dp4a = false;                     // the pre-Ampere dp4a kernel even where tensor cores exist
    int tile_width = 0;                    // positions per tile row: 64 or 128
    int row_split = 0;                     // template rows split over 1, 2 or 4 warp groups of a block
    int cluster_split = 0;                 // template rows split over 1..8 blocks of a cluster (sm_90+)
    Override solo = Override::Auto;        // cluster splits with one block per SM: never / where possible
    bool small_row_split = true;           // splits of 4 or more blocks a tile run as the row split
    Override pipelining = Override::Auto;  // software-pipelined tensor-core loop
    bool m16 = true;                       // cluster-split blocks run 8 warps of one 16-row M-group
    bool graphs = true;                    // replay each frame's launch as a CUDA graph (own stream only)
    // Candidate lists up to this long cross to the host whole and are suppressed there; longer
    // ones are suppressed in the kernel where it can hold them (0: every list it can hold). Up to
    // 64 the host is cheaper than the kernel's rounds (a barrier each); above, it costs ~30 ns each.
    unsigned nms_on_host_up_to = 64;
  } tuning;

  // Measurements written to stderr (the benchmark reads them).
  struct Diagnostics {
    bool kernel_time = false;  // "tm profile (ms): kernel T" per match(), from events (no graphs)
    bool host_time = false;    // "tm host (us): enqueue A wait B select C candidates N" per match()
    bool trace = false;        // per-block phase clocks of each launch, one summary line (no graphs)
  } diagnostics;
};

// CUDA path. configure() once per caps (allocates everything a frame needs); set_template()
// once per template; match() per frame enqueues one kernel on the stream and waits once (see
// GpuWait) for the short match list the kernel writes into pinned memory (non-maximum
// suppression runs in the kernel when many cells qualify). The frame is read through texture
// objects, which are cached per plane pointer so a buffer pool's frames reuse them. Work enqueued
// on the same stream after match() runs after the kernel; the matcher syncs the stream itself
// before it destroys anything the kernel may still use. Two matchers in one process may be
// configured differently.
class TemplateMatcherCuda {
 public:
  using Options = MatcherCudaOptions;

  TemplateMatcherCuda();
  ~TemplateMatcherCuda();
  TemplateMatcherCuda(const TemplateMatcherCuda&) = delete;
  TemplateMatcherCuda& operator=(const TemplateMatcherCuda&) = delete;

  // Invalid tuning values (e.g. a tile width of 96) are refused with an error.
  Status configure(int frame_width, int frame_height, void* stream, const Options& options = Options());
  // mask: null, or width x height bytes (row-major, no padding): where nonzero the pixel counts,
  // elsewhere it does not (OpenCV's masked TM_CCOEFF_NORMED, as the bank matchers score a masked
  // member: a window with no variance under the mask scores NaN and never matches). Masked
  // templates need the tensor cores (sm_80+) and a template whose four staged products fit the
  // GPU's shared memory (about 128 x 128 px); otherwise an error.
  Status set_template(const GrayView& host_templ, const uint8_t* mask = nullptr);
  bool has_template() const;
  int template_width() const;
  int template_height() const;

  // frame: device memory (e.g. the Y plane of an NV12 frame in CUDA memory).
  Status match(const GrayView& device_frame, const MatchSettings& settings, std::vector<Match>* matches);
  // match() in two halves, so that matchers sharing a stream wait once for all their launches:
  // enqueue() checks the frame and launches its kernel; finish() waits for that kernel and gives
  // its matches. Each enqueue() is followed by its finish() before any other call on this matcher;
  // the frame stays valid until then.
  Status enqueue(const GrayView& device_frame, const MatchSettings& settings);
  Status finish(std::vector<Match>* matches);
  Status score_map(const GrayView& device_frame, const Rect& search, std::vector<float>* scores, int* map_w,
                   int* map_h);
  void release();

  // The texture-object cache (for tests and diagnostics): entries alive, objects created, lookups
  // that found one.
  struct TextureCacheStats {
    int entries = 0;
    int64_t created = 0, hits = 0;
  };
  TextureCacheStats texture_cache_stats() const;
  // The launch graphs (tuning.graphs, own stream; for tests and diagnostics): graphs alive, graphs
  // captured, launches replayed as they were, launches of a graph given another key's parameters.
  struct LaunchGraphStats {
    int entries = 0;
    int64_t captured = 0, replayed = 0, updated = 0;
  };
  LaunchGraphStats launch_graph_stats() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Rectangle outlines drawn into a frame (any supported format), `thickness` pixels inside the
// box edge, clipped to the frame. YUV frames get the colour converted with BT.601 limited range.
struct BoxStyle {
  uint8_t r = 0, g = 255, b = 0;
  int thickness = 2;
};
void draw_boxes_cpu(const ImageView& frame, const Rect* boxes, int count, const BoxStyle& style);
Status draw_boxes_cuda(const ImageView& frame, const Rect* boxes, int count, const BoxStyle& style, void* stream);

}  // namespace cudaprep
