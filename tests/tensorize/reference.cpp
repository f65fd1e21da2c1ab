#include "reference.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace tzref {

using cudaprep::Align;
using cudaprep::ChannelOrder;
using cudaprep::ImageView;
using cudaprep::Interpolation;
using cudaprep::Layout;
using cudaprep::PixelFormat;
using cudaprep::ResizeMode;
using cudaprep::TensorizeConfig;
using cudaprep::YuvMatrix;

double py_round(double v) {
  const double f = std::floor(v);
  const double d = v - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return std::fmod(f, 2.0) == 0.0 ? f : f + 1;
}

Geometry geometry(const TensorizeConfig& c) {
  Geometry g{};
  const bool whole = c.roi.x == 0 && c.roi.y == 0 && c.roi.w == 0 && c.roi.h == 0;
  g.rx = whole ? 0 : c.roi.x;
  g.ry = whole ? 0 : c.roi.y;
  g.rw = whole ? c.src_width : c.roi.w;
  g.rh = whole ? c.src_height : c.roi.h;
  const double W = c.dst_width, H = c.dst_height;
  const bool center = c.align == Align::Center;
  double ax = 0, ay = 0, aw = W, ah = H;
  switch (c.mode) {
    case ResizeMode::Letterbox: {
      const double s = std::min(W / g.rw, H / g.rh);
      const double nw = g.rw * s, nh = g.rh * s;
      g.sx = g.sy = s;
      g.ox = center ? (W - nw) / 2 : 0;
      g.oy = center ? (H - nh) / 2 : 0;
      ax = g.ox;
      ay = g.oy;
      aw = nw;
      ah = nh;
      break;
    }
    case ResizeMode::Stretch:
      g.sx = W / g.rw;
      g.sy = H / g.rh;
      g.ox = g.oy = 0;
      break;
    case ResizeMode::Crop: {
      const double s = std::max(W / g.rw, H / g.rh);
      g.sx = g.sy = s;
      g.ox = center ? (W - g.rw * s) / 2 : 0;
      g.oy = center ? (H - g.rh * s) / 2 : 0;
      break;
    }
    case ResizeMode::Ultralytics: {
      // ultralytics/data/augment.py LetterBox.__call__ (auto=False, scaleup=True):
      //   r = min(new_shape[0] / shape[0], new_shape[1] / shape[1])
      //   new_unpad = int(round(shape[1] * r)), int(round(shape[0] * r))
      //   dw, dh = new_shape[1] - new_unpad[0], new_shape[0] - new_unpad[1]
      //   if center: dw /= 2; dh /= 2
      //   top, bottom = int(round(dh - 0.1)) if center else 0, int(round(dh + 0.1))
      //   left, right = int(round(dw - 0.1)) if center else 0, int(round(dw + 0.1))
      const double r = std::min(H / g.rh, W / g.rw);
      const double nw = std::max(1.0, py_round(g.rw * r)), nh = std::max(1.0, py_round(g.rh * r));
      double dw = W - nw, dh = H - nh;
      double left = 0, top = 0;
      if (center) {
        dw /= 2;
        dh /= 2;
        left = py_round(dw - 0.1);
        top = py_round(dh - 0.1);
      }
      g.sx = nw / g.rw;
      g.sy = nh / g.rh;
      g.ox = left;
      g.oy = top;
      ax = left;
      ay = top;
      aw = nw;
      ah = nh;
      break;
    }
  }
  // Clip the active rectangle to the tensor.
  const double x0 = std::max(0.0, ax), y0 = std::max(0.0, ay);
  const double x1 = std::min(W, ax + aw), y1 = std::min(H, ay + ah);
  g.ax = x0;
  g.ay = y0;
  g.aw = std::max(0.0, x1 - x0);
  g.ah = std::max(0.0, y1 - y0);
  return g;
}

bool inside(double a, double len, int x) {
  const double c = x + 0.5;
  return c >= a - 1e-6 && c < a + len - 1e-6;
}

