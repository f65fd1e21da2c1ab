// CUDA path of the tensorize transform: one fused kernel per frame. Its design notes and the
// device code it calls are in tensorize_kernel.cuh, shared with the batch kernel.
//
// This kernel's body is its own, not a call of tzk::tensorize_block (the batch kernel's per-slot
// body, the same statements): with that call ptxas schedules the NV12 kernel differently and
// slower. The GPU tests hold the two bodies to the same output: each equals the CPU path bit for
// bit.
//
// One difference in order: here the padding rows' warps come first, in blocks of 2 warps
// (kSingleFrameWarpsPerBlock), so their stores go out while the sampling warps' loads are in
// flight, which is faster for every source format (dev/perf/tensorize.md). The batch kernel keeps
// them last and 4-warp blocks, which are faster for its many-region batches.
#include <string>
#include <utility>

#include "tensorize_kernel.cuh"

namespace cudaprep {
namespace {

using tz::SourceFamily;
using tzk::kBlockThreads;
using tzk::KernelArgs;
using namespace tzk;  // the shared device helpers: sample_group, store_group, kPixelsPerLane, ...

template <SourceFamily F, Interpolation I, Layout L, DType D, int C>
__global__ void __launch_bounds__(kBlockThreads) tensorize_kernel(const __grid_constant__ KernelArgs a) {
  constexpr int Q = kPixelsPerLane;
  const PixelParams& p = a.p;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const float* pad = a.kpad;
  int w = blockIdx.x * a.wpb + warp;
  if (w >= a.total_warps) return;
  const int pad_warps = a.total_warps - a.n_act * a.segs_per_row;
  if (w < pad_warps) {
    // A padding row (they come first, see the top of the file): the whole row, P pixels per
    // lane and store.
    const int k = w;
    const int y = k < a.pad_split ? k : k + a.n_act;
    constexpr int P = pad_pixels_per_store<D>();
    float v[3][P];
#pragma unroll
    for (int j = 0; j < P; ++j) {
      v[0][j] = pad[0];
      v[1][j] = pad[1];
      v[2][j] = pad[2];
    }
    for (int x = lane * P; x < p.W; x += 32 * P) store_group<L, D, P, C>(a, y, x, min(P, p.W - x), v);
    return;
  }
  w -= pad_warps;
  const int row = w / a.segs_per_row;
  const int y = a.a0 + row;                                         // samples the source (tz::y_active)
  const int x0 = (w - row * a.segs_per_row) * (32 * Q) + lane * Q;  // this lane's pixels: x0 .. x0 + Q - 1
  if (x0 >= p.W) return;
  const int x_last = x0 + Q - 1;

  float v[3][Q];
  if (x0 >= p.ax1 || x_last < p.ax0) {
#pragma unroll
    for (int i = 0; i < Q; ++i) {
      v[0][i] = pad[0];
      v[1][i] = pad[1];
      v[2][i] = pad[2];
    }
  } else if (C == 1) {
    gray_group<F, I, Q>(a, y, x0, v);
  } else {
    const RowCtx r = tz::make_row<F, I>(p, y);
    if (I == Interpolation::Bilinear) {
      // The row weights are uniform over the warp: one branch picks the rows to read.
      constexpr bool yuv = tz::YuvFamily<F>::yuv;
      if (r.fy != 0.0f) {
        if (yuv && r.cfy != 0.0f)
          sample_group<F, Q, true, true>(a, r, x0, v);
        else
          sample_group<F, Q, true, false>(a, r, x0, v);
      } else {
        if (yuv && r.cfy != 0.0f)
          sample_group<F, Q, false, true>(a, r, x0, v);
        else
          sample_group<F, Q, false, false>(a, r, x0, v);
      }
    } else {
#pragma unroll
      for (int j = 0; j < Q; ++j) {
        float o[3];
        const int x = x0 + j;
        if (x < p.W && tz::x_active(p, x))
          tz::sample_pixel<F, I>(p, r, x, o);
        else
          tz::pad_pixel(p, o);
        v[0][j] = o[0];
        v[1][j] = o[1];
        v[2][j] = o[2];
      }
    }
  }
  store_group<L, D, Q, C>(a, y, x0, min(Q, p.W - x0), v);
}

// ---- the dispatch table ------------------------------------------------------------------------

using KernelFn = void (*)(KernelArgs);

// Index = ((family * 2 + interpolation) * kOutputShapes + output shape) * kDTypeCount + dtype.
constexpr int kKernelCount = tz::kSourceFamilyCount * 2 * kOutputShapes * kDTypeCount;

template <int I>
KernelFn kernel_entry() {
  constexpr int dtype = I % kDTypeCount, shape = (I / kDTypeCount) % kOutputShapes;
  constexpr int interp = (I / (kDTypeCount * kOutputShapes)) % 2, family = I / (kDTypeCount * kOutputShapes * 2);
  return &tensorize_kernel<static_cast<SourceFamily>(family), static_cast<Interpolation>(interp), shape_layout(shape),
                           static_cast<DType>(dtype), shape_channels(shape)>;
}

template <int... I>
const KernelFn* make_table(std::integer_sequence<int, I...>) {
  static const KernelFn table[] = {kernel_entry<I>()...};
  return table;
}

const KernelFn* kernels() { return make_table(std::make_integer_sequence<int, kKernelCount>{}); }

int kernel_index(SourceFamily f, const TensorOutputPlan& o) {
  return ((static_cast<int>(f) * 2 + static_cast<int>(o.interpolation)) * kOutputShapes + output_shape(o)) *
             kDTypeCount +
         static_cast<int>(o.dtype);
}

}  // namespace

Status tensorize_cuda(const TensorizePlan& plan, const ImageView& src, void* dst, void* stream,
                      const TensorizeTuning& tuning, PaddingRows rows) {
  CUDAPREP_RETURN_IF_ERROR(check_source(plan, src));
  CUDAPREP_RETURN_IF_ERROR(tz::tensorize_check_plan(plan));
  if (!dst) return Status::error("tensorize: null output");
  int wpb = 0;
  CUDAPREP_RETURN_IF_ERROR(warps_per_block_of(tuning, kSingleFrameWarpsPerBlock, &wpb));

  KernelArgs a;
  tzk::make_kernel_args(plan, src, dst, wpb, tuning.plane_routing, &a);
  // The padding rows' warps are the first ones: leaving them out leaves the sampled warps alone.
  if (rows == PaddingRows::Keep) a.total_warps = a.n_act * a.segs_per_row;
  const SourceFamily family = tz::source_family(plan.format);
  const int total_warps = a.total_warps;
  if (total_warps == 0) return Status();  // every row is padding, and kept

  const KernelFn fn = kernels()[kernel_index(family, plan)];
  const unsigned blocks = static_cast<unsigned>((total_warps + a.wpb - 1) / a.wpb);
  fn<<<blocks, 32 * a.wpb, 0, static_cast<cudaStream_t>(stream)>>>(a);
  return cuda_status(cudaGetLastError(), "tensorize kernel launch failed");
}

}  // namespace cudaprep
