// Validation of a batch (tensorize_batch.h), shared by the CPU and CUDA paths: everything is
// checked before any memory is read or written, and every message names the slot.
#include <string>

#include "tensorize_batch.h"
#include "tensorize_pixel.h"

namespace cudaprep {
namespace {

Status slot_error(int i, const Status& s) {
  return Status::error("batch slot " + std::to_string(i) + ": " + s.message());
}

}  // namespace

Status check_batch(const TensorizeBatch& b, const void* dst, size_t dst_bytes) {
  if (b.count < 1 || b.count > kMaxBatchSlots)
    return Status::error("batch of " + std::to_string(b.count) + " slots is out of range (1.." +
                         std::to_string(kMaxBatchSlots) + ")");
  if (!b.slots) return Status::error("batch of " + std::to_string(b.count) + " slots has no slot array");
  const TensorOutputPlan& o = b.output;
  if (o.dst_width <= 0 || o.dst_width > kMaxTensorSide || o.dst_height <= 0 || o.dst_height > kMaxTensorSide ||
      !dtype_valid(o.dtype) || (o.channels != 1 && o.channels != 3))
    return Status::error("batch output plan is not initialised (bad tensor size, dtype or channels)");
  if (!dst) return Status::error("tensorize batch: null output");
  const size_t need = batch_bytes(o, b.count);
  if (dst_bytes < need)
    return Status::error("output of " + std::to_string(dst_bytes) + " bytes is smaller than the batch's " +
                         std::to_string(need) + " bytes (" + std::to_string(b.count) + " slots of " +
                         std::to_string(o.channels) + "x" + std::to_string(o.dst_height) + "x" +
                         std::to_string(o.dst_width) + " " + dtype_name(o.dtype) + ")");
  for (int i = 0; i < b.count; ++i) {
    const BatchSlot& s = b.slots[i];
    if (s.empty) continue;
    if (s.plan.transform.dst_width != o.dst_width || s.plan.transform.dst_height != o.dst_height)
      return Status::error("batch slot " + std::to_string(i) + ": its plan was made for a " +
                           std::to_string(s.plan.transform.dst_width) + "x" +
                           std::to_string(s.plan.transform.dst_height) + " tensor, the batch's is " +
                           std::to_string(o.dst_width) + "x" + std::to_string(o.dst_height));
    const TensorizePlan plan = combine_plan(o, s.plan);
    Status st = check_source(plan, s.src);
    if (st.ok()) st = tz::tensorize_check_plan(plan);
    if (!st.ok()) return slot_error(i, st);
  }
  return Status();
}

}  // namespace cudaprep
