// CPU tests of the tensorize kernels: plan validation, geometry, fp16 conversion, and the CPU
// path against (a) the independent double-precision reference in reference.cpp and (b) OpenCV
// where OpenCV computes the same function.
//
// Tolerance against the reference. The reference gives, for every element, the exact value and
// the range [lo, hi] the value takes when the sample position (luma and chroma independently:
// the kernels round the chroma position on its own) moves by up to
// 4 * 2^-24 * (|x / sx| + |offset| + |xs| + 1) source pixels (about 5e-4 px for a 2000-px
// source), twice the analytic bound of the float evaluation xs = inv_sx * x + off_x the kernels
// use (2^-22 instead of 2^-23 is the smallest factor that passes). The output must then lie in
// [lo, hi] widened by
//   kEpsPixel * |scale / std|                       (float interpolation / YUV arithmetic)
//   + 4 * 2^-23 * (|value * mul| + |add| + |out|)   (float normalisation)
//   + half-precision rounding (2^-11 relative + 2^-24) for fp16.
// kEpsPixel = 3e-4 grey levels: three lerps at 1.5 ulp(255) each plus the YUV matrix evaluated in
// float with rounded coefficients (ulp(400) ~ 3e-5 per operation) stay below 2e-4; the largest
// excess observed over all the tests below is ~7e-5 (printed by each test, fp32 outputs).
// Measured against the exact value instead of the range, outputs differ by up to ~0.02 grey
// levels on steep edges (the float position error times the local gradient; also printed).
// A half-pixel shift, a wrong offset or a swapped channel moves values by whole grey levels on
// any textured image and fails at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <random>
#include <string>
#include <vector>

#include "reference.h"
#include "gstcudaprepmeta.h"
#include "tensorize.h"
#include "test_images.h"
#include "test_photos.h"

using namespace cudaprep;
using tztest::HostImage;
using tztest::kAllFormats;

namespace {

// A box given by its corners (x1, y1, x2, y2) in tensor pixels, mapped back into the frame by the
// public header's gst_cuda_prep_transform_box_to_frame (the one implementation of the mapping).
void tensor_box_to_frame(const TensorTransform& t, const double corners_in[4], double corners_out[4]) {
  GstCudaPrepTransform g{};
  g.source_width = t.src_width;
  g.source_height = t.src_height;
  for (int i = 0; i < 6; i++) g.tensor_to_src[i] = t.dst_to_src[i];
  const double box[4] = {corners_in[0], corners_in[1], corners_in[2] - corners_in[0], corners_in[3] - corners_in[1]};
  double out[4];
  gst_cuda_prep_transform_box_to_frame(&g, box, out);
  corners_out[0] = out[0];
  corners_out[1] = out[1];
  corners_out[2] = out[0] + out[2];
  corners_out[3] = out[1] + out[3];
}

constexpr double kEpsPixel = 3e-4;

std::string describe(const TensorizeConfig& c) {
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "%s %dx%d roi(%d,%d %dx%d) -> %dx%d %s %s %s %s %s %s pad=%d scale=%g mean=(%g,%g,%g) "
                "std=(%g,%g,%g) yuv=%d%s channels=%d",
                pixel_format_name(c.format), c.src_width, c.src_height, c.roi.x, c.roi.y, c.roi.w, c.roi.h, c.dst_width,
                c.dst_height, resize_mode_name(c.mode), c.align == Align::Center ? "center" : "top-left",
                c.interpolation == Interpolation::Bilinear ? "bilinear" : "nearest",
                c.channel_order == ChannelOrder::RGB ? "rgb" : "bgr", c.layout == Layout::NCHW ? "nchw" : "nhwc",
                dtype_name(c.dtype), c.pad_value, c.scale, c.mean[0], c.mean[1], c.mean[2], c.std[0], c.std[1],
                c.std[2], static_cast<int>(c.yuv_matrix), c.yuv_full_range ? " full" : "", c.channels);
  return buf;
}

// Runs the CPU path into a poisoned buffer (with a guard tail), checks that every element was
// written and the guard is intact, and returns the values as floats.
::testing::AssertionResult run_cpu(const TensorizePlan& plan, const ImageView& src, std::vector<float>* values,
                                   std::vector<uint8_t>* raw = nullptr) {
  const size_t bytes = tensor_bytes(plan), guard = 64;
  std::vector<uint8_t> buf(bytes + guard, 0xFF);  // 0xFFFF.. = NaN in fp32 and fp16
  const Status s = tensorize_cpu(plan, src, buf.data());
  if (!s.ok()) return ::testing::AssertionFailure() << "tensorize_cpu failed: " << s.message();
  for (size_t i = bytes; i < bytes + guard; ++i)
    if (buf[i] != 0xFF) return ::testing::AssertionFailure() << "wrote past the tensor end";
  const size_t n = tensor_elements(plan);
  values->resize(n);
  for (size_t i = 0; i < n; ++i) {
    float v;
    if (plan.dtype == DType::Float32) {
      std::memcpy(&v, buf.data() + 4 * i, 4);
    } else if (plan.dtype == DType::Float16) {
      uint16_t h;
      std::memcpy(&h, buf.data() + 2 * i, 2);
      v = half_bits_to_float(h);
    } else {
      v = plan.dtype == DType::UInt8 ? float(buf[i]) : float(int8_t(buf[i]));
    }
    if (std::isnan(v)) return ::testing::AssertionFailure() << "element " << i << " was not written";
    (*values)[i] = v;
  }
  if (raw) {
    buf.resize(bytes);
    *raw = std::move(buf);
  }
  return ::testing::AssertionSuccess();
}

struct Excess {
  double worst_pixel = 0;     // largest distance outside [lo, hi], in grey levels (before normalisation)
  double worst_vs_value = 0;  // largest |out - exact value| in grey levels (informational)
};

::testing::AssertionResult matches_reference(const TensorizeConfig& cfg, const ImageView& src,
                                             const std::vector<float>& out, Excess* ex = nullptr,
                                             double eps_pixel = kEpsPixel) {
  const tzref::Tensor ref = tzref::tensorize(cfg, src);
  if (ref.value.size() != out.size()) return ::testing::AssertionFailure() << "size mismatch";
  const int W = cfg.dst_width, H = cfg.dst_height;
  size_t bad = 0;
  std::string first;
  Excess e;
  for (size_t i = 0; i < out.size(); ++i) {
    const int ch = cfg.layout == Layout::NCHW ? int(i / (size_t(W) * H)) : int(i % cfg.channels);
    const double mul = cfg.scale / cfg.std[ch], add = -cfg.mean[ch] / cfg.std[ch];
    double tol = eps_pixel * std::fabs(mul) +
                 std::ldexp(std::fabs(ref.value[i] * mul) + std::fabs(add) + std::fabs(out[i]) + 1e-30, -23) * 4;
    if (cfg.dtype == DType::Float16)
      tol += std::max(std::fabs(ref.hi[i]), std::fabs(ref.lo[i])) * std::ldexp(1.0, -11) + std::ldexp(1.0, -24);
    const double o = out[i];
    double lo = ref.lo[i], hi = ref.hi[i];
    if (cfg.dtype == DType::UInt8 || cfg.dtype == DType::Int8) {
      // Rounded to nearest even and saturated: the integers the range [lo - tol, hi + tol] rounds to.
      const double imin = cfg.dtype == DType::UInt8 ? 0 : -128, imax = cfg.dtype == DType::UInt8 ? 255 : 127;
      lo = std::min(imax, std::max(imin, tzref::py_round(lo - tol)));
      hi = std::min(imax, std::max(imin, tzref::py_round(hi + tol)));
      tol = 0;
    }
    const double outside = o < lo ? lo - o : (o > hi ? o - hi : 0.0);
    if (mul != 0 && cfg.dtype == DType::Float32) {  // fp16 excess is dominated by the half rounding
      e.worst_pixel = std::max(e.worst_pixel, outside / std::fabs(mul));
      e.worst_vs_value = std::max(e.worst_vs_value, std::fabs(o - ref.value[i]) / std::fabs(mul));
    }
    if (!(outside <= tol)) {
      if (bad++ == 0) {
        size_t pix = cfg.layout == Layout::NCHW ? i % (size_t(W) * H) : i / cfg.channels;
        char buf[256];
        std::snprintf(buf, sizeof(buf),
                      "element %zu (x=%zu y=%zu c=%d, %s): got %.9g, reference %.9g in [%.9g, %.9g], tol %.3g", i,
                      pix % W, pix / W, ch, ref.active[i] ? "sampled" : "pad", o, ref.value[i], lo, hi, tol);
        first = buf;
      }
    }
  }
  if (ex) {
    ex->worst_pixel = std::max(ex->worst_pixel, e.worst_pixel);
    ex->worst_vs_value = std::max(ex->worst_vs_value, e.worst_vs_value);
  }
  if (bad)
    return ::testing::AssertionFailure() << bad << " of " << out.size() << " elements differ; first: " << first
                                         << "\nconfig: " << describe(cfg);
  return ::testing::AssertionSuccess();
}

// Plan + run + compare.
::testing::AssertionResult check_config(const TensorizeConfig& cfg, const ImageView& src, Excess* ex = nullptr) {
  TensorizePlan plan;
  const Status s = make_tensorize_plan(cfg, &plan);
  if (!s.ok()) return ::testing::AssertionFailure() << "plan failed: " << s.message() << "\nconfig: " << describe(cfg);
  std::vector<float> out;
  auto r = run_cpu(plan, src, &out);
  if (!r) return r << "\nconfig: " << describe(cfg);
  return matches_reference(cfg, src, out, ex);
}

// ---- images ----------------------------------------------------------------------------------

using tztest::from_bgr;
using tztest::load_photo;

using tztest::base_config;

// ---- plan validation ---------------------------------------------------------------------------