namespace {

int clampi(int v, int lo, int hi) { return std::min(std::max(v, lo), hi); }

// Byte position of R, G, B and bytes per pixel of packed formats (written out again here).
void packed_layout(PixelFormat f, int* bpp, int pos[3]) {
  switch (f) {
    case PixelFormat::BGR:
      *bpp = 3;
      pos[0] = 2;
      pos[1] = 1;
      pos[2] = 0;
      return;
    case PixelFormat::RGB:
      *bpp = 3;
      pos[0] = 0;
      pos[1] = 1;
      pos[2] = 2;
      return;
    case PixelFormat::BGRx:
    case PixelFormat::BGRA:
      *bpp = 4;
      pos[0] = 2;
      pos[1] = 1;
      pos[2] = 0;
      return;
    case PixelFormat::RGBx:
    case PixelFormat::RGBA:
      *bpp = 4;
      pos[0] = 0;
      pos[1] = 1;
      pos[2] = 2;
      return;
    default:
      *bpp = 1;
      pos[0] = pos[1] = pos[2] = 0;
      return;
  }
}

bool is_yuv_format(PixelFormat f) {
  switch (f) {
    case PixelFormat::NV12:
    case PixelFormat::NV21:
    case PixelFormat::I420:
    case PixelFormat::YUY2:
    case PixelFormat::UYVY:
    case PixelFormat::P010_10LE: return true;
    default: return false;
  }
}

// One component of a YUV image: sample x of row y is at byte mul * x + add of the row, a byte or
// (P010) a little-endian 16-bit word with the 10-bit code in bits 15..6.
struct Component {
  cudaprep::Plane plane;
  int64_t mul, add;
  bool p010;
  double at(int x, int y) const {
    const uint8_t* q = plane.data + int64_t(y) * plane.stride + mul * x + add;
    return p010 ? double((q[0] | (q[1] << 8)) >> 6) : double(q[0]);
  }
};

// Where the Y, U and V codes of a YUV image are (written out again from the formats' public
// definitions: fourcc.org, GStreamer's video-format docs), and what the codes are.
struct YuvAccess {
  Component luma, u, v;
  int bits = 8;                     // code depth
  bool full_height_chroma = false;  // 4:2:2: one chroma row per luma row
};

YuvAccess yuv_access(const ImageView& src) {
  const cudaprep::Plane p0 = src.planes[0], p1 = src.planes[1], p2 = src.planes[2];
  YuvAccess a;
  switch (src.format) {
    case PixelFormat::NV12:  // Y plane; UV plane of U, V byte pairs
      a = {{p0, 1, 0, false}, {p1, 2, 0, false}, {p1, 2, 1, false}};
      break;
    case PixelFormat::NV21:  // Y plane; VU plane of V, U byte pairs
      a = {{p0, 1, 0, false}, {p1, 2, 1, false}, {p1, 2, 0, false}};
      break;
    case PixelFormat::I420:  // Y, U, V planes
      a = {{p0, 1, 0, false}, {p1, 1, 0, false}, {p2, 1, 0, false}};
      break;
    case PixelFormat::YUY2:  // Y0 U Y1 V
      a = {{p0, 2, 0, false}, {p0, 4, 1, false}, {p0, 4, 3, false}};
      a.full_height_chroma = true;
      break;
    case PixelFormat::UYVY:  // U Y0 V Y1
      a = {{p0, 2, 1, false}, {p0, 4, 0, false}, {p0, 4, 2, false}};
      a.full_height_chroma = true;
      break;
    default:  // P010_10LE: Y words; UV plane of U, V word pairs
      a = {{p0, 2, 0, true}, {p1, 4, 0, true}, {p1, 4, 2, true}};
      a.bits = 10;
      break;
  }
  return a;
}

// Interpolated value of a plane at (x, y); get(ix, iy) reads an already clamped pixel.
template <typename Get>
double interp(Interpolation ip, double x, double y, int xlo, int xhi, int ylo, int yhi, Get get) {
  if (ip == Interpolation::Nearest) {
    const int ix = clampi(int(std::floor(x + 0.5)), xlo, xhi), iy = clampi(int(std::floor(y + 0.5)), ylo, yhi);
    return get(ix, iy);
  }
  const double fx0 = std::floor(x), fy0 = std::floor(y);
  const double ax = x - fx0, ay = y - fy0;
  const int x0 = int(fx0), y0 = int(fy0);
  const int xa = clampi(x0, xlo, xhi), xb = clampi(x0 + 1, xlo, xhi);
  const int ya = clampi(y0, ylo, yhi), yb = clampi(y0 + 1, ylo, yhi);
  return (1 - ax) * (1 - ay) * get(xa, ya) + ax * (1 - ay) * get(xb, ya) + (1 - ax) * ay * get(xa, yb) +
         ax * ay * get(xb, yb);
}

// Y, U, V codes interpolated at source position (xs, ys) (YUV formats).
void sample_yuv(const TensorizeConfig& c, const Geometry& g, const ImageView& src, double xs, double ys,
                double yuv[3]) {
  const int rx0 = int(g.rx), rx1 = int(g.rx + g.rw) - 1, ry0 = int(g.ry), ry1 = int(g.ry + g.rh) - 1;
  const Interpolation ip = c.interpolation;
  const YuvAccess a = yuv_access(src);
  yuv[0] = interp(ip, xs, ys, rx0, rx1, ry0, ry1, [&](int x, int y) { return a.luma.at(x, y); });
  // Chroma along each subsampled axis: sample c covers luma pixels 2c and 2c + 1 and sits
  // between them (centre-sited: at 2c + 0.5, index = (luma + 0.5) / 2 - 0.5) or on the first
  // (co-sited: at 2c, index = luma / 2); clamped to the chroma samples that cover the ROI.
  auto chroma_index = [](double luma, bool cosited) { return cosited ? luma / 2 : (luma + 0.5) / 2 - 0.5; };
  const double cx = chroma_index(xs, c.chroma_h_cosited);
  const int cx0 = int(std::floor(g.rx / 2)), cx1 = int(std::ceil((g.rx + g.rw) / 2)) - 1;
  double cy = ys;
  int cy0 = ry0, cy1 = ry1;
  if (!a.full_height_chroma) {
    cy = chroma_index(ys, c.chroma_v_cosited);
    cy0 = int(std::floor(g.ry / 2));
    cy1 = int(std::ceil((g.ry + g.rh) / 2)) - 1;
  }
  yuv[1] = interp(ip, cx, cy, cx0, cx1, cy0, cy1, [&](int x, int y) { return a.u.at(x, y); });
  yuv[2] = interp(ip, cx, cy, cx0, cx1, cy0, cy1, [&](int x, int y) { return a.v.at(x, y); });
}

// R, G, B (clamped to 0..255) of Y, U, V codes of the source's format.
void yuv_to_rgb(const TensorizeConfig& c, PixelFormat f, const double yuv[3], double rgb[3]) {
  const int bits = f == PixelFormat::P010_10LE ? 10 : 8;
  double kr, kb;
  switch (c.yuv_matrix) {
    case YuvMatrix::BT709:
      kr = 0.2126;
      kb = 0.0722;
      break;
    case YuvMatrix::BT2020:
      kr = 0.2627;
      kb = 0.0593;
      break;
    default:
      kr = 0.299;
      kb = 0.114;
      break;
  }
  const double kg = 1 - kr - kb;
  // Codes -> E'y in [0, 1] and E'pb, E'pr in [-0.5, 0.5] (the quantisation of BT.601 / 709 /
  // 2020 / 2100 for `bits`-bit codes), times 255.
  const double q = std::ldexp(1.0, bits - 8), half = std::ldexp(1.0, bits - 1);
  double y, u, v;
  if (c.yuv_full_range) {
    const double codes = std::ldexp(1.0, bits) - 1;
    y = yuv[0] / codes * 255;
    u = (yuv[1] - half) / codes * 255;
    v = (yuv[2] - half) / codes * 255;
  } else {
    y = (yuv[0] - 16 * q) / (219 * q) * 255;
    u = (yuv[1] - 128 * q) / (224 * q) * 255;
    v = (yuv[2] - 128 * q) / (224 * q) * 255;
  }
  // Inverse of Y = kr R + kg G + kb B, Pb = (B - Y) / (2 (1 - kb)), Pr = (R - Y) / (2 (1 - kr)).
  const double R = y + 2 * (1 - kr) * v;
  const double B = y + 2 * (1 - kb) * u;
  const double G = (y - kr * R - kb * B) / kg;
  rgb[0] = std::min(255.0, std::max(0.0, R));
  rgb[1] = std::min(255.0, std::max(0.0, G));
  rgb[2] = std::min(255.0, std::max(0.0, B));
}

}  // namespace

