// GstHarness tests of cudatensorize on the CPU path (backend=cpu): caps, data plumbing
// (strides, offsets, formats, colorimetry), the transform meta, timestamps and bad input.
// The pixel maths is tested against independent references in tests/tensorize; here the
// element's output is compared with the kernel's CPU path on the same frame, so what is
// checked is that the element hands the kernel the right frame and settings.
#include <cmath>
#include <cstring>

#include "gstcudaprepmeta.h"
#include "harness_util.h"
#include "cuda_device.h"
#include "tensorize.h"
#include "../tensorize/test_images.h"  // base_config

using namespace cudaprep;
using test::BusWatch;
using test::make_frame;
using test::video_caps;

namespace {

GstHarness* new_tensorize(const char* props) {
  std::string desc = std::string("cudatensorize backend=cpu ") + props;
  GstHarness* h = gst_harness_new_parse(desc.c_str());
  return h;
}

std::vector<float> read_floats(GstBuffer* buf) {
  GstMapInfo map;
  EXPECT_TRUE(gst_buffer_map(buf, &map, GST_MAP_READ));
  std::vector<float> out(map.size / 4);
  memcpy(out.data(), map.data, out.size() * 4);
  gst_buffer_unmap(buf, &map);
  return out;
}

std::vector<float> expected_cpu(const TensorizeConfig& cfg, const ImageView& view) {
  TensorizePlan plan;
  Status st = make_tensorize_plan(cfg, &plan);
  EXPECT_TRUE(st.ok()) << st.message();
  std::vector<float> out(tensor_elements(plan));
  EXPECT_TRUE(tensorize_cpu(plan, view, out.data()).ok());
  return out;
}

const gchar* caps_field(GstHarness* h, const char* field) {
  GstCaps* caps = gst_pad_get_current_caps(h->sinkpad);
  static std::string value;
  value = gst_structure_get_string(gst_caps_get_structure(caps, 0), field);
  gst_caps_unref(caps);
  return value.c_str();
}

}  // namespace