struct BadCase {
  const char* name;
  std::function<void(TensorizeConfig&)> mutate;
  const char* message;
};

TEST(TensorizePlan, EveryBadSettingHasItsOwnMessage) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  const BadCase cases[] = {
      {"format", [](TensorizeConfig& c) { c.format = static_cast<PixelFormat>(42); }, "unknown pixel format (42)"},
      {"src w 0", [](TensorizeConfig& c) { c.src_width = 0; }, "source width 0 is out of range (1..32768)"},
      {"src w neg", [](TensorizeConfig& c) { c.src_width = -5; }, "source width -5 is out of range (1..32768)"},
      {"src w huge", [](TensorizeConfig& c) { c.src_width = 32769; }, "source width 32769 is out of range (1..32768)"},
      {"src h 0", [](TensorizeConfig& c) { c.src_height = 0; }, "source height 0 is out of range (1..32768)"},
      {"src h huge", [](TensorizeConfig& c) { c.src_height = 1 << 20; },
       "source height 1048576 is out of range (1..32768)"},
      {"dst w 0", [](TensorizeConfig& c) { c.dst_width = 0; }, "tensor width 0 is out of range (1..16384)"},
      {"dst w neg", [](TensorizeConfig& c) { c.dst_width = -640; }, "tensor width -640 is out of range (1..16384)"},
      {"dst w huge", [](TensorizeConfig& c) { c.dst_width = 16385; }, "tensor width 16385 is out of range (1..16384)"},
      {"dst h 0", [](TensorizeConfig& c) { c.dst_height = 0; }, "tensor height 0 is out of range (1..16384)"},
      {"dst h huge", [](TensorizeConfig& c) { c.dst_height = 100000; },
       "tensor height 100000 is out of range (1..16384)"},
      {"mode", [](TensorizeConfig& c) { c.mode = static_cast<ResizeMode>(7); }, "unknown resize mode (7)"},
      {"align", [](TensorizeConfig& c) { c.align = static_cast<Align>(-1); }, "unknown align (-1)"},
      {"interp", [](TensorizeConfig& c) { c.interpolation = static_cast<Interpolation>(2); },
       "unknown interpolation (2)"},
      {"order", [](TensorizeConfig& c) { c.channel_order = static_cast<ChannelOrder>(3); },
       "unknown channel order (3)"},
      {"layout", [](TensorizeConfig& c) { c.layout = static_cast<Layout>(9); }, "unknown layout (9)"},
      {"dtype", [](TensorizeConfig& c) { c.dtype = static_cast<DType>(4); }, "unknown dtype (4)"},
      {"channels", [](TensorizeConfig& c) { c.channels = 2; }, "channels 2 is not supported (1 = gray or 3 = colour)"},
      {"channels 0", [](TensorizeConfig& c) { c.channels = 0; },
       "channels 0 is not supported (1 = gray or 3 = colour)"},
      {"matrix", [](TensorizeConfig& c) { c.yuv_matrix = static_cast<YuvMatrix>(3); }, "unknown YUV matrix (3)"},
      {"pad low", [](TensorizeConfig& c) { c.pad_value = -1; }, "pad value -1 is out of range (0..255)"},
      {"pad high", [](TensorizeConfig& c) { c.pad_value = 256; }, "pad value 256 is out of range (0..255)"},
      {"scale inf", [inf](TensorizeConfig& c) { c.scale = inf; }, "scale is not finite"},
      {"scale nan", [nan](TensorizeConfig& c) { c.scale = nan; }, "scale is not finite"},
      {"mean nan", [nan](TensorizeConfig& c) { c.mean[1] = nan; }, "mean[1] is not finite"},
      {"mean inf", [inf](TensorizeConfig& c) { c.mean[2] = -inf; }, "mean[2] is not finite"},
      {"std zero", [](TensorizeConfig& c) { c.std[0] = 0.0; }, "std[0] is zero"},
      {"std neg zero", [](TensorizeConfig& c) { c.std[2] = -0.0; }, "std[2] is zero"},
      {"std inf", [inf](TensorizeConfig& c) { c.std[1] = inf; }, "std[1] is not finite"},
      {"std nan", [nan](TensorizeConfig& c) { c.std[0] = nan; }, "std[0] is not finite"},
      {"overflow", [](TensorizeConfig& c) { c.std[1] = 1e-300; },
       "normalisation of channel 1 overflows float (scale 0.00392157, mean 0, std 1e-300)"},
      {"roi neg w",
       [](TensorizeConfig& c) {
         c.roi = {10, 10, -4, 20};
       },
       "roi -4x20 at (10,10) has a negative size"},
      {"roi neg h",
       [](TensorizeConfig& c) {
         c.roi = {0, 0, 5, -1};
       },
       "roi 5x-1 at (0,0) has a negative size"},
      {"roi zero w",
       [](TensorizeConfig& c) {
         c.roi = {3, 4, 0, 20};
       },
       "roi 0x20 at (3,4) is empty"},
      {"roi zero size moved",
       [](TensorizeConfig& c) {
         c.roi = {3, 4, 0, 0};
       },
       "roi 0x0 at (3,4) is empty"},
      {"roi left",
       [](TensorizeConfig& c) {
         c.roi = {-1, 0, 10, 10};
       },
       "roi 10x10 at (-1,0) is outside the 333x201 frame"},
      {"roi right",
       [](TensorizeConfig& c) {
         c.roi = {300, 0, 34, 10};
       },
       "roi 34x10 at (300,0) is outside the 333x201 frame"},
      {"roi bottom",
       [](TensorizeConfig& c) {
         c.roi = {0, 200, 1, 2};
       },
       "roi 1x2 at (0,200) is outside the 333x201 frame"},
      {"roi far",
       [](TensorizeConfig& c) {
         c.roi = {2000000000, 0, 2000000000, 5};
       },
       "roi 2000000000x5 at (2000000000,0) is outside the 333x201 frame"},
  };
  for (const BadCase& bc : cases) {
    TensorizeConfig c = base_config(PixelFormat::NV12, 333, 201, 640, 640);
    TensorizePlan plan;
    ASSERT_TRUE(make_tensorize_plan(c, &plan).ok()) << bc.name;
    bc.mutate(c);
    const Status s = make_tensorize_plan(c, &plan);
    EXPECT_FALSE(s.ok()) << bc.name;
    EXPECT_EQ(s.message(), bc.message) << bc.name;
  }
}

TEST(TensorizePlan, AcceptsEdgeValues) {
  for (PixelFormat f : kAllFormats) {
    for (int w : {1, 2, 3, 333}) {
      TensorizeConfig c = base_config(f, w, w == 333 ? 201 : w, 1, 1);
      TensorizePlan plan;
      EXPECT_TRUE(make_tensorize_plan(c, &plan).ok()) << pixel_format_name(f) << " " << w;
    }
  }
  TensorizeConfig c = base_config(PixelFormat::BGR, kMaxSourceSide, kMaxSourceSide, kMaxTensorSide, kMaxTensorSide);
  c.pad_value = 255;
  c.roi = {kMaxSourceSide - 1, kMaxSourceSide - 1, 1, 1};
  TensorizePlan plan;
  // the largest tensor side in fp32 is over the one-buffer byte limit; in fp16 it fits
  Status too_big = make_tensorize_plan(c, &plan);
  EXPECT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.message(),
            "tensor 16384x16384x3 needs 3221225472 bytes, more than the 2147483648-byte limit of one buffer");
  c.dtype = DType::Float16;
  EXPECT_TRUE(make_tensorize_plan(c, &plan).ok());
  c.pad_value = 0;
  c.scale = 0;    // allowed: a constant tensor
  c.std[0] = -2;  // negative std flips the sign; allowed
  EXPECT_TRUE(make_tensorize_plan(c, &plan).ok());
}

TEST(TensorizePlan, Letterbox1080p) {
  TensorizeConfig c = base_config(PixelFormat::NV12, 1920, 1080, 640, 640);
  TensorizePlan p;
  ASSERT_TRUE(make_tensorize_plan(c, &p).ok());
  EXPECT_EQ(p.active_x0, 0);
  EXPECT_EQ(p.active_x1, 640);
  EXPECT_EQ(p.active_y0, 140);
  EXPECT_EQ(p.active_y1, 500);
  EXPECT_DOUBLE_EQ(p.transform.active[1], 140.0);
  EXPECT_DOUBLE_EQ(p.transform.active[3], 360.0);
  // x_t = (x_s + 0.5) / 3 - 0.5; y_t = (y_s + 0.5) / 3 + 140 - 0.5
  EXPECT_DOUBLE_EQ(p.transform.src_to_dst[0], 1.0 / 3);
  EXPECT_NEAR(p.transform.src_to_dst[2], 0.5 / 3 - 0.5, 1e-15);
  EXPECT_NEAR(p.transform.src_to_dst[5], 0.5 / 3 + 139.5, 1e-12);
  EXPECT_EQ(p.inv[0], 3.0f);
  EXPECT_EQ(p.inv[2], 1.0f);     // x_s = 3 x_t + 1
  EXPECT_EQ(p.inv[5], -419.0f);  // y_s = 3 (y_t - 140) + 1
  EXPECT_EQ(p.inv[1], 0.0f);
  EXPECT_EQ(p.inv[3], 0.0f);
  // Colour and normalisation.
  EXPECT_FLOAT_EQ(p.mul[0], 1.0f / 255);
  EXPECT_EQ(p.add[0], 0.0f);
  EXPECT_EQ(p.pad_out[1], 114.0f * p.mul[1] + p.add[1]);
  EXPECT_FLOAT_EQ(p.y_gain, 255.0f / 219);
  EXPECT_FLOAT_EQ(p.rv, 1.402f);
  EXPECT_FLOAT_EQ(p.bu, 1.772f);
  EXPECT_EQ(tensor_bytes(p), size_t(640) * 640 * 3 * 4);
  c.dtype = DType::Float16;
  ASSERT_TRUE(make_tensorize_plan(c, &p).ok());
  EXPECT_EQ(tensor_bytes(p), size_t(640) * 640 * 3 * 2);
  // Top-left.
  c.align = Align::TopLeft;
  ASSERT_TRUE(make_tensorize_plan(c, &p).ok());
  EXPECT_EQ(p.active_y0, 0);
  EXPECT_EQ(p.active_y1, 360);
}

