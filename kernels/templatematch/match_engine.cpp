#include "match_engine.h"

#include <algorithm>
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

// What both engines hand to their matchers. A bank whose templates have one member each (up to
// most_single_launches(); masked ones where the single-template matcher takes masks: CUDA) runs
// on the single-template matcher, one per template, and per-template suppression then equals the
// bank's. Any other bank, a bank whose members a single matcher refuses (a masked template too
// large for its kernel, a GPU without tensor cores), and suppression across templates run on the
// bank matcher. Both give the same matches.

template <class Single, class Bank>
class MatchEngineOver : public MatchEngine {
 public:
  Status set_bank(const TemplateBank& bank) override {
    CUDAPREP_RETURN_IF_ERROR(check_bank(bank, nullptr));
    bool per_template = bank.members.size() <= most_single_launches();
    std::vector<int> members_of(bank.templates.size(), 0);
    for (const BankMember& m : bank.members) {
      per_template &= ++members_of[m.template_index] == 1;
    }
    std::vector<std::unique_ptr<Single>> singles;
    for (size_t i = 0; per_template && i < bank.members.size(); ++i) {
      singles.emplace_back(new Single);
      CUDAPREP_RETURN_IF_ERROR(prepare_single(singles.back().get()));
      const MaskedGray& g = bank.members[i].image;
      const GrayView view{g.pixels.data(), g.width, g.width, g.height};
      if (!g.masked()) {
        CUDAPREP_RETURN_IF_ERROR(singles.back()->set_template(view));
      } else if (!set_masked(singles.back().get(), view, g.mask.data()).ok()) {
        singles.clear();  // check_bank took the bank: the bank matcher runs it
        per_template = false;
      }
    }
    // Needed for suppression across templates, or for a bank the single matchers cannot take.
    if (!per_template || bank.templates.size() > 1) CUDAPREP_RETURN_IF_ERROR(bank_.set_bank(bank));
    singles_ = std::move(singles);
    member_matches_.resize(singles_.size());
    bank_copy_ = bank;
    return Status();
  }
  bool has_bank() const override { return !bank_copy_.members.empty(); }
  const TemplateBank& bank() const override { return bank_copy_; }
  Status match(const GrayView& gray, const BankSearch& search, bool across, std::vector<Match>* matches) override {
    if (singles_.empty() || (across && bank_copy_.templates.size() > 1))
      return bank_.match(gray, search, across, matches);
    matches->clear();
    CUDAPREP_RETURN_IF_ERROR(check_bank_search(bank_copy_, search));
    CUDAPREP_RETURN_IF_ERROR(match_singles(gray, search));
    for (size_t m = 0; m < singles_.size(); ++m)
      for (Match& x : member_matches_[m]) {
        x.member = static_cast<int>(m);
        matches->push_back(x);
      }
    // Best first over all templates, as the bank matcher lists them.
    std::sort(matches->begin(), matches->end(), [](const Match& a, const Match& b) {
      if (a.score != b.score) return a.score > b.score;
      if (a.y != b.y) return a.y < b.y;
      if (a.x != b.x) return a.x < b.x;
      return a.member < b.member;
    });
    return Status();
  }

 protected:
  // The most members a bank may have to run on single-template matchers.
  virtual size_t most_single_launches() const = 0;
  // Readies a new single-template matcher for the configured frames.
  virtual Status prepare_single(Single* single) = 0;
  // Gives a single-template matcher a masked template; an error where it takes none (then the
  // bank matcher runs the bank).
  virtual Status set_masked(Single* single, const GrayView& templ, const uint8_t* mask) = 0;
  // Every single matcher whose member is searched, its matches into member_matches_ (cleared for
  // the others).
  virtual Status match_singles(const GrayView& gray, const BankSearch& search) = 0;
  MatchSettings single_settings(const BankSearch& search, size_t m) const {
    MatchSettings settings;
    settings.search = search.regions[m];
    const int t = bank_copy_.members[m].template_index;
    settings.threshold = search.thresholds[t];
    settings.max_matches = search.max_matches[t];
    return settings;
  }
  std::vector<std::unique_ptr<Single>> singles_;
  Bank bank_;
  TemplateBank bank_copy_;
  std::vector<std::vector<Match>> member_matches_;  // per single matcher, kept between frames
};

