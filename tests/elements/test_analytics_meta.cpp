// Upstream analytics metadata on the CPU path (issue 12 items 2 and 3):
// - cudatensorize output=video-meta: the frame passes through unchanged with the tensor on it as
//   a GstTensorMeta (GStreamer >= 1.26), read back with the analytics API; builds without the
//   library refuse the mode at start;
// - cudatemplatematch: each match is also a GstAnalyticsODMtd (GStreamer >= 1.24), which
//   objectdetectionoverlay draws.
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "config.h"
#include "gstcudaprepmeta.h"
#include "harness_util.h"
#if CUDAPREP_HAVE_ANALYTICS_OD
#include <gst/analytics/analytics.h>
#endif

using test::video_caps;

// output=video-meta puts one single-frame tensor on each frame: batches and regions (several
// slots, several tensors a frame) are refused once at start, naming the setting, on every build.
TEST(TensorVideoMeta, BatchesAndRegionsAreRefusedAtStart) {
  for (const char* props : {"output=video-meta batch-size=2", "output=video-meta rois=\"<<0,0,8,8>>\"",
                            "output=video-meta roi-meta=true"}) {
    test::StartResult r = test::start_with_props("cudatensorize backend=cpu", props);
    EXPECT_EQ(r.ret, GST_STATE_CHANGE_FAILURE) << props;
    ASSERT_EQ(r.errors.size(), 1u) << props;
    EXPECT_NE(r.errors[0].find("output=video-meta puts one single-frame tensor on each frame: it takes no "
                               "batch-size > 1"),
              std::string::npos)
        << r.errors[0];
  }
  test::StartResult r = test::start_with_props("cudatensorize backend=cpu", "output=video-meta batch-size=3");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("batch-size=3"), std::string::npos) << r.errors[0];
}

#if CUDAPREP_HAVE_ANALYTICS_OD
namespace {

// One frame through `desc` (a harness description) with BGR caps w x h; the output buffer.
GstBuffer* run_one(const std::string& desc, const char* format, GstBuffer* frame, int w, int h) {
  GstHarness* hs = gst_harness_new_parse(desc.c_str());
  gst_harness_set_src_caps_str(hs, video_caps(format, w, h).c_str());
  GstBuffer* out = gst_harness_push_and_pull(hs, frame);
  gst_harness_teardown(hs);
  return out;
}

}  // namespace
#endif

#if CUDAPREP_HAVE_TENSOR_META

struct MetaCase {
  const char* props;
  GstTensorDataType type;
  std::vector<gsize> dims;
};

class TensorVideoMeta : public ::testing::TestWithParam<MetaCase> {};

// The frame comes out as it went in (caps and bytes), carrying one GstTensor: the tensor
// output=tensor makes, with upstream's dims (row-major [1,C,H,W] or [1,H,W,C]) and type, and
// the transform meta on the frame.
TEST_P(TensorVideoMeta, FramePassesWithTheTensorOnIt) {
  const std::string props = std::string("cudatensorize backend=cpu ") + GetParam().props;
  auto f = test::make_frame(GST_VIDEO_FORMAT_BGR, 64, 48, 7);
  const std::vector<uint8_t> frame_bytes = test::buffer_bytes(f.buffer);
  GstBuffer* tensor_out = run_one(props, "BGR", gst_buffer_copy_deep(f.buffer), 64, 48);
  ASSERT_NE(tensor_out, nullptr);

  GstHarness* h = gst_harness_new_parse((props + " output=video-meta").c_str());
  gst_harness_set_src_caps_str(h, video_caps("BGR", 64, 48).c_str());
  GstBuffer* out = gst_harness_push_and_pull(h, f.buffer);
  ASSERT_NE(out, nullptr);
  GstCaps* caps = gst_caps_make_writable(gst_pad_get_current_caps(h->sinkpad));
  GstCaps* in_caps = gst_caps_from_string(video_caps("BGR", 64, 48).c_str());
  /* The frame's caps; GStreamer >= 1.28 builds add the tensors field (test_tensors_caps.cpp). */
  GstStructure* s = gst_caps_get_structure(caps, 0);
  EXPECT_EQ((bool)gst_structure_has_field(s, "tensors"), (bool)CUDAPREP_HAVE_TENSOR_CAPS);
  gst_structure_remove_field(s, "tensors");
  EXPECT_TRUE(gst_caps_is_equal(caps, in_caps));
  gst_caps_unref(in_caps);
  gst_caps_unref(caps);
  EXPECT_EQ(test::buffer_bytes(out), frame_bytes);

  GstTensorMeta* meta = gst_buffer_get_tensor_meta(out);
  ASSERT_NE(meta, nullptr);
  ASSERT_EQ(meta->num_tensors, 1u);
  const gint index = gst_tensor_meta_get_index_from_id(meta, g_quark_from_string("cudaprep-tensorize"));
  ASSERT_EQ(index, 0);
  const GstTensor* t = gst_tensor_meta_get(meta, index);
  EXPECT_EQ(t->data_type, GetParam().type);
  EXPECT_EQ(t->dims_order, GST_TENSOR_DIM_ORDER_ROW_MAJOR);
  EXPECT_EQ(std::vector<gsize>(t->dims, t->dims + t->num_dims), GetParam().dims);
  EXPECT_EQ(test::buffer_bytes(t->data), test::buffer_bytes(tensor_out));

  GstCudaPrepTransform on_frame, on_tensor;
  ASSERT_TRUE(gst_cuda_prep_buffer_get_transform(out, &on_frame));
  ASSERT_TRUE(gst_cuda_prep_buffer_get_transform(tensor_out, &on_tensor));
  EXPECT_EQ(memcmp(on_frame.tensor_to_src, on_tensor.tensor_to_src, sizeof on_frame.tensor_to_src), 0);
  EXPECT_EQ(on_frame.source_width, 64);
  gst_buffer_unref(out);
  gst_buffer_unref(tensor_out);
  gst_harness_teardown(h);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, TensorVideoMeta,
    ::testing::Values(
        MetaCase{"width=40 height=24", GST_TENSOR_DATA_TYPE_FLOAT32, {1, 3, 24, 40}},
        MetaCase{"width=40 height=24 layout=nhwc dtype=float16", GST_TENSOR_DATA_TYPE_FLOAT16, {1, 24, 40, 3}},
        // integer types and gray (issue 12 item 5): C = channels in the dims
        MetaCase{"width=40 height=24 dtype=uint8", GST_TENSOR_DATA_TYPE_UINT8, {1, 3, 24, 40}},
        MetaCase{"width=40 height=24 dtype=uint8 channels=1", GST_TENSOR_DATA_TYPE_UINT8, {1, 1, 24, 40}},
        MetaCase{"width=40 height=24 layout=nhwc dtype=uint8 channels=1", GST_TENSOR_DATA_TYPE_UINT8, {1, 24, 40, 1}},
        MetaCase{"width=40 height=24 layout=nhwc dtype=int8", GST_TENSOR_DATA_TYPE_INT8, {1, 24, 40, 3}}));

