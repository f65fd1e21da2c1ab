// CUDA path of the tensorize transform: one fused kernel per frame.
//
// Each thread produces PPT consecutive pixels of one tensor row (PPT = 16 bytes of one channel:
// 4 fp32 or 8 fp16) and writes them with 16-byte stores where the address allows (scalar stores
// otherwise, e.g. odd tensor widths). Pad pixels are written without reading the source.
// Bilinear samples of the interior are fetched with aligned 32-bit __ldg loads and funnel
// shifts (one 2x2 neighbourhood of a BGR pixel = 6 loads instead of 12 byte loads); pixels whose
// taps are clamped, or whose load window would leave the row, use the byte loads of
// tensorize_pixel.h. Both feed the same bytes to the same arithmetic, so results equal the CPU
// path bit for bit.
//
// Runtime enums become template parameters through one dispatch table (kKernels): source
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
using tz::Taps;

constexpr int kBlock = 256;

struct KernelArgs {
  PixelParams p;
  void* dst;
  int chunks_per_row;
  int total_chunks;
  uint32_t sel_a, sel_b;  // __byte_perm selectors of a packed 2-pixel window, see sample_fast
};

template <DType D>
struct Pixels {
  static constexpr int kPerThread = D == DType::Float32 ? 4 : 8;  // 16 bytes of one channel
};

// ---- wide loads ----------------------------------------------------------------------------

// True when the aligned words [align4(q), align4(q) + bytes) lie inside the row's valid bytes.
__device__ __forceinline__ bool window_ok(const uint8_t* row, int row_bytes, const uint8_t* q, int bytes) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(q) & ~uintptr_t(3);
  const uintptr_t r = reinterpret_cast<uintptr_t>(row);
  return a >= r && a + uintptr_t(bytes) <= r + uintptr_t(row_bytes);
}

// 4 bytes starting at q (any alignment) from two aligned words.
__device__ __forceinline__ uint32_t fetch4(const uint8_t* q) {
  const uintptr_t u = reinterpret_cast<uintptr_t>(q);
  const unsigned int* w = reinterpret_cast<const unsigned int*>(u & ~uintptr_t(3));
  const unsigned sh = unsigned(u & 3) * 8u;
  return __funnelshift_r(__ldg(w), __ldg(w + 1), sh);
}

// 8 bytes starting at q (any alignment) from three aligned words.
__device__ __forceinline__ void fetch8(const uint8_t* q, uint32_t& lo, uint32_t& hi) {
  const uintptr_t u = reinterpret_cast<uintptr_t>(q);
  const unsigned int* w = reinterpret_cast<const unsigned int*>(u & ~uintptr_t(3));
  const unsigned sh = unsigned(u & 3) * 8u;
  const uint32_t w0 = __ldg(w), w1 = __ldg(w + 1), w2 = __ldg(w + 2);
  lo = __funnelshift_r(w0, w1, sh);
  hi = __funnelshift_r(w1, w2, sh);
}

template <int K>
__device__ __forceinline__ float byte_f(uint32_t w) {
  return static_cast<float>((w >> (8 * K)) & 0xffu);
}