TEST(TensorizeElement, NegotiatesTensorCapsAndPreservesTimestamps) {
  GstHarness* h = new_tensorize("width=320 height=256");
  gst_harness_set_src_caps_str(h, video_caps("BGR", 64, 48).c_str());
  auto f = make_frame(GST_VIDEO_FORMAT_BGR, 64, 48, 1);
  GST_BUFFER_PTS(f.buffer) = 42 * GST_MSECOND;
  GST_BUFFER_DURATION(f.buffer) = 33 * GST_MSECOND;
  GST_BUFFER_FLAG_SET(f.buffer, GST_BUFFER_FLAG_DISCONT);
  GstBuffer* out = gst_harness_push_and_pull(h, f.buffer);
  ASSERT_NE(out, nullptr);
  EXPECT_STREQ(caps_field(h, "dimensions"), "320:256:3:1");
  EXPECT_STREQ(caps_field(h, "types"), "float32");
  EXPECT_STREQ(caps_field(h, "format"), "static");
  GstCaps* caps = gst_pad_get_current_caps(h->sinkpad);
  gint num = 0, den = 0;
  gst_structure_get_fraction(gst_caps_get_structure(caps, 0), "framerate", &num, &den);
  EXPECT_EQ(num, 30);
  EXPECT_EQ(den, 1);
  EXPECT_STREQ(gst_structure_get_name(gst_caps_get_structure(caps, 0)), "other/tensors");
  gst_caps_unref(caps);
  EXPECT_EQ(gst_buffer_get_size(out), 320u * 256 * 3 * 4);
  EXPECT_EQ(GST_BUFFER_PTS(out), 42 * GST_MSECOND);
  EXPECT_EQ(GST_BUFFER_DURATION(out), 33 * GST_MSECOND);
  EXPECT_TRUE(GST_BUFFER_FLAG_IS_SET(out, GST_BUFFER_FLAG_DISCONT));
  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

TEST(TensorizeElement, NhwcFloat16Caps) {
  GstHarness* h = new_tensorize("width=32 height=16 layout=nhwc dtype=float16");
  gst_harness_set_src_caps_str(h, video_caps("RGBA", 40, 30).c_str());
  auto f = make_frame(GST_VIDEO_FORMAT_RGBA, 40, 30, 2);
  GstBuffer* out = gst_harness_push_and_pull(h, f.buffer);
  ASSERT_NE(out, nullptr);
  EXPECT_STREQ(caps_field(h, "dimensions"), "3:32:16:1");
  EXPECT_STREQ(caps_field(h, "types"), "float16");
  EXPECT_EQ(gst_buffer_get_size(out), 32u * 16 * 3 * 2);
  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

struct FormatCase {
  GstVideoFormat gst_format;
  PixelFormat format;
  const char* name;
};

class TensorizeElementFormats : public ::testing::TestWithParam<FormatCase> {};

// Every format, odd sizes, padded strides and a non-zero first-plane offset: the element must
// honour GstVideoMeta exactly as the kernel's reference view describes the frame.
TEST_P(TensorizeElementFormats, MatchesKernelOnStridedFrames) {
  const FormatCase& c = GetParam();
  const int w = 37, h = 23;  // odd: chroma planes (and YUY2's pixel pairs) are rounded up
  GstHarness* harness = new_tensorize("width=48 height=40 mean=<0.1,0.2,0.3> std=<0.5,0.25,2.0>");
  gst_harness_set_src_caps_str(harness, video_caps(c.name, w, h, ",colorimetry=bt709").c_str());
  auto f = make_frame(c.gst_format, w, h, 7, /*extra_stride=*/13, /*offset=*/5);
  f.view.format = c.format;
  GstBuffer* out = gst_harness_push_and_pull(harness, f.buffer);
  ASSERT_NE(out, nullptr);
  TensorizeConfig cfg = tztest::base_config(c.format, w, h, 48, 40);
  const double mean[3] = {0.1, 0.2, 0.3}, stdv[3] = {0.5, 0.25, 2.0};
  for (int i = 0; i < 3; i++) {
    cfg.mean[i] = mean[i];
    cfg.std[i] = stdv[i];
  }
  cfg.yuv_matrix = YuvMatrix::BT709;
  auto expect = expected_cpu(cfg, f.view);
  auto got = read_floats(out);
  ASSERT_EQ(got.size(), expect.size());
  for (size_t i = 0; i < got.size(); i++) ASSERT_EQ(got[i], expect[i]) << "element " << i;
  gst_buffer_unref(out);
  gst_harness_teardown(harness);
}

INSTANTIATE_TEST_SUITE_P(AllFormats, TensorizeElementFormats,
                         ::testing::Values(FormatCase{GST_VIDEO_FORMAT_NV12, PixelFormat::NV12, "NV12"},
                                           FormatCase{GST_VIDEO_FORMAT_I420, PixelFormat::I420, "I420"},
                                           FormatCase{GST_VIDEO_FORMAT_BGR, PixelFormat::BGR, "BGR"},
                                           FormatCase{GST_VIDEO_FORMAT_RGB, PixelFormat::RGB, "RGB"},
                                           FormatCase{GST_VIDEO_FORMAT_BGRx, PixelFormat::BGRx, "BGRx"},
                                           FormatCase{GST_VIDEO_FORMAT_RGBx, PixelFormat::RGBx, "RGBx"},
                                           FormatCase{GST_VIDEO_FORMAT_BGRA, PixelFormat::BGRA, "BGRA"},
                                           FormatCase{GST_VIDEO_FORMAT_RGBA, PixelFormat::RGBA, "RGBA"},
                                           FormatCase{GST_VIDEO_FORMAT_GRAY8, PixelFormat::GRAY8, "GRAY8"},
                                           FormatCase{GST_VIDEO_FORMAT_YUY2, PixelFormat::YUY2, "YUY2"},
                                           FormatCase{GST_VIDEO_FORMAT_UYVY, PixelFormat::UYVY, "UYVY"},
                                           FormatCase{GST_VIDEO_FORMAT_NV21, PixelFormat::NV21, "NV21"},
                                           FormatCase{GST_VIDEO_FORMAT_P010_10LE, PixelFormat::P010_10LE, "P010_10LE"}),
                         [](const auto& info) { return std::string(info.param.name); });

// The caps colorimetry picks the YUV matrix and range: a full-range BT.601 frame must differ
// from the limited-range BT.709 result, and each must match the kernel with those settings.
TEST(TensorizeElement, ColorimetryFromCaps) {
  const struct {
    const char* colorimetry;
    YuvMatrix matrix;
    bool full;
  } cases[] = {{"bt601", YuvMatrix::BT601, false},
               {"bt709", YuvMatrix::BT709, false},
               {"bt2020", YuvMatrix::BT2020, false},
               {"1:4:0:0", YuvMatrix::BT601, true}};  // full range, BT.601 matrix
  for (const auto& c : cases) {
    GstHarness* h = new_tensorize("width=16 height=16 resize-mode=stretch");
    std::string extra = std::string(",colorimetry=") + c.colorimetry;
    gst_harness_set_src_caps_str(h, video_caps("NV12", 16, 16, extra.c_str()).c_str());
    auto f = make_frame(GST_VIDEO_FORMAT_NV12, 16, 16, 11);
    f.view.format = PixelFormat::NV12;
    GstBuffer* out = gst_harness_push_and_pull(h, f.buffer);
    ASSERT_NE(out, nullptr) << c.colorimetry;
    TensorizeConfig cfg;
    cfg.format = PixelFormat::NV12;
    cfg.src_width = cfg.src_height = 16;
    cfg.dst_width = cfg.dst_height = 16;
    cfg.mode = ResizeMode::Stretch;
    cfg.yuv_matrix = c.matrix;
    cfg.yuv_full_range = c.full;
    EXPECT_EQ(read_floats(out), expected_cpu(cfg, f.view)) << c.colorimetry;
    gst_buffer_unref(out);
    gst_harness_teardown(h);
  }
}

TEST(TensorizeElement, YuvOverridePropertiesWinOverCaps) {
  GstHarness* h = new_tensorize("width=16 height=16 resize-mode=stretch yuv-matrix=bt2020 yuv-range=full");
  gst_harness_set_src_caps_str(h, video_caps("I420", 16, 16, ",colorimetry=bt601").c_str());
  auto f = make_frame(GST_VIDEO_FORMAT_I420, 16, 16, 12);
  f.view.format = PixelFormat::I420;
  GstBuffer* out = gst_harness_push_and_pull(h, f.buffer);
  ASSERT_NE(out, nullptr);
  TensorizeConfig cfg;
  cfg.format = PixelFormat::I420;
  cfg.src_width = cfg.src_height = cfg.dst_width = cfg.dst_height = 16;
  cfg.mode = ResizeMode::Stretch;
  cfg.yuv_matrix = YuvMatrix::BT2020;
  cfg.yuv_full_range = true;
  EXPECT_EQ(read_floats(out), expected_cpu(cfg, f.view));
  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

// Chroma siting from the caps (chroma-site=mpeg2: co-sited horizontally, as H.264 / H.265
// decoders say), none meaning centred for these small frames (as GStreamer reads a missing
// field), and the chroma-site property winning over the caps. GStreamer 1.22.0's GstVideoInfo
// reads these caps (no colorimetry) as jpeg whatever their chroma-site: the element reads the
// field from the caps itself.
TEST(TensorizeElement, ChromaSiteFromCapsAndProperty) {
  const struct {
    const char* props;
    const char* caps_extra;
    bool h_cosited, v_cosited;
  } cases[] = {{"", "", false, false},
               {"", ",chroma-site=mpeg2", true, false},
               {"", ",chroma-site=jpeg", false, false},
               {"", ",chroma-site=cosited", true, true},
               {" chroma-site=jpeg", ",chroma-site=mpeg2", false, false},
               {" chroma-site=mpeg2", "", true, false},
               {" chroma-site=cosited", ",chroma-site=jpeg", true, true}};
  for (const char* format : {"I420", "NV12", "YUY2", "P010_10LE"}) {
    for (const auto& c : cases) {
      SCOPED_TRACE(std::string(format) + c.caps_extra + c.props);
      GstHarness* h = new_tensorize((std::string("width=24 height=20") + c.props).c_str());
      gst_harness_set_src_caps_str(h, video_caps(format, 37, 23, c.caps_extra).c_str());
      auto f = make_frame(gst_video_format_from_string(format), 37, 23, 13, 4, 2);
      PixelFormat pf = PixelFormat::NV12;
      ASSERT_TRUE(cudaprep::pixel_format_from_name(format, &pf));
      f.view.format = pf;
      GstBuffer* out = gst_harness_push_and_pull(h, f.buffer);
      ASSERT_NE(out, nullptr);
      TensorizeConfig cfg = tztest::base_config(pf, 37, 23, 24, 20);
      cfg.chroma_h_cosited = c.h_cosited;
      cfg.chroma_v_cosited = c.v_cosited;
      EXPECT_EQ(read_floats(out), expected_cpu(cfg, f.view));
      cfg.chroma_h_cosited = !c.h_cosited;  // the siting matters on this frame
      EXPECT_NE(read_floats(out), expected_cpu(cfg, f.view));
      gst_buffer_unref(out);
      gst_harness_teardown(h);
    }
  }
}

// Caps without chroma-site read as GStreamer reads them (GstVideoInfo; GStreamer 1.22: unknown,
// i.e. centred, with a colorimetry; without one its defaults, co-sited horizontally above 576
// lines), the field itself whatever the colorimetry (1.22.0 overrides it with its defaults when
// the caps have no colorimetry).
TEST(TensorizeElement, MissingChromaSiteReadsAsGStreamerDoes) {
  const struct {
    int h;
    const char* caps_extra;
  } cases[] = {
      {578, ""}, {576, ""}, {578, ",colorimetry=bt709"}, {576, ",chroma-site=mpeg2"}, {578, ",chroma-site=jpeg"}};
  for (const auto& c : cases) {
    const std::string caps = video_caps("NV12", 64, c.h, c.caps_extra);
    SCOPED_TRACE(caps);
    GstVideoInfo info;
    ASSERT_TRUE(gst_video_info_from_caps(&info, gst_caps_from_string(caps.c_str())));
    const bool field = strstr(c.caps_extra, "chroma-site") != nullptr;
    const bool h_cosited =
        field ? strstr(c.caps_extra, "mpeg2") != nullptr : (info.chroma_site & GST_VIDEO_CHROMA_SITE_H_COSITED) != 0;
    std::printf("%s: GStreamer reads chroma site %d\n", caps.c_str(), int(info.chroma_site));
    GstHarness* h = new_tensorize("width=24 height=20");
    gst_harness_set_src_caps_str(h, caps.c_str());
    auto f = make_frame(GST_VIDEO_FORMAT_NV12, 64, c.h, 14);
    f.view.format = PixelFormat::NV12;
    GstBuffer* out = gst_harness_push_and_pull(h, f.buffer);
    ASSERT_NE(out, nullptr);
    TensorizeConfig cfg = tztest::base_config(PixelFormat::NV12, 64, c.h, 24, 20);
    cfg.chroma_h_cosited = h_cosited;
    // (GStreamer's default colorimetry above 576 lines is BT.709)
    if (info.colorimetry.matrix == GST_VIDEO_COLOR_MATRIX_BT709) cfg.yuv_matrix = YuvMatrix::BT709;
    EXPECT_EQ(read_floats(out), expected_cpu(cfg, f.view));
    gst_buffer_unref(out);
    gst_harness_teardown(h);
  }
}

TEST(TensorizeElement, TransformMetaMapsBoxesBack) {
  GstHarness* h = new_tensorize("");  // 640x640 letterbox, centred
  gst_harness_set_src_caps_str(h, video_caps("BGR", 1280, 720).c_str());
  auto f = make_frame(GST_VIDEO_FORMAT_BGR, 1280, 720, 3);
  GstBuffer* out = gst_harness_push_and_pull(h, f.buffer);
  ASSERT_NE(out, nullptr);
  GstCudaPrepTransform t;
  ASSERT_TRUE(gst_cuda_prep_buffer_get_transform(out, &t));
  EXPECT_EQ(t.source_width, 1280);
  EXPECT_EQ(t.source_height, 720);
  EXPECT_EQ(t.tensor_width, 640);
  EXPECT_EQ(t.tensor_height, 640);
  EXPECT_DOUBLE_EQ(t.active_rect[0], 0.0);
  EXPECT_DOUBLE_EQ(t.active_rect[1], 140.0);
  EXPECT_DOUBLE_EQ(t.active_rect[2], 640.0);
  EXPECT_DOUBLE_EQ(t.active_rect[3], 360.0);
  EXPECT_NEAR(t.src_to_tensor[0], 0.5, 1e-12);
  EXPECT_NEAR(t.tensor_to_src[0], 2.0, 1e-12);
  // the whole active rectangle maps to the whole frame; a box inside maps by scale 2 offset 140
  const double active[4] = {0, 140, 640, 360};
  double frame_box[4];
  gst_cuda_prep_transform_box_to_frame(&t, active, frame_box);
  EXPECT_NEAR(frame_box[0], 0, 1e-9);
  EXPECT_NEAR(frame_box[1], 0, 1e-9);
  EXPECT_NEAR(frame_box[2], 1280, 1e-9);
  EXPECT_NEAR(frame_box[3], 720, 1e-9);
  const double det[4] = {100, 200, 50, 25};
  gst_cuda_prep_transform_box_to_frame(&t, det, frame_box);
  EXPECT_NEAR(frame_box[0], 200, 1e-9);
  EXPECT_NEAR(frame_box[1], 120, 1e-9);
  EXPECT_NEAR(frame_box[2], 100, 1e-9);
  EXPECT_NEAR(frame_box[3], 50, 1e-9);
  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

TEST(TensorizeElement, RenegotiatesMidStream) {
  GstHarness* h = new_tensorize("width=64 height=64");
  gst_harness_set_src_caps_str(h, video_caps("NV12", 64, 48).c_str());
  auto a = make_frame(GST_VIDEO_FORMAT_NV12, 64, 48, 4);
  GstBuffer* out = gst_harness_push_and_pull(h, a.buffer);
  ASSERT_NE(out, nullptr);
  gst_buffer_unref(out);

  gst_harness_set_src_caps_str(h, video_caps("BGR", 99, 31).c_str());
  auto b = make_frame(GST_VIDEO_FORMAT_BGR, 99, 31, 5);
  b.view.format = PixelFormat::BGR;
  out = gst_harness_push_and_pull(h, b.buffer);
  ASSERT_NE(out, nullptr);
  GstCudaPrepTransform t;
  ASSERT_TRUE(gst_cuda_prep_buffer_get_transform(out, &t));
  EXPECT_EQ(t.source_width, 99);
  EXPECT_EQ(t.source_height, 31);
  TensorizeConfig cfg;
  cfg.format = PixelFormat::BGR;
  cfg.src_width = 99;
  cfg.src_height = 31;
  cfg.dst_width = cfg.dst_height = 64;
  EXPECT_EQ(read_floats(out), expected_cpu(cfg, b.view));
  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

TEST(TensorizeElement, PropertyChangeWhilePlaying) {
  GstHarness* h = new_tensorize("width=16 height=16");
  gst_harness_set_src_caps_str(h, video_caps("GRAY8", 16, 16).c_str());
  auto a = make_frame(GST_VIDEO_FORMAT_GRAY8, 16, 16, 6);
  GstBuffer* out = gst_harness_push_and_pull(h, gst_buffer_ref(a.buffer));
  auto before = read_floats(out);
  gst_buffer_unref(out);

  // a normalisation change takes effect on the next frame, same caps
  test::set_arg(h, "cudatensorize", "mean", "<0.5>");
  out = gst_harness_push_and_pull(h, gst_buffer_ref(a.buffer));
  auto after = read_floats(out);
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); i++) ASSERT_FLOAT_EQ(after[i], before[i] - 0.5f);
  gst_buffer_unref(out);

  // a shape change renegotiates
  g_object_set(test::element_of(h, "cudatensorize"), "width", 8u, NULL);
  out = gst_harness_push_and_pull(h, gst_buffer_ref(a.buffer));
  EXPECT_STREQ(caps_field(h, "dimensions"), "8:16:3:1");
  EXPECT_EQ(gst_buffer_get_size(out), 8u * 16 * 3 * 4);
  gst_buffer_unref(out);
  gst_buffer_unref(a.buffer);
  gst_harness_teardown(h);
}

// ---- bad input: every case must give a clear error, never a crash or a wrong tensor ----

struct BadSetting {
  const char* props;
  const char* expected;  // substring of the error text
};

class TensorizeElementBadSettings : public ::testing::TestWithParam<BadSetting> {};

INSTANTIATE_TEST_SUITE_P(
    Errors, TensorizeElementBadSettings,
    ::testing::Values(BadSetting{"std=<0>", "std"}, BadSetting{"std=<1,0,1>", "std"},
                      BadSetting{"mean=<0.1,0.2>", "mean needs 1 or 3 values (one per output channel), got 2"},
                      BadSetting{"std=<1,1,1,1>", "std needs 1 or 3 values (one per output channel), got 4"},
                      BadSetting{"roi=<0,0,10>", "roi needs 4 values"},
                      BadSetting{"roi=<0,0,0,10>", "roi width and height must be positive"},
                      BadSetting{"roi=<-20,0,10,10>", "entirely outside the frame"},
                      BadSetting{"width=16384 height=16384", "more than the 2147483648-byte limit"}));

// Zero-sized frames cannot even be described by caps: negotiation fails, nothing is processed.
TEST(TensorizeElement, ZeroSizedInputIsNotNegotiated) {
  GstHarness* h = new_tensorize("");
  gst_harness_set_src_caps_str(h, video_caps("BGR", 0, 48).c_str());
  EXPECT_EQ(gst_harness_push(h, gst_buffer_new_allocate(nullptr, 16, nullptr)), GST_FLOW_NOT_NEGOTIATED);
  EXPECT_EQ(gst_harness_buffers_received(h), 0u);
  gst_harness_teardown(h);
}

// Sizes the property accepts are bounded: 0 and more than 16384 are refused by the param spec.
TEST(TensorizeElement, SizePropertiesAreBounded) {
  GParamSpec* w =
      g_object_class_find_property(G_OBJECT_CLASS(g_type_class_peek(g_type_from_name("GstCudaTensorize"))), "width");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(G_PARAM_SPEC_UINT(w)->minimum, 1u);
  EXPECT_EQ(G_PARAM_SPEC_UINT(w)->maximum, 16384u);
}

TEST(TensorizeElement, CudaCapsWithoutGpuIsANegotiationError) {
  if (cudaprep::cuda::device_count() > 0) GTEST_SKIP() << "a GPU is present";
  GstHarness* h = gst_harness_new_parse("cudatensorize");
  BusWatch bus(h);
  gst_harness_set_src_caps_str(h, "video/x-raw(memory:CUDAMemory),format=NV12,width=64,height=48,framerate=30/1");
  auto f = make_frame(GST_VIDEO_FORMAT_NV12, 64, 48, 10);
  EXPECT_EQ(gst_harness_push(h, f.buffer), GST_FLOW_NOT_NEGOTIATED);
  EXPECT_NE(bus.first_error().find("CUDA memory but no CUDA device is usable"), std::string::npos);
  gst_harness_teardown(h);
}

TEST(TensorizeElement, BackendCudaWithoutGpuFailsToStart) {
  if (cudaprep::cuda::device_count() > 0) GTEST_SKIP() << "a GPU is present";
  GstElement* e = gst_element_factory_make("cudatensorize", nullptr);
  ASSERT_NE(e, nullptr);
  g_object_set(e, "backend", 1 /* cuda */, NULL);
  EXPECT_EQ(test::start_error(e), "No usable CUDA device");
  gst_object_unref(e);
}

TEST(TensorizeElement, RejectsUnsupportedFormatAtNegotiation) {
  GstHarness* h = new_tensorize("");
  gst_harness_set_src_caps_str(h, video_caps("AYUV", 64, 48).c_str());
  GstBuffer* buf = gst_buffer_new_allocate(nullptr, 64 * 48 * 4, nullptr);
  EXPECT_EQ(gst_harness_push(h, buf), GST_FLOW_NOT_NEGOTIATED);
  gst_harness_teardown(h);
}

TEST(TensorizeElement, InspectDocsAreComplete) {
  GstElementFactory* f = gst_element_factory_find("cudatensorize");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(gst_element_factory_get_metadata(f, GST_ELEMENT_METADATA_DESCRIPTION), nullptr);
  GstElement* e = gst_element_factory_create(f, nullptr);
  guint n = 0;
  GParamSpec** specs = g_object_class_list_properties(G_OBJECT_GET_CLASS(e), &n);
  for (guint i = 0; i < n; i++) {
    const gchar* blurb = g_param_spec_get_blurb(specs[i]);
    EXPECT_TRUE(blurb && strlen(blurb) > 8) << g_param_spec_get_name(specs[i]);
  }
  g_free(specs);
  const char* expected[] = {"width",         "height",        "resize-mode", "align",     "pad-value",
                            "interpolation", "channel-order", "scale",       "mean",      "std",
                            "layout",        "dtype",         "roi",         "device-id", "backend",
                            "yuv-matrix",    "yuv-range",     "chroma-site", "gpu-wait"};
  for (const char* name : expected)
    EXPECT_NE(g_object_class_find_property(G_OBJECT_GET_CLASS(e), name), nullptr) << name;
  gst_object_unref(e);
  gst_object_unref(f);
}

// gpu-wait (how a system-memory tensor's download is waited for): the same enum type as
// cudatemplatematch's and cudatensorbatch's, poll by default on both tensor elements (no core
// spins through a download), every way settable by its nick, while playing too.
TEST(TensorizeElement, GpuWaitIsSharedAndDefaultsToPoll) {
  GstElement* tz = gst_element_factory_make("cudatensorize", NULL);
  GstElement* tb = gst_element_factory_make("cudatensorbatch", NULL);
  GstElement* tm = gst_element_factory_make("cudatemplatematch", NULL);
  ASSERT_TRUE(tz && tb && tm);
  GParamSpec* spec = g_object_class_find_property(G_OBJECT_GET_CLASS(tz), "gpu-wait");
  ASSERT_NE(spec, nullptr);
  EXPECT_TRUE(spec->flags & GST_PARAM_MUTABLE_PLAYING);
  for (GstElement* other : {tb, tm}) {
    GParamSpec* o = g_object_class_find_property(G_OBJECT_GET_CLASS(other), "gpu-wait");
    ASSERT_NE(o, nullptr);
    EXPECT_EQ(o->value_type, spec->value_type) << GST_ELEMENT_NAME(other);
  }
  GParamSpec* batch_spec = g_object_class_find_property(G_OBJECT_GET_CLASS(tb), "gpu-wait");
  for (GParamSpec* p : {spec, batch_spec}) {
    GEnumValue* def = g_enum_get_value(G_PARAM_SPEC_ENUM(p)->enum_class, G_PARAM_SPEC_ENUM(p)->default_value);
    ASSERT_NE(def, nullptr);
    EXPECT_STREQ(def->value_nick, "poll");
  }
  for (const char* nick : {"spin", "stream-sync", "blocking", "poll"}) {
    gst_util_set_object_arg(G_OBJECT(tz), "gpu-wait", nick);
    gint v = -1;
    g_object_get(tz, "gpu-wait", &v, NULL);
    GEnumValue* got = g_enum_get_value(G_PARAM_SPEC_ENUM(spec)->enum_class, v);
    ASSERT_NE(got, nullptr) << nick;
    EXPECT_STREQ(got->value_nick, nick);
  }
  gst_object_unref(tz);
  gst_object_unref(tb);
  gst_object_unref(tm);
}

// ---- found from outside (each failed before its fix) ------------------------------------------

using test::start_with_props;
using test::StartResult;

// Invalid settings were posted 7 times, and only once caps were negotiated: now once, at start.
TEST_P(TensorizeElementBadSettings, RefusedOnceAtStart) {
  StartResult r = start_with_props("cudatensorize backend=cpu", GetParam().props);
  EXPECT_EQ(r.ret, GST_STATE_CHANGE_FAILURE);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find(GetParam().expected), std::string::npos) << r.errors[0];
}

// A roi partly outside the frame is clipped to it (and the transform meta maps the clipped roi);
// one entirely outside is refused.
TEST(TensorizeFound, RoiPartlyOutsideIsClipped) {
  GstHarness* h = new_tensorize("width=32 height=32 roi=<40,-8,40,40>");
  gst_harness_set_src_caps_str(h, video_caps("BGR", 64, 48).c_str());
  auto f = make_frame(GST_VIDEO_FORMAT_BGR, 64, 48, 21);
  f.view.format = PixelFormat::BGR;
  GstBuffer* out = gst_harness_push_and_pull(h, f.buffer);
  ASSERT_NE(out, nullptr);
  TensorizeConfig cfg;
  cfg.format = PixelFormat::BGR;
  cfg.src_width = 64;
  cfg.src_height = 48;
  cfg.dst_width = cfg.dst_height = 32;
  cfg.roi = Rect{40, 0, 24, 32};
  EXPECT_EQ(read_floats(out), expected_cpu(cfg, f.view));
  GstCudaPrepTransform t;
  ASSERT_TRUE(gst_cuda_prep_buffer_get_transform(out, &t));
  EXPECT_DOUBLE_EQ(t.source_rect[0], 40);
  EXPECT_DOUBLE_EQ(t.source_rect[1], 0);
  EXPECT_DOUBLE_EQ(t.source_rect[2], 24);
  EXPECT_DOUBLE_EQ(t.source_rect[3], 32);
  gst_buffer_unref(out);
  gst_harness_teardown(h);

  h = new_tensorize("roi=<64,0,10,10>");
  BusWatch bus(h);
  gst_harness_set_src_caps_str(h, video_caps("BGR", 64, 48).c_str());
  auto g = make_frame(GST_VIDEO_FORMAT_BGR, 64, 48, 22);
  EXPECT_NE(gst_harness_push(h, g.buffer), GST_FLOW_OK);
  std::string err = bus.first_error();
  EXPECT_NE(err.find("entirely outside the frame (64x48)"), std::string::npos) << err;
  gst_harness_teardown(h);
}

// backend and device-id set while playing were accepted and read back but had no effect.
TEST(TensorizeFound, BackendAndDeviceIdChangeOnlyWhenStopped) {
  GstHarness* h = new_tensorize("");
  GstElement* e = test::element_of(h, "cudatensorize");
  gst_harness_set_src_caps_str(h, video_caps("GRAY8", 16, 16).c_str());
  auto f = make_frame(GST_VIDEO_FORMAT_GRAY8, 16, 16, 23);
  GstBuffer* out = gst_harness_push_and_pull(h, f.buffer);
  gst_buffer_unref(out);
  g_object_set(e, "backend", 0 /* auto */, "device-id", 3, NULL);
  gint backend = -1, device = -2;
  g_object_get(e, "backend", &backend, "device-id", &device, NULL);
  EXPECT_EQ(backend, 2) << "backend=cpu must stay while playing";
  EXPECT_EQ(device, -1);
  gst_harness_teardown(h);
}

// device-id naming a device that cannot be used, with backend=auto, fell back to the CPU with
// only a debug line: the bus now gets a warning.
TEST(TensorizeFound, UnusableDeviceIdWarnsOnTheBus) {
  StartResult r = start_with_props("cudatensorize", "device-id=57");
  EXPECT_NE(r.ret, GST_STATE_CHANGE_FAILURE);
  EXPECT_TRUE(r.errors.empty());
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("device-id=57"), std::string::npos) << r.warnings[0];
  EXPECT_NE(r.warnings[0].find("CPU"), std::string::npos) << r.warnings[0];
}

// A downstream that refuses our tensor gave a bare "not-negotiated": now the element says what it
// produces and which property sets it.
TEST(TensorizeFound, NegotiationFailureSaysWhy) {
  // dtype set by the user (left unset, it would follow downstream: test_tensor_negotiation.cpp)
  GstHarness* h = new_tensorize("dtype=float32");
  gst_harness_set_sink_caps_str(h, "other/tensors,format=static,num_tensors=1,types=float16");
  BusWatch bus(h);
  gst_harness_set_src_caps_str(h, video_caps("BGR", 64, 48).c_str());
  auto f = make_frame(GST_VIDEO_FORMAT_BGR, 64, 48, 24);
  EXPECT_EQ(gst_harness_push(h, f.buffer), GST_FLOW_NOT_NEGOTIATED);
  std::string err = bus.first_error();
  EXPECT_NE(err.find("Downstream does not accept"), std::string::npos) << err;
  EXPECT_NE(err.find("float32"), std::string::npos) << err;
  EXPECT_NE(err.find("dtype"), std::string::npos) << err;
  gst_harness_teardown(h);
}

// The transform meta was copied unchanged through scalers: a scaler now updates it.
TEST(TensorizeFound, TransformMetaFollowsAScaler) {
  // a tensor's meta, moved onto a 320x240 frame as a user (or video-meta output) would
  GstHarness* tz = new_tensorize("width=64 height=64");
  gst_harness_set_src_caps_str(tz, video_caps("GRAY8", 320, 240).c_str());
  auto f = make_frame(GST_VIDEO_FORMAT_GRAY8, 320, 240, 25);
  GstBuffer* tensor = gst_harness_push_and_pull(tz, f.buffer);
  ASSERT_NE(tensor, nullptr);
  GstCudaPrepTransform before;
  ASSERT_TRUE(gst_cuda_prep_buffer_get_transform(tensor, &before));
  GstBuffer* frame = gst_buffer_new_allocate(nullptr, 320 * 240, nullptr);
  gst_buffer_copy_into(frame, tensor, GST_BUFFER_COPY_META, 0, -1);
  gst_buffer_unref(tensor);
  gst_harness_teardown(tz);

  GstHarness* scale = gst_harness_new_parse("videoscale ! capsfilter caps=video/x-raw,width=160,height=120");
  gst_harness_set_src_caps_str(scale, video_caps("GRAY8", 320, 240).c_str());
  GstBuffer* out = gst_harness_push_and_pull(scale, frame);
  ASSERT_NE(out, nullptr);
  GstCudaPrepTransform after;
  ASSERT_TRUE(gst_cuda_prep_buffer_get_transform(out, &after)) << "videoscale dropped the meta";
  EXPECT_EQ(after.source_width, 160);
  EXPECT_EQ(after.source_height, 120);
  const double box[4] = {10, 20, 30, 12};
  double in_big[4], in_small[4];
  gst_cuda_prep_transform_box_to_frame(&before, box, in_big);
  gst_cuda_prep_transform_box_to_frame(&after, box, in_small);
  for (int i = 0; i < 4; i++) EXPECT_NEAR(in_small[i], in_big[i] / 2, 1e-9) << i;
  gst_buffer_unref(out);
  gst_harness_teardown(scale);
}

// A property set while the element rebuilt its plan could be lost: the changed flag was cleared
// after the settings had been read. The element logs a warning while it builds the plan for a
// YUV input with an unsupported colour matrix; a log hook sets pad-value right then, on the
// streaming thread, between the settings read and the end of the rebuild.
struct SetDuringRebuild {
  GstElement* element;
  guint value;
  bool done;
};
static void set_during_rebuild(GstDebugCategory* category, GstDebugLevel, const gchar*, const gchar*, gint, GObject*,
                               GstDebugMessage* message, gpointer data) {
  auto* hook = static_cast<SetDuringRebuild*>(data);
  if (hook->done || strcmp(gst_debug_category_get_name(category), "cudatensorize") != 0) return;
  if (!strstr(gst_debug_message_get(message), "colour matrix")) return;
  hook->done = true;
  g_object_set(hook->element, "pad-value", hook->value, NULL);
}

TEST(TensorizeFound, PropertySetDuringRebuildIsNotLost) {
  GstHarness* h = new_tensorize("width=8 height=8");
  SetDuringRebuild hook{test::element_of(h, "cudatensorize"), 7, false};
  gst_debug_set_threshold_for_name("cudatensorize", GST_LEVEL_WARNING);
  gst_debug_add_log_function(set_during_rebuild, &hook, nullptr);
  // FCC matrix (2): not one the element implements, so it warns while building the plan
  gst_harness_set_src_caps_str(h, video_caps("NV12", 16, 8, ",colorimetry=(string)2:2:0:0").c_str());
  auto f = make_frame(GST_VIDEO_FORMAT_NV12, 16, 8, 29);
  GstBuffer* first = gst_harness_push_and_pull(h, gst_buffer_ref(f.buffer));
  gst_debug_remove_log_function(set_during_rebuild);
  gst_debug_set_threshold_for_name("cudatensorize", GST_LEVEL_NONE);
  ASSERT_TRUE(hook.done) << "the warning the test hooks into was not logged";
  ASSERT_NE(first, nullptr);
  gst_buffer_unref(first);
  // the next frame must use pad-value=7 (16x8 letterboxed into 8x8: row 0 is padding)
  GstBuffer* out = gst_harness_push_and_pull(h, f.buffer);
  ASSERT_NE(out, nullptr);
  TensorizeConfig cfg;
  cfg.pad_value = 7;
  cfg.src_width = 16;
  cfg.src_height = 8;
  cfg.dst_width = cfg.dst_height = 8;
  TensorizePlan plan;
  ASSERT_TRUE(make_tensorize_plan(cfg, &plan).ok());
  EXPECT_EQ(read_floats(out)[0], plan.pad_out[0]) << "pad-value set during the rebuild was lost";
  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

// Each element says once, when it starts, which path runs: a "cudaprep-backend" element message
// (backend, device-id, reason). backend=cpu says cpu; backend=auto says cpu with the reason where
// no GPU is usable, and the CUDA device otherwise.
TEST(BackendMessage, EveryElementSaysWhichPathRuns) {
  const bool gpu = cudaprep::cuda::device_count() > 0;
  for (const char* factory : {"cudatensorize", "cudatensorbatch", "cudatemplatematch"})
    for (const char* backend : {"cpu", "auto"}) {
      const std::string desc = std::string(factory) + " backend=" + backend;
      GstElement* e = gst_parse_launch(desc.c_str(), nullptr);
      ASSERT_NE(e, nullptr) << desc;
      GstBus* bus = gst_bus_new();
      gst_element_set_bus(e, bus);
      EXPECT_NE(gst_element_set_state(e, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE) << desc;
      std::vector<std::string> said;
      int device_id = -2;
      while (GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_ELEMENT)) {
        const GstStructure* st = gst_message_get_structure(m);
        if (gst_structure_has_name(st, "cudaprep-backend")) {
          said.push_back(std::string(gst_structure_get_string(st, "backend")) + " | " +
                         gst_structure_get_string(st, "reason"));
          gst_structure_get_int(st, "device-id", &device_id);
        }
        gst_message_unref(m);
      }
      gst_element_set_state(e, GST_STATE_NULL);
      gst_object_unref(bus);
      gst_object_unref(e);
      ASSERT_EQ(said.size(), 1u) << desc;
      if (std::string(backend) == "cpu") {
        EXPECT_EQ(said[0], "cpu | backend=cpu") << desc;
        EXPECT_EQ(device_id, -1) << desc;
      } else if (!gpu) {
        EXPECT_EQ(said[0].rfind("cpu | backend=auto: ", 0), 0u) << desc << ": " << said[0];
        EXPECT_EQ(device_id, -1) << desc;
      } else {
        EXPECT_EQ(said[0], "cuda | backend=auto: a CUDA device is usable") << desc;
        EXPECT_GE(device_id, 0) << desc;
      }
    }
}

// The public header's names from before the one gst_cuda_prep_ prefix still compile, to the
// same functions.
TEST(TensorizeElement, PublicHeaderKeepsItsOldNames) {
  EXPECT_EQ(&gst_cudaprep_transform_box_to_frame, &gst_cuda_prep_transform_box_to_frame);
  EXPECT_EQ(&gst_cudaprep_buffer_get_transform, &gst_cuda_prep_buffer_get_transform);
  EXPECT_EQ(&gst_cudaprep_buffer_get_slot_info, &gst_cuda_prep_buffer_get_slot_info);
  EXPECT_STREQ(GST_CUDAPREP_TRANSFORM_META_NAME, GST_CUDA_PREP_TRANSFORM_META_NAME);
}

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new test::GstEnv);
  return RUN_ALL_TESTS();
}
