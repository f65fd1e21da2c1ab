// CUDA path of tensorize batches: one upload of the slot table and one kernel per batch.
#include <cuda_runtime.h>

#include "cuda_status.h"
#include "tensorize_batch.h"

namespace cudaprep {

struct BatchSlotTable::Impl {
  int capacity = 0;
};

BatchSlotTable::BatchSlotTable() : impl_(new Impl) {}
BatchSlotTable::~BatchSlotTable() { delete impl_; }
int BatchSlotTable::capacity() const { return impl_->capacity; }
Status BatchSlotTable::reserve(int slots) {
  if (slots > impl_->capacity) impl_->capacity = slots;
  return Status();
}

// First version: the single-frame kernel per slot (the fused batch kernel follows).
Status tensorize_batch_cuda(const TensorizeBatch& batch, void* dst, size_t dst_bytes, void* stream,
                            BatchSlotTable* table, const TensorizeTuning& tuning) {
  CUDAPREP_RETURN_IF_ERROR(check_batch(batch, dst, dst_bytes));
  if (!table) return Status::error("tensorize batch: null slot table");
  const size_t stride = slot_bytes(batch.output);
  for (int i = 0; i < batch.count; ++i) {
    if (batch.slots[i].empty) return Status::error("tensorize batch: empty slots are not implemented yet");
    CUDAPREP_RETURN_IF_ERROR(tensorize_cuda(combine_plan(batch.output, batch.slots[i].plan), batch.slots[i].src,
                                            static_cast<char*>(dst) + stride * i, stream, tuning));
  }
  return Status();
}

}  // namespace cudaprep
