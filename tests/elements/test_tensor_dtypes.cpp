// Integer tensors and gray output on the CPU path, for cudatensorize and cudatensorbatch alike
// (issue 12 item 5): dtype uint8 / int8 and channels=1.
// - the element hands the kernel its settings: its output equals tensorize_cpu of the same frame
//   with the same plan, on several input formats;
// - independently of our code: solid frames give the bytes computed by hand (uint8 = the pixels,
//   int8 = pixel - 128, explicit scale / mean / std rounded to nearest even and saturated, the
//   pad value), and gray of a photograph is OpenCV's cvtColor BGR2GRAY;
// - normalisation defaults by dtype, read back; caps; channels other than 1 and 3 refused.
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "harness_util.h"
#include "tensorize.h"
#include "../tensorize/test_images.h"  // base_config

using namespace cudaprep;
using test::video_caps;

namespace {

using Bytes = std::vector<uint8_t>;

enum class Element { Tensorize, Batch };
const char* factory(Element e) { return e == Element::Tensorize ? "cudatensorize" : "cudatensorbatch"; }

// What an element made of one frame: the tensor and its caps' dimensions and types.
struct Output {
  Bytes tensor;
  std::string dims, types;
};

void read_caps(GstCaps* caps, Output* out) {
  if (!caps) return;
  const GstStructure* s = gst_caps_get_structure(caps, 0);
  const gchar* d = gst_structure_get_string(s, "dimensions");
  const gchar* t = gst_structure_get_string(s, "types");
  out->dims = d ? d : "";
  out->types = t ? t : "";
}

// cudatensorize (a harness) or cudatensorbatch with one pad (appsrc ! ... ! appsink: an aggregator
// needs its request pad), backend=cpu with `props`, given `frame` (transfer full) with `caps`.
Output run(Element e, const std::string& props, const std::string& caps, GstBuffer* frame) {
  Output out;
  GST_BUFFER_PTS(frame) = 0;
  GST_BUFFER_DURATION(frame) = GST_SECOND / 30;
  if (e == Element::Tensorize) {
    GstHarness* h = gst_harness_new_parse(("cudatensorize backend=cpu " + props).c_str());
    gst_harness_set_src_caps_str(h, caps.c_str());
    GstBuffer* b = gst_harness_push_and_pull(h, frame);
    EXPECT_NE(b, nullptr) << props;
    if (b) out.tensor = test::buffer_bytes(b);
    if (b) gst_buffer_unref(b);
    GstCaps* c = gst_pad_get_current_caps(h->sinkpad);
    read_caps(c, &out);
    if (c) gst_caps_unref(c);
    gst_harness_teardown(h);
    return out;
  }
  const std::string desc = "appsrc name=src format=time caps=\"" + caps + "\" ! cudatensorbatch backend=cpu " + props +
                           " ! appsink name=out sync=false";
  GError* err = nullptr;
  GstElement* pipeline = gst_parse_launch(desc.c_str(), &err);
  EXPECT_EQ(err, nullptr) << desc;
  GstElement* src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "out");
  EXPECT_NE(gst_element_set_state(pipeline, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
  gst_app_src_push_buffer(GST_APP_SRC(src), frame);
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 5 * GST_SECOND);
  EXPECT_NE(s, nullptr) << props;
  if (s) {
    out.tensor = test::buffer_bytes(gst_sample_get_buffer(s));
    read_caps(gst_sample_get_caps(s), &out);
    gst_sample_unref(s);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  return out;
}

// A w x h frame of `format` written by fill (the mapped frame).
template <class Fill>
GstBuffer* frame_of(GstVideoFormat format, int w, int h, Fill fill) {
  GstVideoInfo info;
  gst_video_info_set_format(&info, format, w, h);
  GstBuffer* buf = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&info), nullptr);
  GstVideoFrame f;
  EXPECT_TRUE(gst_video_frame_map(&f, &info, buf, GST_MAP_WRITE));
  fill(&f);
  gst_video_frame_unmap(&f);
  return buf;
}