TEST(TensorizePlan, ChannelMaps) {
  TensorizeConfig c = base_config(PixelFormat::BGRA, 10, 10, 8, 8);
  c.mean[0] = 0.485;
  c.mean[1] = 0.456;
  c.mean[2] = 0.406;
  c.std[0] = 0.229;
  c.std[1] = 0.224;
  c.std[2] = 0.225;
  TensorizePlan p;
  ASSERT_TRUE(make_tensorize_plan(c, &p).ok());
  EXPECT_EQ(p.src_channel_offset[0], 2);
  EXPECT_EQ(p.src_channel_offset[2], 0);
  EXPECT_EQ(p.src_bytes_per_pixel, 4);
  EXPECT_EQ(p.out_channel_source[0], 0);
  EXPECT_FLOAT_EQ(p.mul[2], float(1.0 / 255 / 0.225));
  EXPECT_FLOAT_EQ(p.add[0], float(-0.485 / 0.229));
  c.channel_order = ChannelOrder::BGR;
  c.format = PixelFormat::RGB;
  ASSERT_TRUE(make_tensorize_plan(c, &p).ok());
  EXPECT_EQ(p.out_channel_source[0], 2);
  EXPECT_EQ(p.out_channel_source[2], 0);
  EXPECT_EQ(p.src_channel_offset[0], 0);
  EXPECT_EQ(p.src_bytes_per_pixel, 3);
}

TEST(TensorizePlan, UltralyticsSplitsOddPadding) {
  // 640x427 -> 640x640: r = 1, new_unpad = 640x427, dh = 106.5, top = round(106.4) = 106,
  // bottom = round(106.6) = 107.
  TensorizeConfig c = base_config(PixelFormat::BGR, 640, 427, 640, 640);
  c.mode = ResizeMode::Ultralytics;
  TensorizePlan p;
  ASSERT_TRUE(make_tensorize_plan(c, &p).ok());
  EXPECT_EQ(p.active_y0, 106);
  EXPECT_EQ(p.active_y1, 533);
  EXPECT_EQ(p.active_x0, 0);
  EXPECT_EQ(p.active_x1, 640);
  EXPECT_EQ(p.inv[0], 1.0f);
  EXPECT_EQ(p.inv[5], -106.0f);
  EXPECT_EQ(p.transform.active[1], 106.0);
  // The plain letterbox centres the same image at 106.5 (inv[5] = -106.5); the centre of pixel
  // 106 lies exactly on the edge and counts as inside (active.y <= y + 0.5).
  c.mode = ResizeMode::Letterbox;
  ASSERT_TRUE(make_tensorize_plan(c, &p).ok());
  EXPECT_EQ(p.transform.active[1], 106.5);
  EXPECT_EQ(p.inv[5], -106.5f);
  EXPECT_EQ(p.active_y0, 106);
  EXPECT_EQ(p.active_y1, 533);
  // Shifted by a hair, pixel 106 drops out.
  c.src_height = 426;
  ASSERT_TRUE(make_tensorize_plan(c, &p).ok());
  EXPECT_EQ(p.active_y0, 107);
  EXPECT_EQ(p.active_y1, 533);
  // 333x201 -> 640x640: r = 640/333, new_unpad = (640, round(386.31) = 386), dh = 127, top = 127.
  c = base_config(PixelFormat::BGR, 333, 201, 640, 640);
  c.mode = ResizeMode::Ultralytics;
  ASSERT_TRUE(make_tensorize_plan(c, &p).ok());
  EXPECT_EQ(p.active_y0, 127);
  EXPECT_EQ(p.active_y1, 127 + 386);
  EXPECT_DOUBLE_EQ(p.transform.src_to_dst[4], 386.0 / 201);
  c.align = Align::TopLeft;
  ASSERT_TRUE(make_tensorize_plan(c, &p).ok());
  EXPECT_EQ(p.active_y0, 0);
  EXPECT_EQ(p.active_y1, 386);
}

TEST(TensorizePlan, CropAndStretchCoverTheTensor) {
  for (ResizeMode m : {ResizeMode::Crop, ResizeMode::Stretch}) {
    for (Align a : {Align::Center, Align::TopLeft}) {
      TensorizeConfig c = base_config(PixelFormat::BGR, 333, 201, 64, 48);
      c.mode = m;
      c.align = a;
      TensorizePlan p;
      ASSERT_TRUE(make_tensorize_plan(c, &p).ok());
      EXPECT_EQ(p.active_x0, 0);
      EXPECT_EQ(p.active_y0, 0);
      EXPECT_EQ(p.active_x1, 64);
      EXPECT_EQ(p.active_y1, 48);
    }
  }
  // Crop centre: s = max(64/333, 48/201) = 48/201; the source x centre maps to the tensor centre.
  TensorizeConfig c = base_config(PixelFormat::BGR, 333, 201, 64, 48);
  c.mode = ResizeMode::Crop;
  TensorizePlan p;
  ASSERT_TRUE(make_tensorize_plan(c, &p).ok());
  const double* m = p.transform.src_to_dst;
  EXPECT_NEAR(m[0] * 166.0 + m[2], 31.5, 1e-9);
  EXPECT_NEAR(m[4] * 100.0 + m[5], 23.5, 1e-9);
}

TEST(TensorizePlan, RoiResolution) {
  TensorizeConfig c = base_config(PixelFormat::I420, 333, 201, 64, 64);
  TensorizePlan p;
  ASSERT_TRUE(make_tensorize_plan(c, &p).ok());
  EXPECT_EQ(p.roi.w, 333);
  EXPECT_EQ(p.roi.h, 201);
  c.roi = {10, 20, 30, 40};
  c.mode = ResizeMode::Stretch;
  ASSERT_TRUE(make_tensorize_plan(c, &p).ok());
  EXPECT_EQ(p.roi.x, 10);
  EXPECT_EQ(p.roi.h, 40);
  // Source pixel centre 10 (first ROI column) maps to tensor position (0.5 * 64/30) - 0.5.
  EXPECT_NEAR(p.transform.src_to_dst[0] * 10 + p.transform.src_to_dst[2], 0.5 * 64 / 30 - 0.5, 1e-12);
}

TEST(TensorizePlan, BoxesRoundTripToTheFrame) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  for (ResizeMode m : {ResizeMode::Letterbox, ResizeMode::Stretch, ResizeMode::Crop, ResizeMode::Ultralytics}) {
    for (Align a : {Align::Center, Align::TopLeft}) {
      TensorizeConfig c = base_config(PixelFormat::NV12, 1920, 1080, 640, 384);
      c.mode = m;
      c.align = a;
      c.roi = {100, 50, 1501, 999};
      TensorizePlan p;
      ASSERT_TRUE(make_tensorize_plan(c, &p).ok());
      const TensorTransform& t = p.transform;
      // dst_to_src is the inverse of src_to_dst.
      const double* f = t.src_to_dst;
      const double* b = t.dst_to_src;
      EXPECT_NEAR(f[0] * b[0], 1.0, 1e-12);
      EXPECT_NEAR(f[0] * b[2] + f[2], 0.0, 1e-9);
      EXPECT_NEAR(f[4] * b[5] + f[5], 0.0, 1e-9);
      for (int k = 0; k < 50; ++k) {
        // A box inside the part of the ROI that is visible in the tensor, in frame coordinates.
        double vis[4];
        const double whole[4] = {0, 0, 640, 384};
        tensor_box_to_frame(t, whole, vis);
        const double x1 = vis[0] + u(rng) * (vis[2] - vis[0]) * 0.5, y1 = vis[1] + u(rng) * (vis[3] - vis[1]) * 0.5;
        const double x2 = x1 + u(rng) * (vis[2] - x1), y2 = y1 + u(rng) * (vis[3] - y1);
        // Frame -> tensor with src_to_dst (continuous coordinates: pixel i covers [i, i + 1)).
        const double tb[4] = {f[0] * (x1 - 0.5) + f[2] + 0.5, f[4] * (y1 - 0.5) + f[5] + 0.5,
                              f[0] * (x2 - 0.5) + f[2] + 0.5, f[4] * (y2 - 0.5) + f[5] + 0.5};
        double back[4];
        tensor_box_to_frame(t, tb, back);
        EXPECT_NEAR(back[0], x1, 1e-9);
        EXPECT_NEAR(back[1], y1, 1e-9);
        EXPECT_NEAR(back[2], x2, 1e-9);
        EXPECT_NEAR(back[3], y2, 1e-9);
      }
      // The active rectangle maps back onto the ROI (for crop: the visible part of it).
      const double act[4] = {t.active[0], t.active[1], t.active[0] + t.active[2], t.active[1] + t.active[3]};
      double r[4];
      tensor_box_to_frame(t, act, r);
      if (m != ResizeMode::Crop) {
        EXPECT_NEAR(r[0], 100, 1e-9);
        EXPECT_NEAR(r[1], 50, 1e-9);
        EXPECT_NEAR(r[2], 1601, 1e-9);
        EXPECT_NEAR(r[3], 1049, 1e-9);
      } else {
        EXPECT_GE(r[0], 100 - 1e-9);
        EXPECT_LE(r[2], 1601 + 1e-9);
        EXPECT_GE(r[1], 50 - 1e-9);
        EXPECT_LE(r[3], 1049 + 1e-9);
      }
    }
  }
  // Ultralytics 1920x1080 -> 640x640: a box (x1, y1, x2, y2) = (10, 150, 20, 160) in the tensor is
  // (30, 30, 60, 60) in the frame (scale_boxes: subtract the padding, divide by the gain).
  TensorizeConfig c = base_config(PixelFormat::NV12, 1920, 1080, 640, 640);
  c.mode = ResizeMode::Ultralytics;
  TensorizePlan p;
  ASSERT_TRUE(make_tensorize_plan(c, &p).ok());
  const double in[4] = {10, 150, 20, 160};
  double out[4];
  tensor_box_to_frame(p.transform, in, out);
  EXPECT_NEAR(out[0], 30, 1e-9);
  EXPECT_NEAR(out[1], 30, 1e-9);
  EXPECT_NEAR(out[2], 60, 1e-9);
  EXPECT_NEAR(out[3], 60, 1e-9);
  // Clipping: a box reaching into the padding is clipped to the frame; corners may come swapped.
  const double pad_box[4] = {700, 300, -5, 100};
  tensor_box_to_frame(p.transform, pad_box, out);
  EXPECT_EQ(out[0], 0.0);
  EXPECT_EQ(out[1], 0.0);
  EXPECT_EQ(out[2], 1920.0);
  EXPECT_NEAR(out[3], (300 - 140) * 3.0, 1e-9);
  const double below[4] = {0, 600, 640, 640};
  tensor_box_to_frame(p.transform, below, out);
  EXPECT_EQ(out[1], 1080.0);
  EXPECT_EQ(out[3], 1080.0);
}