// One tensor pixel (active). Same arithmetic as tz::sample_pixel; only the loads differ.
template <SourceFamily F, Interpolation I>
__device__ __forceinline__ void sample_fast(const KernelArgs& a, const RowCtx& r, int x, float out[3]) {
  const PixelParams& p = a.p;
  if (I == Interpolation::Bilinear) {
    const float xs = tz::src_coord(p.inv_sx, p.off_x, x);
    const Taps t = tz::bilinear_taps(xs, p.lx0, p.lx1);
    if (F == SourceFamily::Packed3 || F == SourceFamily::Packed4) {
      const int o = t.i0 * p.bpp;
      const uint8_t* q0 = r.r0 + o;
      const uint8_t* q1 = r.r1 + o;
      if (t.i1 == t.i0 + 1 && window_ok(r.r0, p.row_bytes[0], q0, 12) && window_ok(r.r1, p.row_bytes[0], q1, 12)) {
        uint32_t lo0, hi0, lo1, hi1;
        fetch8(q0, lo0, hi0);
        fetch8(q1, lo1, hi1);
        // A = [c0 tap0, c1 tap0, c2 tap0, c0 tap1], B = [c1 tap1, c2 tap1, -, -]
        const uint32_t A0 = __byte_perm(lo0, hi0, a.sel_a), B0 = __byte_perm(lo0, hi0, a.sel_b);
        const uint32_t A1 = __byte_perm(lo1, hi1, a.sel_a), B1 = __byte_perm(lo1, hi1, a.sel_b);
        const float v0 = tz::bilerp(byte_f<0>(A0), byte_f<3>(A0), byte_f<0>(A1), byte_f<3>(A1), t.f, r.fy);
        const float v1 = tz::bilerp(byte_f<1>(A0), byte_f<0>(B0), byte_f<1>(A1), byte_f<0>(B1), t.f, r.fy);
        const float v2 = tz::bilerp(byte_f<2>(A0), byte_f<1>(B0), byte_f<2>(A1), byte_f<1>(B1), t.f, r.fy);
        tz::finish_rgb(p, v0, v1, v2, out);
        return;
      }
    } else {
      const uint8_t* q0 = r.r0 + t.i0;
      const uint8_t* q1 = r.r1 + t.i0;
      const bool luma_ok = t.i1 == t.i0 + 1 && window_ok(r.r0, p.row_bytes[0], q0, 8) &&
                           window_ok(r.r1, p.row_bytes[0], q1, 8);
      if (F == SourceFamily::Gray) {
        if (luma_ok) {
          const uint32_t l0 = fetch4(q0), l1 = fetch4(q1);
          tz::finish_gray(p, tz::bilerp(byte_f<0>(l0), byte_f<1>(l0), byte_f<0>(l1), byte_f<1>(l1), t.f, r.fy), out);
          return;
        }
      } else {
        const Taps c = tz::bilinear_taps(tz::chroma_coord(xs), p.cx0, p.cx1);
        if (F == SourceFamily::NV12) {
          const uint8_t* u0 = r.a0 + 2 * c.i0;
          const uint8_t* u1 = r.a1 + 2 * c.i0;
          if (luma_ok && c.i1 == c.i0 + 1 && window_ok(r.a0, p.row_bytes[1], u0, 8) &&
              window_ok(r.a1, p.row_bytes[1], u1, 8)) {
            const uint32_t l0 = fetch4(q0), l1 = fetch4(q1);
            const uint32_t c0 = fetch4(u0), c1 = fetch4(u1);  // U0 V0 U1 V1
            const float Y = tz::bilerp(byte_f<0>(l0), byte_f<1>(l0), byte_f<0>(l1), byte_f<1>(l1), t.f, r.fy);
            const float U = tz::bilerp(byte_f<0>(c0), byte_f<2>(c0), byte_f<0>(c1), byte_f<2>(c1), c.f, r.cfy);
            const float V = tz::bilerp(byte_f<1>(c0), byte_f<3>(c0), byte_f<1>(c1), byte_f<3>(c1), c.f, r.cfy);
            tz::finish_yuv(p, Y, U, V, out);
            return;
          }
        } else {
          const uint8_t* u0 = r.a0 + c.i0;
          const uint8_t* u1 = r.a1 + c.i0;
          const uint8_t* v0 = r.b0 + c.i0;
          const uint8_t* v1 = r.b1 + c.i0;
          if (luma_ok && c.i1 == c.i0 + 1 && window_ok(r.a0, p.row_bytes[1], u0, 8) &&
              window_ok(r.a1, p.row_bytes[1], u1, 8) && window_ok(r.b0, p.row_bytes[2], v0, 8) &&
              window_ok(r.b1, p.row_bytes[2], v1, 8)) {
            const uint32_t l0 = fetch4(q0), l1 = fetch4(q1);
            const uint32_t cu0 = fetch4(u0), cu1 = fetch4(u1), cv0 = fetch4(v0), cv1 = fetch4(v1);
            const float Y = tz::bilerp(byte_f<0>(l0), byte_f<1>(l0), byte_f<0>(l1), byte_f<1>(l1), t.f, r.fy);
            const float U = tz::bilerp(byte_f<0>(cu0), byte_f<1>(cu0), byte_f<0>(cu1), byte_f<1>(cu1), c.f, r.cfy);
            const float V = tz::bilerp(byte_f<0>(cv0), byte_f<1>(cv0), byte_f<0>(cv1), byte_f<1>(cv1), c.f, r.cfy);
            tz::finish_yuv(p, Y, U, V, out);
            return;
          }
        }
      }
    }
  }
  tz::sample_pixel<F, I>(p, r, x, out);
}

