// GstHarness tests of cudatensorize regions and batches on the CPU path (backend=cpu): rois,
// batch-size, the per-slot meta, clipping and skipping of regions, several tensors per frame.
// Each slot is compared with what cudatensorize roi=... gives for the same frame.
#include <cstring>
#include <string>
#include <vector>

#include "gstcudaprepmeta.h"
#include "harness_util.h"
#include "region_tensors.h"
#include "tensorize.h"

using namespace cudaprep;
using test::BusWatch;
using test::bytes_of;
using test::make_frame;
using test::new_tensorize;
using test::single_roi_tensor;
using test::slot_info;
using test::video_caps;

namespace {

constexpr int kW = test::kRegionFrameW, kH = test::kRegionFrameH;

const gchar* caps_dimensions(GstHarness* h) {
  GstCaps* caps = gst_pad_get_current_caps(h->sinkpad);
  static std::string value;
  value = gst_structure_get_string(gst_caps_get_structure(caps, 0), "dimensions");
  gst_caps_unref(caps);
  return value.c_str();
}

}  // namespace

TEST(TensorizeRegions, SlotsEqualSingleRoiTensorsAndMetaSaysWhichRegion) {
  const size_t slot = test::kRegionSlotBytes;
  for (const char* format : {"NV12", "BGR", "I420"}) {
    const GstVideoFormat gf = gst_video_format_from_string(format);
    GstHarness* h = new_tensorize("batch-size=4 rois=<<0,0,40,30>,<33,7,21,51>,<90,60,20,20>>");
    gst_harness_set_src_caps_str(h, video_caps(format, kW, kH).c_str());
    auto f = make_frame(gf, kW, kH, 31);
    GstBuffer* out = gst_harness_push_and_pull(h, f.buffer);
    ASSERT_NE(out, nullptr);
    EXPECT_STREQ(caps_dimensions(h), "32:24:3:4");
    EXPECT_EQ(gst_buffer_get_size(out), 4 * slot);
    EXPECT_EQ(bytes_of(out, 0, slot), single_roi_tensor(format, gf, "<0,0,40,30>", 31)) << format;
    EXPECT_EQ(bytes_of(out, slot, slot), single_roi_tensor(format, gf, "<33,7,21,51>", 31)) << format;
    // partly outside: clipped, as roi is
    EXPECT_EQ(bytes_of(out, 2 * slot, slot), single_roi_tensor(format, gf, "<90,60,6,4>", 31)) << format;
    ASSERT_EQ(gst_cuda_prep_buffer_get_slot_count(out), 4u);
    GstCudaPrepSlotInfo info;
    GstCudaPrepTransform t;
    ASSERT_TRUE(gst_cuda_prep_buffer_get_slot_info(out, 1, &info));
    EXPECT_FALSE(info.empty);
    EXPECT_EQ(info.region_index, 1);
    EXPECT_EQ(info.region_id, -1);
    ASSERT_TRUE(gst_cuda_prep_buffer_get_slot_transform(out, 2, &t));
    EXPECT_DOUBLE_EQ(t.source_rect[0], 90);
    EXPECT_DOUBLE_EQ(t.source_rect[2], 6);
    // slot 3 has no region: pad value, marked empty
    ASSERT_TRUE(gst_cuda_prep_buffer_get_slot_info(out, 3, &info));
    EXPECT_TRUE(info.empty);
    std::vector<uint8_t> pad = bytes_of(out, 3 * slot, slot);
    float v;
    std::memcpy(&v, pad.data(), 4);
    EXPECT_FLOAT_EQ(v, 114.0f / 255.0f);
    // the top-level fields are slot 0's
    ASSERT_TRUE(gst_cuda_prep_buffer_get_transform(out, &t));
    EXPECT_DOUBLE_EQ(t.source_rect[2], 40);
    gst_buffer_unref(out);
    gst_harness_teardown(h);
  }
}

