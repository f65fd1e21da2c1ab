#include "match_engine.h"

#include <cstring>

#include "cuda_device.h"

namespace cudaprep {
namespace {

// Sets the gray view's size; true when the view is plane 0 itself.
bool view_gray_in_place(const ImageView& frame, GrayView* gray) {
  gray->width = frame.width;
  gray->height = frame.height;
  if (!gray_is_first_plane(frame.format)) return false;  // else converted first
  gray->data = frame.planes[0].data;
  gray->stride = frame.planes[0].stride;
  return true;
}

Status not_configured() { return Status::error("match engine not configured for this frame format and size"); }

// What both engines hand straight to their matcher.
template <class Matcher>
class MatchEngineOver : public MatchEngine {
 public:
  Status set_template(const GrayView& t) override { return matcher_.set_template(t); }
  bool has_template() const override { return matcher_.has_template(); }
  int template_width() const override { return matcher_.template_width(); }
  int template_height() const override { return matcher_.template_height(); }
  Status match(const GrayView& gray, const MatchSettings& s, std::vector<Match>* matches) override {
    return matcher_.match(gray, s, matches);
  }

 protected:
  Matcher matcher_;
};

class MatchEngineCpu final : public MatchEngineOver<TemplateMatcherCpu> {
 public:
  bool on_device() const override { return false; }
  Status configure(PixelFormat format, int width, int height) override {
    gray_.assign(gray_is_first_plane(format) ? 0 : size_t(width) * height, 0);
    return Status();
  }
  Status gray_of(const ImageView& frame, GrayView* gray) override {
    if (view_gray_in_place(frame, gray)) return Status();
    if (gray_.size() != size_t(frame.width) * frame.height) return not_configured();
    gray->data = gray_.data();
    gray->stride = frame.width;
    return to_gray_cpu(frame, gray_.data(), frame.width);
  }
  Status read_gray(const GrayView& gray, const Rect& r, uint8_t* host) override {
    for (int y = 0; y < r.h; y++)
      std::memcpy(host + size_t(y) * r.w, gray.data + int64_t(r.y + y) * gray.stride + r.x, size_t(r.w));
    return Status();
  }
  Status draw(const ImageView& frame, const Rect* boxes, int count, const BoxStyle& style) override {
    draw_boxes_cpu(frame, boxes, count, style);
    return Status();
  }

 private:
  std::vector<uint8_t> gray_;  // converted frames
};

class MatchEngineCuda final : public MatchEngineOver<TemplateMatcherCuda> {
 public:
  MatchEngineCuda(void* stream, GpuWait wait) : stream_(stream) { options_.wait = wait; }
  bool on_device() const override { return true; }
  Status configure(PixelFormat format, int width, int height) override {
    CUDAPREP_RETURN_IF_ERROR(matcher_.configure(width, height, stream_, options_));
    gray_.reset();
    if (!gray_is_first_plane(format)) return gray_.allocate_pitched(size_t(width), size_t(height));
    return Status();
  }
  Status gray_of(const ImageView& frame, GrayView* gray) override {
    if (view_gray_in_place(frame, gray)) return Status();
    if (!gray_.data()) return not_configured();
    gray->data = gray_.data();
    gray->stride = int64_t(gray_.pitch());
    return to_gray_cuda(frame, gray_.data(), gray->stride, stream_);
  }
  Status read_gray(const GrayView& gray, const Rect& r, uint8_t* host) override {
    CUDAPREP_RETURN_IF_ERROR(cuda::copy_2d_async(host, size_t(r.w), gray.data + int64_t(r.y) * gray.stride + r.x,
                                                 size_t(gray.stride), size_t(r.w), size_t(r.h),
                                                 cuda::CopyKind::DeviceToHost, stream_));
    return cuda::stream_sync(stream_);
  }
  Status draw(const ImageView& frame, const Rect* boxes, int count, const BoxStyle& style) override {
    return draw_boxes_cuda(frame, boxes, count, style, stream_);
  }
  std::string cache_summary() const override {
    const TemplateMatcherCuda::TextureCacheStats t = matcher_.texture_cache_stats();
    return "texture objects: " + std::to_string(t.created) + " created, " + std::to_string(t.hits) + " reused, " +
           std::to_string(t.entries) + " cached";
  }

 private:
  void* stream_;
  MatcherCudaOptions options_;
  cuda::DeviceBuffer gray_;  // converted frames
};

}  // namespace

std::unique_ptr<MatchEngine> make_match_engine_cpu() { return std::make_unique<MatchEngineCpu>(); }
std::unique_ptr<MatchEngine> make_match_engine_cuda(void* stream, GpuWait wait) {
  return std::make_unique<MatchEngineCuda>(stream, wait);
}

}  // namespace cudaprep
