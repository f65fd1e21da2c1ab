// Helpers shared by the element tests: frames with chosen strides, bus errors, caps checks.
#pragma once

#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "image.h"

namespace test {

class GstEnv : public ::testing::Environment {
 public:
  void SetUp() override { gst_init(nullptr, nullptr); }
};

// The bytes of a buffer (mapped for reading).
inline std::vector<uint8_t> buffer_bytes(GstBuffer* b) {
  GstMapInfo m;
  EXPECT_TRUE(gst_buffer_map(b, &m, GST_MAP_READ));
  std::vector<uint8_t> out(m.data, m.data + m.size);
  gst_buffer_unmap(b, &m);
  return out;
}

// A frame in system memory whose planes are padded by `extra_stride` bytes per row and which
// starts `offset` bytes into its buffer; described by a GstVideoMeta as upstream elements do.
struct TestFrame {
  GstBuffer* buffer = nullptr;
  cudaprep::ImageView view;  // host pointers into a private copy, compact planes
  std::vector<std::vector<uint8_t>> planes;
  std::vector<int64_t> strides;
};

inline TestFrame make_frame(GstVideoFormat format, int width, int height, uint32_t seed, int extra_stride = 0,
                            int offset = 0) {
  GstVideoInfo info;
  gst_video_info_set_format(&info, format, width, height);
  TestFrame f;
  std::mt19937 rng(seed);
  gsize offsets[GST_VIDEO_MAX_PLANES] = {0};
  gint strides[GST_VIDEO_MAX_PLANES] = {0};
  // 16-bit samples (P010): planes and rows on even bytes, as any GStreamer allocator makes them.
  if (GST_VIDEO_INFO_COMP_DEPTH(&info, 0) > 8) {
    extra_stride += extra_stride % 2;
    offset += offset % 2;
  }
  gsize total = offset;
  for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES(&info); p++) {
    int row_bytes = 0, rows = 0;  // the widest component row of the plane (YUY2: U and V's)
    for (guint c = 0; c < GST_VIDEO_INFO_N_COMPONENTS(&info); c++) {
      if (GST_VIDEO_FORMAT_INFO_PLANE(info.finfo, c) != p) continue;
      row_bytes = std::max(row_bytes, GST_VIDEO_INFO_COMP_WIDTH(&info, c) * GST_VIDEO_INFO_COMP_PSTRIDE(&info, c));
      rows = std::max(rows, GST_VIDEO_INFO_COMP_HEIGHT(&info, c));
    }
    strides[p] = row_bytes + extra_stride;
    offsets[p] = total;
    total += (gsize)strides[p] * rows;
    std::vector<uint8_t> plane((size_t)strides[p] * rows);
    for (auto& b : plane) b = (uint8_t)(rng() & 0xff);
    f.planes.push_back(std::move(plane));
    f.strides.push_back(strides[p]);
  }
  f.buffer = gst_buffer_new_allocate(nullptr, total, nullptr);
  GstMapInfo map;
  gst_buffer_map(f.buffer, &map, GST_MAP_WRITE);
  memset(map.data, 0xAB, total);
  for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES(&info); p++)
    memcpy(map.data + offsets[p], f.planes[p].data(), f.planes[p].size());
  gst_buffer_unmap(f.buffer, &map);
  gst_buffer_add_video_meta_full(f.buffer, GST_VIDEO_FRAME_FLAG_NONE, format, width, height,
                                 GST_VIDEO_INFO_N_PLANES(&info), offsets, strides);
  f.view.width = width;
  f.view.height = height;
  for (guint p = 0; p < 3; p++) {
    if (p < f.planes.size()) {
      f.view.planes[p].data = f.planes[p].data();
      f.view.planes[p].stride = f.strides[p];
    }
  }
  return f;
}

inline std::string video_caps(const char* format, int w, int h, const char* extra = "") {
  return std::string("video/x-raw,format=") + format + ",width=" + std::to_string(w) + ",height=" + std::to_string(h) +
         ",framerate=30/1" + extra;
}

