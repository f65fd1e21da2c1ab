// Scaling and rotation of templates with OpenCV's 8-bit arithmetic (see template_resample.h).
// Every rounding here is the one OpenCV 4.6 makes: the float and double expressions are evaluated
// in the same order and precision (this file is built with -ffp-contract=off), rounding to
// integers is to nearest, ties to even (cvRound), and the fixed-point steps use the same scales.
#include "template_resample.h"

#include <algorithm>
#include <cfenv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "templatematch.h"

namespace cudaprep {

namespace {

// cvRound: nearest, ties to even (the default rounding mode), saturated to int.
int round_int(double v) {
  if (!(v > INT_MIN)) return INT_MIN;
  if (!(v < INT_MAX)) return INT_MAX;
  return (int)std::nearbyint(v);
}
int round_int(float v) { return round_int((double)v); }
int floor_int(double v) { return (int)std::floor(v); }
int ceil_int(double v) { return (int)std::ceil(v); }
int16_t to_short(float v) {
  int i = round_int(v);
  return (int16_t)std::min(std::max(i, -32768), 32767);
}
uint8_t to_byte(float v) {
  int i = round_int(v);
  return (uint8_t)std::min(std::max(i, 0), 255);
}

std::string number(double v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string size_text(int w, int h) { return std::to_string(w) + "x" + std::to_string(h); }

Status check_source(const MaskedGray& src) {
  if (src.width <= 0 || src.height <= 0)
    return Status::error("the template is empty (" + size_text(src.width, src.height) + ")");
  const size_t n = (size_t)src.width * src.height;
  if (src.pixels.size() != n)
    return Status::error("the template's pixels (" + std::to_string(src.pixels.size()) +
                         " bytes) do not match its size " + size_text(src.width, src.height));
  if (!src.mask.empty() && src.mask.size() != n)
    return Status::error("the template's mask (" + std::to_string(src.mask.size()) +
                         " bytes) does not match its size " + size_text(src.width, src.height));
  return Status();
}

Status check_result_size(int w, int h, const std::string& what) {
  if (w < kMinTemplateSide || h < kMinTemplateSide)
    return Status::error(what + " gives " + size_text(w, h) + " pixels; templates must be at least " +
                         size_text(kMinTemplateSide, kMinTemplateSide));
  if (w > kMaxTemplateSide || h > kMaxTemplateSide)
    return Status::error(what + " gives " + size_text(w, h) + " pixels; templates can be at most " +
                         size_text(kMaxTemplateSide, kMaxTemplateSide));
  return Status();
}

// A plain 8-bit image, row-major, no padding.
struct Plane8 {
  int w = 0, h = 0;
  const uint8_t* p = nullptr;
  uint8_t at(int x, int y) const { return p[(size_t)y * w + x]; }
};

// ---- cv::resize, INTER_NEAREST ----
void resize_nearest(const Plane8& s, int dw, int dh, uint8_t* d) {
  const double ifx = 1. / ((double)dw / s.w), ify = 1. / ((double)dh / s.h);
  std::vector<int> xs(dw);
  for (int x = 0; x < dw; x++) xs[x] = std::min(floor_int(x * ifx), s.w - 1);
  for (int y = 0; y < dh; y++) {
    const int sy = std::min(floor_int(y * ify), s.h - 1);
    for (int x = 0; x < dw; x++) d[(size_t)y * dw + x] = s.at(xs[x], sy);
  }
}

// ---- cv::resize, INTER_LINEAR on 8 bits (enlarging): 11-bit coefficients per axis ----
constexpr int kResizeCoefScale = 2048;

void linear_coefs(int ssize, int dsize, std::vector<int>* ofs, std::vector<int16_t>* coef, int* lim) {
  const double scale = 1. / ((double)dsize / ssize);
  ofs->assign(dsize, 0);
  coef->assign(2 * (size_t)dsize, 0);
  *lim = dsize;
  for (int d = 0; d < dsize; d++) {
    float f = (float)((d + 0.5) * scale - 0.5);
    int s = (int)std::floor(f);
    f -= s;
    if (s < 0) f = 0, s = 0;
    if (s + 1 >= ssize) {
      *lim = std::min(*lim, d);
      if (s >= ssize - 1) f = 0, s = ssize - 1;
    }
    (*ofs)[d] = s;
    (*coef)[2 * d] = to_short((1.f - f) * kResizeCoefScale);
    (*coef)[2 * d + 1] = to_short(f * kResizeCoefScale);
  }
}

void resize_linear(const Plane8& s, int dw, int dh, uint8_t* d) {
  std::vector<int> xofs, yofs;
  std::vector<int16_t> alpha, beta;
  int xmax, ymax_unused;
  linear_coefs(s.w, dw, &xofs, &alpha, &xmax);
  // Vertically the source row is clamped, but the coefficients are kept (as OpenCV does).
  const double scale_y = 1. / ((double)dh / s.h);
  yofs.assign(dh, 0);
  beta.assign(2 * (size_t)dh, 0);
  for (int y = 0; y < dh; y++) {
    float f = (float)((y + 0.5) * scale_y - 0.5);
    int sy = (int)std::floor(f);
    f -= sy;
    yofs[y] = sy;
    beta[2 * y] = to_short((1.f - f) * kResizeCoefScale);
    beta[2 * y + 1] = to_short(f * kResizeCoefScale);
  }
  (void)ymax_unused;
  std::vector<int> row0(dw), row1(dw);
  auto hresize = [&](int sy, std::vector<int>* row) {
    const uint8_t* S = s.p + (size_t)sy * s.w;
    int x = 0;
    for (; x < xmax; x++) (*row)[x] = S[xofs[x]] * alpha[2 * x] + S[xofs[x] + 1] * alpha[2 * x + 1];
    for (; x < dw; x++) (*row)[x] = S[xofs[x]] * kResizeCoefScale;
  };
  for (int y = 0; y < dh; y++) {
    const int r0 = std::min(std::max(yofs[y], 0), s.h - 1), r1 = std::min(std::max(yofs[y] + 1, 0), s.h - 1);
    hresize(r0, &row0);
    hresize(r1, &row1);
    const int b0 = beta[2 * y], b1 = beta[2 * y + 1];
    uint8_t* D = d + (size_t)y * dw;
    for (int x = 0; x < dw; x++)
      D[x] = (uint8_t)((((b0 * (row0[x] >> 4)) >> 16) + ((b1 * (row1[x] >> 4)) >> 16) + 2) >> 2);
  }
}

// ---- cv::resize, INTER_AREA on 8 bits (shrinking) ----
// Integer factors on both axes: sums of whole cells.
void resize_area_fast(const Plane8& s, int dw, int dh, int kx, int ky, uint8_t* d) {
  const int area = kx * ky;
  const float inv_area = 1.f / area;
  const int full_w = s.w / kx;  // destination columns whose whole cell is inside
  for (int dy = 0; dy < dh; dy++) {
    uint8_t* D = d + (size_t)dy * dw;
    const int sy0 = dy * ky;
    if (sy0 >= s.h) {
      std::fill(D, D + dw, 0);
      continue;
    }
    const int w = sy0 + ky <= s.h ? full_w : 0;
    int dx = 0;
    for (; dx < w; dx++) {
      const int sx0 = dx * kx;
      int sum = 0;
      for (int j = 0; j < ky; j++)
        for (int i = 0; i < kx; i++) sum += s.at(sx0 + i, sy0 + j);
      if (kx == 2 && ky == 2)
        D[dx] = (uint8_t)((sum + 2) >> 2);
      else
        D[dx] = to_byte(sum * inv_area);
    }
    for (; dx < dw; dx++) {
      const int sx0 = dx * kx;
      int sum = 0, count = 0;
      for (int j = 0; j < ky && sy0 + j < s.h; j++)
        for (int i = 0; i < kx && sx0 + i < s.w; i++) {
          sum += s.at(sx0 + i, sy0 + j);
          count++;
        }
      D[dx] = count ? to_byte((float)sum / count) : 0;
    }
  }
}

struct AreaTap {
  int d, s;
  float alpha;
};

std::vector<AreaTap> area_taps(int ssize, int dsize, double scale) {
  std::vector<AreaTap> tab;
  for (int d = 0; d < dsize; d++) {
    const double f1 = d * scale, f2 = f1 + scale;
    const double cell = std::min(scale, ssize - f1);
    int s1 = ceil_int(f1), s2 = floor_int(f2);
    s2 = std::min(s2, ssize - 1);
    s1 = std::min(s1, s2);
    if (s1 - f1 > 1e-3) tab.push_back({d, s1 - 1, (float)((s1 - f1) / cell)});
    for (int s = s1; s < s2; s++) tab.push_back({d, s, float(1.0 / cell)});
    if (f2 - s2 > 1e-3) tab.push_back({d, s2, (float)(std::min(std::min(f2 - s2, 1.), cell) / cell)});
  }
  return tab;
}

void resize_area(const Plane8& s, int dw, int dh, uint8_t* d) {
  const double scale_x = 1. / ((double)dw / s.w), scale_y = 1. / ((double)dh / s.h);
  const int ix = round_int(scale_x), iy = round_int(scale_y);
  const double eps = 2.220446049250313e-16;  // DBL_EPSILON
  if (std::fabs(scale_x - ix) < eps && std::fabs(scale_y - iy) < eps) {
    resize_area_fast(s, dw, dh, ix, iy, d);
    return;
  }
  const std::vector<AreaTap> xtab = area_taps(s.w, dw, scale_x), ytab = area_taps(s.h, dh, scale_y);
  std::vector<float> buf(dw), sum(dw, 0.f);
  int prev_dy = ytab.empty() ? 0 : ytab[0].d;
  for (const AreaTap& yt : ytab) {
    const float beta = yt.alpha;
    const uint8_t* S = s.p + (size_t)yt.s * s.w;
    std::fill(buf.begin(), buf.end(), 0.f);
    for (const AreaTap& xt : xtab) buf[xt.d] += S[xt.s] * xt.alpha;
    if (yt.d != prev_dy) {
      uint8_t* D = d + (size_t)prev_dy * dw;
      for (int x = 0; x < dw; x++) {
        D[x] = to_byte(sum[x]);
        sum[x] = beta * buf[x];
      }
      prev_dy = yt.d;
    } else {
      for (int x = 0; x < dw; x++) sum[x] += beta * buf[x];
    }
  }
  uint8_t* D = d + (size_t)prev_dy * dw;
  for (int x = 0; x < dw; x++) D[x] = to_byte(sum[x]);
}

// ---- cv::warpAffine on 8 bits ----
// The inverse map in fixed point: 10 fractional bits per row and column step, 5 kept for the
// bilinear weights (32 x 32 positions between four pixels).
constexpr int kAbBits = 10, kAbScale = 1 << kAbBits, kInterBits = 5, kInterTab = 1 << kInterBits;

struct InverseMap {
  double m[6];
};

InverseMap invert(const double fwd[6]) {
  InverseMap r;
  double* M = r.m;
  for (int i = 0; i < 6; i++) M[i] = fwd[i];
  double D = M[0] * M[4] - M[1] * M[3];
  D = D != 0 ? 1. / D : 0;
  const double A11 = M[4] * D, A22 = M[0] * D;
  M[0] = A11;
  M[1] *= -D;
  M[3] *= -D;
  M[4] = A22;
  const double b1 = -M[0] * M[2] - M[1] * M[5];
  const double b2 = -M[3] * M[2] - M[4] * M[5];
  M[2] = b1;
  M[5] = b2;
  return r;
}

// Calls f(x, y, X, Y) for every destination pixel with the source position in fixed point:
// `frac_bits` fractional bits (5 for bilinear, 0 for nearest).
template <typename F>
void for_each_source_position(const InverseMap& inv, int dw, int dh, bool nearest, F f) {
  const double* M = inv.m;
  std::vector<int> adelta(dw), bdelta(dw);
  for (int x = 0; x < dw; x++) {
    adelta[x] = round_int(M[0] * x * kAbScale);
    bdelta[x] = round_int(M[3] * x * kAbScale);
  }
  const int round_delta = nearest ? kAbScale / 2 : kAbScale / kInterTab / 2;
  const int shift = nearest ? kAbBits : kAbBits - kInterBits;
  for (int y = 0; y < dh; y++) {
    const int X0 = round_int((M[1] * y + M[2]) * kAbScale) + round_delta;
    const int Y0 = round_int((M[4] * y + M[5]) * kAbScale) + round_delta;
    for (int x = 0; x < dw; x++) f(x, y, (X0 + adelta[x]) >> shift, (Y0 + bdelta[x]) >> shift);
  }
}

// INTER_LINEAR, BORDER_CONSTANT 0. OpenCV's weights are (32 - fx)(32 - fy) ... scaled to 2^15 and
// rounded with + 2^14 >> 15; all of them are multiples of 32, so this is the same sum at 2^10.
// `covered` (optional) gets 1 where every neighbour with a non-zero weight is inside.
void warp_linear(const Plane8& s, const InverseMap& inv, int dw, int dh, uint8_t* d, uint8_t* covered) {
  for_each_source_position(inv, dw, dh, false, [&](int x, int y, int X, int Y) {
    const int sx = X >> kInterBits, sy = Y >> kInterBits;
    const int fx = X & (kInterTab - 1), fy = Y & (kInterTab - 1);
    const int w[4] = {(kInterTab - fy) * (kInterTab - fx), (kInterTab - fy) * fx, fy * (kInterTab - fx), fy * fx};
    const int px[4] = {sx, sx + 1, sx, sx + 1}, py[4] = {sy, sy, sy + 1, sy + 1};
    int sum = 0;
    bool all_inside = true;
    for (int k = 0; k < 4; k++) {
      const bool inside = px[k] >= 0 && px[k] < s.w && py[k] >= 0 && py[k] < s.h;
      if (inside)
        sum += s.at(px[k], py[k]) * w[k];
      else if (w[k] != 0)
        all_inside = false;
    }
    d[(size_t)y * dw + x] = (uint8_t)std::min((sum + (1 << 9)) >> 10, 255);
    if (covered) covered[(size_t)y * dw + x] = all_inside ? 1 : 0;
  });
}

// INTER_NEAREST, BORDER_CONSTANT 0.
void warp_nearest(const Plane8& s, const InverseMap& inv, int dw, int dh, uint8_t* d) {
  for_each_source_position(inv, dw, dh, true, [&](int x, int y, int X, int Y) {
    d[(size_t)y * dw + x] = X >= 0 && X < s.w && Y >= 0 && Y < s.h ? s.at(X, Y) : 0;
  });
}

void binarise(std::vector<uint8_t>* m) {
  for (auto& v : *m) v = v != 0;
}

// Drops a mask where every pixel counts and the source had none.
void settle_mask(bool source_masked, MaskedGray* out) {
  if (!source_masked && std::all_of(out->mask.begin(), out->mask.end(), [](uint8_t v) { return v != 0; }))
    out->mask.clear();
}

}  // namespace

void scaled_template_size(int width, int height, double scale, int* out_width, int* out_height) {
  *out_width = (int)std::lround(width * scale);
  *out_height = (int)std::lround(height * scale);
}

void rotated_template_size(int width, int height, double angle_deg, int* out_width, int* out_height) {
  const double a = angle_deg * (M_PI / 180);
  const double c = std::fabs(std::cos(a)), s = std::fabs(std::sin(a));
  *out_width = (int)std::ceil(width * c + height * s - 1e-6);
  *out_height = (int)std::ceil(width * s + height * c - 1e-6);
}

Status scale_template(const MaskedGray& src, double scale, MaskedGray* out) {
  CUDAPREP_RETURN_IF_ERROR(check_source(src));
  if (!std::isfinite(scale) || scale <= 0) return Status::error("template scale " + number(scale) + " is not above 0");
  if (!(src.width * scale < 1e6 && src.height * scale < 1e6))
    return Status::error("scaling the " + size_text(src.width, src.height) + " template by " + number(scale) +
                         " gives more than " + size_text(kMaxTemplateSide, kMaxTemplateSide) + " pixels");
  int dw, dh;
  scaled_template_size(src.width, src.height, scale, &dw, &dh);
  CUDAPREP_RETURN_IF_ERROR(
      check_result_size(dw, dh, "scaling the " + size_text(src.width, src.height) + " template by " + number(scale)));
  MaskedGray r;
  r.width = dw;
  r.height = dh;
  if (dw == src.width && dh == src.height) {
    r.pixels = src.pixels;
    r.mask = src.mask;
  } else {
    const Plane8 sp{src.width, src.height, src.pixels.data()};
    r.pixels.resize((size_t)dw * dh);
    if (scale < 1)
      resize_area(sp, dw, dh, r.pixels.data());
    else
      resize_linear(sp, dw, dh, r.pixels.data());
    if (src.masked()) {
      r.mask.resize((size_t)dw * dh);
      resize_nearest(Plane8{src.width, src.height, src.mask.data()}, dw, dh, r.mask.data());
    }
  }
  binarise(&r.mask);
  *out = std::move(r);
  return Status();
}

Status rotate_template(const MaskedGray& src, double angle_deg, MaskedGray* out) {
  CUDAPREP_RETURN_IF_ERROR(check_source(src));
  if (!std::isfinite(angle_deg)) return Status::error("template angle " + number(angle_deg) + " is not a number");
  if (angle_deg == 0) {
    MaskedGray r = src;
    binarise(&r.mask);
    *out = std::move(r);
    return Status();
  }
  int bw, bh;
  rotated_template_size(src.width, src.height, angle_deg, &bw, &bh);
  CUDAPREP_RETURN_IF_ERROR(check_result_size(
      bw, bh, "rotating the " + size_text(src.width, src.height) + " template by " + number(angle_deg) + " degrees"));
  // cv::getRotationMatrix2D (the centre as Point2f: exact for halves), then the shift to the box.
  const float cx = (float)((src.width - 1) / 2.0), cy = (float)((src.height - 1) / 2.0);
  const double a = angle_deg * (M_PI / 180);
  const double alpha = std::cos(a) * 1.0, beta = std::sin(a) * 1.0;
  double M[6] = {alpha, beta, (1 - alpha) * cx - beta * cy, -beta, alpha, beta * cx + (1 - alpha) * cy};
  M[2] += (bw - 1) / 2.0 - cx;
  M[5] += (bh - 1) / 2.0 - cy;
  const InverseMap inv = invert(M);

  MaskedGray r;
  r.width = bw;
  r.height = bh;
  r.pixels.resize((size_t)bw * bh);
  std::vector<uint8_t> covered((size_t)bw * bh);
  warp_linear(Plane8{src.width, src.height, src.pixels.data()}, inv, bw, bh, r.pixels.data(), covered.data());
  std::vector<uint8_t> ones;
  const uint8_t* mask = src.mask.data();
  if (!src.masked()) {
    ones.assign(src.pixels.size(), 1);
    mask = ones.data();
  }
  r.mask.resize((size_t)bw * bh);
  warp_nearest(Plane8{src.width, src.height, mask}, inv, bw, bh, r.mask.data());
  for (size_t i = 0; i < r.mask.size(); i++) r.mask[i] = r.mask[i] != 0 && covered[i];
  settle_mask(src.masked(), &r);
  *out = std::move(r);
  return Status();
}

}  // namespace cudaprep
