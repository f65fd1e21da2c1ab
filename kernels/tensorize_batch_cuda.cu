// CUDA path of tensorize batches: one upload of the per-slot kernel arguments and one kernel
// launch per batch. Block (x, y) does block x of slot y's tensor with the same device code as the
// single-frame kernel (tensorize_kernel.cuh), so each slot equals that kernel's output bit for bit.
// The source family is per slot (mixed formats in one launch): a switch on a value that is
// uniform over the block, so no warp diverges on it. Interpolation, layout and dtype are
// batch-wide template parameters.
#include <algorithm>
#include <string>
#include <utility>

#include "tensorize_batch.h"
#include "tensorize_kernel.cuh"

namespace cudaprep {
namespace {

using tz::SourceFamily;
using tzk::KernelArgs;
using tzk::kBlockThreads;

// One slot's entry of the table in device memory.
struct SlotArgs {
  KernelArgs a;
  int family;   // SourceFamily
  int blocks;   // blocks that slot's tensor needs (the grid is as wide as the widest slot)
};

template <Interpolation I, Layout L, DType D>
__global__ void __launch_bounds__(kBlockThreads) tensorize_batch_kernel(const SlotArgs* __restrict__ table) {
  const SlotArgs& s = table[blockIdx.y];
  if (static_cast<int>(blockIdx.x) >= s.blocks) return;
  switch (static_cast<SourceFamily>(s.family)) {
    case SourceFamily::NV12: tzk::tensorize_block<SourceFamily::NV12, I, L, D>(s.a); break;
    case SourceFamily::I420: tzk::tensorize_block<SourceFamily::I420, I, L, D>(s.a); break;
    case SourceFamily::Packed3: tzk::tensorize_block<SourceFamily::Packed3, I, L, D>(s.a); break;
    case SourceFamily::Packed4: tzk::tensorize_block<SourceFamily::Packed4, I, L, D>(s.a); break;
    case SourceFamily::Gray: tzk::tensorize_block<SourceFamily::Gray, I, L, D>(s.a); break;
    case SourceFamily::Packed422: tzk::tensorize_block<SourceFamily::Packed422, I, L, D>(s.a); break;
    case SourceFamily::P010: tzk::tensorize_block<SourceFamily::P010, I, L, D>(s.a); break;
  }
}

using BatchKernelFn = void (*)(const SlotArgs*);

template <int I>
BatchKernelFn batch_kernel_entry() {
  return &tensorize_batch_kernel<static_cast<Interpolation>(I / 4), static_cast<Layout>((I / 2) % 2),
                                 static_cast<DType>(I % 2)>;
}

template <int... I>
const BatchKernelFn* make_batch_table(std::integer_sequence<int, I...>) {
  static const BatchKernelFn table[] = {batch_kernel_entry<I>()...};
  return table;
}

// Index = (interpolation * 2 + layout) * 2 + dtype.
BatchKernelFn batch_kernel(Interpolation i, Layout l, DType d) {
  static const BatchKernelFn* table = make_batch_table(std::make_integer_sequence<int, 8>{});
  return table[(static_cast<int>(i) * 2 + static_cast<int>(l)) * 2 + static_cast<int>(d)];
}

}  // namespace

// The pinned staging array, its device copy and the event that says the last upload from the
// staging array is done (so it can be rewritten).
struct BatchSlotTable::Impl {
  SlotArgs* host = nullptr;
  SlotArgs* device = nullptr;
  cudaEvent_t uploaded = nullptr;
  int capacity = 0;

