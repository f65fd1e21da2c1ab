// Per-pixel evaluation of the tensorize transform, shared by the CPU path (tensorize_cpu.cpp)
// and the CUDA kernel (tensorize_cuda.cu) so that both compute bit-identical results.
//
// Rules that keep the two paths identical:
//  * only plain float operations (+, -, *) in a fixed order, no fmaf, no math library besides
//    floorf; the CUDA code is compiled with -fmad=false and the host code with FP contraction
//    off (see the pragma in tensorize_cpu.cpp), so no FMA is formed on either side;
//  * every value is computed by the functions below; the CUDA kernel's bilinear path loads the
//    source bytes its own way (tensorize_cuda.cu) but feeds the same bytes into the same arithmetic.
//
// The transform is axis-aligned (all resize modes are), so the source position of tensor pixel
// (x, y) is xs = inv_sx * x + off_x, ys = inv_sy * y + off_y (plan.inv[0], inv[2], inv[4], inv[5];
// plan.inv[1] and inv[3] are always 0).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "image.h"
#include "tensorize.h"

namespace cudaprep {
namespace tz {

// The source formats the kernels are specialised for: one family per way of addressing samples.
// Within a family the byte positions are runtime maps (the channel order of packed RGB, U and V
// of NV12 / NV21, Y, U and V of YUY2 / UYVY), not separate specialisations.
//   NV12: 8-bit 4:2:0, U and V in one plane (NV12, NV21); I420: 8-bit 4:2:0, three planes;
//   Packed3 / Packed4: RGB-like; Gray; Packed422: 8-bit 4:2:2 in one plane (YUY2, UYVY);
//   P010: 16-bit 4:2:0, U and V in one plane (P010_10LE).
enum class SourceFamily : int { NV12 = 0, I420 = 1, Packed3 = 2, Packed4 = 3, Gray = 4, Packed422 = 5, P010 = 6 };
constexpr int kSourceFamilyCount = 7;

// The family of a format's layout (pixel_formats.h); the byte order within a packed pixel comes
// from the plan.
constexpr SourceFamily source_family(PixelFormat f) {
  const PixelFormatInfo& info = pixel_format_info(f);
  if (info.yuv) {
    if (info.planes == 1) return SourceFamily::Packed422;
    if (info.planes == 3) return SourceFamily::I420;
    return info.sample_bytes == 2 ? SourceFamily::P010 : SourceFamily::NV12;
  }
  if (info.packed_bytes == 1) return SourceFamily::Gray;
  return info.packed_bytes == 3 ? SourceFamily::Packed3 : SourceFamily::Packed4;
}

// What the per-pixel code of a YUV family needs to know at compile time.
template <SourceFamily F>
struct YuvFamily {
  static constexpr bool yuv =
      F == SourceFamily::NV12 || F == SourceFamily::I420 || F == SourceFamily::Packed422 || F == SourceFamily::P010;
  static constexpr int sample_bytes = F == SourceFamily::P010 ? 2 : 1;
  static constexpr int luma_step = F == SourceFamily::Packed422 || F == SourceFamily::P010 ? 2 : 1;
  // Bytes from one chroma group to the next (I420: one byte in each of its U and V planes).
  static constexpr int chroma_step = F == SourceFamily::I420 ? 1 : (F == SourceFamily::NV12 ? 2 : 4);
  static constexpr bool chroma_rows_are_luma_rows = F == SourceFamily::Packed422;  // 4:2:2
  // Sample value -> the 8-bit scale the colour conversion works in: 16-bit samples hold the
  // value in their top bits, so /256 (exact, a power of two) gives 10-bit values in quarters.
  static constexpr float to_8bit = sample_bytes == 2 ? 1.0f / 256.0f : 1.0f;
};

// The compile-time constants of each YUV format's family agree with its row of the table.
template <SourceFamily F>
constexpr bool yuv_family_matches(const PixelFormatInfo& f) {
  using YF = YuvFamily<F>;
  return YF::yuv && f.sample_bytes == YF::sample_bytes && f.luma_step == YF::luma_step &&
         chroma_step(f.format) == YF::chroma_step && (chroma_y_sub(f.format) == 1) == YF::chroma_rows_are_luma_rows &&
         (F == SourceFamily::Packed422 || f.y_byte == 0);  // only Packed422 reads y_byte
}
constexpr bool yuv_families_match_table() {
  for (const PixelFormatInfo& f : kPixelFormats) {
    if (!f.yuv) continue;
    bool ok = false;
    switch (source_family(f.format)) {
      case SourceFamily::NV12: ok = yuv_family_matches<SourceFamily::NV12>(f); break;
      case SourceFamily::I420: ok = yuv_family_matches<SourceFamily::I420>(f); break;
      case SourceFamily::Packed422: ok = yuv_family_matches<SourceFamily::Packed422>(f); break;
      case SourceFamily::P010: ok = yuv_family_matches<SourceFamily::P010>(f); break;
      default: break;
    }
    if (!ok) return false;
  }
  return true;
}
static_assert(yuv_families_match_table(), "a YUV format's row disagrees with its SourceFamily's constants");

// Everything the per-pixel code reads, flattened from a plan and a source image.
struct PixelParams {
  const uint8_t* plane[3];
  int64_t stride[3];
  int lx0, lx1, ly0, ly1;  // inclusive clamp range of luma / packed / gray samples (the ROI)
  int cx0, cx1, cy0, cy1;  // inclusive clamp range of chroma samples (the chroma ROI)
  // YUV: byte of the luma sample within its step, of U and V within a chroma group (in the place
  // of three ints that only padded the argument layout the kernel was measured with).
  int y_byte, u_byte, v_byte;
  int bpp;                 // bytes per packed pixel
  int byte_of[3];          // packed: output channel c reads byte byte_of[c] of a pixel
  int comp_of[3];          // YUV: output channel c takes colour component comp_of[c] (0=R,1=G,2=B)
  int W, H;                // tensor size
  int ax0, ax1, ay0, ay1;  // tensor pixels [ax0, ax1) x [ay0, ay1) sample the source
  float inv_sx, off_x, inv_sy, off_y;
  float mul[3], add[3], pad[3];
  float y_offset, y_gain, c_gain, rv, gu, gv, bu;
  // chroma_coord's k per axis (0.5 centre-sited, 0 co-sited); new since that measurement: +8 bytes.
  float chroma_site_x, chroma_site_y;
};

// Host-side sanity check of a plan (plain data, maybe not from make_tensorize_plan); defined in
// tensorize_cpu.cpp, used by both paths before touching memory.
Status tensorize_check_plan(const TensorizePlan& plan);

// Host-side: flattens a (validated) plan and a (checked) source image.
inline PixelParams make_pixel_params(const TensorizePlan& plan, const ImageView& src) {
  PixelParams p;
  std::memset(&p, 0, sizeof(p));
  const int np = plane_count(plan.format);
  for (int i = 0; i < 3; ++i) {
    p.plane[i] = i < np ? src.planes[i].data : nullptr;
    p.stride[i] = i < np ? src.planes[i].stride : 0;
  }
  const Rect& r = plan.roi;
  p.lx0 = r.x;
  p.lx1 = r.x + r.w - 1;
  p.ly0 = r.y;
  p.ly1 = r.y + r.h - 1;
  p.cx0 = r.x / 2;
  p.cx1 = (r.x + r.w + 1) / 2 - 1;
  p.cy0 = r.y / 2;
  p.cy1 = (r.y + r.h + 1) / 2 - 1;
  const PixelFormatInfo& fmt = pixel_format_info(plan.format);
  if (fmt.yuv) {
    p.y_byte = fmt.y_byte;
    p.u_byte = fmt.u_byte;
    p.v_byte = fmt.v_byte;
  }
  p.bpp = plan.src_bytes_per_pixel;
  for (int c = 0; c < 3; ++c) {
    p.comp_of[c] = plan.out_channel_source[c];
    p.byte_of[c] = plan.src_channel_offset[plan.out_channel_source[c]];
    p.mul[c] = plan.mul[c];
    p.add[c] = plan.add[c];
    p.pad[c] = plan.pad_out[c];
  }
  p.W = plan.dst_width;
  p.H = plan.dst_height;
  p.ax0 = plan.active_x0;
  p.ax1 = plan.active_x1;
  p.ay0 = plan.active_y0;
  p.ay1 = plan.active_y1;
  p.inv_sx = plan.inv[0];
  p.off_x = plan.inv[2];
  p.inv_sy = plan.inv[4];
  p.off_y = plan.inv[5];
  p.y_offset = plan.y_offset;
  p.y_gain = plan.y_gain;
  p.c_gain = plan.c_gain;
  p.rv = plan.rv;
  p.gu = plan.gu;
  p.gv = plan.gv;
  p.bu = plan.bu;
  p.chroma_site_x = plan.chroma_site_x;
  p.chroma_site_y = plan.chroma_site_y;
  return p;
}

// Host-side: the parameters of an empty batch slot: no active pixel, every one takes the pad value.
inline PixelParams make_pad_params(const TensorOutputPlan& o) {
  PixelParams p;
  std::memset(&p, 0, sizeof(p));
  for (int c = 0; c < 3; ++c) {
    p.comp_of[c] = o.out_channel_source[c];
    p.mul[c] = o.mul[c];
    p.add[c] = o.add[c];
    p.pad[c] = o.pad_out[c];
  }
  p.W = o.dst_width;
  p.H = o.dst_height;
  return p;
}

// ---------------------------------------------------------------------------------------------
// Arithmetic (identical on both sides)

CUDAPREP_HD int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// Source coordinate (pixel-index convention) of tensor index i.
CUDAPREP_HD float src_coord(float inv_s, float off, int i) { return inv_s * static_cast<float>(i) + off; }

// Chroma-plane coordinate of a luma coordinate (2x subsampling): k = 0.5 centre-sited, k = 0
// co-sited (then exactly s * 0.5). Centre-sited, the operations are those of (s + 0.5) * 0.5 - 0.5,
// so the results before siting existed are unchanged bit for bit.
CUDAPREP_HD float chroma_coord(float s, float k) { return (s + k) * 0.5f - k; }

struct Taps {
  int i0, i1;
  float f;
};

// Bilinear taps: x0 = floor(s), f = s - x0, both taps clamped to [lo, hi].
CUDAPREP_HD Taps bilinear_taps(float s, int lo, int hi) {
  const float fl = floorf(s);
  const int i = static_cast<int>(fl);
  Taps t;
  t.f = s - fl;
  t.i0 = clampi(i, lo, hi);
  t.i1 = clampi(i + 1, lo, hi);
  return t;
}

// Nearest: the pixel whose centre is closest, ties to the higher index.
CUDAPREP_HD int nearest_tap(float s, int lo, int hi) { return clampi(static_cast<int>(floorf(s + 0.5f)), lo, hi); }

CUDAPREP_HD float lerp1(float a, float b, float f) { return a + (b - a) * f; }

CUDAPREP_HD float bilerp(float p00, float p01, float p10, float p11, float fx, float fy) {
  const float top = lerp1(p00, p01, fx);
  const float bot = lerp1(p10, p11, fx);
  return lerp1(top, bot, fy);
}

CUDAPREP_HD float clamp255(float v) { return v < 0.0f ? 0.0f : (v > 255.0f ? 255.0f : v); }

CUDAPREP_HD float select3(float a, float b, float c, int i) { return i == 0 ? a : (i == 1 ? b : c); }

// YUV (interpolated samples) -> R, G, B clamped to [0, 255] by `clamp` (clamp255, or an equivalent
// that the CUDA kernel computes with fminf / fmaxf).
template <class Clamp>
CUDAPREP_HD void yuv_to_rgb(const PixelParams& p, float Y, float U, float V, Clamp clamp, float rgb[3]) {
  const float y = (Y - p.y_offset) * p.y_gain;
  const float u = (U - 128.0f) * p.c_gain;
  const float v = (V - 128.0f) * p.c_gain;
  rgb[0] = clamp(y + p.rv * v);
  rgb[1] = clamp(y + p.gu * u + p.gv * v);
  rgb[2] = clamp(y + p.bu * u);
}

// YUV (interpolated samples) -> normalised output channels.
CUDAPREP_HD void finish_yuv(const PixelParams& p, float Y, float U, float V, float out[3]) {
  float rgb[3];
  yuv_to_rgb(
      p, Y, U, V, [](float x) { return clamp255(x); }, rgb);
  for (int c = 0; c < 3; ++c) out[c] = select3(rgb[0], rgb[1], rgb[2], p.comp_of[c]) * p.mul[c] + p.add[c];
}

// Pixel values already in output channel order -> normalised output channels.
CUDAPREP_HD void finish_rgb(const PixelParams& p, float v0, float v1, float v2, float out[3]) {
  out[0] = v0 * p.mul[0] + p.add[0];
  out[1] = v1 * p.mul[1] + p.add[1];
  out[2] = v2 * p.mul[2] + p.add[2];
}

CUDAPREP_HD void finish_gray(const PixelParams& p, float g, float out[3]) { finish_rgb(p, g, g, g, out); }

CUDAPREP_HD void pad_pixel(const PixelParams& p, float out[3]) {
  out[0] = p.pad[0];
  out[1] = p.pad[1];
  out[2] = p.pad[2];
}

CUDAPREP_HD bool x_active(const PixelParams& p, int x) { return x >= p.ax0 && x < p.ax1; }
CUDAPREP_HD bool y_active(const PixelParams& p, int y) { return y >= p.ay0 && y < p.ay1; }

// float_to_half_rn, to_uint8, to_int8: dtypes.h, with the table of the types.

CUDAPREP_HD float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu;
  uint32_t m = h & 0x3ffu;
  uint32_t bits;
  if (e == 0x1fu) {
    bits = sign | 0x7f800000u | (m << 13);
  } else if (e != 0) {
    bits = sign | ((e + 112u) << 23) | (m << 13);
  } else if (m == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    uint32_t ee = 113u;
    while ((m & 0x400u) == 0) {
      m <<= 1;
      --ee;
    }
    bits = sign | (ee << 23) | ((m & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// ---------------------------------------------------------------------------------------------
// Generic sampling (byte loads). Used by the CPU path, and by the CUDA kernel for nearest
// neighbour.

CUDAPREP_HD float load_u8(const uint8_t* p) {
#if defined(__CUDA_ARCH__)
  return static_cast<float>(__ldg(p));
#else
  return static_cast<float>(*p);
#endif
}

// A little-endian 16-bit sample (2-byte aligned: check_source refuses other planes).
CUDAPREP_HD float load_u16(const uint8_t* p) {
#if defined(__CUDA_ARCH__)
  return static_cast<float>(__ldg(reinterpret_cast<const unsigned short*>(p)));
#else
  return static_cast<float>(p[0] | (p[1] << 8));
#endif
}

template <int SampleBytes>
CUDAPREP_HD float load_sample(const uint8_t* p) {
  return SampleBytes == 2 ? load_u16(p) : load_u8(p);
}

// Per output row: the source rows and vertical weights.
struct RowCtx {
  const uint8_t* r0;  // luma / packed / gray row of tap 0 (nearest: the row)
  const uint8_t* r1;  // row of tap 1
  const uint8_t* a0;  // chroma row holding U (and V but for I420), tap 0 / nearest
  const uint8_t* a1;
  const uint8_t* b0;  // I420's V row
  const uint8_t* b1;
  float fy, cfy;
};

template <SourceFamily F, Interpolation I>
CUDAPREP_HD RowCtx make_row(const PixelParams& p, int y) {
  using YF = YuvFamily<F>;
  RowCtx r;
  const float ys = src_coord(p.inv_sy, p.off_y, y);
  int y0, y1;
  if (I == Interpolation::Bilinear) {
    const Taps t = bilinear_taps(ys, p.ly0, p.ly1);
    y0 = t.i0;
    y1 = t.i1;
    r.fy = t.f;
  } else {
    y0 = y1 = nearest_tap(ys, p.ly0, p.ly1);
    r.fy = 0.0f;
  }
  r.r0 = p.plane[0] + static_cast<int64_t>(y0) * p.stride[0];
  r.r1 = p.plane[0] + static_cast<int64_t>(y1) * p.stride[0];
  r.a0 = r.a1 = r.b0 = r.b1 = nullptr;
  r.cfy = 0.0f;
  if (YF::chroma_rows_are_luma_rows) {  // 4:2:2: chroma shares the luma rows and weights
    r.a0 = r.r0;
    r.a1 = r.r1;
    r.cfy = r.fy;
  } else if (YF::yuv) {
    const float cys = chroma_coord(ys, p.chroma_site_y);
    int c0, c1;
    if (I == Interpolation::Bilinear) {
      const Taps t = bilinear_taps(cys, p.cy0, p.cy1);
      c0 = t.i0;
      c1 = t.i1;
      r.cfy = t.f;
    } else {
      c0 = c1 = nearest_tap(cys, p.cy0, p.cy1);
    }
    r.a0 = p.plane[1] + static_cast<int64_t>(c0) * p.stride[1];
    r.a1 = p.plane[1] + static_cast<int64_t>(c1) * p.stride[1];
    if (F == SourceFamily::I420) {
      r.b0 = p.plane[2] + static_cast<int64_t>(c0) * p.stride[2];
      r.b1 = p.plane[2] + static_cast<int64_t>(c1) * p.stride[2];
    }
  }
  return r;
}

// Byte offsets in their rows of luma sample i and of the U and V samples of chroma group c.
template <SourceFamily F>
CUDAPREP_HD int luma_offset(const PixelParams& p, int i) {
  return F == SourceFamily::Packed422 ? YuvFamily<F>::luma_step * i + p.y_byte : YuvFamily<F>::luma_step * i;
}
template <SourceFamily F>
CUDAPREP_HD int u_offset(const PixelParams& p, int c) {
  return F == SourceFamily::I420 ? c : YuvFamily<F>::chroma_step * c + p.u_byte;
}
template <SourceFamily F>
CUDAPREP_HD int v_offset(const PixelParams& p, int c) {
  return F == SourceFamily::I420 ? c : YuvFamily<F>::chroma_step * c + p.v_byte;
}

// Bilinear value of the samples at offsets o0, o1 of rows q0, q1 (I420's V: rows b0, b1).
template <int SampleBytes>
CUDAPREP_HD float bilerp_at(const uint8_t* q0, const uint8_t* q1, int o0, int o1, float fx, float fy) {
  return bilerp(load_sample<SampleBytes>(q0 + o0), load_sample<SampleBytes>(q0 + o1), load_sample<SampleBytes>(q1 + o0),
                load_sample<SampleBytes>(q1 + o1), fx, fy);
}

// Evaluates tensor pixel x of the row described by r (the pixel must be active); out[c] are
// the normalised output channels.
template <SourceFamily F, Interpolation I>
CUDAPREP_HD void sample_pixel(const PixelParams& p, const RowCtx& r, int x, float out[3]) {
  using YF = YuvFamily<F>;
  constexpr int S = YF::sample_bytes;
  const float xs = src_coord(p.inv_sx, p.off_x, x);
  if (I == Interpolation::Bilinear) {
    const Taps t = bilinear_taps(xs, p.lx0, p.lx1);
    if (F == SourceFamily::Gray) {
      finish_gray(
          p, bilerp(load_u8(r.r0 + t.i0), load_u8(r.r0 + t.i1), load_u8(r.r1 + t.i0), load_u8(r.r1 + t.i1), t.f, r.fy),
          out);
    } else if (F == SourceFamily::Packed3 || F == SourceFamily::Packed4) {
      const int o0 = t.i0 * p.bpp, o1 = t.i1 * p.bpp;
      float v[3];
      for (int c = 0; c < 3; ++c) {
        const int b = p.byte_of[c];
        v[c] = bilerp(load_u8(r.r0 + o0 + b), load_u8(r.r0 + o1 + b), load_u8(r.r1 + o0 + b), load_u8(r.r1 + o1 + b),
                      t.f, r.fy);
      }
      finish_rgb(p, v[0], v[1], v[2], out);
    } else {
      const float Y = bilerp_at<S>(r.r0, r.r1, luma_offset<F>(p, t.i0), luma_offset<F>(p, t.i1), t.f, r.fy);
      const Taps c = bilinear_taps(chroma_coord(xs, p.chroma_site_x), p.cx0, p.cx1);
      const float U = bilerp_at<S>(r.a0, r.a1, u_offset<F>(p, c.i0), u_offset<F>(p, c.i1), c.f, r.cfy);
      const float V = F == SourceFamily::I420
                          ? bilerp_at<S>(r.b0, r.b1, c.i0, c.i1, c.f, r.cfy)
                          : bilerp_at<S>(r.a0, r.a1, v_offset<F>(p, c.i0), v_offset<F>(p, c.i1), c.f, r.cfy);
      finish_yuv(p, Y * YF::to_8bit, U * YF::to_8bit, V * YF::to_8bit, out);
    }
  } else {
    const int xi = nearest_tap(xs, p.lx0, p.lx1);
    if (F == SourceFamily::Gray) {
      finish_gray(p, load_u8(r.r0 + xi), out);
    } else if (F == SourceFamily::Packed3 || F == SourceFamily::Packed4) {
      const uint8_t* px = r.r0 + xi * p.bpp;
      finish_rgb(p, load_u8(px + p.byte_of[0]), load_u8(px + p.byte_of[1]), load_u8(px + p.byte_of[2]), out);
    } else {
      const int ci = nearest_tap(chroma_coord(xs, p.chroma_site_x), p.cx0, p.cx1);
      const float Y = load_sample<S>(r.r0 + luma_offset<F>(p, xi));
      const float U = load_sample<S>(r.a0 + u_offset<F>(p, ci));
      const float V = load_sample<S>(F == SourceFamily::I420 ? r.b0 + ci : r.a0 + v_offset<F>(p, ci));
      finish_yuv(p, Y * YF::to_8bit, U * YF::to_8bit, V * YF::to_8bit, out);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Gray output (channels = 1). Its plans take R, G, B in that order (out_channel_source is the
// identity), so byte_of[c] is the byte of R, G and B.

// BT.601 luma, as cv::cvtColor's RGB2GRAY weights it (before its rounding to 8 bits).
CUDAPREP_HD float luma_of_rgb(float r, float g, float b) { return 0.299f * r + 0.587f * g + 0.114f * b; }

// The Y of a YUV source on the full 0..255 range, as the colour path expands it.
CUDAPREP_HD float luma_of_y(const PixelParams& p, float Y) { return clamp255((Y - p.y_offset) * p.y_gain); }

// The luma (pixel space, not normalised) of active tensor pixel x of the row described by r.
// YUV reads luma only.
template <SourceFamily F, Interpolation I>
CUDAPREP_HD float sample_luma(const PixelParams& p, const RowCtx& r, int x) {
  using YF = YuvFamily<F>;
  constexpr int S = YF::sample_bytes;
  const float xs = src_coord(p.inv_sx, p.off_x, x);
  if (I == Interpolation::Bilinear) {
    const Taps t = bilinear_taps(xs, p.lx0, p.lx1);
    if (F == SourceFamily::Gray) return bilerp_at<1>(r.r0, r.r1, t.i0, t.i1, t.f, r.fy);
    if (F == SourceFamily::Packed3 || F == SourceFamily::Packed4) {
      const int o0 = t.i0 * p.bpp, o1 = t.i1 * p.bpp;
      float v[3];
      for (int c = 0; c < 3; ++c) v[c] = bilerp_at<1>(r.r0, r.r1, o0 + p.byte_of[c], o1 + p.byte_of[c], t.f, r.fy);
      return luma_of_rgb(v[0], v[1], v[2]);
    }
    return luma_of_y(
        p, bilerp_at<S>(r.r0, r.r1, luma_offset<F>(p, t.i0), luma_offset<F>(p, t.i1), t.f, r.fy) * YF::to_8bit);
  }
  const int xi = nearest_tap(xs, p.lx0, p.lx1);
  if (F == SourceFamily::Gray) return load_u8(r.r0 + xi);
  if (F == SourceFamily::Packed3 || F == SourceFamily::Packed4) {
    const uint8_t* px = r.r0 + xi * p.bpp;
    return luma_of_rgb(load_u8(px + p.byte_of[0]), load_u8(px + p.byte_of[1]), load_u8(px + p.byte_of[2]));
  }
  return luma_of_y(p, load_sample<S>(r.r0 + luma_offset<F>(p, xi)) * YF::to_8bit);
}

// The normalised gray value of active tensor pixel x.
template <SourceFamily F, Interpolation I>
CUDAPREP_HD float sample_gray_out(const PixelParams& p, const RowCtx& r, int x) {
  return sample_luma<F, I>(p, r, x) * p.mul[0] + p.add[0];
}

// Element offset of channel c of tensor pixel (x, y) in a tensor of C channels.
template <Layout L, int C = 3>
CUDAPREP_HD int64_t out_offset(int W, int H, int x, int y, int c) {
  if (L == Layout::NCHW) return static_cast<int64_t>(c) * W * H + static_cast<int64_t>(y) * W + x;
  return (static_cast<int64_t>(y) * W + x) * C + c;
}

}  // namespace tz
}  // namespace cudaprep