void fill_plane(GstVideoFrame* f, int plane, const std::vector<uint8_t>& pattern) {
  const int rows = GST_VIDEO_FRAME_COMP_HEIGHT(f, plane == 0 ? 0 : 1);
  const int stride = GST_VIDEO_FRAME_PLANE_STRIDE(f, plane);
  uint8_t* data = (uint8_t*)GST_VIDEO_FRAME_PLANE_DATA(f, plane);
  for (int i = 0; i < rows * stride; i++) data[i] = pattern[i % pattern.size()];
}

// Solid frames: BGR of one colour, NV12 of one Y, U, V.
GstBuffer* solid_bgr(int w, int h, uint8_t b, uint8_t g, uint8_t r) {
  return frame_of(GST_VIDEO_FORMAT_BGR, w, h, [&](GstVideoFrame* f) {
    // rows are a whole number of pixels here (w * 3 a multiple of 4)
    fill_plane(f, 0, {b, g, r});
  });
}
GstBuffer* solid_nv12(int w, int h, uint8_t y, uint8_t u, uint8_t v) {
  return frame_of(GST_VIDEO_FORMAT_NV12, w, h, [&](GstVideoFrame* f) {
    fill_plane(f, 0, {y});
    fill_plane(f, 1, {u, v});
  });
}

// Element (x, y, c) of a W x H NCHW tensor of one-byte elements, signed for int8.
int at(const Bytes& t, bool is_signed, int w, int h, int x, int y, int c) {
  const uint8_t b = t[(size_t)c * w * h + (size_t)y * w + x];
  return is_signed ? (int)(int8_t)b : (int)b;
}

}  // namespace

// ---- the element passes its settings through: equal to tensorize_cpu of the same plan ----

struct Variant {
  const char* props;  // besides width=40 height=32
  DType dtype;
  int channels;
  Layout layout;
  bool explicit_norm;  // scale=0.5 mean=<10,20,30> std=<2,1,0.5>
};
struct Format {
  GstVideoFormat gst;
  PixelFormat format;
  const char* name;
};
using KernelCase = std::tuple<Element, Format, Variant>;

class DTypeMatchesKernel : public ::testing::TestWithParam<KernelCase> {};

TEST_P(DTypeMatchesKernel, OnRandomFrames) {
  const Element e = std::get<0>(GetParam());
  const Format& f = std::get<1>(GetParam());
  const Variant& v = std::get<2>(GetParam());
  const int w = 37, h = 23;
  auto frame = test::make_frame(f.gst, w, h, 11, /*extra_stride=*/6, /*offset=*/3);
  frame.view.format = f.format;
  Output out = run(e, std::string("width=40 height=32 ") + v.props, video_caps(f.name, w, h, ",colorimetry=bt601"),
                   frame.buffer);

  TensorizeConfig cfg = tztest::base_config(f.format, w, h, 40, 32);
  cfg.dtype = v.dtype;
  cfg.channels = v.channels;
  cfg.layout = v.layout;
  const Normalisation d = default_normalisation(v.dtype);
  const double scale = 0.5, mean[3] = {10, 20, 30}, stdv[3] = {2, 1, 0.5};
  cfg.scale = v.explicit_norm ? scale : d.scale;
  for (int i = 0; i < 3; i++) {
    cfg.mean[i] = v.explicit_norm ? mean[i] : d.mean[i];
    cfg.std[i] = v.explicit_norm ? stdv[i] : d.std[i];
  }
  TensorizePlan plan;
  Status st = make_tensorize_plan(cfg, &plan);
  ASSERT_TRUE(st.ok()) << st.message();
  Bytes expect(tensor_bytes(plan));
  st = tensorize_cpu(plan, frame.view, expect.data());
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(out.types, dtype_name(v.dtype));
  ASSERT_EQ(out.tensor.size(), expect.size());
  for (size_t i = 0; i < expect.size(); i++) ASSERT_EQ(out.tensor[i], expect[i]) << "byte " << i;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, DTypeMatchesKernel,
    ::testing::Combine(::testing::Values(Element::Tensorize, Element::Batch),
                       ::testing::Values(Format{GST_VIDEO_FORMAT_BGR, PixelFormat::BGR, "BGR"},
                                         Format{GST_VIDEO_FORMAT_RGBA, PixelFormat::RGBA, "RGBA"},
                                         Format{GST_VIDEO_FORMAT_NV12, PixelFormat::NV12, "NV12"},
                                         Format{GST_VIDEO_FORMAT_I420, PixelFormat::I420, "I420"},
                                         Format{GST_VIDEO_FORMAT_YUY2, PixelFormat::YUY2, "YUY2"},
                                         Format{GST_VIDEO_FORMAT_GRAY8, PixelFormat::GRAY8, "GRAY8"}),
                       ::testing::Values(Variant{"dtype=uint8", DType::UInt8, 3, Layout::NCHW, false},
                                         Variant{"dtype=int8 layout=nhwc", DType::Int8, 3, Layout::NHWC, false},
                                         Variant{"dtype=uint8 channels=1", DType::UInt8, 1, Layout::NCHW, false},
                                         Variant{"dtype=int8 channels=1 scale=0.5 mean=<10,20,30> std=<2,1,0.5>",
                                                 DType::Int8, 1, Layout::NCHW, true},
                                         Variant{"channels=1 layout=nhwc", DType::Float32, 1, Layout::NHWC, false},
                                         Variant{"dtype=uint8 layout=nhwc scale=0.5 mean=<10,20,30> std=<2,1,0.5>",
                                                 DType::UInt8, 3, Layout::NHWC, true})));