  void release() {
    if (uploaded) cudaEventSynchronize(uploaded);  // no upload or kernel still reads the arrays
    if (host) cudaFreeHost(host);
    if (device) cudaFree(device);
    host = nullptr;
    device = nullptr;
    capacity = 0;
  }
};

BatchSlotTable::BatchSlotTable() : impl_(new Impl) {}

BatchSlotTable::~BatchSlotTable() {
  impl_->release();
  if (impl_->uploaded) cudaEventDestroy(impl_->uploaded);
  delete impl_;
}

int BatchSlotTable::capacity() const { return impl_->capacity; }

Status BatchSlotTable::reserve(int slots) {
  if (slots < 1 || slots > kMaxBatchSlots)
    return Status::error("batch slot table of " + std::to_string(slots) + " slots is out of range (1.." +
                         std::to_string(kMaxBatchSlots) + ")");
  Impl& t = *impl_;
  if (slots <= t.capacity) return Status();
  if (!t.uploaded)
    CUDAPREP_RETURN_IF_ERROR(
        cuda_status(cudaEventCreateWithFlags(&t.uploaded, cudaEventDisableTiming), "batch slot table event"));
  t.release();
  const size_t bytes = sizeof(SlotArgs) * size_t(slots);
  CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaMallocHost(reinterpret_cast<void**>(&t.host), bytes),
                                       "batch slot table (pinned host memory)"));
  const Status st = cuda_status(cudaMalloc(reinterpret_cast<void**>(&t.device), bytes), "batch slot table (device memory)");
  if (!st.ok()) {
    t.release();
    return st;
  }
  t.capacity = slots;
  return Status();
}

Status tensorize_batch_cuda(const TensorizeBatch& batch, void* dst, size_t dst_bytes, void* stream,
                            BatchSlotTable* table, const TensorizeTuning& tuning) {
  CUDAPREP_RETURN_IF_ERROR(check_batch(batch, dst, dst_bytes));
  if (!table) return Status::error("tensorize batch: null slot table");
  if (tuning.warps_per_block < 1 || tuning.warps_per_block * 32 > kBlockThreads)
    return Status::error("tensorize: warps_per_block " + std::to_string(tuning.warps_per_block) +
                         " is out of range (1.." + std::to_string(kBlockThreads / 32) + ")");
  CUDAPREP_RETURN_IF_ERROR(table->reserve(batch.count));  // allocates only when the batch outgrows it
  BatchSlotTable::Impl& t = *table->impl();
  // The previous batch's upload read the staging array; it has long finished in a stream that
  // runs, so this wait is for that copy only, never for a kernel.
  CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaEventSynchronize(t.uploaded), "tensorize batch: waiting for the last upload"));

  const size_t stride = slot_bytes(batch.output);
  int widest = 1;
  for (int i = 0; i < batch.count; ++i) {
    const BatchSlot& slot = batch.slots[i];
    SlotArgs& s = t.host[i];
    char* out = static_cast<char*>(dst) + stride * size_t(i);
    if (slot.empty) {
      tzk::make_pad_kernel_args(batch.output, out, tuning.warps_per_block, &s.a);
      s.family = static_cast<int>(SourceFamily::Gray);
    } else {
      tzk::make_kernel_args(combine_plan(batch.output, slot.plan), slot.src, out, tuning.warps_per_block,
                            tuning.plane_routing, &s.a);
      s.family = static_cast<int>(tz::source_family(slot.plan.format));
    }
    s.blocks = (s.a.total_warps + tuning.warps_per_block - 1) / tuning.warps_per_block;
    widest = std::max(widest, s.blocks);
  }
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  CUDAPREP_RETURN_IF_ERROR(cuda_status(
      cudaMemcpyAsync(t.device, t.host, sizeof(SlotArgs) * size_t(batch.count), cudaMemcpyHostToDevice, st),
      "tensorize batch: slot table upload"));
  CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaEventRecord(t.uploaded, st), "tensorize batch: slot table upload"));
  const BatchKernelFn fn = batch_kernel(batch.output.interpolation, batch.output.layout, batch.output.dtype);
  fn<<<dim3(static_cast<unsigned>(widest), static_cast<unsigned>(batch.count)), 32 * tuning.warps_per_block, 0, st>>>(
      t.device);
  return cuda_status(cudaGetLastError(), "tensorize batch kernel launch failed");
}

}  // namespace cudaprep
