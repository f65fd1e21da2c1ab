// CUDA path of the tensorize transform: one fused kernel per frame.
//
// Work split. A warp owns one segment of one tensor row: 32 lanes x Q adjacent pixels (Q = 4 for
// YUV sources, 2 for packed and gray ones: the faster of the shapes measured, see
// bench/NOTES-tensorize.md), written with one Q-wide vector store per channel plane (three for
// NHWC). Blocks are two warps, and warp w of block b takes segment w * gridDim.x + b, so each
// block pairs a row of the upper half of the tensor with one of the lower half.
//
// Sampling. Every tap is read with a byte load at its clamped position: no load window can leave
// a row, so there are no window checks and no second (divergent) path for the lanes at the row
// ends, which made whole warps run twice in the word-load design. A byte becomes the float
// 2^23 + byte by one OR, and the interpolation subtracts 2^23 exactly. Tap positions are
// floored with the 2^23 rounding trick on the FP32/ALU pipes rather than floorf + float->int
// conversions on the conversion pipe (16 per clock per SM). Nearest neighbour, and pixels of a
// lane that straddles the active rectangle, go through the same per-pixel code or
// tz::sample_pixel. All of it feeds the same source bytes into the same float operations as
// tensorize_pixel.h, so the result equals the CPU path bit for bit.
//
// Runtime enums become template parameters through one dispatch table (kernels()): source
// family x interpolation x layout x dtype. Channel order and packing are runtime byte maps.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <string>
#include <utility>

#include "tensorize.h"
#include "tensorize_pixel.h"