class MatchEngineCpu final : public MatchEngineOver<TemplateMatcherCpu, BankMatcherCpu> {
 protected:
  size_t most_single_launches() const override { return 32; }  // each holds a score map of the frame
  Status prepare_single(TemplateMatcherCpu*) override { return Status(); }
  Status set_masked(TemplateMatcherCpu*, const GrayView&, const uint8_t*) override {
    return Status::error("the CPU single-template matcher takes no masks");
  }
  Status match_singles(const GrayView& gray, const BankSearch& search) override {
    for (size_t m = 0; m < singles_.size(); ++m) {
      member_matches_[m].clear();
      if (!search.regions[m].empty())
        CUDAPREP_RETURN_IF_ERROR(singles_[m]->match(gray, single_settings(search, m), &member_matches_[m]));
    }
    return Status();
  }

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
 protected:
  // The single-template kernel is the fastest for one template; from two on, the bank kernel's one
  // pass over the frame for all of them (template_bank_bench on an H100, blocking wait: 8 x 64 px
  // 0.44 ms against 0.90 ms as eight launches; 2 x 64 px 0.21 against 0.22).
  size_t most_single_launches() const override { return 1; }
  Status prepare_single(TemplateMatcherCuda* single) override {
    if (width_ <= 0) return not_configured();
    return single->configure(width_, height_, stream_, options_);
  }
  Status set_masked(TemplateMatcherCuda* single, const GrayView& templ, const uint8_t* mask) override {
    return single->set_template(templ, mask);
  }
  // Every launch first, then the waits: the kernels run back to back on the stream and the
  // thread waits once (the first wait covers the launches before it).
  Status match_singles(const GrayView& gray, const BankSearch& search) override {
    size_t launched = 0;
    Status status;
    for (; launched < singles_.size(); ++launched) {
      member_matches_[launched].clear();
      if (!search.regions[launched].empty())
        status = singles_[launched]->enqueue(gray, single_settings(search, launched));
      if (!status.ok()) break;
    }
    for (size_t m = 0; m < launched; ++m) {
      if (search.regions[m].empty()) continue;
      const Status finished = singles_[m]->finish(&member_matches_[m]);
      if (status.ok()) status = finished;
    }
    return status;
  }

 public:
  MatchEngineCuda(void* stream, GpuWait wait) : stream_(stream) { options_.wait = wait; }
  bool on_device() const override { return true; }
  Status configure(PixelFormat format, int width, int height) override {
    width_ = width;
    height_ = height;
    for (auto& single : singles_) CUDAPREP_RETURN_IF_ERROR(prepare_single(single.get()));
    CUDAPREP_RETURN_IF_ERROR(bank_.configure(width, height, stream_, options_.wait));
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
    TemplateMatcherCuda::TextureCacheStats t;
    TemplateMatcherCuda::LaunchGraphStats g;
    for (const auto& single : singles_) {
      const TemplateMatcherCuda::TextureCacheStats s = single->texture_cache_stats();
      t.created += s.created;
      t.hits += s.hits;
      t.entries += s.entries;
      const TemplateMatcherCuda::LaunchGraphStats l = single->launch_graph_stats();
      g.captured += l.captured;
      g.replayed += l.replayed;
      g.updated += l.updated;
    }
    return "texture objects: " + std::to_string(t.created) + " created, " + std::to_string(t.hits) + " reused, " +
           std::to_string(t.entries) + " cached; launch graphs: " + std::to_string(g.captured) + " captured, " +
           std::to_string(g.replayed) + " replayed, " + std::to_string(g.updated) + " with new parameters";
  }

 private:
  void* stream_;
  MatcherCudaOptions options_;
  int width_ = 0, height_ = 0;
  cuda::DeviceBuffer gray_;  // converted frames
};

}  // namespace

std::unique_ptr<MatchEngine> make_match_engine_cpu() { return std::make_unique<MatchEngineCpu>(); }
std::unique_ptr<MatchEngine> make_match_engine_cuda(void* stream, GpuWait wait) {
  return std::make_unique<MatchEngineCuda>(stream, wait);
}

}  // namespace cudaprep