TEST(TensorizePlan, ResizeModeNames) {
  EXPECT_STREQ(resize_mode_name(ResizeMode::Letterbox), "letterbox");
  EXPECT_STREQ(resize_mode_name(ResizeMode::Stretch), "stretch");
  EXPECT_STREQ(resize_mode_name(ResizeMode::Crop), "crop");
  EXPECT_STREQ(resize_mode_name(ResizeMode::Ultralytics), "ultralytics");
  EXPECT_STREQ(resize_mode_name(static_cast<ResizeMode>(99)), "unknown");
}

// ---- fp16 --------------------------------------------------------------------------------------

TEST(Half, KnownBitPatterns) {
  struct {
    float f;
    uint16_t h;
  } cases[] = {
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {1.0f, 0x3C00},
      {-2.0f, 0xC000},
      {0.5f, 0x3800},
      {0.1f, 0x2E66},
      {1.0f / 3, 0x3555},
      {65504.0f, 0x7BFF},
      {65519.99f, 0x7BFF},
      {65520.0f, 0x7C00},  // tie between 65504 and 65536 (odd) -> even -> infinity
      {1e6f, 0x7C00},
      {-1e6f, 0xFC00},
      {std::numeric_limits<float>::infinity(), 0x7C00},
      {-std::numeric_limits<float>::infinity(), 0xFC00},
      {std::ldexp(1.0f, -14), 0x0400},  // smallest normal
      {std::ldexp(1.0f, -24), 0x0001},  // smallest subnormal
      {std::ldexp(1.0f, -25), 0x0000},  // tie -> even (0)
      {std::ldexp(1.5f, -25), 0x0001},
      {std::ldexp(3.0f, -25), 0x0002},  // 1.5 units: tie -> even (2)
      {std::ldexp(5.0f, -25), 0x0002},  // 2.5 units: tie -> even (2)
      {std::ldexp(1023.0f, -24), 0x03FF},
      {std::ldexp(1023.5f, -24), 0x0400},  // rounds up into the normals
      {-std::ldexp(1.0f, -24), 0x8001},
      {1.0f + std::ldexp(1.0f, -11), 0x3C00},      // tie -> even
      {1.0f + 3 * std::ldexp(1.0f, -11), 0x3C02},  // tie -> even (up)
      {1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20), 0x3C01},
      {std::ldexp(1.0f, -30), 0x0000},
      {2.0f / 255, 0x2004},
      {-2.1179039f, 0xC03C},  // (0 - 0.485) / 0.229
  };
  for (const auto& c : cases) {
    EXPECT_EQ(float_to_half_bits(c.f), c.h) << c.f;
    EXPECT_EQ(tzref::ref_half_bits(c.f), c.h) << "reference: " << c.f;
  }
  const uint16_t nan_bits = float_to_half_bits(std::nanf(""));
  EXPECT_EQ(nan_bits & 0x7C00, 0x7C00);
  EXPECT_NE(nan_bits & 0x03FF, 0);
  EXPECT_EQ(half_bits_to_float(0x3C00), 1.0f);
  EXPECT_EQ(half_bits_to_float(0xC000), -2.0f);
  EXPECT_EQ(half_bits_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_bits_to_float(0x03FF), std::ldexp(1023.0f, -24));
  EXPECT_EQ(half_bits_to_float(0x0400), std::ldexp(1.0f, -14));
  EXPECT_EQ(half_bits_to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(half_bits_to_float(0x7C00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(half_bits_to_float(0xFC00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(half_bits_to_float(0x7E00)));
  EXPECT_TRUE(std::signbit(half_bits_to_float(0x8000)));
}

TEST(Half, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = half_bits_to_float(uint16_t(h));
    if ((h & 0x7C00) == 0x7C00 && (h & 0x3FF)) {
      ASSERT_TRUE(std::isnan(f)) << h;
      continue;
    }
    ASSERT_EQ(float_to_half_bits(f), h) << std::hex << h;
    // Exact value: (-1)^s 2^(e-15) (1 + m/1024), or 2^-24 m for subnormals.
    const int e = (h >> 10) & 0x1F, m = h & 0x3FF;
    const double v = e == 0 ? std::ldexp(double(m), -24) : (e == 31 ? INFINITY : std::ldexp(1.0 + m / 1024.0, e - 15));
    ASSERT_EQ(double(f), (h & 0x8000) ? -v : v) << std::hex << h;
  }
}

TEST(Half, RandomFloatsMatchIndependentRounding) {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<uint32_t> bits;
  std::uniform_real_distribution<float> small(-70000.0f, 70000.0f);
  for (int i = 0; i < 2000000; ++i) {
    float f;
    if (i % 2) {
      // Exponents around the half range, random mantissas (covers subnormals and overflow).
      uint32_t b = bits(rng);
      b = (b & 0x807FFFFFu) | ((100u + (b >> 23) % 60u) << 23);
      std::memcpy(&f, &b, 4);
    } else {
      f = small(rng);
    }
    ASSERT_EQ(float_to_half_bits(f), tzref::ref_half_bits(f)) << f;
  }
  // Exact halfway points between every pair of neighbouring positive halves.
  for (uint32_t h = 0; h < 0x7BFF; ++h) {
    const double a = half_bits_to_float(uint16_t(h)), b = half_bits_to_float(uint16_t(h + 1));
    const float mid = float((a + b) / 2);  // exact in float
    ASSERT_EQ(double(mid), (a + b) / 2);
    const uint16_t expect = (h & 1) ? uint16_t(h + 1) : uint16_t(h);
    ASSERT_EQ(float_to_half_bits(mid), expect) << std::hex << h;
    ASSERT_EQ(float_to_half_bits(std::nextafter(mid, 0.0f)), h);
    ASSERT_EQ(float_to_half_bits(std::nextafter(mid, 1e9f)), h + 1);
  }
}

// ---- check_source ------------------------------------------------------------------------------

// A plan for a 33x21 frame of f (-> 16x16) and such a frame (rows padded by pad, planes gap apart).
void plan_and_image(PixelFormat f, int pad, int gap, TensorizePlan* plan, HostImage* im) {
  ASSERT_TRUE(make_tensorize_plan(base_config(f, 33, 21, 16, 16), plan).ok());
  *im = tztest::make_image(f, 33, 21, pad, gap);
  EXPECT_TRUE(check_source(*plan, im->view).ok());
}

TEST(CheckSource, RejectsMismatches) {
  TensorizePlan plan;
  HostImage im;
  plan_and_image(PixelFormat::NV12, 3, 5, &plan, &im);
  ImageView v = im.view;
  v.format = PixelFormat::I420;
  EXPECT_EQ(check_source(plan, v).message(), "source format I420 does not match the plan's NV12");
  v = im.view;
  v.width = 34;
  EXPECT_EQ(check_source(plan, v).message(), "source size 34x21 does not match the plan's 33x21");
  v = im.view;
  v.planes[1].data = nullptr;
  EXPECT_EQ(check_source(plan, v).message(), "source plane 1 is null");
  v = im.view;
  v.planes[1].stride = 33;  // chroma row of an odd-width NV12 frame is 2 * 17 = 34 bytes
  EXPECT_EQ(check_source(plan, v).message(), "source plane 1 stride 33 is smaller than its row (34 bytes)");
  v = im.view;
  v.planes[0].stride = 0;
  EXPECT_EQ(check_source(plan, v).message(), "source plane 0 stride 0 is smaller than its row (33 bytes)");
  std::vector<float> out(tensor_elements(plan));
  EXPECT_FALSE(tensorize_cpu(plan, v, out.data()).ok());
  EXPECT_FALSE(tensorize_cpu(plan, im.view, nullptr).ok());
  TensorizePlan zero{};
  EXPECT_FALSE(tensorize_cpu(zero, im.view, out.data()).ok());
}

// 16-bit samples are read whole (the GPU faults on a misaligned one): odd planes and strides
// are refused with the reason, on both paths (check_source runs first on each).
TEST(CheckSource, RejectsMisalignedSixteenBitPlanes) {
  TensorizePlan plan;
  HostImage im;
  plan_and_image(PixelFormat::P010_10LE, 4, 6, &plan, &im);
  ImageView v = im.view;
  v.planes[1].stride += 1;
  EXPECT_EQ(check_source(plan, v).message(), "source plane 1 of P010_10LE is not 2-byte aligned (address or stride " +
                                                 std::to_string(v.planes[1].stride) + ")");
  v = im.view;
  v.planes[0].data += 1;
  EXPECT_FALSE(check_source(plan, v).ok());
  std::vector<float> out(tensor_elements(plan));
  EXPECT_EQ(tensorize_cpu(plan, v, out.data()).message(), check_source(plan, v).message());
}

// ---- CPU path vs the independent reference ----------------------------------------------------

TEST(TensorizeCpu, PhotosEveryFormatLetterbox640) {
  std::mt19937 rng(1);
  Excess ex;
  for (const char* name : {"baboon.jpg", "fruits.jpg", "butterfly.jpg"}) {
    const cv::Mat bgr = load_photo(name);
    ASSERT_FALSE(bgr.empty());
    for (PixelFormat f : kAllFormats) {
      HostImage im = from_bgr(bgr, f, 13, 7, rng);
      TensorizeConfig c = base_config(f, bgr.cols, bgr.rows, 640, 640);
      EXPECT_TRUE(check_config(c, im.view, &ex)) << name;
    }
  }
  std::printf("worst excess over the reference range: %.3g grey levels; worst |out - exact|: %.3g\n", ex.worst_pixel,
              ex.worst_vs_value);
}

TEST(TensorizeCpu, PhotoEveryModeAlignInterpolation) {
  std::mt19937 rng(2);
  Excess ex;
  const cv::Mat bgr = load_photo("building.jpg");
  ASSERT_FALSE(bgr.empty());
  for (PixelFormat f : {PixelFormat::NV12, PixelFormat::BGR, PixelFormat::RGBA}) {
    HostImage im = from_bgr(bgr, f, 1, 3, rng);
    for (ResizeMode m : {ResizeMode::Letterbox, ResizeMode::Stretch, ResizeMode::Crop, ResizeMode::Ultralytics})
      for (Align a : {Align::Center, Align::TopLeft})
        for (Interpolation ip : {Interpolation::Bilinear, Interpolation::Nearest}) {
          TensorizeConfig c = base_config(f, bgr.cols, bgr.rows, 320, 256);
          c.mode = m;
          c.align = a;
          c.interpolation = ip;
          c.channel_order = ChannelOrder::BGR;
          c.mean[0] = 0.485;
          c.mean[1] = 0.456;
          c.mean[2] = 0.406;
          c.std[0] = 0.229;
          c.std[1] = 0.224;
          c.std[2] = 0.225;
          EXPECT_TRUE(check_config(c, im.view, &ex));
          // Upscaling an ROI.
          c.roi = {401, 97, 123, 77};
          c.dst_width = 333;
          c.dst_height = 180;
          EXPECT_TRUE(check_config(c, im.view, &ex));
        }
  }
  std::printf("worst excess over the reference range: %.3g grey levels; worst |out - exact|: %.3g\n", ex.worst_pixel,
              ex.worst_vs_value);
}

// Every format x mode x align x interpolation x dtype x layout, random images of odd sizes with
// padded rows and offset planes, random ROIs, channel orders, normalisation and YUV settings.
TEST(TensorizeCpu, EveryCombinationRandomImages) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> any(0, 1 << 30);
  Excess ex;
  const int sizes[][2] = {{37, 23}, {1, 1}, {2, 3}, {53, 1}, {1, 29}, {64, 48}, {31, 64}};
  const int tensors[][2] = {{29, 31}, {16, 16}, {40, 24}, {1, 1}, {7, 33}};
  const int n = tztest::for_each_combination([&](TensorizeConfig c, int i) {
    const auto& sz = sizes[i % 7];
    const auto& ts = tensors[(i / 7) % 5];
    HostImage im = tztest::make_image(c.format, sz[0], sz[1], any(rng) % 9, any(rng) % 11);
    tztest::fill_random(im, rng);
    tztest::set_sizes(c, sz[0], sz[1], ts[0], ts[1]);
    tztest::randomize_settings(c, rng);
    EXPECT_TRUE(check_config(c, im.view, &ex));
  });
  std::printf("%d configurations; worst excess over the reference range: %.3g grey levels; worst |out - exact|: %.3g\n",
              n, ex.worst_pixel, ex.worst_vs_value);
}

TEST(TensorizeCpu, OddSizesEveryFormat) {
  std::mt19937 rng(4);
  Excess ex;
  const int sizes[][2] = {{333, 201}, {641, 479}, {1, 1}, {3, 1}, {1, 3}};
  for (const auto& sz : sizes)
    for (PixelFormat f : kAllFormats)
      for (ResizeMode m : {ResizeMode::Letterbox, ResizeMode::Crop, ResizeMode::Ultralytics}) {
        HostImage im = tztest::make_image(f, sz[0], sz[1], 5, 3);
        tztest::fill_random(im, rng);
        TensorizeConfig c = base_config(f, sz[0], sz[1], 97, 65);
        c.mode = m;
        EXPECT_TRUE(check_config(c, im.view, &ex));
      }
  std::printf("worst excess over the reference range: %.3g grey levels; worst |out - exact|: %.3g\n", ex.worst_pixel,
              ex.worst_vs_value);
}

// Chroma siting: every YUV format, co-sited or centred on each axis, against the reference (which
// places the chroma samples from its own definition); random odd-size images, ROIs and settings.
TEST(TensorizeCpu, ChromaSitingEveryYuvFormat) {
  std::mt19937 rng(41);
  std::uniform_int_distribution<int> any(0, 1 << 30);
  Excess ex;
  int n = 0;
  for (PixelFormat f : kAllFormats) {
    if (!is_yuv(f)) continue;
    for (int site = 0; site < 4; ++site)
      for (Interpolation ip : {Interpolation::Bilinear, Interpolation::Nearest})
        for (const auto& sz : {std::array<int, 4>{37, 23, 29, 31}, std::array<int, 4>{64, 48, 97, 65},
                               std::array<int, 4>{161, 97, 40, 24}}) {
          HostImage im = tztest::make_image(f, sz[0], sz[1], any(rng) % 9, any(rng) % 11);
          tztest::fill_random(im, rng);
          TensorizeConfig c = base_config(f, sz[0], sz[1], sz[2], sz[3]);
          c.interpolation = ip;
          c.mode = static_cast<ResizeMode>(any(rng) % 4);
          tztest::randomize_settings(c, rng);
          c.chroma_h_cosited = site & 1;
          c.chroma_v_cosited = site & 2;
          EXPECT_TRUE(check_config(c, im.view, &ex)) << "siting " << site;
          ++n;
        }
  }
  std::printf("%d configurations; worst excess over the reference range: %.3g grey levels\n", n, ex.worst_pixel);
}

// MPEG-2 siting (H.264 / H.265 streams) on photographs, 1080p-like downscale and 1:1: the
// co-sited result differs from the centre-sited one (by up to a few grey levels on edges) and
// each matches the reference.
TEST(TensorizeCpu, Mpeg2SitingOnPhotos) {
  std::mt19937 rng(42);
  Excess ex;
  const cv::Mat bgr = load_photo("fruits.jpg");
  ASSERT_FALSE(bgr.empty());
  for (PixelFormat f : {PixelFormat::NV12, PixelFormat::I420, PixelFormat::YUY2, PixelFormat::P010_10LE}) {
    HostImage im = from_bgr(bgr, f, 2, 4, rng);
    for (int side : {640, 0}) {
      TensorizeConfig c = base_config(f, bgr.cols, bgr.rows, side ? side : bgr.cols, side ? side : bgr.rows);
      c.chroma_h_cosited = true;
      EXPECT_TRUE(check_config(c, im.view, &ex)) << pixel_format_name(f);
      TensorizePlan cosited, centred;
      ASSERT_TRUE(make_tensorize_plan(c, &cosited).ok());
      c.chroma_h_cosited = false;
      ASSERT_TRUE(make_tensorize_plan(c, &centred).ok());
      std::vector<float> a, b;
      ASSERT_TRUE(run_cpu(cosited, im.view, &a));
      ASSERT_TRUE(run_cpu(centred, im.view, &b));
      double worst = 0;
      for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, double(std::fabs(a[i] - b[i])) * 255);
      EXPECT_GT(worst, 1.0) << pixel_format_name(f) << ": siting must move chroma";
    }
  }
  std::printf("worst excess over the reference range: %.3g grey levels\n", ex.worst_pixel);
}

