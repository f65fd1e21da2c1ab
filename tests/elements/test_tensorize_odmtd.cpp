// cudatensorize roi-meta with GstAnalyticsODMtd (GStreamer >= 1.24's analytics library), CPU path:
// the slots equal `cudatensorize rois=...` of the same regions; the class and size filters, the
// meta's region-index and region-id (the ODMtd's id), roi-source (which metas a frame's regions
// come from), rotated boxes (1.26). Builds without the library: roi-source=analytics is refused.
#include <cmath>
#include <string>
#include <vector>

#include "config.h"
#include "gstcudaprepmeta.h"
#include "harness_util.h"
#include "region_tensors.h"
#if CUDAPREP_HAVE_ANALYTICS_OD
#include <gst/analytics/analytics.h>
#endif

using test::all_bytes_of;
using test::make_frame;
using test::new_tensorize;
using test::slot_info;
using test::tensor_of;
using test::video_caps;

namespace {

constexpr int kW = test::kRegionFrameW, kH = test::kRegionFrameH;

}  // namespace

#if CUDAPREP_HAVE_ANALYTICS_OD

namespace {

struct Box {
  const char* type;
  int x, y, w, h;
};

// Adds `boxes` as ODMtds, with a classification entry before each (so that the ODMtds' ids,
// shared by all entries of the relation meta, differ from their indices); their ids in order.
std::vector<int> add_od_mtds(GstBuffer* buf, const std::vector<Box>& boxes) {
  GstAnalyticsRelationMeta* rmeta = gst_buffer_add_analytics_relation_meta(buf);
  std::vector<int> ids;
  for (const Box& b : boxes) {
    GstAnalyticsClsMtd cls;
    EXPECT_TRUE(gst_analytics_relation_meta_add_one_cls_mtd(rmeta, 0.5f, g_quark_from_string("scene"), &cls));
    GstAnalyticsODMtd od;
    EXPECT_TRUE(
        gst_analytics_relation_meta_add_od_mtd(rmeta, g_quark_from_string(b.type), b.x, b.y, b.w, b.h, 0.9f, &od));
    ids.push_back((int)od.id);
  }
  return ids;
}

}  // namespace

// The kept ODMtds fill the slots exactly as `rois=` of the same boxes does (margin and clipping
// included); class list and size filters; region-index counts the frame's ODMtds, region-id is
// the ODMtd's id.
TEST(TensorizeOdMtd, SlotsEqualRoisOfTheSameRegions) {
  const std::vector<Box> boxes = {{"car", 10, 10, 20, 12},   // kept
                                  {"person", 0, 0, 30, 30},  // class not listed
                                  {"truck", 40, 5, 30, 20},  // kept
                                  {"car", 50, 40, 4, 40},    // narrower than roi-min-size
                                  {"car", 0, 0, 90, 20},     // wider than roi-max-size
                                  {"car", -6, 44, 20, 30}};  // kept: partly outside, clipped
  const std::string filters = "roi-type=\"car, truck\" roi-min-size=8 roi-max-size=60 roi-margin=0.25";
  for (const char* format : {"NV12", "BGR"}) {
    const GstVideoFormat gf = gst_video_format_from_string(format);
    auto f = make_frame(gf, kW, kH, 41);
    const std::vector<uint8_t> expected =
        tensor_of("batch-size=4 roi-margin=0.25 rois=<<10,10,20,12>,<40,5,30,20>,<-6,44,20,30>>", format,
                  gst_buffer_copy_deep(f.buffer));
    const std::vector<int> ids = add_od_mtds(f.buffer, boxes);

    GstHarness* h = new_tensorize("batch-size=4 roi-meta=true " + filters);
    gst_harness_set_src_caps_str(h, video_caps(format, kW, kH).c_str());
    GstBuffer* out = gst_harness_push_and_pull(h, f.buffer);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(all_bytes_of(out), expected) << format;
    const int kept[] = {0, 2, 5};
    for (guint i = 0; i < 3; i++) {
      const GstCudaPrepSlotInfo info = slot_info(out, i);
      EXPECT_FALSE(info.empty);
      EXPECT_EQ(info.region_index, kept[i]);
      EXPECT_EQ(info.region_id, ids[kept[i]]);
      EXPECT_NE(info.region_id, info.region_index);
    }
    EXPECT_TRUE(slot_info(out, 3).empty);
    GstCudaPrepTransform t;
    ASSERT_TRUE(gst_cuda_prep_buffer_get_slot_transform(out, 2, &t));
    EXPECT_DOUBLE_EQ(t.source_rect[0], 0);  // <-6,44,20,30> grown to <-11,36,30,46>, clipped
    EXPECT_DOUBLE_EQ(t.source_rect[2], 19);
    gst_buffer_unref(out);
    gst_harness_teardown(h);
  }
}

