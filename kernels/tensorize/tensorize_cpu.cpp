// CPU path of the tensorize transform: the per-pixel code of tensorize_pixel.h over row bands,
// spread over the shared worker pool. Each tensor pixel is computed independently, so the result
// does not depend on the number of threads.
// No FMA contraction anywhere in the CPU path (-ffp-contract=off in kernels/meson.build): the CUDA
// kernel, built with -fmad=false, must produce the same bits.

#include <algorithm>
#include <cstring>
#include <vector>

#include "tensorize.h"
#include "tensorize_batch.h"
#include "tensorize_pixel.h"
#include "worker_pool.h"

namespace cudaprep {
namespace {

using tz::PixelParams;
using tz::SourceFamily;

// One element of type D from its float value (dtypes.h: rounding and saturation of integers).
template <DType D>
void put(void* dst, int64_t i, float v) {
  using Store = DTypeStore<D>;
  static_cast<typename Store::Bits*>(dst)[i] = Store::from_float(v);
}

// Row y of C-channel values v[C * x + c] into the tensor.
template <Layout L, DType D, int C>
void store_row(const PixelParams& p, const float* v, int y, void* dst) {
  for (int x = 0; x < p.W; ++x)
    for (int c = 0; c < C; ++c) put<D>(dst, tz::out_offset<L, C>(p.W, p.H, x, y, c), v[C * x + c]);
}

template <DType D, int C>
void store_dtype(const PixelParams& p, Layout layout, const float* v, int y, void* dst) {
  if (layout == Layout::NCHW)
    store_row<Layout::NCHW, D, C>(p, v, y, dst);
  else
    store_row<Layout::NHWC, D, C>(p, v, y, dst);
}

template <int C>
void store(const PixelParams& p, Layout layout, DType dtype, const float* v, int y, void* dst) {
  visit_dtype(dtype, [&](auto d) { store_dtype<decltype(d)::value, C>(p, layout, v, y, dst); });
}

template <SourceFamily F, Interpolation I>
void run_rows(const PixelParams& p, const TensorOutputPlan& o, int y_begin, int y_end, void* dst) {
  // One row of values per thread, grown once: no allocation per frame.
  thread_local std::vector<float> row;
  if (row.size() < size_t(3) * p.W) row.resize(size_t(3) * p.W);
  float* v = row.data();
  const bool gray = o.channels == 1;
  for (int y = y_begin; y < y_end; ++y) {
    const bool active_row = tz::y_active(p, y);
    tz::RowCtx r{};
    if (active_row) r = tz::make_row<F, I>(p, y);
    for (int x = 0; x < p.W; ++x) {
      const bool active = active_row && tz::x_active(p, x);
      if (gray)
        v[x] = active ? tz::sample_gray_out<F, I>(p, r, x) : p.pad[0];
      else if (active)
        tz::sample_pixel<F, I>(p, r, x, v + 3 * x);
      else
        tz::pad_pixel(p, v + 3 * x);
    }
    if (gray)
      store<1>(p, o.layout, o.dtype, v, y, dst);
    else
      store<3>(p, o.layout, o.dtype, v, y, dst);
  }
}

template <SourceFamily F>
void run_family(const PixelParams& p, const TensorOutputPlan& o, int y0, int y1, void* dst) {
  if (o.interpolation == Interpolation::Bilinear)
    run_rows<F, Interpolation::Bilinear>(p, o, y0, y1, dst);
  else
    run_rows<F, Interpolation::Nearest>(p, o, y0, y1, dst);
}

void run_band(SourceFamily family, const TensorOutputPlan& o, const PixelParams& p, int y0, int y1, void* dst) {
  switch (family) {
    case SourceFamily::NV12: run_family<SourceFamily::NV12>(p, o, y0, y1, dst); break;
    case SourceFamily::I420: run_family<SourceFamily::I420>(p, o, y0, y1, dst); break;
    case SourceFamily::Packed3: run_family<SourceFamily::Packed3>(p, o, y0, y1, dst); break;
    case SourceFamily::Packed4: run_family<SourceFamily::Packed4>(p, o, y0, y1, dst); break;
    case SourceFamily::Gray: run_family<SourceFamily::Gray>(p, o, y0, y1, dst); break;
    case SourceFamily::Packed422: run_family<SourceFamily::Packed422>(p, o, y0, y1, dst); break;
    case SourceFamily::P010: run_family<SourceFamily::P010>(p, o, y0, y1, dst); break;
  }
}

// The pixel parameters of slot i (an empty slot: no active rows, so every row is padding).
PixelParams slot_params(const TensorizeBatch& b, int i) {
  const BatchSlot& s = b.slots[i];
  if (s.empty) return tz::make_pad_params(b.output);
  return tz::make_pixel_params(combine_plan(b.output, s.plan), s.src);
}

// All slots of a checked batch: row bands of every slot spread over the shared worker pool. The
// batch of one is the single-frame call.
void run_slots(const TensorizeBatch& b, void* dst) {
  const int H = b.output.dst_height;
  const int64_t work = int64_t(b.output.dst_width) * H;
  WorkerPool& pool = WorkerPool::shared();
  // Below 64k pixels, or 8 rows a band, a helper costs more than it saves (per slot; small slots
  // spread over the pool one slot per task).
  const int bands = work >= 65536 ? std::max(1, std::min(pool.max_threads(), H / 8)) : 1;
  const size_t stride = slot_bytes(b.output);
  pool.parallel_for(b.count * bands, [&b, dst, H, bands, stride](int task) {
    const int i = task / bands, band = task % bands;
    const PixelParams p = slot_params(b, i);
    const SourceFamily family = b.slots[i].empty ? SourceFamily::Gray : tz::source_family(b.slots[i].plan.format);
    run_band(family, b.output, p, static_cast<int>(int64_t(H) * band / bands),
             static_cast<int>(int64_t(H) * (band + 1) / bands), static_cast<char*>(dst) + stride * size_t(i));
  });
}

// Sanity of a plan that did not necessarily come from make_tensorize_plan (it is plain data).
Status check_plan(const TensorizePlan& plan) {
  if (plan.dst_width <= 0 || plan.dst_width > kMaxTensorSide || plan.dst_height <= 0 ||
      plan.dst_height > kMaxTensorSide)
    return Status::error("tensorize plan is not initialised (bad tensor size)");
  if (static_cast<int>(plan.interpolation) < 0 || static_cast<int>(plan.interpolation) > 1 ||
      static_cast<int>(plan.layout) < 0 || static_cast<int>(plan.layout) > 1 || !dtype_valid(plan.dtype) ||
      (plan.channels != 1 && plan.channels != 3))
    return Status::error("tensorize plan is not initialised (bad enum)");
  const Rect& r = plan.roi;
  if (r.w <= 0 || r.h <= 0 || r.x < 0 || r.y < 0 || int64_t(r.x) + r.w > plan.src_width ||
      int64_t(r.y) + r.h > plan.src_height)
    return Status::error("tensorize plan is not initialised (bad roi)");
  if (plan.active_x0 < 0 || plan.active_x1 > plan.dst_width || plan.active_y0 < 0 || plan.active_y1 > plan.dst_height)
    return Status::error("tensorize plan is not initialised (bad active range)");
  const bool packed = !is_yuv(plan.format);
  if (packed && plan.src_bytes_per_pixel != packed_bytes_per_pixel(plan.format))
    return Status::error("tensorize plan is not initialised (bad bytes per pixel)");
  for (float k : {plan.chroma_site_x, plan.chroma_site_y})
    if (k != 0.0f && k != 0.5f) return Status::error("tensorize plan is not initialised (bad chroma siting)");
  for (int c = 0; c < 3; ++c) {
    if (plan.out_channel_source[c] < 0 || plan.out_channel_source[c] > 2 || plan.src_channel_offset[c] < 0 ||
        plan.src_channel_offset[c] >= std::max(1, plan.src_bytes_per_pixel))
      return Status::error("tensorize plan is not initialised (bad channel map)");
  }
  return Status();
}

}  // namespace

namespace tz {
Status tensorize_check_plan(const TensorizePlan& plan) { return check_plan(plan); }
}  // namespace tz

Status tensorize_cpu(const TensorizePlan& plan, const ImageView& src, void* dst) {
  CUDAPREP_RETURN_IF_ERROR(check_source(plan, src));
  CUDAPREP_RETURN_IF_ERROR(check_plan(plan));
  if (!dst) return Status::error("tensorize: null output");
  BatchSlot slot;
  slot.plan = plan;
  slot.src = src;
  TensorizeBatch one;
  one.output = plan;
  one.slots = &slot;
  one.count = 1;
  run_slots(one, dst);
  return Status();
}

Status tensorize_batch_cpu(const TensorizeBatch& batch, void* dst, size_t dst_bytes) {
  CUDAPREP_RETURN_IF_ERROR(check_batch(batch, dst, dst_bytes));
  run_slots(batch, dst);
  return Status();
}

}  // namespace cudaprep
