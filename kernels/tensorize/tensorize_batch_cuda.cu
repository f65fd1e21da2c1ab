// CUDA path of tensorize batches: one kernel launch per batch. Block (x, y) does block x of slot
// y's tensor with the same device code as the single-frame kernel (tensorize_kernel.cuh), so each
// slot equals the CPU path's output bit for bit. The source family is per slot (mixed formats in
// one launch): a switch on a value that is uniform over the block, so no warp diverges on it.
// Interpolation, output shape (layout, channels) and dtype are batch-wide template parameters.
//
// The per-slot arguments reach the kernel in one of two ways. Up to kParamSlots slots (every
// camera batch and most region batches) they are the kernel's parameters: the launch carries
// them, so there is no upload, no host wait and the launch can be captured into a CUDA graph.
// Larger batches upload them from a pinned array into device memory on the stream, waiting only
// for the previous upload from that array. The parameter path is the faster one: the host does not
// wait for an upload before each launch.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "tensorize_batch.h"
#include "tensorize_kernel.cuh"

namespace cudaprep {
namespace {

using tz::SourceFamily;
using tzk::kBlockThreads;
using tzk::KernelArgs;

// One slot's entry of the table in device memory.
struct alignas(16) SlotArgs {
  KernelArgs a;
  int family;  // SourceFamily
  int blocks;  // blocks that slot's tensor needs (the grid is as wide as the widest slot)
};

// The most slots whose arguments travel as kernel parameters (32764 bytes at most, CUDA 12.1+ on
// Volta and newer).
constexpr int kParamSlots = 64;
struct ParamSlots {
  SlotArgs slots[kParamSlots];
};
static_assert(sizeof(ParamSlots) <= 32764, "kernel parameters are limited to 32764 bytes");

// One block of slot blockIdx.y, whose arguments are `s`.
template <Interpolation I, Layout L, DType D, int C>
__device__ __forceinline__ void run_block(const SlotArgs& s) {
  if (static_cast<int>(blockIdx.x) >= s.blocks) return;
  switch (static_cast<SourceFamily>(s.family)) {
    case SourceFamily::NV12: tzk::tensorize_block<SourceFamily::NV12, I, L, D, C>(s.a); break;
    case SourceFamily::I420: tzk::tensorize_block<SourceFamily::I420, I, L, D, C>(s.a); break;
    case SourceFamily::Packed3: tzk::tensorize_block<SourceFamily::Packed3, I, L, D, C>(s.a); break;
    case SourceFamily::Packed4: tzk::tensorize_block<SourceFamily::Packed4, I, L, D, C>(s.a); break;
    case SourceFamily::Gray: tzk::tensorize_block<SourceFamily::Gray, I, L, D, C>(s.a); break;
    case SourceFamily::Packed422: tzk::tensorize_block<SourceFamily::Packed422, I, L, D, C>(s.a); break;
    case SourceFamily::P010: tzk::tensorize_block<SourceFamily::P010, I, L, D, C>(s.a); break;
  }
}

// Resident blocks a SM asked of ptxas: 10 caps the registers at 48 a thread (64 without a bound),
// which keeps more loads in flight in these memory-bound kernels (dev/perf/tensorize.md). The
// value must fit the architecture's threads per SM: sm_75 has 1024 (8 blocks of 128 threads);
// sm_80 and sm_90 2048, sm_86, sm_87 and sm_89 1536, all above 10 x 128. The host pass sees no
// __CUDA_ARCH__ and takes 10, which it does not use.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
constexpr int kMinBlocksPerSm = 1024 / kBlockThreads;
#else
constexpr int kMinBlocksPerSm = 10;
#endif

// The arguments read straight from the parameter bank (each field uniform over the block, a
// broadcast), which is faster here than copying them to shared memory first as the table kernel
// does.
template <Interpolation I, Layout L, DType D, int C>
__global__ void __launch_bounds__(kBlockThreads, kMinBlocksPerSm)
    tensorize_batch_param_kernel(const __grid_constant__ ParamSlots t) {
  run_block<I, L, D, C>(t.slots[blockIdx.y]);
}

// The arguments are copied from the table into shared memory first, 16 bytes a thread: read in
// place from global memory, every field would be a load on the way to the first source tap.
template <Interpolation I, Layout L, DType D, int C>
__global__ void __launch_bounds__(kBlockThreads, kMinBlocksPerSm)
    tensorize_batch_table_kernel(const SlotArgs* __restrict__ table) {
  __shared__ SlotArgs s;
  const int4* src = reinterpret_cast<const int4*>(&table[blockIdx.y]);
  int4* dst = reinterpret_cast<int4*>(&s);
  for (int i = threadIdx.x; i < int(sizeof(SlotArgs) / 16); i += blockDim.x) dst[i] = src[i];
  __syncthreads();
  run_block<I, L, D, C>(s);
}

using ParamKernelFn = void (*)(ParamSlots);
using TableKernelFn = void (*)(const SlotArgs*);

// The dispatch tables. Index I = (interpolation * kOutputShapes + output shape) * kDTypeCount + dtype.
constexpr int kBatchKernelCount = 2 * tzk::kOutputShapes * kDTypeCount;
template <int I>
constexpr Interpolation interpolation_of = static_cast<Interpolation>(I / (tzk::kOutputShapes * kDTypeCount));
template <int I>
constexpr int shape_of = (I / kDTypeCount) % tzk::kOutputShapes;
template <int I>
constexpr DType dtype_of = static_cast<DType>(I % kDTypeCount);

template <int... I>
const ParamKernelFn* make_param_table(std::integer_sequence<int, I...>) {
  static const ParamKernelFn table[] = {
      &tensorize_batch_param_kernel<interpolation_of<I>, tzk::shape_layout(shape_of<I>), dtype_of<I>,
                                    tzk::shape_channels(shape_of<I>)>...};
  return table;
}

template <int... I>
const TableKernelFn* make_table_table(std::integer_sequence<int, I...>) {
  static const TableKernelFn table[] = {
      &tensorize_batch_table_kernel<interpolation_of<I>, tzk::shape_layout(shape_of<I>), dtype_of<I>,
                                    tzk::shape_channels(shape_of<I>)>...};
  return table;
}

int kernel_index(const TensorOutputPlan& o) {
  return (static_cast<int>(o.interpolation) * tzk::kOutputShapes + tzk::output_shape(o)) * kDTypeCount +
         static_cast<int>(o.dtype);
}

}  // namespace

// Batches of up to kParamSlots slots: the parameter block the launch copies. Larger ones: the
// pinned staging array, its device copy and the event that says the last upload from the staging
// array is done (so it can be rewritten).
struct BatchSlotTable::Impl {
  std::unique_ptr<ParamSlots> params;
  SlotArgs* host = nullptr;
  SlotArgs* device = nullptr;
  cudaEvent_t uploaded = nullptr;
  int capacity = 0;  // of host / device

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

int BatchSlotTable::capacity() const { return std::max(impl_->capacity, impl_->params ? kParamSlots : 0); }

Status BatchSlotTable::reserve(int slots) {
  if (slots < 1 || slots > kMaxBatchSlots)
    return Status::error("batch slot table of " + std::to_string(slots) + " slots is out of range (1.." +
                         std::to_string(kMaxBatchSlots) + ")");
  Impl& t = *impl_;
  if (slots <= kParamSlots) {
    if (!t.params) t.params.reset(new ParamSlots());
    return Status();
  }
  if (slots <= t.capacity) return Status();
  if (!t.uploaded)
    CUDAPREP_RETURN_IF_ERROR(
        cuda_status(cudaEventCreateWithFlags(&t.uploaded, cudaEventDisableTiming), "batch slot table event"));
  t.release();
  const size_t bytes = sizeof(SlotArgs) * size_t(slots);
  CUDAPREP_RETURN_IF_ERROR(
      cuda_status(cudaMallocHost(reinterpret_cast<void**>(&t.host), bytes), "batch slot table (pinned host memory)"));
  const Status st =
      cuda_status(cudaMalloc(reinterpret_cast<void**>(&t.device), bytes), "batch slot table (device memory)");
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
  int wpb = 0;
  CUDAPREP_RETURN_IF_ERROR(warps_per_block_of(tuning, kBatchWarpsPerBlock, &wpb));
  CUDAPREP_RETURN_IF_ERROR(table->reserve(batch.count));  // allocates only when the batch outgrows it
  BatchSlotTable::Impl& t = *table->impl();
  const bool as_params = batch.count <= kParamSlots;
  // The previous batch's upload read the staging array; it has long finished in a stream that
  // runs, so this wait is for that copy only, never for a kernel.
  if (!as_params)
    CUDAPREP_RETURN_IF_ERROR(
        cuda_status(cudaEventSynchronize(t.uploaded), "tensorize batch: waiting for the last upload"));
  SlotArgs* args = as_params ? t.params->slots : t.host;

  const size_t stride = slot_bytes(batch.output);
  int widest = 1;
  for (int i = 0; i < batch.count; ++i) {
    const BatchSlot& slot = batch.slots[i];
    SlotArgs& s = args[i];
    char* out = static_cast<char*>(dst) + stride * size_t(i);
    if (slot.empty) {
      tzk::make_pad_kernel_args(batch.output, out, wpb, &s.a);
      s.family = static_cast<int>(SourceFamily::Gray);
    } else {
      tzk::make_kernel_args(combine_plan(batch.output, slot.plan), slot.src, out, wpb, tuning.plane_routing, &s.a);
      s.family = static_cast<int>(tz::source_family(slot.plan.format));
    }
    s.blocks = (s.a.total_warps + wpb - 1) / wpb;
    widest = std::max(widest, s.blocks);
  }
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  const dim3 grid(static_cast<unsigned>(widest), static_cast<unsigned>(batch.count));
  const unsigned threads = 32u * static_cast<unsigned>(wpb);
  static const ParamKernelFn* param_kernels = make_param_table(std::make_integer_sequence<int, kBatchKernelCount>{});
  static const TableKernelFn* table_kernels = make_table_table(std::make_integer_sequence<int, kBatchKernelCount>{});
  if (as_params) {
    param_kernels[kernel_index(batch.output)]<<<grid, threads, 0, st>>>(*t.params);
  } else {
    CUDAPREP_RETURN_IF_ERROR(cuda_status(
        cudaMemcpyAsync(t.device, t.host, sizeof(SlotArgs) * size_t(batch.count), cudaMemcpyHostToDevice, st),
        "tensorize batch: slot table upload"));
    CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaEventRecord(t.uploaded, st), "tensorize batch: slot table upload"));
    table_kernels[kernel_index(batch.output)]<<<grid, threads, 0, st>>>(t.device);
  }
  return cuda_status(cudaGetLastError(), "tensorize batch kernel launch failed");
}

}  // namespace cudaprep
