// Helpers of the cudatensorize region tests (rois, roi-meta from either kind of meta): a
// harness of small tensors on the CPU path, bytes of a tensor, and the reference that a slot
// is compared with, `cudatensorize roi=<r>` of the same frame.
#pragma once

#include <string>
#include <vector>

#include "gstcudaprepmeta.h"
#include "harness_util.h"

namespace test {

constexpr int kRegionFrameW = 96, kRegionFrameH = 64;
constexpr size_t kRegionSlotBytes = 32 * 24 * 3 * 4;  // one 32x24 fp32 slot

inline GstHarness* new_tensorize(const std::string& props) {
  return gst_harness_new_parse(("cudatensorize backend=cpu width=32 height=24 " + props).c_str());
}

inline std::vector<uint8_t> bytes_of(GstBuffer* buf, size_t offset, size_t n) {
  GstMapInfo map;
  EXPECT_TRUE(gst_buffer_map(buf, &map, GST_MAP_READ));
  std::vector<uint8_t> out;
  if (offset + n <= map.size) out.assign(map.data + offset, map.data + offset + n);
  gst_buffer_unmap(buf, &map);
  return out;
}

inline std::vector<uint8_t> all_bytes_of(GstBuffer* buf) { return bytes_of(buf, 0, gst_buffer_get_size(buf)); }

// The tensor `cudatensorize <props>` makes of `frame` (a kRegionFrameW x kRegionFrameH frame in
// `format`); the frame is taken.
inline std::vector<uint8_t> tensor_of(const std::string& props, const char* format, GstBuffer* frame) {
  GstHarness* h = new_tensorize(props);
  gst_harness_set_src_caps_str(h, video_caps(format, kRegionFrameW, kRegionFrameH).c_str());
  GstBuffer* out = gst_harness_push_and_pull(h, frame);
  EXPECT_NE(out, nullptr) << props;
  std::vector<uint8_t> v = out ? all_bytes_of(out) : std::vector<uint8_t>();
  if (out) gst_buffer_unref(out);
  gst_harness_teardown(h);
  return v;
}

// What `cudatensorize roi=<r>` gives for the frame of `seed`.
inline std::vector<uint8_t> single_roi_tensor(const char* format, GstVideoFormat gst_format, const std::string& roi,
                                              uint32_t seed) {
  return tensor_of("roi=" + roi, format, make_frame(gst_format, kRegionFrameW, kRegionFrameH, seed).buffer);
}

inline GstCudaPrepSlotInfo slot_info(GstBuffer* out, guint i) {
  GstCudaPrepSlotInfo info = {};
  EXPECT_TRUE(gst_cuda_prep_buffer_get_slot_info(out, i, &info));
  return info;
}

// Pushes `count` BGR frames made by `frame`, each with three regions of which the first and the
// last are to be skipped, through `cudatensorize batch-size=2 <props>`: each tensor must hold
// region 1 then an empty slot. Returns the warnings posted meanwhile.
inline std::vector<std::string> warnings_skipping_regions_0_and_2(const std::string& props, GstBuffer* (*frame)(),
                                                                  int count) {
  GstHarness* h = new_tensorize("batch-size=2 " + props);
  BusWatch bus(h);
  gst_harness_set_src_caps_str(h, video_caps("BGR", kRegionFrameW, kRegionFrameH).c_str());
  for (int i = 0; i < count; i++) {
    GstBuffer* out = gst_harness_push_and_pull(h, frame());
    EXPECT_NE(out, nullptr);
    if (!out) break;
    EXPECT_EQ(slot_info(out, 0).region_index, 1);
    EXPECT_TRUE(slot_info(out, 1).empty);
    gst_buffer_unref(out);
  }
  std::vector<std::string> warnings = bus.take(GST_MESSAGE_WARNING);
  EXPECT_TRUE(bus.first_error().empty());
  gst_harness_teardown(h);
  return warnings;
}

}  // namespace test