TEST(TensorizeCpu, PaddingBytesNeverRead) {
  std::mt19937 rng(5);
  for (PixelFormat f : kAllFormats) {
    HostImage a = tztest::make_image(f, 45, 31, 7, 9, 0x00);
    tztest::fill_random(a, rng);
    HostImage b = tztest::make_image(f, 45, 31, 7, 9, 0xFF);
    // Same visible bytes, different padding.
    for (int i = 0; i < plane_count(f); ++i) {
      int rb, rows;
      tztest::plane_geometry(f, 45, 31, i, &rb, &rows);
      for (int y = 0; y < rows; ++y) std::memcpy(b.plane(i) + y * b.stride(i), a.plane(i) + y * a.stride(i), rb);
    }
    TensorizeConfig c = base_config(f, 45, 31, 50, 50);
    c.mode = ResizeMode::Stretch;
    TensorizePlan p;
    ASSERT_TRUE(make_tensorize_plan(c, &p).ok());
    std::vector<float> oa, ob;
    ASSERT_TRUE(run_cpu(p, a.view, &oa));
    ASSERT_TRUE(run_cpu(p, b.view, &ob));
    EXPECT_EQ(oa, ob) << pixel_format_name(f);
  }
}

TEST(TensorizeCpu, LargeFrameDeterministic) {
  std::mt19937 rng(6);
  HostImage im = tztest::make_image(PixelFormat::NV12, 1920, 1080);
  tztest::fill_random(im, rng);
  TensorizeConfig c = base_config(PixelFormat::NV12, 1920, 1080, 640, 640);
  TensorizePlan p;
  ASSERT_TRUE(make_tensorize_plan(c, &p).ok());
  std::vector<float> a, b;
  std::vector<uint8_t> ra, rb;
  ASSERT_TRUE(run_cpu(p, im.view, &a, &ra));
  ASSERT_TRUE(run_cpu(p, im.view, &b, &rb));
  EXPECT_EQ(ra, rb);
  EXPECT_TRUE(matches_reference(c, im.view, a));
  // Pad rows hold exactly pad_out.
  for (int x = 0; x < 640; ++x) {
    EXPECT_EQ(a[139 * 640 + x], p.pad_out[0]);
    EXPECT_EQ(a[2 * 640 * 640 + 500 * 640 + x], p.pad_out[2]);
  }
}

