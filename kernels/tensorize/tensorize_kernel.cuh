// Device code of the tensorize transform, shared by the single-frame launch (tensorize_cuda.cu)
// and the batch launch (tensorize_batch_cuda.cu): the per-tensor work of one block.
//
// Work split. A warp owns one segment of one tensor row: 32 lanes x 2 adjacent pixels
// (kPixelsPerLane), written with one 2-wide vector store per channel plane (three for NHWC).
// Blocks take consecutive warp indices. Two pixels per lane for every source family and the
// plane routing below are the fastest shape measured for both NV12 and BGR (dev/perf/tensorize.md,
// rounds 3 and 4; 1 and 4 pixels per lane were slower overall and are not built). TensorizeTuning
// changes the warps per block and the routing, for benchmarks. In the batch kernel (blocks of 4
// warps) the rows that sample the source come first, so their blocks are dispatched and their
// loads issued first; every row that is all padding follows, one warp per row, written with
// 16-byte stores. The single-frame kernel (tensorize_cuda.cu) puts the padding rows first, in
// blocks of 2 warps: faster there (round 7).
//
// Sampling. Every tap is read with a byte load at its clamped position, so no read can leave its
// row: no window checks and no second (divergent) path for the lanes at the row ends (the word
// loads of an earlier design needed both; dev/perf/tensorize.md). A byte becomes the float
// 2^23 + byte by one OR, and the interpolation subtracts 2^23 exactly. Tap positions are
// floored with the 2^23 rounding trick on the FP32/ALU pipes rather than floorf + float->int
// conversions on the conversion pipe (16 per clock per SM). Nearest neighbour, and pixels of a
// lane that straddles the active rectangle, go through the same per-pixel code or
// tz::sample_pixel. All of it feeds the same source bytes into the same float operations as
// tensorize_pixel.h, so the result equals the CPU path bit for bit.
//
// Zero weights. A tap whose weight is exactly 0 is not loaded: lerp(a, b, 0) = a + (b - a) * 0
// = a bit for bit (a is finite and never -0), so the result does not change. A row weight of 0
// (uniform over the warp's row) skips the second source row, and a column weight of 0 predicates
// off the second column's loads. At a 3:1 scale with centred pixels, as 1080p -> 640 is, every
// luma / packed tap lands on a pixel centre: one source row in three is read instead of two.
//
// Outputs. For NCHW bilinear with a channel map that is a permutation (all plans from
// make_tensorize_plan), value slot k (colour component k of YUV, byte k of a packed pixel) goes
// to the plane of the output channel that takes it, through a per-slot plane pointer, so no
// per-pixel selects are needed and packed bytes load at immediate offsets. NCHW stores use 32-bit
// offsets from those plane pointers, and the YUV clamps are fminf/fmaxf. On their own these
// instruction savings did not change the measured time (the kernel is bound by memory latency
// and dispatch, not by issue); they are part of the shape that was measured and tested.
//
// Runtime enums become template parameters through one dispatch table (kernels()): source
// family x interpolation x output shape (NCHW, NHWC, gray) x dtype (7 x 2 x 3 x 4 = 168 kernels).
// Gray output (C = 1) evaluates each pixel with the CPU path's own code (tz::sample_gray_out):
// no models' hot path, so it is not specialised further. Integer dtypes store bytes, 16 a lane in
// padding rows. Channel order and
// packing are runtime byte maps: RGB byte order, NV12 / NV21's U and V, YUY2 / UYVY's Y, U and V.
// 16-bit samples (P010) load as 2^23 + sample the same way and are scaled by 1/256 (exact) after
// interpolation; chroma siting is the runtime k of tz::chroma_coord.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cuda_status.h"
#include "tensorize.h"
#include "tensorize_pixel.h"

