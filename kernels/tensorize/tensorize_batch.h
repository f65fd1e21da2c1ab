// Batches: several sources (frames of different cameras, regions of one frame) into one tensor
// of B slots, in one pass (one kernel launch on the GPU), every slot bit for bit what the
// single-frame path (tensorize.h) makes of that source alone.
//
// How a caller uses it:
//   1. Once per output caps: TensorOutputSpec -> make_output_plan() -> TensorOutputPlan.
//   2. Once per source geometry (caps of that pad, roi): make_slot_plan(spec, source) -> SlotPlan.
//      A slot plan is tied to the output spec it was made with (its transform's dst size); make
//      it again when the spec changes.
//   3. Per batch: fill an array of BatchSlot (plan + the mapped frame, or empty = true for a slot
//      without a frame), point a TensorizeBatch at it and call Tensorizer::run_batch() (or
//      tensorize_batch_cpu / tensorize_batch_cuda) with a destination of batch_bytes() bytes.
//      Slot i is written at dst + i * slot_bytes(output); an empty slot is filled with the
//      normalised pad value. Its transform (SlotPlan::transform) maps it back to its frame.
//   The single-frame call tensorize_cpu / tensorize_cuda(plan, src, dst) is the batch of one
//   (TensorizePlan is an output plan and a slot plan).
// Errors name the slot: "batch slot 3: source plane 0 is null".
#pragma once
#include <cstddef>

#include "tensorize.h"

namespace cudaprep {

constexpr int kMaxBatchSlots = 1024;

// One slot of a batch. `plan` and `src` are ignored when `empty` is set.
struct BatchSlot {
  SlotPlan plan{};
  ImageView src;
  bool empty = false;
};

// A batch: the shared output plan and `count` slots (the array stays the caller's; it is read
// during the call only).
struct TensorizeBatch {
  TensorOutputPlan output{};
  const BatchSlot* slots = nullptr;
  int count = 0;
};

// Resolves the output-wide settings. Every invalid setting gets its own message.
Status make_output_plan(const TensorOutputSpec& spec, TensorOutputPlan* out);
// Resolves one source against an output spec (geometry, colour). Every invalid setting gets
// its own message (roi outside the frame, bad size, unknown format, ...).
Status make_slot_plan(const TensorOutputSpec& spec, const SlotSourceSpec& source, SlotPlan* out);
// The single-frame plan of slot i of a batch (for comparisons and the batch-of-one path).
TensorizePlan combine_plan(const TensorOutputPlan& output, const SlotPlan& slot);

// Bytes of one slot (one 3 x H x W tensor) and of a whole batch of `count` slots.
size_t slot_bytes(const TensorOutputPlan& output);
size_t batch_bytes(const TensorOutputPlan& output, int count);

// Validates a batch before any memory is touched: slot count (1..kMaxBatchSlots), each
// non-empty slot's plan against the output plan and its source (format, size, planes,
// strides), and the destination size.
Status check_batch(const TensorizeBatch& batch, const void* dst, size_t dst_bytes);

// CPU path: host memory in and out, rows of all slots spread over the shared worker pool.
Status tensorize_batch_cpu(const TensorizeBatch& batch, void* dst, size_t dst_bytes);

// Per-slot parameters of the CUDA path. Up to 64 slots they travel as the kernel's parameters
// (kept here between batches, never allocated per batch); larger batches use a pinned host array
// and a device array with room for `capacity` slots, allocated by reserve(), uploaded with one
// async copy per batch. Not thread-safe: one table per stream.
class BatchSlotTable {
 public:
  BatchSlotTable();
  ~BatchSlotTable();
  BatchSlotTable(const BatchSlotTable&) = delete;
  BatchSlotTable& operator=(const BatchSlotTable&) = delete;
  // Grows the arrays to hold `slots` slots (no-op when they already do). Needs the CUDA context.
  Status reserve(int slots);
  int capacity() const;

  struct Impl;
  Impl* impl() { return impl_; }

 private:
  Impl* impl_;
};

// CUDA path: device memory in and out; enqueues exactly one kernel on `stream` (a cudaStream_t),
// plus one upload of the slot table for batches over 64 slots, and returns without synchronising
// with the batch. Up to 64 slots the call never waits and can be captured into a CUDA graph; over
// 64 it waits, if ever, for the previous batch's upload from the same table to finish before
// reusing its pinned array. The table must have been reserved for batch.count slots.
Status tensorize_batch_cuda(const TensorizeBatch& batch, void* dst, size_t dst_bytes, void* stream,
                            BatchSlotTable* table, const TensorizeTuning& tuning = TensorizeTuning());

}  // namespace cudaprep