// ---- stores --------------------------------------------------------------------------------

__device__ __forceinline__ uint32_t pack_half2(float a, float b) {
  return uint32_t(__half_as_ushort(__float2half_rn(a))) | (uint32_t(__half_as_ushort(__float2half_rn(b))) << 16);
}

__device__ __forceinline__ bool aligned16(const void* q) { return (reinterpret_cast<uintptr_t>(q) & 15) == 0; }

template <Layout L, DType D, int N>
__device__ __forceinline__ void store_chunk(void* dst, int W, int H, int y, int xc, int n, const float (&v)[3][N]) {
  const int64_t plane = int64_t(W) * H;
  const int64_t pix = int64_t(y) * W + xc;
  if (D == DType::Float32) {
    float* o = static_cast<float*>(dst);
    if (L == Layout::NCHW) {
#pragma unroll
      for (int c = 0; c < 3; ++c) {
        float* q = o + c * plane + pix;
        if (n == N && aligned16(q)) {
          *reinterpret_cast<float4*>(q) = make_float4(v[c][0], v[c][1], v[c][2], v[c][3]);
        } else {
#pragma unroll
          for (int i = 0; i < N; ++i)
            if (i < n) q[i] = v[c][i];
        }
      }
    } else {
      float* q = o + pix * 3;
      if (n == N && aligned16(q)) {
        float4* q4 = reinterpret_cast<float4*>(q);
        q4[0] = make_float4(v[0][0], v[1][0], v[2][0], v[0][1]);
        q4[1] = make_float4(v[1][1], v[2][1], v[0][2], v[1][2]);
        q4[2] = make_float4(v[2][2], v[0][3], v[1][3], v[2][3]);
      } else {
#pragma unroll
        for (int i = 0; i < N; ++i)
          if (i < n) {
            q[3 * i] = v[0][i];
            q[3 * i + 1] = v[1][i];
            q[3 * i + 2] = v[2][i];
          }
      }
    }
  } else {
    __half* o = static_cast<__half*>(dst);
    if (L == Layout::NCHW) {
#pragma unroll
      for (int c = 0; c < 3; ++c) {
        __half* q = o + c * plane + pix;
        if (n == N && aligned16(q)) {
          uint4 w;
          w.x = pack_half2(v[c][0], v[c][1]);
          w.y = pack_half2(v[c][2], v[c][3]);
          w.z = pack_half2(v[c][4], v[c][5]);
          w.w = pack_half2(v[c][6], v[c][7]);
          *reinterpret_cast<uint4*>(q) = w;
        } else {
#pragma unroll
          for (int i = 0; i < N; ++i)
            if (i < n) q[i] = __float2half_rn(v[c][i]);
        }
      }
    } else {
      __half* q = o + pix * 3;
      if (n == N && aligned16(q)) {
        // 8 pixels x 3 channels = 24 halves = three 16-byte words, interleaved.
        float f[3 * N];
#pragma unroll
        for (int i = 0; i < N; ++i) {
          f[3 * i] = v[0][i];
          f[3 * i + 1] = v[1][i];
          f[3 * i + 2] = v[2][i];
        }
        uint4* q4 = reinterpret_cast<uint4*>(q);
#pragma unroll
        for (int k = 0; k < 3; ++k) {
          uint4 w;
          w.x = pack_half2(f[8 * k + 0], f[8 * k + 1]);
          w.y = pack_half2(f[8 * k + 2], f[8 * k + 3]);
          w.z = pack_half2(f[8 * k + 4], f[8 * k + 5]);
          w.w = pack_half2(f[8 * k + 6], f[8 * k + 7]);
          q4[k] = w;
        }
      } else {
#pragma unroll
        for (int i = 0; i < N; ++i)
          if (i < n) {
            q[3 * i] = __float2half_rn(v[0][i]);
            q[3 * i + 1] = __float2half_rn(v[1][i]);
            q[3 * i + 2] = __float2half_rn(v[2][i]);
          }
      }
    }
  }
}