// ---- known values, computed by hand ----------------------------------------------------

struct Known {
  const char* props;       // besides width=8 height=8 (a 32x16 frame: rows 2..5 are the image)
  bool nv12;               // else BGR
  std::vector<int> value;  // per output channel, every image pixel
  std::vector<int> pad;    // per output channel, every pad pixel
};
using KnownCase = std::tuple<Element, Known>;

class DTypeKnownValues : public ::testing::TestWithParam<KnownCase> {};

// BGR (B 31, G 101, R 201) and NV12 (Y 100, U = V = 128, limited range: RGB = gray =
// (100 - 16) * 255 / 219 = 97.8 -> 98).
TEST_P(DTypeKnownValues, SolidFrame) {
  const Element e = std::get<0>(GetParam());
  const Known& k = std::get<1>(GetParam());
  GstBuffer* frame = k.nv12 ? solid_nv12(32, 16, 100, 128, 128) : solid_bgr(32, 16, 31, 101, 201);
  Output out = run(e, std::string("width=8 height=8 ") + k.props,
                   video_caps(k.nv12 ? "NV12" : "BGR", 32, 16, ",colorimetry=bt601"), frame);
  const int channels = (int)k.value.size();
  ASSERT_EQ(out.tensor.size(), (size_t)8 * 8 * channels) << k.props;
  const bool is_signed = out.types == "int8";
  for (int c = 0; c < channels; c++)
    for (int y = 0; y < 8; y++)
      for (int x = 0; x < 8; x++) {
        const int want = y >= 2 && y < 6 ? k.value[c] : k.pad[c];
        ASSERT_EQ(at(out.tensor, is_signed, 8, 8, x, y, c), want)
            << k.props << " at (" << x << ", " << y << ") channel " << c;
      }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, DTypeKnownValues,
    ::testing::Combine(::testing::Values(Element::Tensorize, Element::Batch),
                       ::testing::Values(
                           // uint8 alone: the pixels (R, G, B), the pad value as it is
                           Known{"dtype=uint8", false, {201, 101, 31}, {114, 114, 114}},
                           Known{"dtype=uint8 channel-order=bgr pad-value=7", false, {31, 101, 201}, {7, 7, 7}},
                           // int8 alone: pixel - 128
                           Known{"dtype=int8", false, {73, -27, -97}, {-14, -14, -14}},
                           // explicit values win; halves go to the even neighbour: 100.5 -> 100, 50.5 -> 50, 15.5 -> 16
                           Known{"dtype=uint8 scale=0.5", false, {100, 50, 16}, {57, 57, 57}},
                           // saturation: int8 201 -> 127; uint8 201 - 250, 31 - 40 and 114 - 250 -> 0
                           Known{"dtype=int8 mean=<0>", false, {127, 101, 31}, {114, 114, 114}},
                           Known{"dtype=uint8 mean=<250,0,40>", false, {0, 101, 0}, {0, 114, 74}},
                           // gray: 0.299 * 201 + 0.587 * 101 + 0.114 * 31 = 122.92
                           Known{"dtype=uint8 channels=1", false, {123}, {114}},
                           Known{"dtype=int8 channels=1 channel-order=bgr", false, {-5}, {-14}},
                           Known{"dtype=uint8 channels=1 layout=nhwc", false, {123}, {114}},
                           // YUV: the range-expanded Y, or Y itself with full range
                           Known{"dtype=uint8 channels=1", true, {98}, {114}},
                           Known{"dtype=uint8 channels=1 yuv-range=full", true, {100}, {114}},
                           Known{"dtype=uint8", true, {98, 98, 98}, {114, 114, 114}})));