// Tensors come from a pool: while frames are held each has its own, and a released frame's
// tensor memory is reused rather than allocated anew.
TEST(TensorVideoMetaPool, TensorsAreReusedNotAllocatedPerFrame) {
  GstHarness* h = gst_harness_new_parse("cudatensorize backend=cpu width=16 height=16 output=video-meta");
  gst_harness_set_src_caps_str(h, video_caps("BGR", 32, 32).c_str());
  auto tensor_memory = [](GstBuffer* b) -> const void* {
    GstTensorMeta* meta = gst_buffer_get_tensor_meta(b);
    EXPECT_NE(meta, nullptr);
    return meta ? (const void*)gst_buffer_peek_memory(gst_tensor_meta_get(meta, 0)->data, 0) : nullptr;
  };
  GstBuffer* a = gst_harness_push_and_pull(h, test::make_frame(GST_VIDEO_FORMAT_BGR, 32, 32, 1).buffer);
  GstBuffer* b = gst_harness_push_and_pull(h, test::make_frame(GST_VIDEO_FORMAT_BGR, 32, 32, 2).buffer);
  ASSERT_TRUE(a && b);
  EXPECT_NE(tensor_memory(a), tensor_memory(b));
  const void* freed = tensor_memory(a);
  gst_buffer_unref(a);
  GstBuffer* c = gst_harness_push_and_pull(h, test::make_frame(GST_VIDEO_FORMAT_BGR, 32, 32, 3).buffer);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(tensor_memory(c), freed);
  EXPECT_NE(freed, nullptr);
  gst_buffer_unref(b);
  gst_buffer_unref(c);
  gst_harness_teardown(h);
}

#else

// This build has no GstTensorMeta: the mode is refused at start with one error saying why.
TEST(TensorVideoMeta, RefusedAtStartWithoutTheAnalyticsLibrary) {
  GstElement* e = gst_parse_launch("cudatensorize backend=cpu output=video-meta", nullptr);
  std::string err = test::start_error(e);
  gst_object_unref(e);
  EXPECT_NE(err.find("output=video-meta needs GStreamer >= 1.26"), std::string::npos) << err;
}

#endif

#if CUDAPREP_HAVE_ANALYTICS_OD

