// Validation and resolution of a TensorizeConfig into a TensorizePlan, plus the small helpers
// of tensorize.h that do not touch pixels.
// pad_out is computed exactly as the kernels do (no FMA contraction: -ffp-contract=off in
// kernels/meson.build).

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "tensorize.h"
#include "tensorize_batch.h"
#include "tensorize_pixel.h"

namespace cudaprep {
namespace {

std::string str(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

Status fail(const std::string& m) { return Status::error(m); }

// A boundary within this distance of a pixel centre counts as passing through it on the low
// side; it keeps the integer active range stable against the rounding of the geometry.
constexpr double kEdgeSlack = 1e-6;

int active_begin(double a, int n) {
  const double v = std::ceil(a - 0.5 - kEdgeSlack);
  return static_cast<int>(std::min<double>(std::max<double>(v, 0.0), n));
}

struct Geometry {
  double sx, sy, ox, oy;  // x_t + 0.5 = sx * (x_s + 0.5 - rx) + ox
  double ax, ay, aw, ah;  // active rectangle
};

Geometry resolve_geometry(const TensorOutputSpec& c, const Rect& roi) {
  const double W = c.dst_width, H = c.dst_height, rw = roi.w, rh = roi.h;
  const bool center = c.align == Align::Center;
  Geometry g{};
  switch (c.mode) {
    case ResizeMode::Letterbox: {
      // s = min(W / rw, H / rh); the limiting side maps exactly onto the tensor side.
      double nw, nh;
      if (W * rh <= H * rw) {
        g.sx = g.sy = W / rw;
        nw = W;
        nh = rh * W / rw;
      } else {
        g.sx = g.sy = H / rh;
        nh = H;
        nw = rw * H / rh;
      }
      g.ox = center ? (W - nw) / 2 : 0.0;
      g.oy = center ? (H - nh) / 2 : 0.0;
      g.ax = g.ox;
      g.ay = g.oy;
      g.aw = nw;
      g.ah = nh;
      break;
    }
    case ResizeMode::Stretch:
      g.sx = W / rw;
      g.sy = H / rh;
      g.ox = g.oy = 0.0;
      g.ax = g.ay = 0.0;
      g.aw = W;
      g.ah = H;
      break;
    case ResizeMode::Crop: {
      const double s = std::max(W / rw, H / rh);
      g.sx = g.sy = s;
      g.ox = center ? (W - rw * s) / 2 : 0.0;
      g.oy = center ? (H - rh * s) / 2 : 0.0;
      g.ax = g.ay = 0.0;  // the scaled ROI covers the tensor: active = whole tensor
      g.aw = W;
      g.ah = H;
      break;
    }
    case ResizeMode::Ultralytics: {
      // ultralytics LetterBox: r = min(h_new / h, w_new / w); new_unpad = round(w * r), round(h * r);
      // dw, dh = (w_new - new_unpad) / 2; top = int(round(dh - 0.1)), left = int(round(dw - 0.1)).
      const double r = std::min(H / rh, W / rw);
      const double nw = std::max(1.0, std::nearbyint(rw * r));  // at least one pixel
      const double nh = std::max(1.0, std::nearbyint(rh * r));
      double left = 0.0, top = 0.0;
      if (center) {
        const double dw = (W - nw) / 2, dh = (H - nh) / 2;
        left = std::nearbyint(dw - 0.1);
        top = std::nearbyint(dh - 0.1);
      }
      g.sx = nw / rw;
      g.sy = nh / rh;
      g.ox = left;
      g.oy = top;
      g.ax = left;
      g.ay = top;
      g.aw = nw;
      g.ah = nh;
      break;
    }
  }
  return g;
}

// Format and size of a source (first, as the single-frame plan always reported them first).
Status check_source_size(const SlotSourceSpec& c) {
  if (!is_valid_pixel_format(c.format))
    return fail("unknown pixel format (" + std::to_string(static_cast<int>(c.format)) + ")");
  if (c.src_width <= 0 || c.src_width > kMaxSourceSide)
    return fail("source width " + std::to_string(c.src_width) + " is out of range (1.." +
                std::to_string(kMaxSourceSide) + ")");
  if (c.src_height <= 0 || c.src_height > kMaxSourceSide)
    return fail("source height " + std::to_string(c.src_height) + " is out of range (1.." +
                std::to_string(kMaxSourceSide) + ")");
  return Status();
}

Status check_output_spec(const TensorOutputSpec& c) {
  if (c.dst_width <= 0 || c.dst_width > kMaxTensorSide)
    return fail("tensor width " + std::to_string(c.dst_width) + " is out of range (1.." +
                std::to_string(kMaxTensorSide) + ")");
  if (c.dst_height <= 0 || c.dst_height > kMaxTensorSide)
    return fail("tensor height " + std::to_string(c.dst_height) + " is out of range (1.." +
                std::to_string(kMaxTensorSide) + ")");
  if (!dtype_valid(c.dtype)) return fail("unknown dtype (" + std::to_string(static_cast<int>(c.dtype)) + ")");
  if (c.channels != 1 && c.channels != 3)
    return fail("channels " + std::to_string(c.channels) + " is not supported (1 = gray or 3 = colour)");
  if (Status st = check_buffer_bytes(c.dst_width, c.dst_height, c.channels, c.dtype, 1); !st.ok()) return st;
  if (static_cast<int>(c.mode) < 0 || static_cast<int>(c.mode) > static_cast<int>(ResizeMode::Ultralytics))
    return fail("unknown resize mode (" + std::to_string(static_cast<int>(c.mode)) + ")");
  if (static_cast<int>(c.align) < 0 || static_cast<int>(c.align) > static_cast<int>(Align::TopLeft))
    return fail("unknown align (" + std::to_string(static_cast<int>(c.align)) + ")");
  if (static_cast<int>(c.interpolation) < 0 ||
      static_cast<int>(c.interpolation) > static_cast<int>(Interpolation::Nearest))
    return fail("unknown interpolation (" + std::to_string(static_cast<int>(c.interpolation)) + ")");
  if (static_cast<int>(c.channel_order) < 0 || static_cast<int>(c.channel_order) > static_cast<int>(ChannelOrder::BGR))
    return fail("unknown channel order (" + std::to_string(static_cast<int>(c.channel_order)) + ")");
  if (static_cast<int>(c.layout) < 0 || static_cast<int>(c.layout) > static_cast<int>(Layout::NHWC))
    return fail("unknown layout (" + std::to_string(static_cast<int>(c.layout)) + ")");
  return Status();
}

// Normalisation and pad value (after the source checks: the single-frame plan's message order).
Status resolve_output(const TensorOutputSpec& c, TensorOutputPlan* out) {
  if (c.pad_value < 0 || c.pad_value > 255)
    return fail("pad value " + std::to_string(c.pad_value) + " is out of range (0..255)");
  if (!std::isfinite(c.scale)) return fail("scale is not finite");
  for (int i = 0; i < 3; ++i)
    if (!std::isfinite(c.mean[i])) return fail("mean[" + std::to_string(i) + "] is not finite");
  for (int i = 0; i < 3; ++i) {
    if (!std::isfinite(c.std[i])) return fail("std[" + std::to_string(i) + "] is not finite");
    if (c.std[i] == 0.0) return fail("std[" + std::to_string(i) + "] is zero");
  }
  TensorOutputPlan p{};
  p.dst_width = c.dst_width;
  p.dst_height = c.dst_height;
  p.interpolation = c.interpolation;
  p.layout = c.layout;
  p.dtype = c.dtype;
  p.channels = c.channels;
  for (int i = 0; i < 3; ++i) {
    const double m = c.scale / c.std[i], a = -c.mean[i] / c.std[i];
    p.mul[i] = static_cast<float>(m);
    p.add[i] = static_cast<float>(a);
    if (!std::isfinite(p.mul[i]) || !std::isfinite(p.add[i]))
      return fail("normalisation of channel " + std::to_string(i) + " overflows float (scale " + str(c.scale) +
                  ", mean " + str(c.mean[i]) + ", std " + str(c.std[i]) + ")");
    const float pad = static_cast<float>(c.pad_value);
    p.pad_out[i] = pad * p.mul[i] + p.add[i];
  }
  // Gray reads R, G and B in that order for its luma: the channel order does not apply.
  const bool bgr_out = c.channels == 3 && c.channel_order == ChannelOrder::BGR;
  for (int i = 0; i < 3; ++i) p.out_channel_source[i] = bgr_out ? 2 - i : i;
  *out = p;
  return Status();
}

// ROI (all-zero = the whole frame; otherwise non-empty and inside the frame), colour and
// geometry of one source; the spec and the source's size are already checked.
Status resolve_slot(const TensorOutputSpec& c, const SlotSourceSpec& s, SlotPlan* out) {
  if (static_cast<int>(s.yuv_matrix) < 0 || static_cast<int>(s.yuv_matrix) > static_cast<int>(YuvMatrix::BT2020))
    return fail("unknown YUV matrix (" + std::to_string(static_cast<int>(s.yuv_matrix)) + ")");
  Rect roi = s.roi;
  if (roi.x == 0 && roi.y == 0 && roi.w == 0 && roi.h == 0) {
    roi.w = s.src_width;
    roi.h = s.src_height;
  } else {
    const std::string desc = std::to_string(roi.w) + "x" + std::to_string(roi.h) + " at (" + std::to_string(roi.x) +
                             "," + std::to_string(roi.y) + ")";
    if (roi.w < 0 || roi.h < 0) return fail("roi " + desc + " has a negative size");
    if (roi.w == 0 || roi.h == 0) return fail("roi " + desc + " is empty");
    if (roi.x < 0 || roi.y < 0 || int64_t(roi.x) + roi.w > s.src_width || int64_t(roi.y) + roi.h > s.src_height)
      return fail("roi " + desc + " is outside the " + std::to_string(s.src_width) + "x" +
                  std::to_string(s.src_height) + " frame");
  }

  SlotPlan p{};
  p.format = s.format;
  p.src_width = s.src_width;
  p.src_height = s.src_height;
  p.roi = roi;

  // Colour.
  const PixelFormatInfo& fmt = pixel_format_info(s.format);
  p.src_bytes_per_pixel = fmt.packed_bytes;
  if (!fmt.yuv) {  // YUV has no packed channels: the offsets stay 0
    p.src_channel_offset[0] = fmt.r;
    p.src_channel_offset[1] = fmt.g;
    p.src_channel_offset[2] = fmt.b;
  }
  double kr = 0.299, kb = 0.114;
  if (s.yuv_matrix == YuvMatrix::BT709) {
    kr = 0.2126;
    kb = 0.0722;
  } else if (s.yuv_matrix == YuvMatrix::BT2020) {
    kr = 0.2627;
    kb = 0.0593;
  }
  const double kg = 1.0 - kr - kb;
  p.y_offset = s.yuv_full_range ? 0.0f : 16.0f;
  // Samples reach the conversion on the 8-bit scale (an n-bit one divided by 2^(n-8)). Limited
  // range is defined that way for every depth (BT.2100: 16 * 2^(n-8) ...); full range spans
  // 2^n - 1 codes, so n > 8 bits need 255 * 2^(n-8) / (2^n - 1) more (1020 / 1023 for 10 bits).
  const double full_gain =
      fmt.depth > 8 ? 255.0 * std::ldexp(1.0, fmt.depth - 8) / (std::ldexp(1.0, fmt.depth) - 1) : 1.0;
  p.y_gain = static_cast<float>(s.yuv_full_range ? full_gain : 255.0 / 219.0);
  p.c_gain = static_cast<float>(s.yuv_full_range ? full_gain : 255.0 / 224.0);
  p.rv = static_cast<float>(2.0 * (1.0 - kr));
  p.bu = static_cast<float>(2.0 * (1.0 - kb));
  p.gu = static_cast<float>(-2.0 * kb * (1.0 - kb) / kg);
  p.gv = static_cast<float>(-2.0 * kr * (1.0 - kr) / kg);
  p.chroma_site_x = s.chroma_h_cosited ? 0.0f : 0.5f;
  p.chroma_site_y = s.chroma_v_cosited ? 0.0f : 0.5f;

  // Geometry.
  const Geometry g = resolve_geometry(c, roi);
  TensorTransform& t = p.transform;
  t.src_width = s.src_width;
  t.src_height = s.src_height;
  t.dst_width = c.dst_width;
  t.dst_height = c.dst_height;
  // x_t = sx * (x_s - rx + 0.5) + ox - 0.5
  t.src_to_dst[0] = g.sx;
  t.src_to_dst[1] = 0.0;
  t.src_to_dst[2] = g.sx * (0.5 - roi.x) + g.ox - 0.5;
  t.src_to_dst[3] = 0.0;
  t.src_to_dst[4] = g.sy;
  t.src_to_dst[5] = g.sy * (0.5 - roi.y) + g.oy - 0.5;
  // x_s = (x_t + 0.5 - ox) / sx + rx - 0.5
  t.dst_to_src[0] = 1.0 / g.sx;
  t.dst_to_src[1] = 0.0;
  t.dst_to_src[2] = (0.5 - g.ox) / g.sx + roi.x - 0.5;
  t.dst_to_src[3] = 0.0;
  t.dst_to_src[4] = 1.0 / g.sy;
  t.dst_to_src[5] = (0.5 - g.oy) / g.sy + roi.y - 0.5;
  // Active rectangle, clipped to the tensor.
  const double ax0 = std::max(0.0, g.ax), ay0 = std::max(0.0, g.ay);
  const double ax1 = std::min<double>(c.dst_width, g.ax + g.aw), ay1 = std::min<double>(c.dst_height, g.ay + g.ah);
  t.active[0] = ax0;
  t.active[1] = ay0;
  t.active[2] = std::max(0.0, ax1 - ax0);
  t.active[3] = std::max(0.0, ay1 - ay0);
  for (int i = 0; i < 6; ++i) p.inv[i] = static_cast<float>(t.dst_to_src[i]);
  p.active_x0 = active_begin(ax0, c.dst_width);
  p.active_x1 = active_begin(ax1, c.dst_width);
  p.active_y0 = active_begin(ay0, c.dst_height);
  p.active_y1 = active_begin(ay1, c.dst_height);
  *out = p;
  return Status();
}

}  // namespace

Status make_output_plan(const TensorOutputSpec& spec, TensorOutputPlan* out) {
  if (!out) return fail("tensorize output plan: null output");
  CUDAPREP_RETURN_IF_ERROR(check_output_spec(spec));
  return resolve_output(spec, out);
}

Status make_slot_plan(const TensorOutputSpec& spec, const SlotSourceSpec& source, SlotPlan* out) {
  if (!out) return fail("tensorize slot plan: null output");
  CUDAPREP_RETURN_IF_ERROR(check_source_size(source));
  CUDAPREP_RETURN_IF_ERROR(check_output_spec(spec));
  return resolve_slot(spec, source, out);
}

Status make_tensorize_plan(const TensorizeConfig& c, TensorizePlan* out) {
  if (!out) return fail("tensorize plan: null output");
  CUDAPREP_RETURN_IF_ERROR(check_source_size(c));
  CUDAPREP_RETURN_IF_ERROR(check_output_spec(c));
  TensorizePlan p{};
  CUDAPREP_RETURN_IF_ERROR(resolve_output(c, &p));
  CUDAPREP_RETURN_IF_ERROR(resolve_slot(c, c, &p));
  *out = p;
  return Status();
}

TensorizePlan combine_plan(const TensorOutputPlan& output, const SlotPlan& slot) {
  TensorizePlan p{};
  static_cast<TensorOutputPlan&>(p) = output;
  static_cast<SlotPlan&>(p) = slot;
  return p;
}

size_t slot_bytes(const TensorOutputPlan& o) {
  return size_t(o.dst_width) * o.dst_height * size_t(o.channels) * size_t(dtype_bytes(o.dtype));
}

size_t batch_bytes(const TensorOutputPlan& o, int count) { return count > 0 ? slot_bytes(o) * size_t(count) : 0; }

size_t tensor_bytes(const TensorizePlan& plan) { return tensor_elements(plan) * size_t(dtype_bytes(plan.dtype)); }

Status check_buffer_bytes(int width, int height, int channels, DType dtype, int count) {
  const uint64_t bytes = uint64_t(width) * uint64_t(height) * uint64_t(channels) * uint64_t(dtype_bytes(dtype)) *
                         uint64_t(count > 0 ? count : 1);
  if (bytes <= kMaxTensorBytes) return Status();
  const std::string shape = std::to_string(width) + "x" + std::to_string(height) + "x" + std::to_string(channels);
  return Status::error((count > 1 ? "a batch of " + std::to_string(count) + " tensors " : "tensor ") + shape +
                       " needs " + std::to_string(bytes) + " bytes, more than the " + std::to_string(kMaxTensorBytes) +
                       "-byte limit of one buffer");
}

Normalisation default_normalisation(DType dtype) {
  const DTypeInfo& t = dtype_info(dtype);
  return Normalisation{t.default_scale, {t.default_mean, t.default_mean, t.default_mean}, {1, 1, 1}};
}

Status warps_per_block_of(const TensorizeTuning& tuning, int launch_default, int* warps) {
  *warps = tuning.warps_per_block == 0 ? launch_default : tuning.warps_per_block;
  if (*warps >= 1 && *warps <= kMaxWarpsPerBlock) return Status();
  return Status::error("tensorize: warps_per_block " + std::to_string(tuning.warps_per_block) +
                       " is out of range (1.." + std::to_string(kMaxWarpsPerBlock) + ", or 0: the default)");
}

Status check_source(const TensorizePlan& plan, const ImageView& src) {
  if (!is_valid_pixel_format(plan.format)) return fail("tensorize plan is not initialised (bad pixel format)");
  if (src.format != plan.format)
    return fail(std::string("source format ") + pixel_format_name(src.format) + " does not match the plan's " +
                pixel_format_name(plan.format));
  if (src.width != plan.src_width || src.height != plan.src_height)
    return fail("source size " + std::to_string(src.width) + "x" + std::to_string(src.height) +
                " does not match the plan's " + std::to_string(plan.src_width) + "x" + std::to_string(plan.src_height));
  const int n = plane_count(src.format);
  for (int i = 0; i < n; ++i) {
    const int64_t row_bytes = plane_row_bytes(src.format, i, src.width);
    if (!src.planes[i].data) return fail("source plane " + std::to_string(i) + " is null");
    if (src.planes[i].stride < row_bytes)
      return fail("source plane " + std::to_string(i) + " stride " + std::to_string(src.planes[i].stride) +
                  " is smaller than its row (" + std::to_string(row_bytes) + " bytes)");
    // 16-bit samples are read as such (the GPU faults on a misaligned one): planes and rows
    // must start on even addresses, as every GStreamer allocator makes them.
    const int s = sample_bytes(src.format);
    if (s > 1 && (reinterpret_cast<uintptr_t>(src.planes[i].data) % s != 0 || src.planes[i].stride % s != 0))
      return fail("source plane " + std::to_string(i) + " of " + pixel_format_name(src.format) + " is not " +
                  std::to_string(s) + "-byte aligned (address or stride " + std::to_string(src.planes[i].stride) + ")");
  }
  return Status();
}

uint16_t float_to_half_bits(float f) { return float_to_half_rn(f); }
float half_bits_to_float(uint16_t h) { return tz::half_to_float(h); }

const char* resize_mode_name(ResizeMode m) {
  switch (m) {
    case ResizeMode::Letterbox: return "letterbox";
    case ResizeMode::Stretch: return "stretch";
    case ResizeMode::Crop: return "crop";
    case ResizeMode::Ultralytics: return "ultralytics";
  }
  return "unknown";
}

}  // namespace cudaprep