TEST(TensorizeRegions, MoreRegionsThanSlotsGiveSeveralTensorsForTheFrame) {
  GstHarness* h = new_tensorize("batch-size=2 rois=<<0,0,10,10>,<10,0,10,10>,<20,0,10,10>,<30,0,10,10>,<40,0,9,9>>");
  gst_harness_set_src_caps_str(h, video_caps("BGR", kW, kH).c_str());
  auto f = make_frame(GST_VIDEO_FORMAT_BGR, kW, kH, 32);
  GST_BUFFER_PTS(f.buffer) = 5 * GST_SECOND;
  ASSERT_EQ(gst_harness_push(h, f.buffer), GST_FLOW_OK);
  ASSERT_EQ(gst_harness_buffers_in_queue(h), 3u);  // 5 regions, 2 slots each: none dropped
  int region = 0;
  for (int k = 0; k < 3; k++) {
    GstBuffer* out = gst_harness_pull(h);
    EXPECT_EQ(GST_BUFFER_PTS(out), 5 * GST_SECOND);
    for (guint i = 0; i < 2; i++) {
      GstCudaPrepSlotInfo info;
      ASSERT_TRUE(gst_cuda_prep_buffer_get_slot_info(out, i, &info));
      EXPECT_EQ(info.source_pad, nullptr) << "regions of one frame come from no aggregator pad";
      if (region < 5) {
        EXPECT_FALSE(info.empty);
        EXPECT_EQ(info.region_index, region);
      } else {
        EXPECT_TRUE(info.empty);
      }
      EXPECT_EQ(info.source_pts, 5 * GST_SECOND);
      region++;
    }
    gst_buffer_unref(out);
  }
  gst_harness_teardown(h);
}

TEST(TensorizeRegions, RegionsOutsideOrEmptyAreSkippedWithOneWarning) {
  const std::vector<std::string> warnings = test::warnings_skipping_regions_0_and_2(
      "rois=<<200,0,10,10>,<5,5,20,20>,<1,1,0,4>>", [] { return make_frame(GST_VIDEO_FORMAT_BGR, kW, kH, 33).buffer; },
      3);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("rois item 0: roi <200,0,10,10> is entirely outside the frame (96x64)"), std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find("rois item 2: roi width and height must be positive, got 0x4"), std::string::npos)
      << warnings[0];
}

TEST(TensorizeRegions, RoisPropertyRoundTripsAndBadItemIsRefused) {
  GstHarness* h = new_tensorize("rois=<<1,2,3,4>,<5,6,7,8>>");
  GstElement* e = gst_harness_find_element(h, "cudatensorize");
  GValue v = G_VALUE_INIT;
  g_value_init(&v, GST_TYPE_ARRAY);
  g_object_get_property(G_OBJECT(e), "rois", &v);
  ASSERT_EQ(gst_value_array_get_size(&v), 2u);
  const GValue* second = gst_value_array_get_value(&v, 1);
  ASSERT_EQ(gst_value_array_get_size(second), 4u);
  EXPECT_EQ(g_value_get_int(gst_value_array_get_value(second, 0)), 5);
  EXPECT_EQ(g_value_get_int(gst_value_array_get_value(second, 3)), 8);
  g_value_unset(&v);
  gst_object_unref(e);
  gst_harness_teardown(h);

  // A region without 4 values is refused once, at start.
  const test::StartResult r = test::start_with_props("cudatensorize backend=cpu", "rois=<<1,2,3>>");
  EXPECT_EQ(r.ret, GST_STATE_CHANGE_FAILURE);
  const std::vector<std::string>& errors = r.errors;
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("rois item 0 needs 4 values <x, y, width, height>, got 3"), std::string::npos) << errors[0];
}