// The element under test inside a harness made with gst_harness_new_parse (which wraps it in
// a bin: properties must be set on the element, not on the bin). Borrowed reference.
inline GstElement* element_of(GstHarness* h, const char* factory) {
  GstElement* e = gst_harness_find_element(h, factory);
  g_object_unref(e);  // the bin keeps it alive
  return e;
}

inline void set_arg(GstHarness* h, const char* factory, const char* name, const char* value) {
  gst_util_set_object_arg(G_OBJECT(element_of(h, factory)), name, value);
}

// Collects ERROR messages posted by the harnessed element.
class BusWatch {
 public:
  explicit BusWatch(GstHarness* h) : bus_(gst_bus_new()) { gst_element_set_bus(h->element, bus_); }
  ~BusWatch() { gst_object_unref(bus_); }
  // Text of the first error (message and debug), empty if none.
  std::string first_error() {
    std::string out;
    while (GstMessage* msg = gst_bus_pop_filtered(bus_, GST_MESSAGE_ERROR)) {
      if (out.empty()) {
        GError* err = nullptr;
        gchar* dbg = nullptr;
        gst_message_parse_error(msg, &err, &dbg);
        out = std::string(err->message) + " | " + (dbg ? dbg : "");
        g_error_free(err);
        g_free(dbg);
      }
      gst_message_unref(msg);
    }
    return out;
  }
  // Messages of `type` posted so far (popped): their texts, message then debug.
  std::vector<std::string> take(GstMessageType type) {
    std::vector<std::string> out;
    while (GstMessage* msg = gst_bus_pop_filtered(bus_, type)) {
      GError* err = nullptr;
      gchar* dbg = nullptr;
      if (type == GST_MESSAGE_ERROR)
        gst_message_parse_error(msg, &err, &dbg);
      else if (type == GST_MESSAGE_WARNING)
        gst_message_parse_warning(msg, &err, &dbg);
      out.push_back(err ? std::string(err->message) + " | " + (dbg ? dbg : "") : std::string());
      if (err) g_error_free(err);
      g_free(dbg);
      gst_message_unref(msg);
    }
    return out;
  }
  GstBus* bus() { return bus_; }

 private:
  GstBus* bus_;
};

// Takes `element` to PAUSED, which must fail, and returns the message of the error it posted.
inline std::string start_error(GstElement* element) {
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(element, bus);
  EXPECT_EQ(gst_element_set_state(element, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
  std::string text;
  if (GstMessage* msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR)) {
    GError* err = nullptr;
    gst_message_parse_error(msg, &err, nullptr);
    text = err->message;
    g_error_free(err);
    gst_message_unref(msg);
  }
  gst_element_set_state(element, GST_STATE_NULL);
  gst_object_unref(bus);
  return text;
}

// Takes a fresh element to PAUSED (start) with a bus attached; returns the bus messages.
struct StartResult {
  GstStateChangeReturn ret;
  std::vector<std::string> errors, warnings;
};
inline StartResult start_with_props(const char* factory, const char* props) {
  std::string desc = std::string(factory) + " " + props;
  GError* err = nullptr;
  GstElement* e = gst_parse_launch(desc.c_str(), &err);
  EXPECT_EQ(err, nullptr);
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(e, bus);
  StartResult r;
  r.ret = gst_element_set_state(e, GST_STATE_PAUSED);
  while (GstMessage* m = gst_bus_pop_filtered(bus, (GstMessageType)(GST_MESSAGE_ERROR | GST_MESSAGE_WARNING))) {
    GError* ge = nullptr;
    gchar* dbg = nullptr;
    if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR)
      gst_message_parse_error(m, &ge, &dbg);
    else
      gst_message_parse_warning(m, &ge, &dbg);
    (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR ? r.errors : r.warnings)
        .push_back(std::string(ge->message) + " | " + (dbg ? dbg : ""));
    g_error_free(ge);
    g_free(dbg);
    gst_message_unref(m);
  }
  gst_element_set_state(e, GST_STATE_NULL);
  gst_object_unref(bus);
  gst_object_unref(e);
  return r;
}

}  // namespace test