void sample_rgb(const TensorizeConfig& c, const Geometry& g, const ImageView& src, double xs, double ys,
                double rgb[3]) {
  const int rx0 = int(g.rx), rx1 = int(g.rx + g.rw) - 1, ry0 = int(g.ry), ry1 = int(g.ry + g.rh) - 1;
  const Interpolation ip = c.interpolation;
  if (is_yuv_format(src.format)) {
    double yuv[3];
    sample_yuv(c, g, src, xs, ys, yuv);
    yuv_to_rgb(c, src.format, yuv, rgb);
    return;
  }
  int bpp, pos[3];
  packed_layout(src.format, &bpp, pos);
  const cudaprep::Plane& p = src.planes[0];
  for (int k = 0; k < 3; ++k) {
    const int off = src.format == PixelFormat::GRAY8 ? 0 : pos[k];
    rgb[k] = interp(ip, xs, ys, rx0, rx1, ry0, ry1,
                    [&](int x, int y) { return double(p.data[int64_t(y) * p.stride + int64_t(x) * bpp + off]); });
  }
}

namespace {

// The range of R, G, B over the positions (xs + dx, ys + dy), dx, dy in {-ex, 0, ex}. YUV: the
// kernels round the chroma position on its own (from the float luma position), so luma and
// chroma move independently: the ranges of Y, U and V are taken over those positions
// separately and the conversion (monotone in each) is evaluated at the corners of that box.
void rgb_range(const TensorizeConfig& c, const Geometry& g, const ImageView& src, double xs, double ys, double ex,
               double ey, double lo[3], double hi[3]) {
  const double dx[3] = {-ex, 0, ex}, dy[3] = {-ey, 0, ey};
  const bool yuv = is_yuv_format(src.format);
  double vlo[3] = {1e300, 1e300, 1e300}, vhi[3] = {-1e300, -1e300, -1e300};
  for (double ddx : dx)
    for (double ddy : dy) {
      double v[3];
      if (yuv)
        sample_yuv(c, g, src, xs + ddx, ys + ddy, v);
      else
        sample_rgb(c, g, src, xs + ddx, ys + ddy, v);
      for (int k = 0; k < 3; ++k) {
        vlo[k] = std::min(vlo[k], v[k]);
        vhi[k] = std::max(vhi[k], v[k]);
      }
    }
  if (!yuv) {
    for (int k = 0; k < 3; ++k) {
      lo[k] = vlo[k];
      hi[k] = vhi[k];
    }
    return;
  }
  for (int k = 0; k < 3; ++k) {
    lo[k] = 1e300;
    hi[k] = -1e300;
  }
  for (int corner = 0; corner < 8; ++corner) {
    const double v[3] = {corner & 1 ? vhi[0] : vlo[0], corner & 2 ? vhi[1] : vlo[1], corner & 4 ? vhi[2] : vlo[2]};
    double rgb[3];
    yuv_to_rgb(c, src.format, v, rgb);
    for (int k = 0; k < 3; ++k) {
      lo[k] = std::min(lo[k], rgb[k]);
      hi[k] = std::max(hi[k], rgb[k]);
    }
  }
}

// Gray output's pixel (channels = 1): YUV sources give their Y code on the 0..255 scale of the
// range (limited: (Y - 16) / 219 * 255 at 8 bits), clamped; the others BT.601 luma of R, G, B.
double y_to_gray(const TensorizeConfig& c, PixelFormat f, double Y) {
  const int bits = f == PixelFormat::P010_10LE ? 10 : 8;
  const double q = std::ldexp(1.0, bits - 8);
  const double y = c.yuv_full_range ? Y / (std::ldexp(1.0, bits) - 1) * 255 : (Y - 16 * q) / (219 * q) * 255;
  return std::min(255.0, std::max(0.0, y));
}
double rgb_to_gray(const double rgb[3]) { return 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]; }

