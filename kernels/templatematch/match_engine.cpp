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

// What both engines hand to their matchers: a bank of one unmasked template goes to the
// single-template matcher (the fastest path), any other bank to the bank matcher.
template <class Single, class Bank>
class MatchEngineOver : public MatchEngine {
 public:
  Status set_bank(const TemplateBank& bank) override {
    std::vector<MemberStats> stats;
    CUDAPREP_RETURN_IF_ERROR(check_bank(bank, &stats));
    const bool single = bank.members.size() == 1 && !bank.members[0].image.masked();
    if (single) {
      const MaskedGray& g = bank.members[0].image;
      CUDAPREP_RETURN_IF_ERROR(single_.set_template(GrayView{g.pixels.data(), g.width, g.width, g.height}));
    } else {
      CUDAPREP_RETURN_IF_ERROR(bank_.set_bank(bank));
    }
    single_bank_ = single;
    bank_of_one_ = single ? bank : TemplateBank();
    return Status();
  }
  bool has_bank() const override { return single_bank_ ? single_.has_template() : bank_.has_bank(); }
  const TemplateBank& bank() const override { return single_bank_ ? bank_of_one_ : bank_.bank(); }
  Status match(const GrayView& gray, const BankSearch& search, bool across, std::vector<Match>* matches) override {
    if (!single_bank_) return bank_.match(gray, search, across, matches);
    matches->clear();
    CUDAPREP_RETURN_IF_ERROR(check_bank_search(bank_of_one_, search));
    if (search.regions[0].empty()) return Status();
    MatchSettings settings;
    settings.search = search.regions[0];
    settings.threshold = search.thresholds[0];
    settings.max_matches = search.max_matches[0];
    return single_.match(gray, settings, matches);
  }

 protected:
  Single single_;
  Bank bank_;
  bool single_bank_ = false;
  TemplateBank bank_of_one_;
};

class MatchEngineCpu final : public MatchEngineOver<TemplateMatcherCpu, BankMatcherCpu> {
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

class MatchEngineCuda final : public MatchEngineOver<TemplateMatcherCuda, BankMatcherCuda> {
 public:
  MatchEngineCuda(void* stream, GpuWait wait) : stream_(stream) { options_.wait = wait; }
  bool on_device() const override { return true; }
  Status configure(PixelFormat format, int width, int height) override {
    CUDAPREP_RETURN_IF_ERROR(single_.configure(width, height, stream_, options_));
    CUDAPREP_RETURN_IF_ERROR(bank_.configure(width, height, stream_));
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
    const TemplateMatcherCuda::TextureCacheStats t = single_.texture_cache_stats();
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
