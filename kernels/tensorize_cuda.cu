// CUDA path of the tensorize transform: one fused kernel per frame. The device code and its
// design notes are in tensorize_kernel.cuh (shared with the batch kernel).
#include <string>
#include <utility>

#include "tensorize_kernel.cuh"

namespace cudaprep {
namespace {

using tz::SourceFamily;
using tzk::KernelArgs;
using tzk::kBlockThreads;

template <SourceFamily F, Interpolation I, Layout L, DType D>
__global__ void __launch_bounds__(kBlockThreads) tensorize_kernel(const __grid_constant__ KernelArgs a) {
  tzk::tensorize_block<F, I, L, D>(a);
}

// ---- the dispatch table ------------------------------------------------------------------------

using KernelFn = void (*)(KernelArgs);

// Index = ((family * 2 + interpolation) * 2 + layout) * 2 + dtype.
constexpr int kKernelCount = tz::kSourceFamilyCount * 2 * 2 * 2;

template <int I>
KernelFn kernel_entry() {
  return &tensorize_kernel<static_cast<SourceFamily>(I / 8), static_cast<Interpolation>((I / 4) % 2),
                           static_cast<Layout>((I / 2) % 2), static_cast<DType>(I % 2)>;
}

template <int... I>
const KernelFn* make_table(std::integer_sequence<int, I...>) {
  static const KernelFn table[] = {kernel_entry<I>()...};
  return table;
}

const KernelFn* kernels() { return make_table(std::make_integer_sequence<int, kKernelCount>{}); }

int kernel_index(SourceFamily f, Interpolation i, Layout l, DType d) {
  return ((static_cast<int>(f) * 2 + static_cast<int>(i)) * 2 + static_cast<int>(l)) * 2 + static_cast<int>(d);
}

}  // namespace

Status tensorize_cuda(const TensorizePlan& plan, const ImageView& src, void* dst, void* stream,
                      const TensorizeTuning& tuning) {
  CUDAPREP_RETURN_IF_ERROR(check_source(plan, src));
  CUDAPREP_RETURN_IF_ERROR(tz::tensorize_check_plan(plan));
  if (!dst) return Status::error("tensorize: null output");
  if (tuning.warps_per_block < 1 || tuning.warps_per_block * 32 > kBlockThreads)
    return Status::error("tensorize: warps_per_block " + std::to_string(tuning.warps_per_block) +
                         " is out of range (1.." + std::to_string(kBlockThreads / 32) + ")");

  KernelArgs a;
  tzk::make_kernel_args(plan, src, dst, tuning.warps_per_block, tuning.plane_routing, &a);
  const SourceFamily family = tz::source_family(plan.format);
  const int total_warps = a.total_warps;

  const KernelFn fn = kernels()[kernel_index(family, plan.interpolation, plan.layout, plan.dtype)];
  const unsigned blocks = static_cast<unsigned>((total_warps + a.wpb - 1) / a.wpb);
  fn<<<blocks, 32 * a.wpb, 0, static_cast<cudaStream_t>(stream)>>>(a);
  return cuda_status(cudaGetLastError(), "tensorize kernel launch failed");
}

}  // namespace cudaprep