// The gray pixel at (xs, ys) and its range over the positions (xs + dx, ys + dy), |d| <= e.
void sample_gray(const TensorizeConfig& c, const Geometry& g, const ImageView& src, double xs, double ys, double ex,
                 double ey, double* value, double* lo, double* hi) {
  const bool yuv = is_yuv_format(src.format);
  auto at = [&](double x, double y) {
    double v[3];
    if (yuv) {
      sample_yuv(c, g, src, x, y, v);
      return y_to_gray(c, src.format, v[0]);
    }
    sample_rgb(c, g, src, x, y, v);
    return rgb_to_gray(v);
  };
  *value = *lo = *hi = at(xs, ys);
  for (double dx : {-ex, 0.0, ex})
    for (double dy : {-ey, 0.0, ey}) {
      const double v = at(xs + dx, ys + dy);
      *lo = std::min(*lo, v);
      *hi = std::max(*hi, v);
    }
}

}  // namespace

Tensor tensorize(const TensorizeConfig& c, const ImageView& src, double position_slack) {
  const Geometry g = geometry(c);
  const int W = c.dst_width, H = c.dst_height;
  Tensor t;
  const int C = c.channels;
  const size_t n = size_t(W) * H * C;
  t.value.resize(n);
  t.lo.resize(n);
  t.hi.resize(n);
  t.active.resize(n);
  auto index = [&](int x, int y, int ch) -> size_t {
    return c.layout == Layout::NCHW ? size_t(ch) * W * H + size_t(y) * W + x : (size_t(y) * W + x) * C + ch;
  };
  auto normalise = [&](double pixel, int ch) { return (pixel * c.scale - c.mean[ch]) / c.std[ch]; };
  for (int y = 0; y < H; ++y) {
    for (int x = 0; x < W; ++x) {
      const bool act = inside(g.ax, g.aw, x) && inside(g.ay, g.ah, y);
      double rgb[3], lo[3], hi[3];
      if (!act) {
        for (int k = 0; k < 3; ++k) rgb[k] = lo[k] = hi[k] = c.pad_value;
      } else {
        const double xs = (x + 0.5 - g.ox) / g.sx + g.rx - 0.5;
        const double ys = (y + 0.5 - g.oy) / g.sy + g.ry - 0.5;
        // Float position error: a few ulps of the terms of x * (1 / sx) + offset.
        const double ex = position_slack >= 0
                              ? position_slack
                              : std::ldexp(std::fabs(x / g.sx) + std::fabs(xs - x / g.sx) + std::fabs(xs) + 1, -22);
        const double ey = position_slack >= 0
                              ? position_slack
                              : std::ldexp(std::fabs(y / g.sy) + std::fabs(ys - y / g.sy) + std::fabs(ys) + 1, -22);
        if (C == 1) {
          sample_gray(c, g, src, xs, ys, ex, ey, &rgb[0], &lo[0], &hi[0]);
          const size_t i = index(x, y, 0);
          const double a = normalise(lo[0], 0), b = normalise(hi[0], 0);
          t.value[i] = normalise(rgb[0], 0);
          t.lo[i] = std::min(a, b);
          t.hi[i] = std::max(a, b);
          t.active[i] = 1;
          continue;
        }
        sample_rgb(c, g, src, xs, ys, rgb);
        rgb_range(c, g, src, xs, ys, ex, ey, lo, hi);
        for (int k = 0; k < 3; ++k) {
          lo[k] = std::min(lo[k], rgb[k]);
          hi[k] = std::max(hi[k], rgb[k]);
        }
      }
      for (int ch = 0; ch < C; ++ch) {
        const int k = c.channel_order == ChannelOrder::RGB || C == 1 ? ch : 2 - ch;
        const size_t i = index(x, y, ch);
        const double a = normalise(lo[k], ch), b = normalise(hi[k], ch);
        t.value[i] = normalise(rgb[k], ch);
        t.lo[i] = std::min(a, b);
        t.hi[i] = std::max(a, b);
        t.active[i] = act;
      }
    }
  }
  return t;
}