TEST(TensorizeRegions, RoiMetaFilteredByTypeAndSizeWithMargin) {
  const size_t slot = test::kRegionSlotBytes;
  GstHarness* h =
      new_tensorize("batch-size=3 roi-meta=true roi-type=car roi-min-size=8 roi-max-size=60 roi-margin=0.25");
  gst_harness_set_src_caps_str(h, video_caps("NV12", kW, kH).c_str());
  auto f = make_frame(GST_VIDEO_FORMAT_NV12, kW, kH, 35);
  struct {
    const char* type;
    guint x, y, w, h;
  } boxes[] = {{"car", 10, 10, 20, 12},   // kept: grown by 5 / 3 px each side -> <5,7,30,18>
               {"person", 0, 0, 30, 30},  // other type
               {"car", 50, 40, 4, 40},    // narrower than roi-min-size
               {"car", 0, 0, 90, 20},     // wider than roi-max-size
               {"car", 80, 50, 16, 14}};  // kept: grown to <76,46,24,22>, clipped to <76,46,20,18>
  for (const auto& b : boxes) {
    GstVideoRegionOfInterestMeta* m =
        gst_buffer_add_video_region_of_interest_meta(f.buffer, b.type, b.x, b.y, b.w, b.h);
    m->id = 100 + int(b.x);
  }
  GstBuffer* out = gst_harness_push_and_pull(h, f.buffer);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(bytes_of(out, 0, slot), single_roi_tensor("NV12", GST_VIDEO_FORMAT_NV12, "<5,7,30,18>", 35));
  EXPECT_EQ(bytes_of(out, slot, slot), single_roi_tensor("NV12", GST_VIDEO_FORMAT_NV12, "<76,46,20,18>", 35));
  GstCudaPrepSlotInfo info;
  ASSERT_TRUE(gst_cuda_prep_buffer_get_slot_info(out, 0, &info));
  EXPECT_EQ(info.region_index, 0);
  EXPECT_EQ(info.region_id, 110);
  ASSERT_TRUE(gst_cuda_prep_buffer_get_slot_info(out, 1, &info));
  EXPECT_EQ(info.region_index, 4);
  EXPECT_EQ(info.region_id, 180);
  ASSERT_TRUE(gst_cuda_prep_buffer_get_slot_info(out, 2, &info));
  EXPECT_TRUE(info.empty);
  gst_buffer_unref(out);
  // A frame without regions still gives one tensor, every slot empty.
  auto g = make_frame(GST_VIDEO_FORMAT_NV12, kW, kH, 36);
  out = gst_harness_push_and_pull(h, g.buffer);
  ASSERT_NE(out, nullptr);
  ASSERT_TRUE(gst_cuda_prep_buffer_get_slot_info(out, 0, &info));
  EXPECT_TRUE(info.empty);
  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

// roi-type is a list of classes: "car, bus" keeps both (spaces around a name ignored).
TEST(TensorizeRegions, RoiTypeListKeepsEachClassNamed) {
  GstHarness* h = new_tensorize("batch-size=3 roi-meta=true roi-type=\"car, bus\"");
  gst_harness_set_src_caps_str(h, video_caps("BGR", kW, kH).c_str());
  auto f = make_frame(GST_VIDEO_FORMAT_BGR, kW, kH, 37);
  gst_buffer_add_video_region_of_interest_meta(f.buffer, "bus", 1, 2, 30, 20);
  gst_buffer_add_video_region_of_interest_meta(f.buffer, "person", 3, 4, 10, 10);
  gst_buffer_add_video_region_of_interest_meta(f.buffer, "car", 40, 20, 25, 15);
  GstBuffer* out = gst_harness_push_and_pull(h, f.buffer);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(slot_info(out, 0).region_index, 0);
  EXPECT_EQ(slot_info(out, 1).region_index, 2);
  EXPECT_TRUE(slot_info(out, 2).empty);
  EXPECT_EQ(bytes_of(out, test::kRegionSlotBytes, test::kRegionSlotBytes),
            single_roi_tensor("BGR", GST_VIDEO_FORMAT_BGR, "<40,20,25,15>", 37));
  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

TEST(TensorizeRegions, EmptyClassInRoiTypeIsRefusedAtStart) {
  const test::StartResult r = test::start_with_props("cudatensorize backend=cpu", "roi-meta=true roi-type=car,,bus");
  EXPECT_EQ(r.ret, GST_STATE_CHANGE_FAILURE);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("roi-type \"car,,bus\": class 2 is empty"), std::string::npos) << r.errors[0];
}

// A batch over the 2 GiB a buffer can hold is refused at start (its size overflowed the pool's
// guint size before the check).
TEST(TensorizeRegions, BatchOverOneBufferIsRefusedAtStart) {
  const test::StartResult r =
      test::start_with_props("cudatensorize backend=cpu", "width=4096 height=4096 batch-size=16");
  EXPECT_EQ(r.ret, GST_STATE_CHANGE_FAILURE);
  const std::vector<std::string>& errors = r.errors;
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("batch of 16 tensors 4096x4096x3 needs 3221225472 bytes, more than the "
                           "2147483648-byte limit of one buffer"),
            std::string::npos)
      << errors[0];
}

