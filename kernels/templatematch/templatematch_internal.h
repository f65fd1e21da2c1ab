// Internal to the template-matching kernels: the formulas the CPU path and the CUDA path share,
// written once so that both evaluate exactly the same expressions in the same order (the scores,
// the sub-pixel offsets and the colours are then bit-identical on both sides).
// Nothing outside kernels/templatematch_*, gray_* and draw_* should include this.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "image.h"
#include "templatematch.h"

namespace cudaprep {
namespace tm {

// TM_CCOEFF_NORMED from exact integer sums over one window of n = tw * th pixels:
//   st = sum T, var_t = n * sum T^2 - st^2 (> 0, checked when the template is set),
//   si = sum I, sii = sum I^2, sti = sum T * I over the window.
// num = n * sti - st * si and var_i = n * sii - si^2 are exact in int64 for templates up to
// 256 x 256 (n * sti <= 2^16 * 2^32). One rounding each for the product, sqrt and quotient.
CUDAPREP_HD double ccoeff_normed(int64_t n, int64_t st, int64_t var_t, int64_t si, int64_t sii, int64_t sti) {
  const int64_t var_i = n * sii - si * si;
  if (var_i <= 0) return 0.0;  // flat window: no variance, score 0 (as OpenCV)
  const int64_t num = n * sti - st * si;
  const double den = sqrt(static_cast<double>(var_t) * static_cast<double>(var_i));
  double r = static_cast<double>(num) / den;
  // |num| <= den exactly (Cauchy-Schwarz); the rounded quotient can pass 1 by an ulp.
  r = r > 1.0 ? 1.0 : r;
  r = r < -1.0 ? -1.0 : r;
  return r;
}

// The score of a bank member (template_bank.h): a masked member's window with no variance under
// the mask has no score (NaN, never a match); an unmasked member's flat window scores 0.
CUDAPREP_HD float bank_ccoeff_normed(int64_t n, int64_t st, int64_t var_t, int64_t si, int64_t sii, int64_t sti,
                                     bool masked) {
  if (masked && n * sii - si * si <= 0) return NAN;
  return static_cast<float>(ccoeff_normed(n, st, var_t, si, sii, sti));
}

// acc[u] += t * src[u] for n values (the CPU matchers' correlation row).
void mac_row(uint32_t* __restrict acc, const uint8_t* __restrict src, uint32_t t, int n);

// Vertex of the parabola through (-1, l), (0, c), (1, r), as an offset from the centre,
// clamped to +-0.5; 0 where the three values do not form a maximum. No a * b + c patterns,
// so neither compiler can contract anything into an FMA.
CUDAPREP_HD double parabola_offset(float lf, float cf, float rf) {
  const double l = lf, c = cf, r = rf;
  const double d = (l + r) - (c + c);
  if (!(d < 0.0)) return 0.0;
  double off = (l - r) / (d + d);
  off = off > 0.5 ? 0.5 : off;
  off = off < -0.5 ? -0.5 : off;
  return off;
}

// Cells of the peak search: never larger than the template, at most 32 x 32 so that one warp
// scans one cell in a few steps.
CUDAPREP_HD int cell_side(int templ_side) { return templ_side < 32 ? templ_side : 32; }

// One peak of a cell, in map coordinates (u, v); the sub-pixel offsets are relative.
struct Candidate {
  int u = 0, v = 0;
  float score = 0;
  int pad = 0;
  double dx = 0, dy = 0;
};
static_assert(sizeof(Candidate) == 32, "Candidate layout is shared with the device");

// Sub-pixel offsets at (u, v) of a row-major map with the given row pitch (in floats).
CUDAPREP_HD void subpixel_at(const float* map, int64_t pitch, int mw, int mh, int u, int v, double* dx, double* dy) {
  const float* row = map + static_cast<int64_t>(v) * pitch;
  *dx = (u > 0 && u < mw - 1) ? parabola_offset(row[u - 1], row[u], row[u + 1]) : 0.0;
  *dy = (v > 0 && v < mh - 1) ? parabola_offset(row[u - pitch], row[u], row[u + pitch]) : 0.0;
}

// cv::cvtColor(..., COLOR_BGR2GRAY) on 8 bits. OpenCV 4 converts 8-bit RGB to gray with 15
// fractional bits (RY15 = 9798, GY15 = 19235, BY15 = 3735); the 14-bit coefficients of its YUV
// code (4899, 9617, 1868) round differently for 43864 of the 2^24 colours. This formula equals
// cv::cvtColor on every colour (checked exhaustively in the CPU tests).
CUDAPREP_HD uint8_t gray_from_rgb(int r, int g, int b) {
  return static_cast<uint8_t>((b * 3735 + g * 19235 + r * 9798 + (1 << 14)) >> 15);
}

// 8-bit luma of pixel x of a row of a YUV format whose luma is not a plane of bytes: YUY2 / UYVY
// (every second byte) as is, 16-bit samples (P010) rounded to their top 8 bits.
CUDAPREP_HD uint8_t luma8_at(const uint8_t* row, int x, int luma_step, int y_byte, int sample_bytes) {
  const uint8_t* q = row + static_cast<int64_t>(x) * luma_step + y_byte;
  if (sample_bytes == 1) return q[0];
  const int rounded = ((q[0] | (q[1] << 8)) + 128) >> 8;
  return static_cast<uint8_t>(rounded > 255 ? 255 : rounded);
}

// Calls fn(RgbLayout<...>()) with the byte layout of a packed RGB-like format as compile-time
// constants, for the layouts the gray conversions are built for (3 or 4 bytes per pixel, RGB or
// BGR order); returns false for any other format.
template <int BPP, int R, int G, int B>
struct RgbLayout {
  static constexpr int bpp = BPP, r = R, g = G, b = B;
};

template <class Fn>
bool with_rgb_layout(PixelFormat format, Fn&& fn) {
  const PixelFormatInfo& f = pixel_format_info(format);
  if (f.yuv || f.g != 1) return false;
  const bool rgb = f.r == 0 && f.b == 2, bgr = f.r == 2 && f.b == 0;
  if (f.packed_bytes == 3 && rgb)
    fn(RgbLayout<3, 0, 1, 2>());
  else if (f.packed_bytes == 3 && bgr)
    fn(RgbLayout<3, 2, 1, 0>());
  else if (f.packed_bytes == 4 && rgb)
    fn(RgbLayout<4, 0, 1, 2>());
  else if (f.packed_bytes == 4 && bgr)
    fn(RgbLayout<4, 2, 1, 0>());
  else
    return false;
  return true;
}

// The values a box writes, per format; computed once on the host.
struct BoxColour {
  uint8_t c[4] = {0, 0, 0, 0};  // bytes of one packed pixel, in memory order
  int write_bytes = 0;          // how many of them are written (x formats keep their padding byte)
  uint8_t y = 0, u = 0, v = 0;  // YUV: BT.601 limited range
};
BoxColour box_colour(PixelFormat format, const BoxStyle& style);

// Where a box's YUV colour goes in a frame (the format table's YUV fields, for host and device).
struct YuvDrawLayout {
  int luma_step, y_byte, sample_bytes;
  int u_plane, v_plane, chroma_step, u_byte, v_byte;
  int cx_sub, cy_sub;
};
constexpr YuvDrawLayout yuv_draw_layout(PixelFormat format) {
  const PixelFormatInfo& f = pixel_format_info(format);
  return {f.luma_step,         f.y_byte, f.sample_bytes, f.chroma_plane,       v_plane(format),
          chroma_step(format), f.u_byte, f.v_byte,       chroma_x_sub(format), chroma_y_sub(format)};
}

// Writes an 8-bit value as a sample: itself, or in the top byte of a 16-bit little-endian one.
CUDAPREP_HD void put_sample(uint8_t* q, int sample_bytes, uint8_t value) {
  if (sample_bytes == 2) q[0] = 0;
  q[sample_bytes - 1] = value;
}

CUDAPREP_HD void put_luma(uint8_t* const planes[3], const int64_t strides[3], const YuvDrawLayout& l, int x, int y,
                          uint8_t value) {
  put_sample(planes[0] + y * strides[0] + static_cast<int64_t>(x) * l.luma_step + l.y_byte, l.sample_bytes, value);
}

CUDAPREP_HD void put_chroma(uint8_t* const planes[3], const int64_t strides[3], const YuvDrawLayout& l, int cx, int cy,
                            uint8_t u, uint8_t v) {
  const int64_t at = static_cast<int64_t>(cx) * l.chroma_step;
  put_sample(planes[l.u_plane] + cy * strides[l.u_plane] + at + l.u_byte, l.sample_bytes, u);
  put_sample(planes[l.v_plane] + cy * strides[l.v_plane] + at + l.v_byte, l.sample_bytes, v);
}

// The chroma samples that cover a pixel of band b.
CUDAPREP_HD Rect chroma_cover(const Rect& b, const YuvDrawLayout& l) {
  Rect c;
  c.x = b.x / l.cx_sub;
  c.y = b.y / l.cy_sub;
  c.w = (b.x + b.w - 1) / l.cx_sub - c.x + 1;
  c.h = (b.y + b.h - 1) / l.cy_sub - c.y + 1;
  return c;
}

// The outline of one box as up to 4 rectangles (top, bottom, left, right), clipped to the frame.
// Returns how many were written to out. Overlapping bands get the same colour, so the order of
// writes never matters.
CUDAPREP_HD int outline_bands(const Rect& box, int thickness, int frame_w, int frame_h, Rect out[4]) {
  if (box.w <= 0 || box.h <= 0 || thickness <= 0) return 0;
  const int64_t bx = box.x, by = box.y, bw = box.w, bh = box.h;
  const int64_t tx = thickness < box.w ? thickness : box.w, ty = thickness < box.h ? thickness : box.h;
  const int64_t bands[4][4] = {
      {bx, by, bw, ty},            // top
      {bx, by + bh - ty, bw, ty},  // bottom
      {bx, by, tx, bh},            // left
      {bx + bw - tx, by, tx, bh},  // right
  };
  int n = 0;
  for (int k = 0; k < 4; ++k) {
    const int64_t x0 = bands[k][0] > 0 ? bands[k][0] : 0, y0 = bands[k][1] > 0 ? bands[k][1] : 0;
    const int64_t x1 = bands[k][0] + bands[k][2] < frame_w ? bands[k][0] + bands[k][2] : frame_w;
    const int64_t y1 = bands[k][1] + bands[k][3] < frame_h ? bands[k][1] + bands[k][3] : frame_h;
    if (x1 <= x0 || y1 <= y0) continue;
    out[n].x = static_cast<int>(x0);
    out[n].y = static_cast<int>(y0);
    out[n].w = static_cast<int>(x1 - x0);
    out[n].h = static_cast<int>(y1 - y0);
    ++n;
  }
  return n;
}

// Host side of the peak search shared by both paths: greedy non-maximum suppression in best-first
// order (higher score, then lower y, then lower x; boxes of the template's size may not overlap),
// up to max_matches results in frame coordinates. Same result as sorting the candidates and
// keeping each one that overlaps no kept one, in one linear pass per kept match instead of a sort
// (a single pass for the default of one match). Reorders and overwrites `candidates`; allocates
// nothing beyond the capacity `matches` already has.
void select_matches(Candidate* candidates, int count, const Rect& search, int tw, int th, int max_matches,
                    std::vector<Match>* matches);

// Candidates of a host score map (CPU path; the CUDA path finds the same ones on the device).
void collect_candidates(const float* map, int64_t pitch, int mw, int mh, int tw, int th, double threshold,
                        std::vector<Candidate>* out);

// Checks a gray image description; `what` names it in the message.
Status check_gray(const GrayView& g, const char* what);
Status check_match_settings(const MatchSettings& s);
extern const char* const kFlatTemplateMessage;

}  // namespace tm
}  // namespace cudaprep
