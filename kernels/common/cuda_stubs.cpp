// Built instead of the .cu files when the project is configured without CUDA:
// every GPU entry point reports that clearly, and device_count() is 0 so callers pick the CPU path.
#include "bank_match.h"
#include "cuda_device.h"
#include "templatematch.h"
#include "tensorize.h"
#include "tensorize_batch.h"

namespace cudaprep {
namespace {
Status no_cuda() { return Status::error("gst-cudaprep was built without CUDA"); }
}  // namespace

namespace cuda {
bool built_with_cuda() { return false; }
int device_count() { return 0; }
Status stream_create(void** stream) {
  *stream = nullptr;
  return no_cuda();
}
void stream_destroy(void*) {}
Status stream_sync(void*) { return no_cuda(); }
Status stream_query(void*, bool* done) {
  *done = true;
  return no_cuda();
}
Status copy_2d_async(void*, size_t, const void*, size_t, size_t, size_t, CopyKind, void*) { return no_cuda(); }
DeviceBuffer::~DeviceBuffer() = default;
DeviceBuffer::DeviceBuffer(DeviceBuffer&&) noexcept {}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&&) noexcept { return *this; }
Status DeviceBuffer::allocate(size_t) { return no_cuda(); }
Status DeviceBuffer::allocate_pitched(size_t, size_t) { return no_cuda(); }
void DeviceBuffer::reset() {}
PinnedBuffer::~PinnedBuffer() = default;
PinnedBuffer::PinnedBuffer(PinnedBuffer&&) noexcept {}
PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&&) noexcept { return *this; }
Status PinnedBuffer::allocate(size_t) { return no_cuda(); }
void PinnedBuffer::reset() {}
Event::~Event() = default;
Status Event::create(bool) { return no_cuda(); }
void Event::reset() {}
Status Event::record(void*) { return no_cuda(); }
Status Event::synchronize() { return no_cuda(); }
Status Event::query(bool* done) {
  *done = true;
  return no_cuda();
}
Status Event::make_stream_wait(void*) { return no_cuda(); }
}  // namespace cuda

Status tensorize_cuda(const TensorizePlan&, const ImageView&, void*, void*, const TensorizeTuning&, PaddingRows) {
  return no_cuda();
}
struct BatchSlotTable::Impl {};
BatchSlotTable::BatchSlotTable() : impl_(nullptr) {}
BatchSlotTable::~BatchSlotTable() = default;
int BatchSlotTable::capacity() const { return 0; }
Status BatchSlotTable::reserve(int) { return no_cuda(); }
Status tensorize_batch_cuda(const TensorizeBatch&, void*, size_t, void*, BatchSlotTable*, const TensorizeTuning&) {
  return no_cuda();
}
Status to_gray_cuda(const ImageView&, uint8_t*, int64_t, void*) { return no_cuda(); }
Status draw_boxes_cuda(const ImageView&, const Rect*, int, const BoxStyle&, void*) { return no_cuda(); }

struct TemplateMatcherCuda::Impl {};
TemplateMatcherCuda::TemplateMatcherCuda() = default;
TemplateMatcherCuda::~TemplateMatcherCuda() = default;
Status TemplateMatcherCuda::configure(int, int, void*, const Options&) { return no_cuda(); }
Status TemplateMatcherCuda::set_template(const GrayView&, const uint8_t*) { return no_cuda(); }
bool TemplateMatcherCuda::has_template() const { return false; }
int TemplateMatcherCuda::template_width() const { return 0; }
int TemplateMatcherCuda::template_height() const { return 0; }
Status TemplateMatcherCuda::match(const GrayView&, const MatchSettings&, std::vector<Match>*) { return no_cuda(); }
Status TemplateMatcherCuda::enqueue(const GrayView&, const MatchSettings&) { return no_cuda(); }
Status TemplateMatcherCuda::finish(std::vector<Match>*) { return no_cuda(); }
Status TemplateMatcherCuda::score_map(const GrayView&, const Rect&, std::vector<float>*, int*, int*) {
  return no_cuda();
}
void TemplateMatcherCuda::release() {}
TemplateMatcherCuda::TextureCacheStats TemplateMatcherCuda::texture_cache_stats() const { return {}; }
TemplateMatcherCuda::LaunchGraphStats TemplateMatcherCuda::launch_graph_stats() const { return {}; }

struct BankMatcherCuda::Impl {
  TemplateBank bank;
  std::vector<BankCandidate> candidates;
};
BankMatcherCuda::BankMatcherCuda() : impl_(new Impl) {}
BankMatcherCuda::~BankMatcherCuda() = default;
Status BankMatcherCuda::configure(int, int, void*, GpuWait) { return no_cuda(); }
Status BankMatcherCuda::set_bank(const TemplateBank&) { return no_cuda(); }
const TemplateBank& BankMatcherCuda::bank() const { return impl_->bank; }
bool BankMatcherCuda::has_bank() const { return false; }
Status BankMatcherCuda::match(const GrayView&, const BankSearch&, bool, std::vector<Match>*) { return no_cuda(); }
Status BankMatcherCuda::score_map(const GrayView&, int, const Rect&, std::vector<float>*, int*, int*) {
  return no_cuda();
}
const std::vector<BankCandidate>& BankMatcherCuda::last_candidates() const { return impl_->candidates; }
bool BankMatcherCuda::last_candidates_suppressed() const { return false; }
void BankMatcherCuda::suppress_on_device_above(unsigned) {}
void BankMatcherCuda::release() {}
void BankMatcherCuda::use_cuda_cores_only(bool) {}

}  // namespace cudaprep