// roi-source: auto reads a frame's ODMtds when it has any (a detector writing both kinds
// describes the same objects twice), else its ROI metas; roi-meta and analytics read one kind.
TEST(TensorizeOdMtd, RoiSourcePicksWhichMetas) {
  auto both = [] {
    auto f = make_frame(GST_VIDEO_FORMAT_BGR, kW, kH, 43);
    gst_buffer_add_video_region_of_interest_meta(f.buffer, "car", 1, 1, 20, 20)->id = 70;
    add_od_mtds(f.buffer, {{"car", 30, 30, 16, 16}});
    return f.buffer;
  };
  auto roi_only = [] {
    auto f = make_frame(GST_VIDEO_FORMAT_BGR, kW, kH, 44);
    gst_buffer_add_video_region_of_interest_meta(f.buffer, "car", 2, 3, 20, 20)->id = 71;
    return f.buffer;
  };
  struct Case {
    const char* source;
    GstBuffer* (*frame)();
    bool empty;
    int x;  // source-rect x of slot 0
  } cases[] = {{"auto", both, false, 30},
               {"auto", roi_only, false, 2},
               {"roi-meta", both, false, 1},
               {"analytics", both, false, 30},
               {"analytics", roi_only, true, 0}};
  for (const Case& c : cases) {
    GstHarness* h = new_tensorize(std::string("batch-size=2 roi-meta=true roi-source=") + c.source);
    gst_harness_set_src_caps_str(h, video_caps("BGR", kW, kH).c_str());
    GstBuffer* out = gst_harness_push_and_pull(h, c.frame());
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(slot_info(out, 0).empty, c.empty) << c.source << " " << c.x;
    EXPECT_TRUE(slot_info(out, 1).empty) << c.source << " " << c.x;  // never both kinds
    GstCudaPrepTransform t;
    ASSERT_TRUE(gst_cuda_prep_buffer_get_slot_transform(out, 0, &t));
    if (!c.empty) {
      EXPECT_DOUBLE_EQ(t.source_rect[0], c.x) << c.source;
    }
    gst_buffer_unref(out);
    gst_harness_teardown(h);
  }
}

// An ODMtd entirely outside the frame or empty is skipped, named in one warning per stream.
TEST(TensorizeOdMtd, BoxesOutsideTheFrameAreSkippedWithOneWarning) {
  const std::vector<std::string> warnings = test::warnings_skipping_regions_0_and_2(
      "roi-meta=true",
      [] {
        auto f = make_frame(GST_VIDEO_FORMAT_BGR, kW, kH, 45);
        add_od_mtds(f.buffer, {{"car", 100, 0, 10, 10}, {"car", 5, 5, 20, 20}, {"car", 1, 1, -3, 4}});
        return f.buffer;
      },
      2);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("object detection 0: roi <100,0,10,10> is entirely outside the frame (96x64)"),
            std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find("object detection 2: roi width and height must be positive, got -3x4"), std::string::npos)
      << warnings[0];
}

#if GST_CHECK_VERSION(1, 26, 0)
// A rotated box (1.26) is cropped as the upright box around it, gst_analytics_od_mtd_get_location's.
TEST(TensorizeOdMtd, RotatedBoxIsTakenAsTheUprightBoxAroundIt) {
  auto f = make_frame(GST_VIDEO_FORMAT_BGR, kW, kH, 47);
  GstAnalyticsRelationMeta* rmeta = gst_buffer_add_analytics_relation_meta(f.buffer);
  GstAnalyticsODMtd od;
  ASSERT_TRUE(gst_analytics_relation_meta_add_oriented_od_mtd(rmeta, g_quark_from_string("car"), 10, 20, 40, 10,
                                                              (gfloat)(G_PI / 4), 0.9f, &od));
  gint x, y, w, h;
  gfloat confidence;
  ASSERT_TRUE(gst_analytics_od_mtd_get_location(&od, &x, &y, &w, &h, &confidence));
  // 40x10 about its centre (30,25), turned 45 degrees: about 35.4 px a side
  EXPECT_LE(std::abs(x + w / 2.0 - 30), 1);
  EXPECT_LE(std::abs(w - 50 / std::sqrt(2.0)), 1);
  const std::string upright =
      "<" + std::to_string(x) + "," + std::to_string(y) + "," + std::to_string(w) + "," + std::to_string(h) + ">";
  const std::vector<uint8_t> expected = tensor_of("roi=" + upright, "BGR", gst_buffer_copy_deep(f.buffer));
  EXPECT_EQ(tensor_of("roi-meta=true", "BGR", f.buffer), expected);
}
#endif

#else  // no analytics library

TEST(TensorizeOdMtd, AnalyticsSourceIsRefusedWithoutTheLibrary) {
  const test::StartResult r = test::start_with_props("cudatensorize backend=cpu", "roi-meta=true roi-source=analytics");
  EXPECT_EQ(r.ret, GST_STATE_CHANGE_FAILURE);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("roi-source=analytics reads GstAnalyticsODMtd, and this build has no GStreamer "
                             "analytics library"),
            std::string::npos)
      << r.errors[0];
}

#endif

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new test::GstEnv);
  return RUN_ALL_TESTS();
}