unsigned short ref_half_bits(float f) {
  if (std::isnan(f)) return 0x7e00;
  const unsigned short sign = std::signbit(f) ? 0x8000 : 0;
  double a = std::fabs(double(f));
  if (std::isinf(f)) return sign | 0x7c00;
  if (a == 0) return sign;
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  // Half: normal exponents e - 1 in [-14, 15] with 10 fraction bits; below: subnormal, unit 2^-24.
  const int q_exp = std::max(e - 1, -14) - 10;  // value of the last kept bit
  double q = a / std::ldexp(1.0, q_exp);        // exact (power of two)
  const double fl = std::floor(q);
  const double d = q - fl;
  q = d > 0.5 ? fl + 1 : (d < 0.5 ? fl : (std::fmod(fl, 2.0) == 0 ? fl : fl + 1));
  const double r = q * std::ldexp(1.0, q_exp);
  if (r >= 65536.0) return sign | 0x7c00;
  if (r < std::ldexp(1.0, -14)) return sign | static_cast<unsigned short>(r / std::ldexp(1.0, -24));
  int re;
  const double rm = std::frexp(r, &re);  // r = rm * 2^re
  const int biased = re - 1 + 15;
  const unsigned frac = static_cast<unsigned>((rm * 2 - 1) * 1024);
  return sign | static_cast<unsigned short>((biased << 10) | frac);
}

}  // namespace tzref