// Gray of a photograph at its own size (no resampling) is OpenCV's BGR2GRAY: cvtColor rounds a
// 14-bit fixed-point sum, the element the exact sum (nearest, ties to even), so they may differ by
// one where the sum is within a fixed-point step of a half; the exact sum is checked everywhere.
TEST(DTypeGray, PhotographIsOpenCvLuma) {
  cv::Mat img = cv::imread(std::string(TEST_IMAGE_DIR) + "/fruits.jpg", cv::IMREAD_COLOR);
  ASSERT_FALSE(img.empty());
  cv::Mat bgr, gray, rgb;
  cv::resize(img, bgr, cv::Size(64, 48), 0, 0, cv::INTER_AREA);
  cv::cvtColor(bgr, gray, cv::COLOR_BGR2GRAY);
  cv::cvtColor(bgr, rgb, cv::COLOR_BGR2RGB);
  for (Element e : {Element::Tensorize, Element::Batch})
    for (const char* format : {"BGR", "RGB"}) {
      const cv::Mat& src = strcmp(format, "BGR") == 0 ? bgr : rgb;
      GstBuffer* frame = frame_of(
          strcmp(format, "BGR") == 0 ? GST_VIDEO_FORMAT_BGR : GST_VIDEO_FORMAT_RGB, 64, 48, [&](GstVideoFrame* f) {
            for (int y = 0; y < 48; y++)
              memcpy((uint8_t*)GST_VIDEO_FRAME_PLANE_DATA(f, 0) + y * GST_VIDEO_FRAME_PLANE_STRIDE(f, 0), src.ptr(y),
                     64 * 3);
          });
      Output out =
          run(e, "width=64 height=48 resize-mode=stretch dtype=uint8 channels=1", video_caps(format, 64, 48), frame);
      ASSERT_EQ(out.tensor.size(), 64u * 48) << factory(e) << " " << format;
      int off_by_one = 0;
      for (int y = 0; y < 48; y++)
        for (int x = 0; x < 64; x++) {
          const cv::Vec3b p = bgr.at<cv::Vec3b>(y, x);
          const double luma = 0.299 * p[2] + 0.587 * p[1] + 0.114 * p[0];
          const int got = out.tensor[(size_t)y * 64 + x], cv_gray = gray.at<uint8_t>(y, x);
          const bool tie = std::fabs(luma - std::floor(luma) - 0.5) < 1e-4;
          if (!tie) {
            ASSERT_EQ(got, (int)std::nearbyint(luma)) << "(" << x << ", " << y << ") luma " << luma;
          }
          ASSERT_LE(std::abs(got - cv_gray), 1) << "(" << x << ", " << y << ")";
          off_by_one += got != cv_gray;
        }
      EXPECT_LE(off_by_one, 64 * 48 / 50) << "more than 2% off OpenCV by one: " << factory(e) << " " << format;
    }
}

// ---- properties, caps, refusals -----------------------------------------------------------