namespace {

const int W = 160, H = 120;

// A flat grey BGRx frame with a textured patch at (px, py), size ps: the template.
GstBuffer* frame_with_patch(int px, int py, int ps) {
  std::mt19937 rng(11);
  GstBuffer* b = gst_buffer_new_allocate(nullptr, (size_t)W * H * 4, nullptr);
  GstMapInfo m;
  gst_buffer_map(b, &m, GST_MAP_WRITE);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      const bool in = x >= px && x < px + ps && y >= py && y < py + ps;
      const uint8_t g = in ? (uint8_t)(rng() & 0xff) : 128;
      uint8_t* p = m.data + ((size_t)y * W + x) * 4;
      p[0] = p[1] = p[2] = g;
      p[3] = 255;
    }
  gst_buffer_unmap(b, &m);
  return b;
}

struct OdEntry {
  std::string type;
  gint x, y, w, h;
  gfloat confidence;
};

std::vector<OdEntry> od_entries(GstBuffer* b) {
  std::vector<OdEntry> out;
  GstAnalyticsRelationMeta* rmeta = gst_buffer_get_analytics_relation_meta(b);
  if (!rmeta) return out;
  gpointer state = nullptr;
  GstAnalyticsMtd mtd;
  while (gst_analytics_relation_meta_iterate(rmeta, &state, gst_analytics_od_mtd_get_mtd_type(), &mtd)) {
    OdEntry e;
    e.type = g_quark_to_string(gst_analytics_od_mtd_get_obj_type((GstAnalyticsODMtd*)&mtd));
    EXPECT_TRUE(gst_analytics_od_mtd_get_location((GstAnalyticsODMtd*)&mtd, &e.x, &e.y, &e.w, &e.h, &e.confidence));
    out.push_back(e);
  }
  return out;
}

}  // namespace

// Each match is an ODMtd of type template-match at the ROI meta's box, confidence = score.
TEST(TemplateMatchAnalytics, EachMatchIsAnObjectDetection) {
  GstBuffer* out = run_one("cudatemplatematch backend=cpu template-rect=<40,30,24,24> draw=false", "BGRx",
                           frame_with_patch(40, 30, 24), W, H);
  ASSERT_NE(out, nullptr);
  auto* roi = (GstVideoRegionOfInterestMeta*)gst_buffer_get_meta(out, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE);
  ASSERT_NE(roi, nullptr);
  double score = 0;
  gst_structure_get_double(gst_video_region_of_interest_meta_get_param(roi, "template-match"), "score", &score);
  auto od = od_entries(out);
  ASSERT_EQ(od.size(), 1u);
  EXPECT_EQ(od[0].type, "template-match");
  EXPECT_EQ(od[0].x, (gint)roi->x);
  EXPECT_EQ(od[0].y, (gint)roi->y);
  EXPECT_EQ(od[0].w, 24);
  EXPECT_EQ(od[0].h, 24);
  EXPECT_EQ(od[0].x, 40);
  EXPECT_EQ(od[0].y, 30);
  EXPECT_FLOAT_EQ(od[0].confidence, (gfloat)score);
  gst_buffer_unref(out);
}

// objectdetectionoverlay (gst-plugins-bad, where the distribution packages it) draws the match:
// red pixels along the box's top edge, none away from it, and nothing without a match.
TEST(TemplateMatchAnalytics, ObjectDetectionOverlayDrawsTheMatches) {
  GstElementFactory* overlay = gst_element_factory_find("objectdetectionoverlay");
  if (!overlay) GTEST_SKIP() << "objectdetectionoverlay is not installed";
  gst_object_unref(overlay);
  auto reddish = [](GstBuffer* b, int x, int y) {
    GstMapInfo m;
    gst_buffer_map(b, &m, GST_MAP_READ);
    const uint8_t* p = m.data + ((size_t)y * W + x) * 4;  // BGRx
    const bool red = p[2] > 200 && p[1] < 80 && p[0] < 80;
    gst_buffer_unmap(b, &m);
    return red;
  };
  auto red_on_top_edge = [&](GstBuffer* b) {
    int n = 0;
    for (int y = 28; y <= 32; y++)
      for (int x = 46; x < 58; x++) n += reddish(b, x, y);
    return n;
  };
  const std::string overlay_desc =
      " ! objectdetectionoverlay draw-labels=false object-detection-outline-color=0xffff0000";
  GstBuffer* drawn = run_one("cudatemplatematch backend=cpu template-rect=<40,30,24,24> draw=false" + overlay_desc,
                             "BGRx", frame_with_patch(40, 30, 24), W, H);
  ASSERT_NE(drawn, nullptr);
  EXPECT_GE(red_on_top_edge(drawn), 12) << "the top edge of the match is not drawn";
  EXPECT_FALSE(reddish(drawn, 5, 5));
  EXPECT_FALSE(reddish(drawn, 150, 110));
  gst_buffer_unref(drawn);
  // without the matcher's metadata: nothing drawn
  GstBuffer* plain = run_one("identity" + overlay_desc, "BGRx", frame_with_patch(40, 30, 24), W, H);
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(red_on_top_edge(plain), 0);
  gst_buffer_unref(plain);
}

#endif

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new test::GstEnv);
  return RUN_ALL_TESTS();
}