// ---- CPU path vs OpenCV ------------------------------------------------------------------------

// Pixel-space output (scale 1, mean 0, std 1) as an HxWx3 double image in RGB order.
std::vector<double> run_pixels(TensorizeConfig c, const ImageView& src) {
  c.scale = 1;
  for (int k = 0; k < 3; ++k) {
    c.mean[k] = 0;
    c.std[k] = 1;
  }
  c.layout = Layout::NHWC;
  c.dtype = DType::Float32;
  c.channel_order = ChannelOrder::RGB;
  TensorizePlan p;
  EXPECT_TRUE(make_tensorize_plan(c, &p).ok());
  std::vector<float> out;
  EXPECT_TRUE(run_cpu(p, src, &out));
  return std::vector<double>(out.begin(), out.end());
}

// max |ours - cv| over the pixels accepted by `use` (RGB vs a BGR Mat); counts compared pixels.
double max_diff_vs_bgr(const std::vector<double>& ours, const cv::Mat& bgr, std::function<bool(int, int)> use,
                       size_t* compared = nullptr) {
  double worst = 0;
  size_t n = 0;
  for (int y = 0; y < bgr.rows; ++y)
    for (int x = 0; x < bgr.cols; ++x) {
      if (!use(x, y)) continue;
      ++n;
      const cv::Vec3b p = bgr.at<cv::Vec3b>(y, x);
      for (int k = 0; k < 3; ++k)
        worst = std::max(worst, std::fabs(ours[(size_t(y) * bgr.cols + x) * 3 + k] - p[2 - k]));
    }
  if (compared) *compared = n;
  return worst;
}

TEST(TensorizeVsOpenCV, LetterboxEqualsResizePlusBorder) {
  std::mt19937 rng(8);
  // (crop of the photo) -> tensor, chosen so that the letterbox offsets are whole pixels.
  struct Case {
    const char* photo;
    int w, h, tw, th;
  } cases[] = {{"baboon.jpg", 320, 240, 640, 640},      // 2x up, oy = 80
               {"baboon.jpg", 512, 384, 640, 640},      // 1.25x up, oy = 80
               {"fruits.jpg", 512, 256, 640, 640},      // 1.25x, oy = 160
               {"fruits.jpg", 500, 400, 250, 250},      // 0.5x down, oy = 25
               {"building.jpg", 864, 600, 288, 320},    // 1/3 down, oy = 60
               {"butterfly.jpg", 480, 352, 240, 240}};  // 0.5x, oy = 32
  for (const Case& cs : cases) {
    const cv::Mat photo = load_photo(cs.photo);
    ASSERT_FALSE(photo.empty());
    const cv::Mat src = photo(cv::Rect(0, 0, cs.w, cs.h)).clone();
    const double s = std::min(double(cs.tw) / cs.w, double(cs.th) / cs.h);
    const int nw = int(std::lround(cs.w * s)), nh = int(std::lround(cs.h * s));
    ASSERT_EQ(nw, cs.w * s);
    ASSERT_EQ(nh, cs.h * s);
    const int left = (cs.tw - nw) / 2, top = (cs.th - nh) / 2;
    ASSERT_EQ(2 * left, cs.tw - nw);
    ASSERT_EQ(2 * top, cs.th - nh);
    cv::Mat resized, expect;
    cv::resize(src, resized, cv::Size(nw, nh), 0, 0, cv::INTER_LINEAR);
    cv::copyMakeBorder(resized, expect, top, cs.th - nh - top, left, cs.tw - nw - left, cv::BORDER_CONSTANT,
                       cv::Scalar(114, 114, 114));
    for (PixelFormat f : {PixelFormat::BGR, PixelFormat::RGBx}) {
      HostImage im = from_bgr(src, f, 3, 1, rng);
      TensorizeConfig c = base_config(f, cs.w, cs.h, cs.tw, cs.th);
      const std::vector<double> ours = run_pixels(c, im.view);
      size_t n = 0;
      const double d = max_diff_vs_bgr(
          ours, expect, [](int, int) { return true; }, &n);
      // cv::resize works in 8-bit fixed point (11-bit weights, rounded result): within 1 level.
      EXPECT_LE(d, 1.0) << cs.photo << " " << cs.w << "x" << cs.h << " -> " << cs.tw << "x" << cs.th << " "
                        << pixel_format_name(f);
      EXPECT_EQ(n, size_t(cs.tw) * cs.th);
    }
  }
}

TEST(TensorizeVsOpenCV, WarpAffineInterior) {
  std::mt19937 rng(9);
  const cv::Mat photo = load_photo("fruits.jpg");
  ASSERT_FALSE(photo.empty());
  struct Case {
    ResizeMode mode;
    Rect roi;
    int tw, th;
  } cases[] = {{ResizeMode::Stretch, {37, 51, 100, 80}, 200, 320},    // sx = 2, sy = 4
               {ResizeMode::Crop, {101, 33, 128, 96}, 64, 64},        // s = 2/3 -> positions are thirds
               {ResizeMode::Letterbox, {0, 0, 512, 480}, 256, 256},   // s = 0.5, oy = 8
               {ResizeMode::Stretch, {250, 100, 64, 64}, 512, 256}};  // 8x, 4x
  for (const Case& cs : cases) {
    TensorizeConfig c = base_config(PixelFormat::BGR, photo.cols, photo.rows, cs.tw, cs.th);
    c.mode = cs.mode;
    c.roi = cs.roi;
    TensorizePlan p;
    ASSERT_TRUE(make_tensorize_plan(c, &p).ok());
    HostImage im = from_bgr(photo, PixelFormat::BGR, 0, 0, rng);
    const std::vector<double> ours = run_pixels(c, im.view);
    const double* m = p.transform.src_to_dst;
    cv::Mat M = (cv::Mat_<double>(2, 3) << m[0], m[1], m[2], m[3], m[4], m[5]);
    cv::Mat expect;
    cv::warpAffine(photo, expect, M, cv::Size(cs.tw, cs.th), cv::INTER_LINEAR, cv::BORDER_REPLICATE);
    const double* b = p.transform.dst_to_src;
    // Interior: both bilinear taps inside the ROI (no clamping) and inside the active area.
    auto interior = [&](int x, int y) {
      const double xs = b[0] * x + b[2], ys = b[4] * y + b[5];
      return x >= p.active_x0 && x < p.active_x1 && y >= p.active_y0 && y < p.active_y1 && xs >= cs.roi.x &&
             xs <= cs.roi.x + cs.roi.w - 1 && ys >= cs.roi.y && ys <= cs.roi.y + cs.roi.h - 1;
    };
    size_t n = 0;
    const double d = max_diff_vs_bgr(ours, expect, interior, &n);
    // warpAffine quantises positions to 1/32 pixel (exact for these scales) and weights to 15
    // bits, then rounds: within 1 level.
    EXPECT_LE(d, 1.0) << resize_mode_name(cs.mode);
    EXPECT_GT(n, size_t(cs.tw) * cs.th / 2);
  }
}