// ---- the kernel ----------------------------------------------------------------------------

template <SourceFamily F, Interpolation I, Layout L, DType D>
__global__ void __launch_bounds__(kBlock) tensorize_kernel(const __grid_constant__ KernelArgs a) {
  constexpr int N = Pixels<D>::kPerThread;
  const int t = blockIdx.x * kBlock + threadIdx.x;
  if (t >= a.total_chunks) return;
  const PixelParams& p = a.p;
  const int y = t / a.chunks_per_row;
  const int xc = (t - y * a.chunks_per_row) * N;
  const int n = min(N, p.W - xc);

  float v[3][N];
  if (!tz::y_active(p, y) || xc >= p.ax1 || xc + n <= p.ax0) {
#pragma unroll
    for (int i = 0; i < N; ++i) {
      v[0][i] = p.pad[0];
      v[1][i] = p.pad[1];
      v[2][i] = p.pad[2];
    }
  } else {
    const RowCtx r = tz::make_row<F, I>(p, y);
    if (xc >= p.ax0 && xc + N <= p.ax1) {  // the whole chunk samples the source
#pragma unroll
      for (int i = 0; i < N; ++i) {
        float o[3];
        sample_fast<F, I>(a, r, xc + i, o);
        v[0][i] = o[0];
        v[1][i] = o[1];
        v[2][i] = o[2];
      }
    } else {
#pragma unroll
      for (int i = 0; i < N; ++i) {
        float o[3];
        const int x = xc + i;
        if (i < n && tz::x_active(p, x))
          sample_fast<F, I>(a, r, x, o);
        else
          tz::pad_pixel(p, o);
        v[0][i] = o[0];
        v[1][i] = o[1];
        v[2][i] = o[2];
      }
    }
  }
  store_chunk<L, D, N>(a.dst, p.W, p.H, y, xc, n, v);
}

// ---- the dispatch table ----------------------------------------------------------------------

using KernelFn = void (*)(KernelArgs);

// Index = ((family * 2 + interpolation) * 2 + layout) * 2 + dtype.
constexpr int kKernelCount = tz::kSourceFamilyCount * 2 * 2 * 2;

template <int K>
KernelFn kernel_entry() {
  return &tensorize_kernel<static_cast<SourceFamily>(K / 8), static_cast<Interpolation>((K / 4) % 2),
                           static_cast<Layout>((K / 2) % 2), static_cast<DType>(K % 2)>;
}

template <int... K>
const KernelFn* make_table(std::integer_sequence<int, K...>) {
  static const KernelFn table[] = {kernel_entry<K>()...};
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

  KernelArgs a;
  a.p = tz::make_pixel_params(plan, src);
  a.dst = dst;
  const int N = plan.dtype == DType::Float32 ? Pixels<DType::Float32>::kPerThread : Pixels<DType::Float16>::kPerThread;
  a.chunks_per_row = (plan.dst_width + N - 1) / N;
  a.total_chunks = a.chunks_per_row * plan.dst_height;
  const int bpp = a.p.bpp;
  const uint32_t b0 = a.p.byte_of[0], b1 = a.p.byte_of[1], b2 = a.p.byte_of[2];
  a.sel_a = b0 | (b1 << 4) | (b2 << 8) | ((bpp + b0) << 12);
  a.sel_b = (bpp + b1) | ((bpp + b2) << 4);

  const KernelFn fn = kernels()[kernel_index(tz::source_family(plan.format), plan.interpolation, plan.layout,
                                             plan.dtype)];
  const unsigned blocks = static_cast<unsigned>((a.total_chunks + kBlock - 1) / kBlock);
  fn<<<blocks, kBlock, 0, static_cast<cudaStream_t>(stream)>>>(a);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    return Status::error(std::string("tensorize kernel launch failed: ") + cudaGetErrorName(err) + " (" +
                         cudaGetErrorString(err) + ")");
  return Status();
}

}  // namespace cudaprep