// scale, mean and std left unset follow the dtype and read back as the value used; values set
// win and read back as set, whatever the dtype.
TEST(DTypeProperties, NormalisationDefaultsByDtypeAndReadBack) {
  for (Element e : {Element::Tensorize, Element::Batch}) {
    GstElement* el = gst_element_factory_make(factory(e), nullptr);
    auto scale = [&] {
      double s = 0;
      g_object_get(el, "scale", &s, NULL);
      return s;
    };
    auto text = [&](const char* name) {
      GValue v = G_VALUE_INIT;
      g_value_init(&v, GST_TYPE_ARRAY);
      g_object_get_property(G_OBJECT(el), name, &v);
      gchar* s = gst_value_serialize(&v);
      std::string out = s;
      g_free(s);
      g_value_unset(&v);
      return out;
    };
    EXPECT_DOUBLE_EQ(scale(), 1.0 / 255.0);
    gst_util_set_object_arg(G_OBJECT(el), "dtype", "uint8");
    EXPECT_DOUBLE_EQ(scale(), 1.0);
    EXPECT_EQ(text("mean"), "< (double)0, (double)0, (double)0 >");
    gst_util_set_object_arg(G_OBJECT(el), "dtype", "int8");
    EXPECT_EQ(text("mean"), "< (double)128, (double)128, (double)128 >");
    EXPECT_EQ(text("std"), "< (double)1, (double)1, (double)1 >");
    gst_util_set_object_arg(G_OBJECT(el), "mean", "<5>");
    g_object_set(el, "scale", 2.0, NULL);
    gst_util_set_object_arg(G_OBJECT(el), "dtype", "float16");
    EXPECT_EQ(text("mean"), "< (double)5 >");
    EXPECT_DOUBLE_EQ(scale(), 2.0);
    guint channels = 0;
    g_object_get(el, "channels", &channels, NULL);
    EXPECT_EQ(channels, 3u);
    gst_object_unref(el);
  }
}

// The caps name the type and the channel count; the buffer is that many bytes.
TEST(DTypeCaps, TypesAndDimensions) {
  struct Case {
    const char* props;
    const char* dims;
    const char* types;
    size_t bytes;
  } cases[] = {{"dtype=uint8", "24:16:3:1", "uint8", 24 * 16 * 3},
               {"dtype=int8 layout=nhwc", "3:24:16:1", "int8", 24 * 16 * 3},
               {"dtype=uint8 channels=1", "24:16:1:1", "uint8", 24 * 16},
               {"dtype=int8 channels=1 layout=nhwc", "1:24:16:1", "int8", 24 * 16},
               {"channels=1", "24:16:1:1", "float32", 24 * 16 * 4},
               {"dtype=float16 channels=1", "24:16:1:1", "float16", 24 * 16 * 2}};
  for (Element e : {Element::Tensorize, Element::Batch})
    for (const Case& c : cases) {
      Output out = run(e, std::string("width=24 height=16 ") + c.props, video_caps("BGR", 32, 16),
                       test::make_frame(GST_VIDEO_FORMAT_BGR, 32, 16, 3).buffer);
      EXPECT_EQ(out.dims, c.dims) << factory(e) << " " << c.props;
      EXPECT_EQ(out.types, c.types) << factory(e) << " " << c.props;
      EXPECT_EQ(out.tensor.size(), c.bytes) << factory(e) << " " << c.props;
    }
}

// The property's range is 1-3 (gst-inspect shows it); 2, inside it, is refused when the element
// starts, with one error naming the value.
TEST(DTypeChannels, RangeIsOneToThree) {
  for (Element e : {Element::Tensorize, Element::Batch}) {
    GstElement* el = gst_element_factory_make(factory(e), nullptr);
    ASSERT_NE(el, nullptr);
    GParamSpec* p = g_object_class_find_property(G_OBJECT_GET_CLASS(el), "channels");
    ASSERT_NE(p, nullptr);
    ASSERT_TRUE(G_IS_PARAM_SPEC_UINT(p));
    EXPECT_EQ(G_PARAM_SPEC_UINT(p)->minimum, 1u) << factory(e);
    EXPECT_EQ(G_PARAM_SPEC_UINT(p)->maximum, 3u) << factory(e);
    gst_object_unref(el);
  }
}

TEST(DTypeChannels, TwoIsRefusedAtStart) {
  for (Element e : {Element::Tensorize, Element::Batch})
    for (const char* props : {"channels=2", "channels=2 dtype=uint8"}) {
      test::StartResult r = test::start_with_props((std::string(factory(e)) + " backend=cpu").c_str(), props);
      EXPECT_EQ(r.ret, GST_STATE_CHANGE_FAILURE) << factory(e) << " " << props;
      ASSERT_EQ(r.errors.size(), 1u) << factory(e) << " " << props;
      const std::string n = std::string(props).substr(9, 1);
      EXPECT_NE(r.errors[0].find("channels " + n + " is not supported (1 = gray or 3 = colour)"), std::string::npos)
          << r.errors[0];
    }
}

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new test::GstEnv);
  return RUN_ALL_TESTS();
}
