#include "tensorizer.h"

namespace cudaprep {
namespace {

class TensorizerCpu final : public Tensorizer {
 public:
  bool on_device() const override { return false; }
  Status run(const TensorizePlan& plan, const ImageView& src, void* dst, PaddingRows) override {
    return tensorize_cpu(plan, src, dst);  // every row: Keep allows the skip, and host memory gains nothing by it
  }
  Status reserve(int) override { return Status(); }
  Status run_batch(const TensorizeBatch& batch, void* dst, size_t dst_bytes) override {
    return tensorize_batch_cpu(batch, dst, dst_bytes);
  }
};

class TensorizerCuda final : public Tensorizer {
 public:
  explicit TensorizerCuda(void* stream) : stream_(stream) {}
  bool on_device() const override { return true; }
  Status run(const TensorizePlan& plan, const ImageView& src, void* dst, PaddingRows rows) override {
    return tensorize_cuda(plan, src, dst, stream_, TensorizeTuning(), rows);
  }
  Status reserve(int slots) override { return table_.reserve(slots); }
  Status run_batch(const TensorizeBatch& batch, void* dst, size_t dst_bytes) override {
    return tensorize_batch_cuda(batch, dst, dst_bytes, stream_, &table_);
  }

 private:
  void* stream_;
  BatchSlotTable table_;
};

}  // namespace

std::unique_ptr<Tensorizer> make_tensorizer_cpu() { return std::make_unique<TensorizerCpu>(); }
std::unique_ptr<Tensorizer> make_tensorizer_cuda(void* stream) { return std::make_unique<TensorizerCuda>(stream); }

}  // namespace cudaprep