namespace cudaprep {
namespace tzk {

using tz::PixelParams;
using tz::RowCtx;
using tz::SourceFamily;

constexpr int kBlockThreads = 32 * kMaxWarpsPerBlock;  // largest block
constexpr int kPixelsPerLane = 2;

struct KernelArgs {
  PixelParams p;
  void* dst;
  int segs_per_row;                 // warp segments per tensor row
  int a0, n_act;                    // the rows that sample the source: [a0, a0 + n_act)
  int pad_split;                    // padding rows: warp k after the sampled ones takes row k (k < a0) or k + n_act
  int total_warps;                  // n_act * segs_per_row + (H - n_act)
  int routed;                       // values come in slot order (below); else in output channel order
  int wpb;                          // warps per block
  char* base[3];                    // NCHW: output plane of value slot k
  float kmul[3], kadd[3], kpad[3];  // normalisation and pad value of value slot k
};

// ---- sampling ----------------------------------------------------------------------------------

// Source bytes as "magic" floats 2^23 + byte (exact): one OR instead of a conversion.
constexpr uint32_t kMagicBits = 0x4B000000u;
constexpr float kMagic = 8388608.0f;

__device__ __forceinline__ float mload(const uint8_t* q) { return __uint_as_float(kMagicBits | uint32_t(__ldg(q))); }

// A 16-bit sample as 2^23 + sample (exact too: 16 bits fit the 23-bit mantissa).
__device__ __forceinline__ float mload16(const uint8_t* q) {
  return __uint_as_float(kMagicBits | uint32_t(__ldg(reinterpret_cast<const unsigned short*>(q))));
}

template <int SampleBytes>
__device__ __forceinline__ float mload_sample(const uint8_t* q) {
  return SampleBytes == 2 ? mload16(q) : mload(q);
}

// tz::lerp1(a, b, f) for A = 2^23 + a, B = 2^23 + b: A - 2^23 and B - A are exact, so the
// operands and operations are those of lerp1.
__device__ __forceinline__ float mlerp(float A, float B, float f) {
  const float a = A - kMagic;
  return a + (B - A) * f;
}

// tz::bilerp of the taps at q00, q01 (row 0) and q10, q11 (row 1), read as magic floats. A column
// tap with weight fx == 0 is not loaded; Two == false (row weight 0) skips row 1. Both give the
// same bits as the full bilerp (see the top of the file).
template <bool Two, int SampleBytes = 1>
__device__ __forceinline__ float taps4(const uint8_t* q00, const uint8_t* q01, const uint8_t* q10, const uint8_t* q11,
                                       float fx, float fy) {
  const float A00 = mload_sample<SampleBytes>(q00);
  float A01 = A00;
  if (fx != 0.0f) A01 = mload_sample<SampleBytes>(q01);
  if (!Two) return mlerp(A00, A01, fx);
  const float A10 = mload_sample<SampleBytes>(q10);
  float A11 = A10;
  if (fx != 0.0f) A11 = mload_sample<SampleBytes>(q11);
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

// tz::clamp255 for values that are never NaN or -0: it differs only there. r, g and b are
// neither when the colour coefficients are finite and the gains positive, as make_tensorize_plan
// makes them (a difference that is +0 times a positive gain is +0, and x + (-0) = x).
__device__ __forceinline__ float clamp255f(float v) { return fminf(fmaxf(v, 0.0f), 255.0f); }

// One active tensor pixel, bilinear, with byte loads at clamped taps; xf is float(x), exactly.
// Same operands and operations as tz::sample_pixel<F, Bilinear>. Two / TwoC: the luma (packed,
// gray) / chroma row weight is not 0.
template <SourceFamily F, bool Two, bool TwoC>
__device__ __forceinline__ void sample_bytes(const KernelArgs& a, const RowCtx& r, float xf, float out[3]) {
  const PixelParams& p = a.p;
  const float xs = p.inv_sx * xf + p.off_x;  // tz::src_coord
  const tz::Taps t = clamped_taps(xs, p.lx0, p.lx1);
  if (F == SourceFamily::Packed3 || F == SourceFamily::Packed4) {
    constexpr int bpp = F == SourceFamily::Packed3 ? 3 : 4;
    const uint8_t* q00 = r.r0 + t.i0 * bpp;
    const uint8_t* q01 = r.r0 + t.i1 * bpp;
    const uint8_t* q10 = r.r1 + t.i0 * bpp;
    const uint8_t* q11 = r.r1 + t.i1 * bpp;
    float v[3];
    if (a.routed) {  // slot k = byte k: immediate load offsets
#pragma unroll
      for (int k = 0; k < 3; ++k) v[k] = taps4<Two>(q00 + k, q01 + k, q10 + k, q11 + k, t.f, r.fy);
    } else {
#pragma unroll
      for (int c = 0; c < 3; ++c) {
        const int b = p.byte_of[c];
        v[c] = taps4<Two>(q00 + b, q01 + b, q10 + b, q11 + b, t.f, r.fy);
      }
    }
#pragma unroll
    for (int k = 0; k < 3; ++k) out[k] = v[k] * a.kmul[k] + a.kadd[k];  // tz::finish_rgb
  } else if (F == SourceFamily::Gray) {
    tz::finish_gray(p, taps4<Two>(r.r0 + t.i0, r.r0 + t.i1, r.r1 + t.i0, r.r1 + t.i1, t.f, r.fy), out);
  } else {
    using YF = tz::YuvFamily<F>;
    constexpr int S = YF::sample_bytes;
    const int l0 = tz::luma_offset<F>(p, t.i0), l1 = tz::luma_offset<F>(p, t.i1);
    const float Y = taps4<Two, S>(r.r0 + l0, r.r0 + l1, r.r1 + l0, r.r1 + l1, t.f, r.fy) * YF::to_8bit;
    const tz::Taps c = clamped_taps(tz::chroma_coord(xs, p.chroma_site_x), p.cx0, p.cx1);
    float U, V;
    if (F == SourceFamily::I420) {
      U = taps4<TwoC>(r.a0 + c.i0, r.a0 + c.i1, r.a1 + c.i0, r.a1 + c.i1, c.f, r.cfy);
      V = taps4<TwoC>(r.b0 + c.i0, r.b0 + c.i1, r.b1 + c.i0, r.b1 + c.i1, c.f, r.cfy);
    } else if (F == SourceFamily::NV12 || F == SourceFamily::P010) {
      // Semi-planar: the two chroma samples of a pair at fixed offsets 0 and S (loads at
      // immediate offsets, as before NV21), swapped afterwards when V comes first (NV21; the
      // same values, so the same bits). With the runtime offsets of the packed branch below,
      // NV12 1080p -> 640x640 took 4.88 instead of 4.36 us on an H100.
      const int g0 = YF::chroma_step * c.i0, g1 = YF::chroma_step * c.i1;
      const float first = taps4<TwoC, S>(r.a0 + g0, r.a0 + g1, r.a1 + g0, r.a1 + g1, c.f, r.cfy) * YF::to_8bit;
      const float second =
          taps4<TwoC, S>(r.a0 + g0 + S, r.a0 + g1 + S, r.a1 + g0 + S, r.a1 + g1 + S, c.f, r.cfy) * YF::to_8bit;
      const bool v_first = p.v_byte < p.u_byte;
      U = v_first ? second : first;
      V = v_first ? first : second;
    } else {  // packed 4:2:2: U and V in one row, a chroma group apart, where the format says
      const int g0 = YF::chroma_step * c.i0, g1 = YF::chroma_step * c.i1;
      const uint8_t* u00 = r.a0 + g0 + p.u_byte;
      const uint8_t* u01 = r.a0 + g1 + p.u_byte;
      const uint8_t* u10 = r.a1 + g0 + p.u_byte;
      const uint8_t* u11 = r.a1 + g1 + p.u_byte;
      const int uv = p.v_byte - p.u_byte;
      U = taps4<TwoC, S>(u00, u01, u10, u11, c.f, r.cfy) * YF::to_8bit;
      V = taps4<TwoC, S>(u00 + uv, u01 + uv, u10 + uv, u11 + uv, c.f, r.cfy) * YF::to_8bit;
    }
    // tz::finish_yuv, with the outputs in slot order when routed.
    float rgb[3];
    tz::yuv_to_rgb(
        p, Y, U, V, [](float x) { return clamp255f(x); }, rgb);
    if (a.routed) {
      out[0] = rgb[0] * a.kmul[0] + a.kadd[0];
      out[1] = rgb[1] * a.kmul[1] + a.kadd[1];
      out[2] = rgb[2] * a.kmul[2] + a.kadd[2];
    } else {
#pragma unroll
      for (int k = 0; k < 3; ++k) out[k] = tz::select3(rgb[0], rgb[1], rgb[2], p.comp_of[k]) * p.mul[k] + p.add[k];
    }
  }
}

// ---- stores ------------------------------------------------------------------------------------

// One element of type D (dtypes.h: DTypeStore) as an unsigned word of its width.
template <DType D>
__device__ __forceinline__ uint32_t element_bits(float v) {
  using Store = DTypeStore<D>;
  static_assert(sizeof(typename Store::Bits) == dtype_bytes(D), "kDTypes' bytes must match its DTypeStore");
  const typename Store::Bits b = Store::from_float(v);
  uint32_t w = 0;
  memcpy(&w, &b, sizeof(b));
  return w;
}

// 4 / esize consecutive elements from e as one little-endian word.
template <DType D>
__device__ __forceinline__ uint32_t pack_word(const float* e) {
  constexpr int esize = dtype_bytes(D);
  if constexpr (esize == 4) {
    return element_bits<D>(e[0]);
  } else if constexpr (esize == 2) {
    return element_bits<D>(e[0]) | (element_bits<D>(e[1]) << 16);
  } else {
    static_assert(esize == 1, "element widths are 1, 2 or 4 bytes");
    return element_bits<D>(e[0]) | (element_bits<D>(e[1]) << 8) | (element_bits<D>(e[2]) << 16) |
           (element_bits<D>(e[3]) << 24);
  }
}

// N consecutive output elements from e[0..N) in one store (q aligned to N elements), of at
// most 16 bytes.
template <DType D, int N>
__device__ __forceinline__ void store_vec(void* q, const float* e) {
  constexpr int esize = dtype_bytes(D);
  constexpr int per_word = 4 / esize;
  if (N * esize == 1) *static_cast<uint8_t*>(q) = uint8_t(element_bits<D>(e[0]));
  if (N * esize == 2) {
    uint32_t w = element_bits<D>(e[0]);
    if (esize == 1) w |= element_bits<D>(e[1]) << 8;
    *static_cast<unsigned short*>(q) = (unsigned short)w;
  }
  if (N * esize == 4) *static_cast<uint32_t*>(q) = pack_word<D>(e);
  if (N * esize == 8) *static_cast<uint2*>(q) = make_uint2(pack_word<D>(e), pack_word<D>(e + per_word));
  if (N * esize == 16)
    *static_cast<uint4*>(q) = make_uint4(pack_word<D>(e), pack_word<D>(e + per_word), pack_word<D>(e + 2 * per_word),
                                         pack_word<D>(e + 3 * per_word));
}

template <DType D>
__device__ __forceinline__ void store_one(void* base, int64_t i, float e) {
  using Store = DTypeStore<D>;
  static_cast<typename Store::Bits*>(base)[i] = Store::from_float(e);
}

// Pixels a lane writes per store in an all-padding row: 16 bytes a store.
template <DType D>
constexpr int pad_pixels_per_store() {
  return 16 / dtype_bytes(D) < 4 ? 4 : 16 / dtype_bytes(D);
}

// Q pixels from x (n of them inside the tensor), values v[c][j]: vector stores where the whole
// group is inside and the address is aligned, element stores otherwise (odd widths, odd offsets).
// C = 1 (gray) writes v[0] to its one plane (L is NCHW then: both layouts are the same bytes).
template <Layout L, DType D, int Q, int C = 3>
__device__ __forceinline__ void store_group(const KernelArgs& a, int y, int x, int n, const float (&v)[3][Q]) {
  constexpr int esize = dtype_bytes(D);
  const int W = a.p.W;
  if (L == Layout::NCHW || C == 1) {
    // Plane pointers per value slot, 32-bit offsets (pix * esize < 2^30).
    const uint32_t off = (uint32_t(y) * uint32_t(W) + uint32_t(x)) * uint32_t(esize);
#pragma unroll
    for (int k = 0; k < C; ++k) {
      char* q = a.base[k] + off;
      if (n == Q && (reinterpret_cast<uintptr_t>(q) & (Q * esize - 1)) == 0) {
        store_vec<D, Q>(q, &v[k][0]);
      } else {
#pragma unroll
        for (int j = 0; j < Q; ++j)
          if (j < n) store_one<D>(q, j, v[k][j]);
      }
    }
  } else {
    const int64_t pix = int64_t(y) * W + x;
    char* const o = static_cast<char*>(a.dst);
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

// The output shapes kernels are built for (a template parameter pair L, C): 0 = NCHW and
// 1 = NHWC with 3 channels, 2 = gray (1 channel, where both layouts are the same bytes).
constexpr int kOutputShapes = 3;
inline int output_shape(const TensorOutputPlan& o) { return o.channels == 1 ? 2 : static_cast<int>(o.layout); }
constexpr Layout shape_layout(int shape) { return shape == 1 ? Layout::NHWC : Layout::NCHW; }
constexpr int shape_channels(int shape) { return shape == 2 ? 1 : 3; }

// The Q pixels of one lane from x0 in a sampling row (bilinear).
template <SourceFamily F, int Q, bool Two, bool TwoC>
__device__ __forceinline__ void sample_group(const KernelArgs& a, const RowCtx& r, int x0, float (&v)[3][Q]) {
  const PixelParams& p = a.p;
  const float xf0 = static_cast<float>(x0);  // float(x) = xf0 + (x - x0), exactly (x < 2^24)
  if (x0 >= p.ax0 && x0 + Q - 1 < p.ax1) {
#pragma unroll
    for (int j = 0; j < Q; ++j) {
      float o[3];
      sample_bytes<F, Two, TwoC>(a, r, xf0 + static_cast<float>(j), o);
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
        sample_bytes<F, Two, TwoC>(a, r, xf0 + static_cast<float>(j), o);
      } else {
        o[0] = a.kpad[0];
        o[1] = a.kpad[1];
        o[2] = a.kpad[2];
      }
      v[0][j] = o[0];
      v[1][j] = o[1];
      v[2][j] = o[2];
    }
  }
}

// Gray output (C = 1): the lane's Q pixels from x0 in sampling row y, with the CPU path's own
// per-pixel code (tz::sample_gray_out), both interpolations; v[0] takes them.
template <SourceFamily F, Interpolation I, int Q>
__device__ __forceinline__ void gray_group(const KernelArgs& a, int y, int x0, float (&v)[3][Q]) {
  const PixelParams& p = a.p;
  const RowCtx r = tz::make_row<F, I>(p, y);
#pragma unroll
  for (int j = 0; j < Q; ++j) {
    const int x = x0 + j;
    v[0][j] = x < p.W && tz::x_active(p, x) ? tz::sample_gray_out<F, I>(p, r, x) : a.kpad[0];
  }
}

// One block's work on one tensor of a batch: block blockIdx.x of that tensor's blocks (the batch
// kernel picks the tensor with blockIdx.y). The single-frame kernel (tensorize_cuda.cu) has the
// same statements as its own body: ptxas schedules it faster that way (measured there).
template <SourceFamily F, Interpolation I, Layout L, DType D, int C>
__device__ __forceinline__ void tensorize_block(const KernelArgs& a) {
  constexpr int Q = kPixelsPerLane;
  const PixelParams& p = a.p;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const float* pad = a.kpad;
  const int w = blockIdx.x * a.wpb + warp;
  if (w >= a.total_warps) return;
  const int sampled_warps = a.n_act * a.segs_per_row;
  if (w >= sampled_warps) {
    // A padding row: the whole row, P pixels per lane and store.
    const int k = w - sampled_warps;
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

// Fills the kernel arguments of one tensor of `plan` from `src` into `dst` (both checked).
inline void make_kernel_args(const TensorizePlan& plan, const ImageView& src, void* dst, int warps_per_block,
                             bool plane_routing, KernelArgs* out) {
  KernelArgs& a = *out;
  const SourceFamily family = tz::source_family(plan.format);
  a.p = tz::make_pixel_params(plan, src);
  a.dst = dst;
  const bool yuv = is_yuv(plan.format);
  a.wpb = warps_per_block;
  const int seg_px = 32 * kPixelsPerLane;
  const int H = plan.dst_height;
  a.segs_per_row = (plan.dst_width + seg_px - 1) / seg_px;
  // Sampling rows: [active_y0, active_y1) (check_plan keeps both in [0, H]; an empty range has none).
  a.a0 = plan.active_y0;
  a.n_act = plan.active_y1 > plan.active_y0 ? plan.active_y1 - plan.active_y0 : 0;
  a.pad_split = a.n_act > 0 ? a.a0 : H;
  a.total_warps = a.n_act * a.segs_per_row + (H - a.n_act);
  // Routing (NCHW, bilinear): slot k -> the output channel whose map entry is k, if the channel
  // map (YUV components, packed bytes) is a permutation of {0, 1, 2}; else slots are channels.
  const int* map = yuv ? a.p.comp_of : a.p.byte_of;
  int chan_of_slot[3] = {-1, -1, -1};
  bool perm = family != SourceFamily::Gray;
  for (int c = 0; c < 3 && perm; ++c) {
    if (map[c] < 0 || map[c] > 2 || chan_of_slot[map[c]] >= 0)
      perm = false;
    else
      chan_of_slot[map[c]] = c;
  }
  a.routed = plane_routing && perm && plan.channels == 3 && plan.layout == Layout::NCHW &&
             plan.interpolation == Interpolation::Bilinear;
  const size_t plane_bytes = size_t(plan.dst_width) * size_t(H) * size_t(dtype_bytes(plan.dtype));
  for (int k = 0; k < 3; ++k) {
    const int c = a.routed ? chan_of_slot[k] : k;
    a.base[k] = static_cast<char*>(dst) + size_t(c) * plane_bytes;
    a.kmul[k] = a.p.mul[c];
    a.kadd[k] = a.p.add[c];
    a.kpad[k] = a.p.pad[c];
  }
}

// The kernel arguments of an empty batch slot: no sampled row, every row is padding.
inline void make_pad_kernel_args(const TensorOutputPlan& o, void* dst, int warps_per_block, KernelArgs* out) {
  KernelArgs& a = *out;
  a.p = tz::make_pad_params(o);
  a.dst = dst;
  a.wpb = warps_per_block;
  a.segs_per_row = (o.dst_width + 32 * kPixelsPerLane - 1) / (32 * kPixelsPerLane);
  a.a0 = 0;
  a.n_act = 0;
  a.pad_split = o.dst_height;
  a.total_warps = o.dst_height;
  a.routed = 0;
  const size_t plane_bytes = size_t(o.dst_width) * size_t(o.dst_height) * size_t(dtype_bytes(o.dtype));
  for (int k = 0; k < 3; ++k) {
    a.base[k] = static_cast<char*>(dst) + size_t(k) * plane_bytes;
    a.kmul[k] = a.p.mul[k];
    a.kadd[k] = a.p.add[k];
    a.kpad[k] = a.p.pad[k];
  }
}

}  // namespace tzk
}  // namespace cudaprep