// YUV -> RGB at 1:1 against cvtColor (BT.601 limited range, the matrix OpenCV uses).
TEST(TensorizeVsOpenCV, YuvEqualsCvtColor) {
  std::mt19937 rng(10);
  // OpenCV clamps Y - 16 at 0 before the matrix (the documented transform does not), so luma
  // stays >= 16 here; chroma is unrestricted in the random case.
  std::uniform_int_distribution<int> byte(0, 255), luma(16, 235), chroma(16, 240), luma16(16, 255);
  const int w = 96, h = 64, cw = w / 2, ch = h / 2;
  for (bool blocky : {true, false}) {
    // Y random; chroma either random or constant over 2x2 chroma (4x4 luma) blocks.
    std::vector<uint8_t> Y(w * h), U(cw * ch), V(cw * ch);
    for (auto& v : Y) v = uint8_t(blocky ? luma(rng) : luma16(rng));
    for (int y = 0; y < ch; ++y)
      for (int x = 0; x < cw; ++x) {
        if (blocky && (x % 2 || y % 2)) {
          U[y * cw + x] = U[(y / 2 * 2) * cw + x / 2 * 2];
          V[y * cw + x] = V[(y / 2 * 2) * cw + x / 2 * 2];
        } else {
          U[y * cw + x] = uint8_t(blocky ? chroma(rng) : byte(rng));
          V[y * cw + x] = uint8_t(blocky ? chroma(rng) : byte(rng));
        }
      }
    cv::Mat i420(h * 3 / 2, w, CV_8UC1);
    std::memcpy(i420.data, Y.data(), Y.size());
    std::memcpy(i420.data + Y.size(), U.data(), U.size());
    std::memcpy(i420.data + Y.size() + U.size(), V.data(), V.size());
    cv::Mat uv(ch, cw, CV_8UC2), ymat(h, w, CV_8UC1, Y.data());
    for (int y = 0; y < ch; ++y)
      for (int x = 0; x < cw; ++x) uv.at<cv::Vec2b>(y, x) = cv::Vec2b(U[y * cw + x], V[y * cw + x]);
    cv::Mat bgr_i420, bgr_nv12;
    cv::cvtColor(i420, bgr_i420, cv::COLOR_YUV2BGR_I420);
    cv::cvtColorTwoPlane(ymat, uv, bgr_nv12, cv::COLOR_YUV2BGR_NV12);
    ASSERT_EQ(cv::norm(bgr_i420, bgr_nv12, cv::NORM_INF), 0.0);

    // OpenCV's own conversion of each layout: NV21 from its VU plane, YUY2 / UYVY from their
    // packed bytes (put_yuv repeats each 4:2:0 chroma row for 4:2:2, so all equal bgr_i420 but
    // for the rows of 4:2:2 chroma OpenCV reads as they are).
    auto opencv_bgr = [&](PixelFormat f, HostImage& im) {
      cv::Mat out;
      if (f == PixelFormat::NV21) {
        cv::Mat vu(ch, cw, CV_8UC2);
        for (int y = 0; y < ch; ++y)
          for (int x = 0; x < cw; ++x) vu.at<cv::Vec2b>(y, x) = cv::Vec2b(V[y * cw + x], U[y * cw + x]);
        cv::cvtColorTwoPlane(ymat, vu, out, cv::COLOR_YUV2BGR_NV21);
      } else if (f == PixelFormat::YUY2 || f == PixelFormat::UYVY) {
        cv::Mat packed(h, w, CV_8UC2);
        for (int y = 0; y < h; ++y) std::memcpy(packed.ptr(y), im.plane(0) + y * im.stride(0), size_t(w) * 2);
        cv::cvtColor(packed, out, f == PixelFormat::YUY2 ? cv::COLOR_YUV2BGR_YUY2 : cv::COLOR_YUV2BGR_UYVY);
      } else {
        out = bgr_i420;
      }
      return out;
    };

    for (PixelFormat f :
         {PixelFormat::I420, PixelFormat::NV12, PixelFormat::NV21, PixelFormat::YUY2, PixelFormat::UYVY}) {
      HostImage im = tztest::make_image(f, w, h, 3, 5);
      tztest::put_yuv(im, f, Y.data(), w, U.data(), V.data(), w, h, cw, ch);
      const cv::Mat expected = opencv_bgr(f, im);
      ASSERT_EQ(cv::norm(expected, bgr_i420, cv::NORM_INF), 0.0) << pixel_format_name(f);
      TensorizeConfig c = base_config(f, w, h, w, h);
      c.mode = ResizeMode::Stretch;
      for (Interpolation ip : {Interpolation::Nearest, Interpolation::Bilinear}) {
        if (ip == Interpolation::Bilinear && !blocky) continue;  // interpolated chroma differs there
        c.interpolation = ip;
        const std::vector<double> ours = run_pixels(c, im.view);
        // Nearest at 1:1 takes chroma (x / 2, y / 2) like OpenCV: every pixel. Bilinear: pixels
        // whose chroma taps stay inside one constant block (x % 4 and y % 4 in {1, 2}).
        auto use = [&](int x, int y) {
          return ip == Interpolation::Nearest || ((x % 4 == 1 || x % 4 == 2) && (y % 4 == 1 || y % 4 == 2));
        };
        size_t n = 0;
        const double d = max_diff_vs_bgr(ours, expected, use, &n);
        // OpenCV's YUV->RGB is fixed point (rounded coefficients, rounded result): 1 level.
        EXPECT_LE(d, 1.0) << pixel_format_name(f) << (blocky ? " blocky" : " random") << " interp " << int(ip);
        EXPECT_GE(n, size_t(w) * h / 4);
      }
    }
  }
}

TEST(TensorizeVsOpenCV, UltralyticsEqualsResizePlusRoundedBorder) {
  std::mt19937 rng(11);
  const cv::Mat photo = load_photo("baboon.jpg");
  ASSERT_FALSE(photo.empty());
  struct Case {
    int w, h, tw, th;
  } cases[] = {{333, 201, 640, 640}, {505, 427, 640, 640}, {97, 160, 320, 320},  {401, 233, 320, 256},
               {505, 509, 640, 480}, {250, 499, 320, 320}, {505, 301, 505, 640}, {301, 505, 640, 505}};
  int odd_rows = 0, odd_cols = 0;
  for (const Case& cs : cases) {
    const cv::Mat src = photo(cv::Rect(7, 3, cs.w, cs.h)).clone();
    // LetterBox as in ultralytics/data/augment.py.
    const double r = std::min(double(cs.th) / cs.h, double(cs.tw) / cs.w);
    const int nw = int(tzref::py_round(cs.w * r)), nh = int(tzref::py_round(cs.h * r));
    const double dw = (cs.tw - nw) / 2.0, dh = (cs.th - nh) / 2.0;
    const int top = int(tzref::py_round(dh - 0.1)), bottom = int(tzref::py_round(dh + 0.1));
    const int left = int(tzref::py_round(dw - 0.1)), right = int(tzref::py_round(dw + 0.1));
    ASSERT_EQ(top + bottom + nh, cs.th);
    ASSERT_EQ(left + right + nw, cs.tw);
    odd_rows += top != bottom;
    odd_cols += left != right;
    cv::Mat resized, expect;
    if (nw != cs.w || nh != cs.h)
      cv::resize(src, resized, cv::Size(nw, nh), 0, 0, cv::INTER_LINEAR);
    else
      resized = src;
    cv::copyMakeBorder(resized, expect, top, bottom, left, right, cv::BORDER_CONSTANT, cv::Scalar(114, 114, 114));
    HostImage im = from_bgr(src, PixelFormat::BGR, 2, 0, rng);
    TensorizeConfig c = base_config(PixelFormat::BGR, cs.w, cs.h, cs.tw, cs.th);
    c.mode = ResizeMode::Ultralytics;
    const std::vector<double> ours = run_pixels(c, im.view);
    const double d = max_diff_vs_bgr(ours, expect, [](int, int) { return true; });
    EXPECT_LE(d, 1.0) << cs.w << "x" << cs.h << " -> " << cs.tw << "x" << cs.th;
    // The padding itself is exact.
    const double pd = max_diff_vs_bgr(
        ours, expect, [&](int x, int y) { return x < left || x >= left + nw || y < top || y >= top + nh; });
    EXPECT_EQ(pd, 0.0);
  }
  // The cases do exercise the round(d -+ 0.1) split on both axes.
  EXPECT_GE(odd_rows, 1);
  EXPECT_GE(odd_cols, 1);
}

// Nearest against cv::INTER_NEAREST_EXACT at scales without ties (both pick the closest centre),
// and the documented tie rule (higher index) where x_s + 0.5 is an exact integer. OpenCV 4.6
// resolves such exact ties (even downscale factors) towards the lower index instead.
TEST(TensorizeVsOpenCV, NearestEqualsInterNearestExact) {
  std::mt19937 rng(13);
  const cv::Mat photo = load_photo("baboon.jpg");
  ASSERT_FALSE(photo.empty());
  struct Case {
    int w, h, tw, th;
  } cases[] = {
      {510, 510, 170, 170}, {255, 120, 85, 40}, {128, 128, 512, 256}, {200, 300, 400, 100}, {512, 512, 1024, 1536}};
  for (PixelFormat f : {PixelFormat::BGR, PixelFormat::BGRA, PixelFormat::GRAY8})
    for (const Case& cs : cases) {
      const cv::Mat src = photo(cv::Rect(0, 0, cs.w, cs.h)).clone();
      cv::Mat expect;
      cv::resize(src, expect, cv::Size(cs.tw, cs.th), 0, 0, cv::INTER_NEAREST_EXACT);
      if (f == PixelFormat::GRAY8) {
        cv::Mat g;
        cv::cvtColor(expect, g, cv::COLOR_BGR2GRAY);
        cv::cvtColor(g, expect, cv::COLOR_GRAY2BGR);
      }
      HostImage im = from_bgr(src, f, 5, 0, rng);
      TensorizeConfig c = base_config(f, cs.w, cs.h, cs.tw, cs.th);
      c.mode = ResizeMode::Stretch;
      c.interpolation = Interpolation::Nearest;
      const std::vector<double> ours = run_pixels(c, im.view);
      EXPECT_EQ(max_diff_vs_bgr(ours, expect, [](int, int) { return true; }), 0.0)
          << pixel_format_name(f) << " " << cs.w << "x" << cs.h << " -> " << cs.tw << "x" << cs.th;
    }
  // Exact ties: 8 -> 4 (x_s = 2 x + 0.5) and 8 -> 2 (x_s = 4 x + 1.5) take the higher index.
  HostImage im = tztest::make_image(PixelFormat::GRAY8, 8, 8, 3, 0);
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 8; ++x) im.at_byte(0, y, x) = uint8_t(10 * x + 100 * (y % 2));
  for (int n : {4, 2}) {
    TensorizeConfig c = base_config(PixelFormat::GRAY8, 8, 8, n, n);
    c.mode = ResizeMode::Stretch;
    c.interpolation = Interpolation::Nearest;
    const std::vector<double> ours = run_pixels(c, im.view);
    const int step = 8 / n;
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        const int sx = step * x + step / 2, sy = step * y + step / 2;  // the higher of the two
        EXPECT_EQ(ours[(size_t(y) * n + x) * 3], 10 * sx + 100 * (sy % 2)) << n << " " << x << "," << y;
      }
  }
}