// The transform meta stays on pool buffers from frame to frame (only the source PTS is
// rewritten): every tensor still carries exactly one meta, and it describes its own frame and
// regions, through a change of rois while playing and a downstream element removing the meta.
TEST(TensorizeRegions, TransformMetaStaysTrueOnReusedPoolBuffers) {
  GstHarness* h = new_tensorize("batch-size=2 rois=<<0,0,40,30>,<33,7,21,51>>");
  gst_harness_set_src_caps_str(h, video_caps("BGR", kW, kH).c_str());
  const GstMetaInfo* info = nullptr;
  std::vector<GstBuffer*> seen;
  bool reused = false;
  for (int i = 0; i < 12; i++) {
    if (i == 5) test::set_arg(h, "cudatensorize", "rois", "<<10,12,20,22>>");
    auto f = make_frame(GST_VIDEO_FORMAT_BGR, kW, kH, 40 + i);
    GST_BUFFER_PTS(f.buffer) = i * GST_SECOND;
    GstBuffer* out = gst_harness_push_and_pull(h, f.buffer);
    ASSERT_NE(out, nullptr) << i;
    info = info ? info : gst_meta_get_info(GST_CUDA_PREP_TRANSFORM_META_NAME);
    int metas = 0;
    gpointer state = nullptr;
    while (GstMeta* m = gst_buffer_iterate_meta(out, &state)) metas += m->info == info;
    EXPECT_EQ(metas, 1) << "frame " << i;
    GstCudaPrepTransform t;
    ASSERT_TRUE(gst_cuda_prep_buffer_get_slot_transform(out, 0, &t)) << i;
    EXPECT_DOUBLE_EQ(t.source_rect[0], i < 5 ? 0 : 10) << i;
    EXPECT_DOUBLE_EQ(t.source_rect[3], i < 5 ? 30 : 22) << i;
    EXPECT_EQ(slot_info(out, 0).source_pts, i * GST_SECOND) << i;
    EXPECT_EQ(slot_info(out, 1).source_pts, i * GST_SECOND) << i;
    EXPECT_EQ(slot_info(out, 1).empty, i >= 5) << i;
    EXPECT_EQ(slot_info(out, 1).region_index, i < 5 ? 1 : -1) << i;
    ASSERT_TRUE(gst_cuda_prep_buffer_get_transform(out, &t)) << i;  // the top level: slot 0's
    EXPECT_DOUBLE_EQ(t.source_rect[0], i < 5 ? 0 : 10) << i;
    for (GstBuffer* b : seen) reused = reused || b == out;
    seen.push_back(out);
    if (i == 8) {  // downstream takes the meta off
      GstBuffer* w = out;
      gst_buffer_remove_meta(w, (GstMeta*)gst_buffer_get_custom_meta(w, GST_CUDA_PREP_TRANSFORM_META_NAME));
    }
    gst_buffer_unref(out);  // back to the pool
  }
  EXPECT_TRUE(reused) << "the pool gave no buffer twice: the reuse path was not exercised";
  gst_harness_teardown(h);
}

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new test::GstEnv);
  return RUN_ALL_TESTS();
}