namespace cudaprep {
namespace {

using tz::PixelParams;
using tz::RowCtx;
using tz::SourceFamily;

constexpr int kWarpsPerBlock = 2;
constexpr int kBlockThreads = 32 * kWarpsPerBlock;

struct KernelArgs {
  PixelParams p;
  void* dst;
  int segs_per_row;  // warp segments per tensor row
  int total_segs;    // segs_per_row * H
};

// Pixels per lane (adjacent, one vector store per channel).
constexpr int pixels_per_lane(SourceFamily f) {
  return f == SourceFamily::NV12 || f == SourceFamily::I420 ? 4 : 2;
}

// ---- sampling ----------------------------------------------------------------------------------

// Source bytes as "magic" floats 2^23 + byte (exact): one OR instead of a conversion.
constexpr uint32_t kMagicBits = 0x4B000000u;
constexpr float kMagic = 8388608.0f;

__device__ __forceinline__ float mload(const uint8_t* q) { return __uint_as_float(kMagicBits | uint32_t(__ldg(q))); }

// tz::lerp1(a, b, f) for A = 2^23 + a, B = 2^23 + b: A - 2^23 and B - A are exact, so the
// operands and operations are those of lerp1.
__device__ __forceinline__ float mlerp(float A, float B, float f) {
  const float a = A - kMagic;
  return a + (B - A) * f;
}

// tz::bilerp on magic floats.
__device__ __forceinline__ float mbilerp(float A00, float A01, float A10, float A11, float fx, float fy) {
  return tz::lerp1(mlerp(A00, A01, fx), mlerp(A10, A11, fx), fy);
}

// floorf(s) and (int)floorf(s) on the FP32/ALU pipes (2^23 rounding trick, exact for
// |s| < 2^22: source coordinates stay far below) instead of two conversions on the slow
// conversion pipe. Equal to the floor and the int that tz::bilinear_taps computes.
__device__ __forceinline__ float floor_alu(float s, int& i) {
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: s + kRound rounds s to an integer
  const float t = s + kRound;
  float r = t - kRound;  // exact: round-to-nearest(s)
  int n = __float_as_int(t) - 0x4B400000;
  if (r > s) {
    r -= 1.0f;
    --n;
  }
  i = n;
  return r;
}

// tz::bilinear_taps.
__device__ __forceinline__ tz::Taps clamped_taps(float s, int lo, int hi) {
  int i;
  const float fl = floor_alu(s, i);
  tz::Taps t;
  t.f = s - fl;
  t.i0 = tz::clampi(i, lo, hi);
  t.i1 = tz::clampi(i + 1, lo, hi);
  return t;
}

// One active tensor pixel, bilinear, with byte loads at clamped taps; xf is float(x), exactly.
// Same operands and operations as tz::sample_pixel<F, Bilinear>.
template <SourceFamily F>
__device__ __forceinline__ void sample_bytes(const PixelParams& p, const RowCtx& r, float xf, float out[3]) {
  const float xs = p.inv_sx * xf + p.off_x;  // tz::src_coord
  const tz::Taps t = clamped_taps(xs, p.lx0, p.lx1);
  if (F == SourceFamily::Packed3 || F == SourceFamily::Packed4) {
    constexpr int bpp = F == SourceFamily::Packed3 ? 3 : 4;
    const uint8_t* q00 = r.r0 + t.i0 * bpp;
    const uint8_t* q01 = r.r0 + t.i1 * bpp;
    const uint8_t* q10 = r.r1 + t.i0 * bpp;
    const uint8_t* q11 = r.r1 + t.i1 * bpp;
    float v[3];
#pragma unroll
    for (int c = 0; c < 3; ++c) {
      const int b = p.byte_of[c];
      v[c] = mbilerp(mload(q00 + b), mload(q01 + b), mload(q10 + b), mload(q11 + b), t.f, r.fy);
    }
    tz::finish_rgb(p, v[0], v[1], v[2], out);
  } else {
    const float Y = mbilerp(mload(r.r0 + t.i0), mload(r.r0 + t.i1), mload(r.r1 + t.i0), mload(r.r1 + t.i1), t.f, r.fy);
    if (F == SourceFamily::Gray) {
      tz::finish_gray(p, Y, out);
      return;
    }
    const tz::Taps c = clamped_taps(tz::chroma_coord(xs), p.cx0, p.cx1);
    float U, V;
    if (F == SourceFamily::NV12) {
      const uint8_t* u00 = r.a0 + 2 * c.i0;
      const uint8_t* u01 = r.a0 + 2 * c.i1;
      const uint8_t* u10 = r.a1 + 2 * c.i0;
      const uint8_t* u11 = r.a1 + 2 * c.i1;
      U = mbilerp(mload(u00), mload(u01), mload(u10), mload(u11), c.f, r.cfy);
      V = mbilerp(mload(u00 + 1), mload(u01 + 1), mload(u10 + 1), mload(u11 + 1), c.f, r.cfy);
    } else {
      U = mbilerp(mload(r.a0 + c.i0), mload(r.a0 + c.i1), mload(r.a1 + c.i0), mload(r.a1 + c.i1), c.f, r.cfy);
      V = mbilerp(mload(r.b0 + c.i0), mload(r.b0 + c.i1), mload(r.b1 + c.i0), mload(r.b1 + c.i1), c.f, r.cfy);
    }
    tz::finish_yuv(p, Y, U, V, out);
  }
}

// ---- stores ------------------------------------------------------------------------------------

__device__ __forceinline__ uint32_t pack_half2(float a, float b) {
  return uint32_t(__half_as_ushort(__float2half_rn(a))) | (uint32_t(__half_as_ushort(__float2half_rn(b))) << 16);
}

// N consecutive output elements from e[0..N) in one store (q aligned to N elements).
template <DType D, int N>
__device__ __forceinline__ void store_vec(void* q, const float* e) {
  if (D == DType::Float32) {
    if (N == 1) *static_cast<float*>(q) = e[0];
    if (N == 2) *static_cast<float2*>(q) = make_float2(e[0], e[1]);
    if (N == 4) *static_cast<float4*>(q) = make_float4(e[0], e[1], e[2], e[3]);
  } else {
    if (N == 1) *static_cast<__half*>(q) = __float2half_rn(e[0]);
    if (N == 2) *static_cast<uint32_t*>(q) = pack_half2(e[0], e[1]);
    if (N == 4) *static_cast<uint2*>(q) = make_uint2(pack_half2(e[0], e[1]), pack_half2(e[2], e[3]));
    if (N == 8)
      *static_cast<uint4*>(q) = make_uint4(pack_half2(e[0], e[1]), pack_half2(e[2], e[3]), pack_half2(e[4], e[5]),
                                           pack_half2(e[6], e[7]));
  }
}

template <DType D>
__device__ __forceinline__ void store_one(void* base, int64_t i, float e) {
  if (D == DType::Float32)
    static_cast<float*>(base)[i] = e;
  else
    static_cast<__half*>(base)[i] = __float2half_rn(e);
}

// Q pixels from x (n of them inside the tensor), values v[c][j]: vector stores where the whole
// group is inside and the address is aligned, element stores otherwise (odd widths, odd offsets).
template <Layout L, DType D, int Q>
__device__ __forceinline__ void store_group(void* dst, int W, int H, int y, int x, int n, const float (&v)[3][Q]) {
  constexpr int esize = D == DType::Float32 ? 4 : 2;
  const int64_t pix = int64_t(y) * W + x;
  char* const o = static_cast<char*>(dst);
  if (L == Layout::NCHW) {
    const int64_t plane = int64_t(W) * H;
#pragma unroll
    for (int c = 0; c < 3; ++c) {
      char* q = o + (c * plane + pix) * esize;
      if (n == Q && (reinterpret_cast<uintptr_t>(q) & (Q * esize - 1)) == 0) {
        store_vec<D, Q>(q, &v[c][0]);
      } else {
#pragma unroll
        for (int j = 0; j < Q; ++j)
          if (j < n) store_one<D>(o, c * plane + pix + j, v[c][j]);
      }
    }
  } else {
    float e[3 * Q];
#pragma unroll
    for (int j = 0; j < Q; ++j) {
      e[3 * j] = v[0][j];
      e[3 * j + 1] = v[1][j];
      e[3 * j + 2] = v[2][j];
    }
    char* q = o + pix * 3 * esize;
    if (n == Q && (reinterpret_cast<uintptr_t>(q) & (Q * esize - 1)) == 0) {
#pragma unroll
      for (int k = 0; k < 3; ++k) store_vec<D, Q>(q + k * Q * esize, &e[k * Q]);
    } else {
#pragma unroll
      for (int j = 0; j < 3 * Q; ++j)
        if (j < 3 * n) store_one<D>(o, pix * 3 + j, e[j]);
    }
  }
}

// ---- the kernel --------------------------------------------------------------------------------

template <SourceFamily F, Interpolation I, Layout L, DType D>
__global__ void __launch_bounds__(kBlockThreads) tensorize_kernel(const __grid_constant__ KernelArgs a) {
  constexpr int Q = pixels_per_lane(F);
  const PixelParams& p = a.p;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int seg = warp * gridDim.x + blockIdx.x;
  if (seg >= a.total_segs) return;
  const int y = seg / a.segs_per_row;
  const int x0 = (seg - y * a.segs_per_row) * (32 * Q) + lane * Q;  // this lane's pixels: x0 .. x0 + Q - 1
  const int x_last = x0 + Q - 1;
  const float xf0 = static_cast<float>(x0);  // float(x) = xf0 + (x - x0), exactly (x < 2^24)

  float v[3][Q];
  if (!tz::y_active(p, y) || x0 >= p.ax1 || x_last < p.ax0) {
#pragma unroll
    for (int i = 0; i < Q; ++i) {
      v[0][i] = p.pad[0];
      v[1][i] = p.pad[1];
      v[2][i] = p.pad[2];
    }
  } else {
    const RowCtx r = tz::make_row<F, I>(p, y);
    constexpr bool bilinear = I == Interpolation::Bilinear;
    if (bilinear && x0 >= p.ax0 && x_last < p.ax1) {
#pragma unroll
      for (int j = 0; j < Q; ++j) {
        float o[3];
        sample_bytes<F>(p, r, xf0 + static_cast<float>(j), o);
        v[0][j] = o[0];
        v[1][j] = o[1];
        v[2][j] = o[2];
      }
    } else {
#pragma unroll
      for (int j = 0; j < Q; ++j) {
        float o[3];
        const int x = x0 + j;
        if (x < p.W && tz::x_active(p, x)) {
          if (bilinear)
            sample_bytes<F>(p, r, xf0 + static_cast<float>(j), o);
          else
            tz::sample_pixel<F, I>(p, r, x, o);
        } else {
          tz::pad_pixel(p, o);
        }
        v[0][j] = o[0];
        v[1][j] = o[1];
        v[2][j] = o[2];
      }
    }
  }
  if (x0 < p.W) store_group<L, D, Q>(a.dst, p.W, p.H, y, x0, min(Q, p.W - x0), v);
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

Status tensorize_cuda(const TensorizePlan& plan, const ImageView& src, void* dst, void* stream) {
  CUDAPREP_RETURN_IF_ERROR(check_source(plan, src));
  CUDAPREP_RETURN_IF_ERROR(tz::tensorize_check_plan(plan));
  if (!dst) return Status::error("tensorize: null output");

  const SourceFamily family = tz::source_family(plan.format);
  KernelArgs a;
  a.p = tz::make_pixel_params(plan, src);
  a.dst = dst;
  const int seg_px = 32 * pixels_per_lane(family);
  a.segs_per_row = (plan.dst_width + seg_px - 1) / seg_px;
  a.total_segs = a.segs_per_row * plan.dst_height;

  const KernelFn fn = kernels()[kernel_index(family, plan.interpolation, plan.layout, plan.dtype)];
  const unsigned blocks = static_cast<unsigned>((a.total_segs + kWarpsPerBlock - 1) / kWarpsPerBlock);
  fn<<<blocks, kBlockThreads, 0, static_cast<cudaStream_t>(stream)>>>(a);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    return Status::error(std::string("tensorize kernel launch failed: ") + cudaGetErrorName(err) + " (" +
                         cudaGetErrorString(err) + ")");
  return Status();
}

}  // namespace cudaprep