// Channel order and normalisation against OpenCV's own conversion of a photo.
TEST(TensorizeVsOpenCV, ChannelOrderAndNormalisation) {
  std::mt19937 rng(12);
  const cv::Mat photo = load_photo("fruits.jpg");
  ASSERT_FALSE(photo.empty());
  cv::Mat rgbf;
  cv::cvtColor(photo, rgbf, cv::COLOR_BGR2RGB);
  rgbf.convertTo(rgbf, CV_32FC3, 1.0 / 255);
  const double mean[3] = {0.485, 0.456, 0.406}, stdv[3] = {0.229, 0.224, 0.225};
  for (PixelFormat f : {PixelFormat::BGR, PixelFormat::RGB, PixelFormat::BGRA, PixelFormat::RGBx})
    for (ChannelOrder order : {ChannelOrder::RGB, ChannelOrder::BGR}) {
      HostImage im = from_bgr(photo, f, 0, 0, rng);
      TensorizeConfig c = base_config(f, photo.cols, photo.rows, photo.cols, photo.rows);
      c.mode = ResizeMode::Stretch;
      c.channel_order = order;
      for (int k = 0; k < 3; ++k) {
        c.mean[k] = mean[k];
        c.std[k] = stdv[k];
      }
      TensorizePlan p;
      ASSERT_TRUE(make_tensorize_plan(c, &p).ok());
      std::vector<float> out;
      ASSERT_TRUE(run_cpu(p, im.view, &out));
      double worst = 0;
      const size_t plane = size_t(photo.cols) * photo.rows;
      for (int y = 0; y < photo.rows; ++y)
        for (int x = 0; x < photo.cols; ++x) {
          const cv::Vec3f v = rgbf.at<cv::Vec3f>(y, x);
          for (int ch = 0; ch < 3; ++ch) {
            const int k = order == ChannelOrder::RGB ? ch : 2 - ch;  // colour component of channel ch
            const double expect = (v[k] - mean[ch]) / stdv[ch];
            worst = std::max(worst, std::fabs(out[ch * plane + size_t(y) * photo.cols + x] - expect));
          }
        }
      EXPECT_LT(worst, 2e-6) << pixel_format_name(f) << " order " << int(order);
    }
}

// Gray output of a photo at its own size (no resampling) against cv::cvtColor: float32 equals
// OpenCV's float RGB2GRAY, uint8 its 8-bit conversion within one level (OpenCV rounds a
// fixed-point sum; ours rounds the float luma to nearest even).
TEST(TensorizeVsOpenCV, GrayEqualsCvtColor) {
  std::mt19937 rng(13);
  const cv::Mat photo = load_photo("fruits.jpg");
  ASSERT_FALSE(photo.empty());
  cv::Mat gray8, grayf, photof;
  cv::cvtColor(photo, gray8, cv::COLOR_BGR2GRAY);
  photo.convertTo(photof, CV_32FC3);
  cv::cvtColor(photof, grayf, cv::COLOR_BGR2GRAY);
  for (PixelFormat f : {PixelFormat::BGR, PixelFormat::RGBA})
    for (DType d : {DType::Float32, DType::UInt8})
      for (Layout l : {Layout::NCHW, Layout::NHWC}) {
        HostImage im = from_bgr(photo, f, 3, 0, rng);
        TensorizeConfig c = base_config(f, photo.cols, photo.rows, photo.cols, photo.rows);
        c.mode = ResizeMode::Stretch;
        c.channels = 1;
        c.channel_order = ChannelOrder::BGR;  // ignored by gray
        c.layout = l;
        c.dtype = d;
        c.scale = 1;
        TensorizePlan p;
        ASSERT_TRUE(make_tensorize_plan(c, &p).ok());
        EXPECT_EQ(tensor_bytes(p), size_t(photo.cols) * photo.rows * dtype_bytes(d));
        std::vector<float> out;
        ASSERT_TRUE(run_cpu(p, im.view, &out));
        double worst = 0;
        size_t off_by_one = 0;
        for (int y = 0; y < photo.rows; ++y)
          for (int x = 0; x < photo.cols; ++x) {
            const double o = out[size_t(y) * photo.cols + x];
            const double diff =
                d == DType::Float32 ? std::fabs(o - grayf.at<float>(y, x)) : std::fabs(o - gray8.at<uint8_t>(y, x));
            worst = std::max(worst, diff);
            off_by_one += diff != 0;
          }
        const char* name = pixel_format_name(f);
        if (d == DType::Float32) {
          EXPECT_LT(worst, 1e-4) << name;
        } else {
          EXPECT_LE(worst, 1.0) << name;
          EXPECT_LT(off_by_one, size_t(photo.cols) * photo.rows / 100) << name;  // ties and fixed-point only
        }
      }
}

// Gray output of YUV sources is their Y: at full range and the source's size, exactly the Y plane
// that cv::cvtColor's YUV2GRAY returns; at limited range, Y expanded like the colour path.
TEST(TensorizeVsOpenCV, GrayOfYuvIsTheYPlane) {
  std::mt19937 rng(14);
  const int w = 38, h = 22;  // OpenCV's 4:2:0 conversions need even sizes (odd ones: the reference tests)
  for (PixelFormat f :
       {PixelFormat::NV12, PixelFormat::NV21, PixelFormat::I420, PixelFormat::YUY2, PixelFormat::UYVY}) {
    HostImage im = tztest::make_image(f, w, h, 5, 3);
    tztest::fill_random(im, rng);
    // The source as one contiguous buffer in OpenCV's layout for its YUV2GRAY conversion.
    const PixelFormatInfo& info = pixel_format_info(f);
    const bool packed = info.planes == 1;
    cv::Mat yuv(packed ? h : h + (h + 1) / 2, packed ? 2 * w : w, CV_8UC1, cv::Scalar(0));
    for (int y = 0; y < h; ++y)
      std::memcpy(yuv.ptr(y), im.view.planes[0].data + int64_t(y) * im.view.planes[0].stride, packed ? 2 * w : w);
    cv::Mat gray;
    const int code = f == PixelFormat::YUY2   ? cv::COLOR_YUV2GRAY_YUY2
                     : f == PixelFormat::UYVY ? cv::COLOR_YUV2GRAY_UYVY
                                              : cv::COLOR_YUV2GRAY_420;
    if (packed) {
      cv::Mat two(h, w, CV_8UC2, yuv.data);
      cv::cvtColor(two, gray, code);
    } else {
      cv::cvtColor(cv::Mat(h * 3 / 2, w, CV_8UC1, yuv.data), gray, code);
    }
    for (bool full : {true, false}) {
      TensorizeConfig c = base_config(f, w, h, w, h);
      c.mode = ResizeMode::Stretch;
      c.channels = 1;
      c.dtype = DType::UInt8;
      c.scale = 1;
      c.yuv_full_range = full;
      TensorizePlan p;
      ASSERT_TRUE(make_tensorize_plan(c, &p).ok());
      std::vector<float> out;
      ASSERT_TRUE(run_cpu(p, im.view, &out));
      int bad = 0;
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          const double Y = gray.at<uint8_t>(y, x);
          const double expect = full ? Y : tzref::py_round(std::min(255.0, std::max(0.0, (Y - 16) * 255 / 219)));
          bad += out[size_t(y) * w + x] != expect;
        }
      EXPECT_EQ(bad, 0) << pixel_format_name(f) << (full ? " full" : " limited");
    }
  }
}

// The integer rules on exact values: ties round to even, both types saturate, and the dtypes'
// default normalisation gives the pixel (uint8) and pixel - 128 (int8).
TEST(TensorizeCpu, IntegerRoundingAndSaturation) {
  const int w = 256;
  HostImage im = tztest::make_image(PixelFormat::GRAY8, w, 1);
  for (int x = 0; x < w; ++x) const_cast<uint8_t*>(im.view.planes[0].data)[x] = uint8_t(x);
  struct Case {
    DType dtype;
    double scale, mean;
    std::function<int(int)> expect;
  } cases[] = {
      {DType::UInt8, 1, 0, [](int v) { return v; }},
      {DType::Int8, 1, 128, [](int v) { return v - 128; }},
      // v / 2: odd v are ties (0.5, 1.5, ...), which go to the even neighbour.
      {DType::UInt8, 0.5, 0, [](int v) { return v % 2 == 0 ? v / 2 : ((v / 2) % 2 == 0 ? v / 2 : v / 2 + 1); }},
      {DType::Int8, 0.5, 0,
       [](int v) { return std::min(127, v % 2 == 0 ? v / 2 : ((v / 2) % 2 == 0 ? v / 2 : v / 2 + 1)); }},
      {DType::UInt8, 2, 100, [](int v) { return std::max(0, std::min(255, 2 * v - 100)); }},
      {DType::Int8, 1, 0, [](int v) { return std::min(127, v); }},
      {DType::Int8, -1, 0, [](int v) { return std::max(-128, -v); }},
  };
  for (const Case& k : cases) {
    TensorizeConfig c = base_config(PixelFormat::GRAY8, w, 1, w, 1);
    c.mode = ResizeMode::Stretch;
    c.dtype = k.dtype;
    c.channels = 1;
    c.scale = k.scale;
    c.mean[0] = k.mean;
    if (k.scale == 1 && k.mean == (k.dtype == DType::Int8 ? 128 : 0)) {  // the dtype's defaults
      const Normalisation n = default_normalisation(k.dtype);
      EXPECT_EQ(n.scale, c.scale);
      EXPECT_EQ(n.mean[0], c.mean[0]);
    }
    TensorizePlan p;
    ASSERT_TRUE(make_tensorize_plan(c, &p).ok());
    std::vector<float> out;
    ASSERT_TRUE(run_cpu(p, im.view, &out));
    for (int x = 0; x < w; ++x)
      ASSERT_EQ(out[x], k.expect(x)) << dtype_name(k.dtype) << " scale " << k.scale << " mean " << k.mean << " pixel "
                                     << x;
  }
  EXPECT_STREQ(dtype_name(DType::UInt8), "uint8");
  EXPECT_STREQ(dtype_name(DType::Int8), "int8");
  EXPECT_EQ(dtype_bytes(DType::Int8), 1);
}

}  // namespace
