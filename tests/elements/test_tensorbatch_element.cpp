// cudatensorbatch on the CPU path (backend=cpu): every slot equals cudatensorize's output for
// that frame alone, bit for bit (photos and the shipped clip, mixed formats and sizes), and the
// aggregation behaviour: live timeout, EOS per pad, pads added and removed while playing, caps
// change on one pad, different frame rates, bad settings.
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "config.h"
#include "gstcudaprepmeta.h"
#include "harness_util.h"
#if CUDAPREP_HAVE_ANALYTICS_OD
#include <gst/analytics/analytics.h>
#endif

using test::BusWatch;
using test::video_caps;

namespace {

using Bytes = std::vector<uint8_t>;

Bytes buffer_bytes(GstBuffer* buf) {
  GstMapInfo map;
  EXPECT_TRUE(gst_buffer_map(buf, &map, GST_MAP_READ));
  Bytes out(map.data, map.data + map.size);
  gst_buffer_unmap(buf, &map);
  return out;
}

// What cudatensorize (backend=cpu, `props`) makes of `frame` (caps `caps`) alone.
struct Alone {
  Bytes tensor;
  GstCudaPrepTransform transform{};
};
Alone tensorize_alone(const std::string& props, const std::string& caps, GstBuffer* frame) {
  GstHarness* h = gst_harness_new_parse(("cudatensorize backend=cpu " + props).c_str());
  gst_harness_set_src_caps_str(h, caps.c_str());
  GstBuffer* out = gst_harness_push_and_pull(h, gst_buffer_ref(frame));
  Alone a;
  EXPECT_NE(out, nullptr);
  if (out) {
    a.tensor = buffer_bytes(out);
    EXPECT_TRUE(gst_cuda_prep_buffer_get_transform(out, &a.transform));
    gst_buffer_unref(out);
  }
  gst_harness_teardown(h);
  return a;
}

// Slot i of a batch as the meta describes it (the C helpers of gstcudaprepmeta.h).
struct SlotMeta {
  std::string pad;
  guint64 pts = GST_CLOCK_TIME_NONE;
  gboolean empty = TRUE;
  GstCudaPrepTransform transform{};
};
SlotMeta slot_meta(GstBuffer* buf, guint i) {
  SlotMeta m;
  GstCudaPrepSlotInfo info;
  EXPECT_TRUE(gst_cuda_prep_buffer_get_slot_info(buf, i, &info)) << "slot " << i;
  EXPECT_TRUE(gst_cuda_prep_buffer_get_slot_transform(buf, i, &m.transform)) << "slot " << i;
  EXPECT_EQ(info.region_index, -1);
  EXPECT_EQ(info.region_id, -1);
  m.empty = info.empty;
  m.pts = info.source_pts;
  m.pad = info.source_pad ? info.source_pad : "";
  return m;
}

// A frame of a photograph from opencv-doc, resized to w x h, in `format` (BGR, I420 or NV12;
// YUV made with BT.601 limited range, chroma averaged over 2x2, odd sizes rounded up).
GstBuffer* photo_frame(const char* name, GstVideoFormat format, int w, int h, GstClockTime pts = 0) {
  cv::Mat img = cv::imread(std::string(TEST_IMAGE_DIR) + "/" + name, cv::IMREAD_COLOR);
  EXPECT_FALSE(img.empty()) << name;
  cv::Mat bgr;
  cv::resize(img, bgr, cv::Size(w, h), 0, 0, cv::INTER_AREA);
  GstVideoInfo info;
  gst_video_info_set_format(&info, format, w, h);
  GstBuffer* buf = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&info), nullptr);
  gst_buffer_add_video_meta_full(buf, GST_VIDEO_FRAME_FLAG_NONE, format, w, h, GST_VIDEO_INFO_N_PLANES(&info),
                                 info.offset, info.stride);
  GstVideoFrame f;
  EXPECT_TRUE(gst_video_frame_map(&f, &info, buf, GST_MAP_WRITE));
  auto px = [&](int x, int y, int c) { return (double)bgr.at<cv::Vec3b>(std::min(y, h - 1), std::min(x, w - 1))[c]; };
  auto yuv = [&](int x, int y, double* out) {
    const double b = px(x, y, 0), g = px(x, y, 1), r = px(x, y, 2);
    out[0] = 16 + 0.257 * r + 0.504 * g + 0.098 * b;
    out[1] = 128 - 0.148 * r - 0.291 * g + 0.439 * b;
    out[2] = 128 + 0.439 * r - 0.368 * g - 0.071 * b;
  };
  auto u8 = [](double v) { return (uint8_t)std::min(255.0, std::max(0.0, v + 0.5)); };
  if (format == GST_VIDEO_FORMAT_BGR) {
    for (int y = 0; y < h; y++)
      memcpy((uint8_t*)GST_VIDEO_FRAME_PLANE_DATA(&f, 0) + y * GST_VIDEO_FRAME_PLANE_STRIDE(&f, 0), bgr.ptr(y), w * 3);
  } else {
    uint8_t* Y = (uint8_t*)GST_VIDEO_FRAME_PLANE_DATA(&f, 0);
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        double v[3];
        yuv(x, y, v);
        Y[y * GST_VIDEO_FRAME_PLANE_STRIDE(&f, 0) + x] = u8(v[0]);
      }
    for (int y = 0; y < (h + 1) / 2; y++)
      for (int x = 0; x < (w + 1) / 2; x++) {
        double s[3] = {0, 0, 0};
        for (int d = 0; d < 4; d++) {
          double v[3];
          yuv(2 * x + d % 2, 2 * y + d / 2, v);
          for (int c = 0; c < 3; c++) s[c] += v[c] / 4;
        }
        if (format == GST_VIDEO_FORMAT_NV12) {
          uint8_t* uv = (uint8_t*)GST_VIDEO_FRAME_PLANE_DATA(&f, 1) + y * GST_VIDEO_FRAME_PLANE_STRIDE(&f, 1);
          uv[2 * x] = u8(s[1]);
          uv[2 * x + 1] = u8(s[2]);
        } else {
          ((uint8_t*)GST_VIDEO_FRAME_PLANE_DATA(&f, 1))[y * GST_VIDEO_FRAME_PLANE_STRIDE(&f, 1) + x] = u8(s[1]);
          ((uint8_t*)GST_VIDEO_FRAME_PLANE_DATA(&f, 2))[y * GST_VIDEO_FRAME_PLANE_STRIDE(&f, 2) + x] = u8(s[2]);
        }
      }
  }
  gst_video_frame_unmap(&f);
  GST_BUFFER_PTS(buf) = pts;
  GST_BUFFER_DURATION(buf) = GST_SECOND / 30;
  return buf;
}

GstBuffer* timed(GstBuffer* buf, GstClockTime pts, GstClockTime duration) {
  GST_BUFFER_PTS(buf) = pts;
  GST_BUFFER_DURATION(buf) = duration;
  return buf;
}

// appsrc name=src<i> ! cudatensorbatch name=b backend=cpu <props> ! appsink name=out
class Batcher {
 public:
  Batcher(const std::string& props, int pads, bool live = false) {
    std::string desc = "cudatensorbatch name=b backend=cpu " + props + " ! appsink name=out sync=false";
    for (int i = 0; i < pads; i++)
      desc += " appsrc name=src" + std::to_string(i) + " format=time is-live=" + (live ? "true" : "false") +
              " ! b.sink_" + std::to_string(i);
    GError* err = nullptr;
    pipeline_ = gst_parse_launch(desc.c_str(), &err);
    EXPECT_EQ(err, nullptr) << (err ? err->message : "");
    batch = gst_bin_get_by_name(GST_BIN(pipeline_), "b");
    sink_ = gst_bin_get_by_name(GST_BIN(pipeline_), "out");
    bus_ = gst_element_get_bus(pipeline_);
    for (int i = 0; i < pads; i++) srcs_.push_back(gst_bin_get_by_name(GST_BIN(pipeline_), src_name(i).c_str()));
  }
  // One pad per caps string, each appsrc set to those caps.
  Batcher(const std::string& props, const std::vector<std::string>& caps, bool live = false)
      : Batcher(props, (int)caps.size(), live) {
    for (size_t i = 0; i < caps.size(); i++) set_caps((int)i, caps[i]);
  }
  ~Batcher() {
    gst_element_set_state(pipeline_, GST_STATE_NULL);
    for (GstElement* s : srcs_)
      if (s) gst_object_unref(s);
    gst_object_unref(bus_);
    gst_object_unref(sink_);
    gst_object_unref(batch);
    gst_object_unref(pipeline_);
  }
  static std::string src_name(int i) { return "src" + std::to_string(i); }
  GstStateChangeReturn play() { return gst_element_set_state(pipeline_, GST_STATE_PLAYING); }
  void set_caps(int pad, const std::string& caps) {
    GstCaps* c = gst_caps_from_string(caps.c_str());
    g_object_set(srcs_[pad], "caps", c, NULL);
    gst_caps_unref(c);
  }
  void push(int pad, GstBuffer* buf) { EXPECT_EQ(gst_app_src_push_buffer(GST_APP_SRC(srcs_[pad]), buf), GST_FLOW_OK); }
  void eos(int pad) { gst_app_src_end_of_stream(GST_APP_SRC(srcs_[pad])); }
  // The next batch (nullptr after 5 s or at EOS). Transfer full.
  GstSample* pull(GstClockTime timeout = 5 * GST_SECOND) {
    return gst_app_sink_try_pull_sample(GST_APP_SINK(sink_), timeout);
  }
  bool at_eos() { return gst_app_sink_is_eos(GST_APP_SINK(sink_)); }
  std::string error() {
    GstMessage* m = gst_bus_pop_filtered(bus_, GST_MESSAGE_ERROR);
    if (!m) return "";
    GError* e = nullptr;
    gchar* dbg = nullptr;
    gst_message_parse_error(m, &e, &dbg);
    std::string s = std::string(e->message) + " | " + (dbg ? dbg : "");
    g_error_free(e);
    g_free(dbg);
    gst_message_unref(m);
    return s;
  }
  // Texts (message | debug) of the warnings posted so far (popped).
  std::vector<std::string> warnings() {
    std::vector<std::string> out;
    while (GstMessage* m = gst_bus_pop_filtered(bus_, GST_MESSAGE_WARNING)) {
      GError* e = nullptr;
      gchar* dbg = nullptr;
      gst_message_parse_warning(m, &e, &dbg);
      out.push_back(std::string(e->message) + " | " + (dbg ? dbg : ""));
      g_error_free(e);
      g_free(dbg);
      gst_message_unref(m);
    }
    return out;
  }
  // Sets property `name` of b.sink_<i> from its text, as a launch line would.
  void set_pad(int i, const char* name, const std::string& value) {
    GstPad* pad = gst_element_get_static_pad(batch, ("sink_" + std::to_string(i)).c_str());
    ASSERT_NE(pad, nullptr);
    gst_util_set_object_arg(G_OBJECT(pad), name, value.c_str());
    gst_object_unref(pad);
  }
  // Adds appsrc src<i> linked to a newly requested b.sink_<i> while playing.
  void add_pad(int i) {
    GstElement* src = gst_element_factory_make("appsrc", src_name(i).c_str());
    g_object_set(src, "format", GST_FORMAT_TIME, NULL);
    gst_bin_add(GST_BIN(pipeline_), src);
    GstPad* sinkpad = gst_element_request_pad_simple(batch, ("sink_" + std::to_string(i)).c_str());
    ASSERT_NE(sinkpad, nullptr);
    GstPad* srcpad = gst_element_get_static_pad(src, "src");
    ASSERT_EQ(gst_pad_link(srcpad, sinkpad), GST_PAD_LINK_OK);
    gst_object_unref(srcpad);
    gst_object_unref(sinkpad);
    gst_element_sync_state_with_parent(src);
    if ((int)srcs_.size() <= i) srcs_.resize(i + 1, nullptr);
    srcs_[i] = GST_ELEMENT(gst_object_ref(src));
  }
  // Unlinks and releases b.sink_<i> and removes its appsrc, while playing.
  void remove_pad(int i) {
    GstPad* sinkpad = gst_element_get_static_pad(batch, ("sink_" + std::to_string(i)).c_str());
    ASSERT_NE(sinkpad, nullptr);
    GstElement* src = srcs_[i];
    gst_element_set_state(src, GST_STATE_NULL);
    gst_bin_remove(GST_BIN(pipeline_), src);
    gst_element_release_request_pad(batch, sinkpad);
    gst_object_unref(sinkpad);
    gst_object_unref(src);
    srcs_[i] = nullptr;
  }

  // Records the GAP events that reach the appsink (start, duration), from now on.
  void watch_gaps() {
    GstPad* pad = gst_element_get_static_pad(sink_, "sink");
    gst_pad_add_probe(
        pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM,
        [](GstPad*, GstPadProbeInfo* info, gpointer self) {
          GstEvent* e = GST_PAD_PROBE_INFO_EVENT(info);
          if (GST_EVENT_TYPE(e) == GST_EVENT_GAP) {
            GstClockTime t, d;
            gst_event_parse_gap(e, &t, &d);
            Batcher* b = static_cast<Batcher*>(self);
            std::lock_guard<std::mutex> hold(b->gaps_lock_);
            b->gaps_.emplace_back(t, d);
          }
          return GST_PAD_PROBE_OK;
        },
        this, nullptr);
    gst_object_unref(pad);
  }
  std::vector<std::pair<GstClockTime, GstClockTime>> gaps() {
    std::lock_guard<std::mutex> hold(gaps_lock_);
    return gaps_;
  }

  GstElement* batch = nullptr;

 private:
  GstElement* pipeline_ = nullptr;
  GstElement* sink_ = nullptr;
  GstBus* bus_ = nullptr;
  std::vector<GstElement*> srcs_;
  std::mutex gaps_lock_;
  std::vector<std::pair<GstClockTime, GstClockTime>> gaps_;
};

const char* dims_of(GstSample* s) {
  static std::string d;
  d = gst_structure_get_string(gst_caps_get_structure(gst_sample_get_caps(s), 0), "dimensions");
  return d.c_str();
}

Bytes slot_bytes_of(GstSample* s, int slot, size_t slot_size) {
  Bytes all = buffer_bytes(gst_sample_get_buffer(s));
  EXPECT_GE(all.size(), (slot + 1) * slot_size);
  return Bytes(all.begin() + slot * slot_size, all.begin() + (slot + 1) * slot_size);
}

// An empty slot holds the normalised pad value everywhere: what cudatensorize puts in the
// letterbox bars of a wide frame (NCHW float32, `w` x `h` tensor, settings `props`).
Bytes empty_slot(const std::string& props, int w, int h) {
  GstBuffer* wide = photo_frame("fruits.jpg", GST_VIDEO_FORMAT_BGR, 4 * w, h / 4 + 1);
  Alone a = tensorize_alone(props, video_caps("BGR", 4 * w, h / 4 + 1), wide);
  gst_buffer_unref(wide);
  Bytes out(a.tensor.size());
  const size_t plane = (size_t)w * h * 4;
  for (size_t i = 0; i < out.size(); i += 4) memcpy(&out[i], &a.tensor[(i / plane) * plane], 4);
  return out;
}

void expect_transform_eq(const GstCudaPrepTransform& a, const GstCudaPrepTransform& b) {
  EXPECT_EQ(a.source_width, b.source_width);
  EXPECT_EQ(a.source_height, b.source_height);
  for (int i = 0; i < 6; i++) EXPECT_DOUBLE_EQ(a.tensor_to_src[i], b.tensor_to_src[i]);
  for (int i = 0; i < 4; i++) EXPECT_DOUBLE_EQ(a.active_rect[i], b.active_rect[i]);
  for (int i = 0; i < 4; i++) EXPECT_DOUBLE_EQ(a.source_rect[i], b.source_rect[i]);
}

struct Source {
  const char* photo;
  const char* format;
  GstVideoFormat gst_format;
  int w, h;
  const char* roi;  // pad property, or nullptr
};

// A frame of test::make_frame with timestamps.
GstBuffer* frame_at(GstVideoFormat format, int w, int h, uint32_t seed, GstClockTime pts, GstClockTime duration) {
  return timed(test::make_frame(format, w, h, seed).buffer, pts, duration);
}

// The running time of `element`'s pipeline now.
GstClockTime running_time_now(GstElement* element) {
  GstClock* clock = gst_element_get_clock(element);
  EXPECT_NE(clock, nullptr);
  if (!clock) return 0;
  const GstClockTime now = gst_clock_get_time(clock);
  gst_object_unref(clock);
  const GstClockTime base = gst_element_get_base_time(element);
  return now > base ? now - base : 0;
}

}  // namespace

// Four pads, NV12 + BGR + I420 + NV12 of different sizes (odd ones too), one with a roi: each
// slot is cudatensorize's output for that frame alone, bit for bit, and its meta says so.
TEST(TensorBatchElement, EachSlotEqualsCudatensorizeAloneOnPhotos) {
  const std::string props = "width=96 height=80 mean=<0.1,0.2,0.3> std=<0.5,0.25,2.0> pad-value=7";
  const Source sources[] = {{"baboon.jpg", "NV12", GST_VIDEO_FORMAT_NV12, 161, 97, nullptr},
                            {"fruits.jpg", "BGR", GST_VIDEO_FORMAT_BGR, 75, 133, nullptr},
                            {"home.jpg", "I420", GST_VIDEO_FORMAT_I420, 128, 96, nullptr},
                            {"building.jpg", "NV12", GST_VIDEO_FORMAT_NV12, 200, 150, "<20,-10,101,77>"}};
  Batcher b(props, 4);
  for (int i = 0; i < 4; i++) {
    b.set_caps(i, video_caps(sources[i].format, sources[i].w, sources[i].h));
    if (sources[i].roi) {
      GstPad* pad = gst_element_get_static_pad(b.batch, ("sink_" + std::to_string(i)).c_str());
      gst_util_set_object_arg(G_OBJECT(pad), "roi", sources[i].roi);
      gst_object_unref(pad);
    }
  }
  ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);
  std::vector<GstBuffer*> frames;
  for (int i = 0; i < 4; i++) {
    frames.push_back(photo_frame(sources[i].photo, sources[i].gst_format, sources[i].w, sources[i].h, 0));
    b.push(i, gst_buffer_ref(frames[i]));
  }
  GstSample* s = b.pull();
  ASSERT_NE(s, nullptr) << b.error();
  EXPECT_STREQ(dims_of(s), "96:80:3:4");
  const size_t slot = 96 * 80 * 3 * 4;
  EXPECT_EQ(gst_buffer_get_size(gst_sample_get_buffer(s)), 4 * slot);
  for (int i = 0; i < 4; i++) {
    const std::string alone_props = props + (sources[i].roi ? std::string(" roi=") + sources[i].roi : "");
    Alone a = tensorize_alone(alone_props, video_caps(sources[i].format, sources[i].w, sources[i].h), frames[i]);
    EXPECT_TRUE(slot_bytes_of(s, i, slot) == a.tensor) << "slot " << i;
    SlotMeta m = slot_meta(gst_sample_get_buffer(s), i);
    EXPECT_EQ(m.pad, "sink_" + std::to_string(i));
    EXPECT_FALSE(m.empty);
    EXPECT_EQ(m.pts, 0u);
    expect_transform_eq(m.transform, a.transform);
    gst_buffer_unref(frames[i]);
  }
  gst_sample_unref(s);
}

// The shipped clip, decoded, into three pads in three formats and sizes; every batch's slots
// equal cudatensorize's tensors of the same frames (NHWC float16 this time).
TEST(TensorBatchElement, ShippedClipSlotsEqualCudatensorize) {
  if (!gst_registry_check_feature_version(gst_registry_get(), "avdec_h264", 1, 0, 0))
    GTEST_SKIP() << "avdec_h264 missing";
  const std::string props = "width=64 height=48 layout=nhwc dtype=float16 resize-mode=crop";
  const char* branches[] = {"NV12,width=320,height=240", "BGR,width=97,height=61", "I420,width=151,height=99"};
  std::string desc = "filesrc location=" TEST_SOURCE_DIR
                     "/data/vtest-h264.mp4 ! qtdemux ! h264parse ! "
                     "avdec_h264 ! tee name=t cudatensorbatch name=b backend=cpu " +
                     props + " ! appsink name=batch sync=false";
  for (int i = 0; i < 3; i++) {
    const std::string n = std::to_string(i);
    desc += " t. ! queue ! videoconvert ! videoscale ! video/x-raw,format=" + std::string(branches[i]) +
            " ! tee name=t" + n + " t" + n + ". ! queue ! b.sink_" + n + " t" + n +
            ". ! queue ! cudatensorize backend=cpu " + props + " ! appsink name=alone" + n + " sync=false";
  }
  GError* err = nullptr;
  GstElement* pipeline = gst_parse_launch(desc.c_str(), &err);
  ASSERT_EQ(err, nullptr) << err->message;
  ASSERT_NE(gst_element_set_state(pipeline, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
  GstElement* batch_sink = gst_bin_get_by_name(GST_BIN(pipeline), "batch");
  GstElement* alone[3];
  for (int i = 0; i < 3; i++) alone[i] = gst_bin_get_by_name(GST_BIN(pipeline), ("alone" + std::to_string(i)).c_str());
  const size_t slot = 64 * 48 * 3 * 2;
  int batches = 0;
  while (GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(batch_sink), 10 * GST_SECOND)) {
    EXPECT_STREQ(dims_of(s), "3:64:48:3");
    for (int i = 0; i < 3; i++) {
      GstSample* a = gst_app_sink_try_pull_sample(GST_APP_SINK(alone[i]), 10 * GST_SECOND);
      ASSERT_NE(a, nullptr);
      EXPECT_TRUE(slot_bytes_of(s, i, slot) == buffer_bytes(gst_sample_get_buffer(a)))
          << "batch " << batches << " slot " << i;
      EXPECT_EQ(slot_meta(gst_sample_get_buffer(s), i).pts, GST_BUFFER_PTS(gst_sample_get_buffer(a)));
      gst_sample_unref(a);
    }
    EXPECT_EQ(GST_BUFFER_PTS(gst_sample_get_buffer(s)), slot_meta(gst_sample_get_buffer(s), 0).pts);
    gst_sample_unref(s);
    batches++;
  }
  EXPECT_GT(batches, 10);
  EXPECT_TRUE(gst_app_sink_is_eos(GST_APP_SINK(batch_sink)));
  gst_element_set_state(pipeline, GST_STATE_NULL);
  for (GstElement* e : alone) gst_object_unref(e);
  gst_object_unref(batch_sink);
  gst_object_unref(pipeline);
}

// Live: a pad that stalls does not hold the batch past the timeout (the aggregator's latency);
// its slot is the pad value, marked empty. When it comes back it fills its slot again.
TEST(TensorBatchElement, StalledLivePadTimesOutIntoAnEmptySlot) {
  const std::string props = "width=32 height=24";
  Batcher b(props + " latency=100000000", {video_caps("BGR", 40, 30), video_caps("BGR", 40, 30)},
            /*live=*/true);
  ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);
  GstBuffer* f = photo_frame("fruits.jpg", GST_VIDEO_FORMAT_BGR, 40, 30);
  b.push(0, timed(gst_buffer_copy(f), 0, GST_SECOND / 30));
  GstSample* s = b.pull();  // only after the 100 ms timeout: sink_1 never sent anything
  ASSERT_NE(s, nullptr) << b.error();
  const size_t slot = 32 * 24 * 3 * 4;
  EXPECT_TRUE(slot_bytes_of(s, 0, slot) == tensorize_alone(props, video_caps("BGR", 40, 30), f).tensor);
  EXPECT_TRUE(slot_bytes_of(s, 1, slot) == empty_slot(props, 32, 24));
  SlotMeta m1 = slot_meta(gst_sample_get_buffer(s), 1);
  EXPECT_TRUE(m1.empty);
  EXPECT_EQ(m1.pad, "sink_1");
  EXPECT_EQ(m1.pts, GST_CLOCK_TIME_NONE);
  EXPECT_FALSE(slot_meta(gst_sample_get_buffer(s), 0).empty);
  gst_sample_unref(s);
  gst_buffer_unref(f);
}

namespace {

// Live, two 8x8 BGR pads: one batch of both at time 0, then 300 ms without a frame and without
// a batch (a stall).
void batch_then_stall(Batcher& b, GstClockTime d) {
  for (int i = 0; i < 2; i++) b.push(i, frame_at(GST_VIDEO_FORMAT_BGR, 8, 8, i, 0, d));
  GstSample* s = b.pull();
  ASSERT_NE(s, nullptr) << b.error();
  gst_sample_unref(s);
  EXPECT_EQ(b.pull(300 * GST_MSECOND), nullptr);
}

}  // namespace

// Live: when every source stalls no batch is made (no batch of empty slots); when they come
// back, batches are made as before.
TEST(TensorBatchElement, AllLivePadsStalledMakeNoBatch) {
  Batcher b("width=8 height=8 latency=20000000", {video_caps("BGR", 8, 8), video_caps("BGR", 8, 8)},
            /*live=*/true);
  ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);
  const GstClockTime d = GST_SECOND / 30;
  ASSERT_NO_FATAL_FAILURE(batch_then_stall(b, d));
  const GstClockTime later = GST_SECOND;  // after the stall, in running time
  for (int i = 0; i < 2; i++) b.push(i, frame_at(GST_VIDEO_FORMAT_BGR, 8, 8, i, later, d));
  GstSample* s = b.pull();
  ASSERT_NE(s, nullptr) << b.error();
  EXPECT_EQ(GST_BUFFER_PTS(gst_sample_get_buffer(s)), later);
  EXPECT_FALSE(slot_meta(gst_sample_get_buffer(s), 0).empty);
  EXPECT_FALSE(slot_meta(gst_sample_get_buffer(s), 1).empty);
  gst_sample_unref(s);
  EXPECT_EQ(b.error(), "");
}

// Live: a batch waits "latency" past its own earliest frame for the other pads, also after a
// stall, when the deadline was being polled on without frames: a camera's frame that comes
// 400 ms after the other's, for the same time (1 s ahead of the clock), is in the same batch.
TEST(TensorBatchElement, LiveBatchWaitsLatencyPastItsEarliestFrame) {
  Batcher b("width=8 height=8 latency=100000000", {video_caps("BGR", 8, 8), video_caps("BGR", 8, 8)},
            /*live=*/true);
  ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);
  const GstClockTime d = GST_SECOND / 30;
  ASSERT_NO_FATAL_FAILURE(batch_then_stall(b, d));
  const GstClockTime later = running_time_now(b.batch) + GST_SECOND;
  b.push(0, frame_at(GST_VIDEO_FORMAT_BGR, 8, 8, 0, later, d));
  g_usleep(400 * G_TIME_SPAN_MILLISECOND);
  b.push(1, frame_at(GST_VIDEO_FORMAT_BGR, 8, 8, 1, later, d));
  GstSample* s = b.pull();
  ASSERT_NE(s, nullptr) << b.error();
  EXPECT_EQ(GST_BUFFER_PTS(gst_sample_get_buffer(s)), later);
  EXPECT_FALSE(slot_meta(gst_sample_get_buffer(s), 0).empty);
  EXPECT_FALSE(slot_meta(gst_sample_get_buffer(s), 1).empty) << "sent before sink_1's frame of the same time";
  gst_sample_unref(s);
  EXPECT_EQ(b.error(), "");
}

// Non-live: EOS on one pad leaves its slot empty while the others go on; EOS on all ends.
TEST(TensorBatchElement, EosOnOnePadEmptiesItsSlotEosOnAllEnds) {
  Batcher b("width=16 height=16", {video_caps("GRAY8", 16, 16), video_caps("RGBA", 20, 10)});
  ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);
  const GstClockTime d = GST_SECOND / 10;
  b.push(0, timed(test::make_frame(GST_VIDEO_FORMAT_GRAY8, 16, 16, 1).buffer, 0, d));
  b.push(1, timed(test::make_frame(GST_VIDEO_FORMAT_RGBA, 20, 10, 2).buffer, 0, d));
  b.eos(1);
  b.push(0, timed(test::make_frame(GST_VIDEO_FORMAT_GRAY8, 16, 16, 3).buffer, d, d));
  b.push(0, timed(test::make_frame(GST_VIDEO_FORMAT_GRAY8, 16, 16, 4).buffer, 2 * d, d));
  b.eos(0);
  for (int n = 0; n < 3; n++) {
    GstSample* s = b.pull();
    ASSERT_NE(s, nullptr) << "batch " << n << " " << b.error();
    GstBuffer* out = gst_sample_get_buffer(s);
    EXPECT_EQ(GST_BUFFER_PTS(out), n * d);
    EXPECT_EQ(GST_BUFFER_DURATION(out), d);
    EXPECT_FALSE(slot_meta(out, 0).empty);
    EXPECT_EQ(slot_meta(out, 1).empty, n > 0) << n;
    gst_sample_unref(s);
  }
  EXPECT_EQ(b.pull(GST_SECOND), nullptr);
  EXPECT_TRUE(b.at_eos());
}

// Different frame rates (non-live): the batch lasts the earliest frame; a 15 fps stream fills
// every other batch of a 30 fps one, each frame in exactly one batch.
TEST(TensorBatchElement, DifferentFrameratesPutEachFrameInOneBatch) {
  Batcher b("width=8 height=8", {video_caps("BGR", 8, 8), "video/x-raw,format=BGR,width=8,height=8,framerate=15/1"});
  ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);
  const GstClockTime d30 = GST_SECOND / 30, d15 = GST_SECOND / 15;
  for (int i = 0; i < 4; i++) b.push(0, timed(test::make_frame(GST_VIDEO_FORMAT_BGR, 8, 8, i).buffer, i * d30, d30));
  for (int i = 0; i < 2; i++)
    b.push(1, timed(test::make_frame(GST_VIDEO_FORMAT_BGR, 8, 8, 9 + i).buffer, i * d15, d15));
  b.eos(0);
  b.eos(1);
  for (int n = 0; n < 4; n++) {
    GstSample* s = b.pull();
    ASSERT_NE(s, nullptr) << n;
    GstBuffer* out = gst_sample_get_buffer(s);
    EXPECT_EQ(GST_BUFFER_PTS(out), n * d30);
    EXPECT_EQ(slot_meta(out, 0).pts, n * d30);
    EXPECT_EQ(slot_meta(out, 1).empty, n % 2 == 1) << n;
    if (n % 2 == 0) {
      EXPECT_EQ(slot_meta(out, 1).pts, (n / 2) * d15);
    }
    if (n == 0) {
      gint num = 0, den = 0;
      gst_structure_get_fraction(gst_caps_get_structure(gst_sample_get_caps(s), 0), "framerate", &num, &den);
      EXPECT_EQ(num, 30);  // the fastest pad's rate
      EXPECT_EQ(den, 1);
    }
    gst_sample_unref(s);
  }
  EXPECT_EQ(b.pull(GST_SECOND), nullptr);
}

// With batch-size=0 a pad requested while playing joins at the next batch (caps W:H:3:3), and
// one released leaves at the next batch (W:H:3:2).
TEST(TensorBatchElement, PadAddedAndRemovedWhilePlaying) {
  Batcher b("width=8 height=8", {video_caps("BGR", 8, 8), video_caps("BGR", 8, 8)});
  ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);
  const GstClockTime d = GST_SECOND / 30;
  GstClockTime t = 0;
  auto push_all = [&](std::vector<int> pads) {
    for (int p : pads) b.push(p, timed(test::make_frame(GST_VIDEO_FORMAT_BGR, 8, 8, p).buffer, t, d));
    t += d;
  };
  push_all({0, 1});
  GstSample* s = b.pull();
  ASSERT_NE(s, nullptr) << b.error();
  EXPECT_STREQ(dims_of(s), "8:8:3:2");
  gst_sample_unref(s);

  b.add_pad(2);
  b.set_caps(2, video_caps("BGR", 8, 8));
  push_all({0, 1, 2});
  s = b.pull();
  ASSERT_NE(s, nullptr) << b.error();
  EXPECT_STREQ(dims_of(s), "8:8:3:3");
  EXPECT_EQ(slot_meta(gst_sample_get_buffer(s), 2).pad, "sink_2");
  EXPECT_FALSE(slot_meta(gst_sample_get_buffer(s), 2).empty);
  gst_sample_unref(s);

  b.remove_pad(1);
  push_all({0, 2});
  s = b.pull();
  ASSERT_NE(s, nullptr) << b.error();
  EXPECT_STREQ(dims_of(s), "8:8:3:2");
  EXPECT_EQ(slot_meta(gst_sample_get_buffer(s), 0).pad, "sink_0");
  EXPECT_EQ(slot_meta(gst_sample_get_buffer(s), 1).pad, "sink_2");
  EXPECT_EQ(b.error(), "");
  gst_sample_unref(s);
}

// One pad changes size and format mid-stream: its slot follows (equal to cudatensorize on the
// new frame), the other pad's slot and the output caps do not change.
TEST(TensorBatchElement, CapsChangeOnOnePadMidStream) {
  const std::string props = "width=24 height=24 resize-mode=stretch";
  Batcher b(props, {video_caps("BGR", 30, 20), video_caps("NV12", 32, 18)});
  ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);
  const GstClockTime d = GST_SECOND / 30;
  GstBuffer* a = photo_frame("baboon.jpg", GST_VIDEO_FORMAT_BGR, 30, 20);
  b.push(0, timed(gst_buffer_copy(a), 0, d));
  b.push(1, timed(photo_frame("home.jpg", GST_VIDEO_FORMAT_NV12, 32, 18), 0, d));
  GstSample* s = b.pull();
  ASSERT_NE(s, nullptr) << b.error();
  gst_sample_unref(s);

  b.set_caps(1, video_caps("I420", 45, 27));
  GstBuffer* c = photo_frame("fruits.jpg", GST_VIDEO_FORMAT_I420, 45, 27);
  b.push(0, timed(gst_buffer_copy(a), d, d));
  b.push(1, timed(gst_buffer_copy(c), d, d));
  s = b.pull();
  ASSERT_NE(s, nullptr) << b.error();
  EXPECT_STREQ(dims_of(s), "24:24:3:2");
  const size_t slot = 24 * 24 * 3 * 4;
  EXPECT_TRUE(slot_bytes_of(s, 0, slot) == tensorize_alone(props, video_caps("BGR", 30, 20), a).tensor);
  Alone alone = tensorize_alone(props, video_caps("I420", 45, 27), c);
  EXPECT_TRUE(slot_bytes_of(s, 1, slot) == alone.tensor);
  expect_transform_eq(slot_meta(gst_sample_get_buffer(s), 1).transform, alone.transform);
  gst_sample_unref(s);
  gst_buffer_unref(a);
  gst_buffer_unref(c);
}

// Camera and decoder formats and chroma siting: each pad's caps chroma-site (mpeg2 on one, none
// on the other) and the chroma-site property apply per slot as cudatensorize applies them.
TEST(TensorBatchElement, CameraFormatsAndChromaSitePerPad) {
  const std::string caps0 = video_caps("YUY2", 37, 23, ",chroma-site=mpeg2"), caps1 = video_caps("P010_10LE", 33, 21);
  for (const char* site : {"", " chroma-site=cosited"}) {
    const std::string props = std::string("width=24 height=16") + site;
    Batcher b(props, {caps0, caps1});
    ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);
    GstBuffer* f0 = test::make_frame(GST_VIDEO_FORMAT_YUY2, 37, 23, 1).buffer;
    GstBuffer* f1 = test::make_frame(GST_VIDEO_FORMAT_P010_10LE, 33, 21, 2).buffer;
    const GstClockTime d = GST_SECOND / 30;
    b.push(0, timed(gst_buffer_ref(f0), 0, d));
    b.push(1, timed(gst_buffer_ref(f1), 0, d));
    GstSample* s = b.pull();
    ASSERT_NE(s, nullptr) << b.error();
    const size_t slot = 24 * 16 * 3 * 4;
    EXPECT_TRUE(slot_bytes_of(s, 0, slot) == tensorize_alone(props, caps0, f0).tensor) << site;
    EXPECT_TRUE(slot_bytes_of(s, 1, slot) == tensorize_alone(props, caps1, f1).tensor) << site;
    // the siting reached the slot: pad 0 without its caps' mpeg2 differs
    if (!*site) {
      EXPECT_FALSE(slot_bytes_of(s, 0, slot) == tensorize_alone(props, video_caps("YUY2", 37, 23), f0).tensor);
    }
    gst_sample_unref(s);
    gst_buffer_unref(f0);
    gst_buffer_unref(f1);
  }
}

// Properties change while playing: a pad's roi and mean take effect at the next batch, a new
// width renegotiates (the batch's dimensions follow).
TEST(TensorBatchElement, PropertyChangesWhilePlaying) {
  Batcher b("width=24 height=16", {video_caps("BGR", 40, 30), video_caps("NV12", 33, 21)});
  ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);
  GstBuffer* f0 = photo_frame("baboon.jpg", GST_VIDEO_FORMAT_BGR, 40, 30);
  GstBuffer* f1 = photo_frame("fruits.jpg", GST_VIDEO_FORMAT_NV12, 33, 21);
  const GstClockTime d = GST_SECOND / 30;
  GstClockTime t = 0;
  auto batch = [&]() {
    b.push(0, timed(gst_buffer_copy(f0), t, d));
    b.push(1, timed(gst_buffer_copy(f1), t, d));
    t += d;
    return b.pull();
  };
  GstSample* s = batch();
  ASSERT_NE(s, nullptr) << b.error();
  gst_sample_unref(s);

  GstPad* pad1 = gst_element_get_static_pad(b.batch, "sink_1");
  gst_util_set_object_arg(G_OBJECT(pad1), "roi", "<5,3,20,11>");
  gst_object_unref(pad1);
  gst_util_set_object_arg(G_OBJECT(b.batch), "mean", "<0.5>");
  s = batch();
  ASSERT_NE(s, nullptr) << b.error();
  const size_t slot = 24 * 16 * 3 * 4;
  EXPECT_TRUE(slot_bytes_of(s, 0, slot) ==
              tensorize_alone("width=24 height=16 mean=<0.5>", video_caps("BGR", 40, 30), f0).tensor);
  EXPECT_TRUE(slot_bytes_of(s, 1, slot) ==
              tensorize_alone("width=24 height=16 mean=<0.5> roi=<5,3,20,11>", video_caps("NV12", 33, 21), f1).tensor);
  gst_sample_unref(s);

  g_object_set(b.batch, "width", 12u, NULL);
  s = batch();
  ASSERT_NE(s, nullptr) << b.error();
  EXPECT_STREQ(dims_of(s), "12:16:3:2");
  EXPECT_TRUE(slot_bytes_of(s, 0, slot / 2) ==
              tensorize_alone("width=12 height=16 mean=<0.5>", video_caps("BGR", 40, 30), f0).tensor);
  gst_sample_unref(s);
  gst_buffer_unref(f0);
  gst_buffer_unref(f1);
}

// A fixed batch-size keeps the caps static: slots without a pad are empty, and no more pads
// than slots can be requested (one clear error).
TEST(TensorBatchElement, FixedBatchSize) {
  Batcher b("width=8 height=8 batch-size=3", {video_caps("BGR", 8, 8), video_caps("BGR", 8, 8)});
  ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);
  for (int i = 0; i < 2; i++) b.push(i, timed(test::make_frame(GST_VIDEO_FORMAT_BGR, 8, 8, i).buffer, 0, GST_SECOND));
  GstSample* s = b.pull();
  ASSERT_NE(s, nullptr) << b.error();
  EXPECT_STREQ(dims_of(s), "8:8:3:3");
  SlotMeta m = slot_meta(gst_sample_get_buffer(s), 2);
  EXPECT_TRUE(m.empty);
  EXPECT_EQ(m.pad, "");
  EXPECT_TRUE(slot_bytes_of(s, 2, 8 * 8 * 3 * 4) == empty_slot("width=8 height=8", 8, 8));
  gst_sample_unref(s);

  GstElement* e = gst_element_factory_make("cudatensorbatch", nullptr);
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(e, bus);
  g_object_set(e, "batch-size", 1u, NULL);
  GstPad* p0 = gst_element_request_pad_simple(e, "sink_%u");
  EXPECT_NE(p0, nullptr);
  EXPECT_EQ(gst_element_request_pad_simple(e, "sink_%u"), nullptr);
  GstMessage* msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  ASSERT_NE(msg, nullptr);
  GError* err = nullptr;
  gst_message_parse_error(msg, &err, nullptr);
  EXPECT_NE(std::string(err->message).find("batch-size=1: no slot left"), std::string::npos) << err->message;
  g_error_free(err);
  gst_message_unref(msg);
  gst_object_unref(p0);
  gst_object_unref(bus);
  gst_object_unref(e);
}

// Bad settings are refused once at start, naming the cause (a pad's roi names the pad).
TEST(TensorBatchElement, BadSettingsAreRefusedAtStart) {
  struct Case {
    const char* props;
    const char* roi;
    const char* expected;
  } cases[] = {{"std=<1,0,1>", nullptr, "std"},
               {"mean=<0.1,0.2>", nullptr, "mean needs 1 or 3 values (one per output channel), got 2"},
               {"", "<0,0,10>", "sink_0: roi needs 4 values"},
               {"", "<0,0,0,10>", "sink_0: roi width and height must be positive"},
               {"width=16384 height=16384", nullptr, "2147483648"},
               {"width=8192 height=8192 batch-size=3", nullptr,
                "a batch of 3 tensors 8192x8192x3 needs 2415919104 bytes, more than the 2147483648-byte limit"}};
  for (const Case& c : cases) {
    Batcher b(c.props, 1);
    if (c.roi) {
      GstPad* pad = gst_element_get_static_pad(b.batch, "sink_0");
      gst_util_set_object_arg(G_OBJECT(pad), "roi", c.roi);
      gst_object_unref(pad);
    }
    EXPECT_EQ(b.play(), GST_STATE_CHANGE_FAILURE) << c.props;
    const std::string err = b.error();
    EXPECT_NE(err.find(c.expected), std::string::npos) << err;
    EXPECT_EQ(b.error(), "") << "posted once";
  }
}

// A roi entirely outside its pad's frame is an error naming the pad, once caps say the size.
TEST(TensorBatchElement, PadRoiOutsideTheFrameIsAnError) {
  Batcher b("width=8 height=8", {video_caps("BGR", 8, 8), video_caps("BGR", 8, 8)});
  GstPad* pad = gst_element_get_static_pad(b.batch, "sink_1");
  gst_util_set_object_arg(G_OBJECT(pad), "roi", "<8,0,4,4>");
  gst_object_unref(pad);
  ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);
  for (int i = 0; i < 2; i++) b.push(i, timed(test::make_frame(GST_VIDEO_FORMAT_BGR, 8, 8, i).buffer, 0, GST_SECOND));
  EXPECT_EQ(b.pull(GST_SECOND), nullptr);
  const std::string err = b.error();
  EXPECT_NE(err.find("sink_1: roi <8,0,4,4> is entirely outside the frame (8x8)"), std::string::npos) << err;
}

// Pad properties from a launch line (GstChildProxy, as compositor's sink_1::xpos): before, the
// parser failed with 'no property "sink_0::roi" in element "cudatensorbatch"'.
TEST(TensorBatchElement, PadPropertiesFromALaunchLine) {
  GError* err = nullptr;
  GstElement* pipeline = gst_parse_launch(
      "cudatensorbatch name=b backend=cpu width=32 height=32 sink_0::roi=\"<0,0,40,30>\" "
      "sink_1::roi=\"<10,20,30,24>\" ! appsink name=out sync=false "
      "videotestsrc num-buffers=1 ! video/x-raw,format=BGR,width=64,height=48 ! b. "
      "videotestsrc num-buffers=1 pattern=ball ! video/x-raw,format=NV12,width=80,height=60 ! b.",
      &err);
  ASSERT_EQ(err, nullptr) << err->message;
  ASSERT_NE(pipeline, nullptr);
  GstElement* batch = gst_bin_get_by_name(GST_BIN(pipeline), "b");
  const char* expected[] = {"< (int)0, (int)0, (int)40, (int)30 >", "< (int)10, (int)20, (int)30, (int)24 >"};
  for (int i = 0; i < 2; i++) {
    GstPad* pad = gst_element_get_static_pad(batch, ("sink_" + std::to_string(i)).c_str());
    ASSERT_NE(pad, nullptr);
    GValue v = G_VALUE_INIT;
    g_value_init(&v, GST_TYPE_ARRAY);
    g_object_get_property(G_OBJECT(pad), "roi", &v);
    gchar* text = gst_value_serialize(&v);
    EXPECT_STREQ(text, expected[i]);
    g_free(text);
    g_value_unset(&v);
    gst_object_unref(pad);
  }
  // The child proxy finds the pads by name, and the batch runs with their regions.
  GObject* child = gst_child_proxy_get_child_by_name(GST_CHILD_PROXY(batch), "sink_1");
  EXPECT_NE(child, nullptr);
  if (child) g_object_unref(child);
  EXPECT_EQ(gst_child_proxy_get_children_count(GST_CHILD_PROXY(batch)), 2u);
  GstElement* out = gst_bin_get_by_name(GST_BIN(pipeline), "out");
  ASSERT_NE(gst_element_set_state(pipeline, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
  GstSample* sample = gst_app_sink_try_pull_sample(GST_APP_SINK(out), 5 * GST_SECOND);
  EXPECT_NE(sample, nullptr);
  if (sample) {
    SlotMeta m = slot_meta(gst_sample_get_buffer(sample), 1);
    EXPECT_EQ(m.pad, "sink_1");
    gst_sample_unref(sample);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(out);
  gst_object_unref(batch);
  gst_object_unref(pipeline);
}

TEST(TensorBatchElement, CudaCapsWithoutGpuIsANegotiationError) {
  Batcher b("width=8 height=8", {"video/x-raw(memory:CUDAMemory),format=BGR,width=8,height=8,framerate=30/1"});
  ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);
  b.push(0, timed(test::make_frame(GST_VIDEO_FORMAT_BGR, 8, 8, 1).buffer, 0, GST_SECOND));
  EXPECT_EQ(b.pull(GST_SECOND), nullptr);
  EXPECT_NE(b.error().find("Input is in CUDA memory but no CUDA device is usable"), std::string::npos);
}

// Each sink pad answers upstream's allocation query with a pool (on the GPU path a CUDA pool on
// the element's stream, so that decoders write their frames in its order and no batch waits for
// them); the query reaches the pad in a running pipeline, as a decoder's would.
TEST(TensorBatchElement, SinkPadsProposeAPool) {
  GstElement* pipeline = gst_parse_launch(
      "videotestsrc num-buffers=3 ! video/x-raw,format=BGR,width=64,height=48 ! "
      "cudatensorbatch name=b backend=cpu width=16 height=16 ! fakesink",
      nullptr);
  ASSERT_NE(pipeline, nullptr);
  GstElement* b = gst_bin_get_by_name(GST_BIN(pipeline), "b");
  GstPad* sinkpad = gst_element_get_static_pad(b, "sink_0");
  ASSERT_NE(sinkpad, nullptr);
  static guint pools_answered = 0;
  static bool asked = false;
  pools_answered = 0;
  asked = false;
  gst_pad_add_probe(
      sinkpad, GST_PAD_PROBE_TYPE_QUERY_DOWNSTREAM,
      [](GstPad*, GstPadProbeInfo* info, gpointer) -> GstPadProbeReturn {
        GstQuery* q = GST_PAD_PROBE_INFO_QUERY(info);
        if (GST_QUERY_TYPE(q) == GST_QUERY_ALLOCATION && (info->type & GST_PAD_PROBE_TYPE_PULL)) {
          asked = true;
          pools_answered = gst_query_get_n_allocation_pools(q);
        }
        return GST_PAD_PROBE_OK;
      },
      nullptr, nullptr);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstBus* bus = gst_element_get_bus(pipeline);
  GstMessage* m = gst_bus_timed_pop_filtered(bus, 10 * GST_SECOND, GstMessageType(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(GST_MESSAGE_TYPE(m), GST_MESSAGE_EOS);
  gst_message_unref(m);
  gst_object_unref(bus);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  EXPECT_TRUE(asked) << "no allocation query reached the sink pad";
  EXPECT_EQ(pools_answered, 1u);
  gst_object_unref(sinkpad);
  gst_object_unref(b);
  gst_object_unref(pipeline);
}

TEST(TensorBatchElement, InspectDocsAreComplete) {
  GstElementFactory* f = gst_element_factory_find("cudatensorbatch");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(gst_element_factory_get_metadata(f, GST_ELEMENT_METADATA_DESCRIPTION), nullptr);
  GstElement* e = gst_element_factory_create(f, nullptr);
  GstPad* pad = gst_element_request_pad_simple(e, "sink_%u");
  ASSERT_NE(pad, nullptr);
  for (GObject* obj : {G_OBJECT(e), G_OBJECT(pad)}) {
    guint n = 0;
    GParamSpec** specs = g_object_class_list_properties(G_OBJECT_GET_CLASS(obj), &n);
    for (guint i = 0; i < n; i++) {
      const gchar* blurb = g_param_spec_get_blurb(specs[i]);
      EXPECT_TRUE(blurb && strlen(blurb) > 8) << g_param_spec_get_name(specs[i]);
    }
    g_free(specs);
  }
  const char* expected[] = {"width",         "height",        "resize-mode", "align",     "pad-value",
                            "interpolation", "channel-order", "scale",       "mean",      "std",
                            "layout",        "dtype",         "channels",    "device-id", "backend",
                            "yuv-matrix",    "yuv-range",     "batch-size",  "latency"};
  for (const char* name : expected)
    EXPECT_NE(g_object_class_find_property(G_OBJECT_GET_CLASS(e), name), nullptr) << name;
  for (const char* name :
       {"roi", "rois", "roi-meta", "roi-source", "roi-type", "roi-min-size", "roi-max-size", "roi-margin"})
    EXPECT_NE(g_object_class_find_property(G_OBJECT_GET_CLASS(pad), name), nullptr) << name;
  for (const char* name : {"roi-meta", "roi-source", "roi-type", "roi-min-size", "roi-max-size", "roi-margin"})
    EXPECT_NE(g_object_class_find_property(G_OBJECT_GET_CLASS(e), name), nullptr) << name;
  // the tensor properties are cudatensorize's: same names and defaults
  GstElement* t = gst_element_factory_make("cudatensorize", nullptr);
  for (const char* name : expected) {
    GParamSpec* a = g_object_class_find_property(G_OBJECT_GET_CLASS(e), name);
    GParamSpec* b = g_object_class_find_property(G_OBJECT_GET_CLASS(t), name);
    // batch-size differs on purpose: 0 here is one slot per pad
    if (!b || !a || !strcmp(name, "backend") || !strcmp(name, "batch-size")) continue;
    gchar* da = gst_value_serialize(g_param_spec_get_default_value(a));
    gchar* db = gst_value_serialize(g_param_spec_get_default_value(b));
    EXPECT_STREQ(da, db) << name;
    g_free(da);
    g_free(db);
  }
  gst_object_unref(t);
  gst_object_unref(pad);
  gst_object_unref(e);
  gst_object_unref(f);
}

// backend, device-id and batch-size take effect at start: refused with a warning while playing.
TEST(TensorBatchElement, StartPropertiesChangeOnlyWhenStopped) {
  Batcher b("width=8 height=8", 1);
  ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);
  gst_element_get_state(b.batch, nullptr, nullptr, GST_SECOND);
  g_object_set(b.batch, "batch-size", 4u, "device-id", 3, NULL);
  guint bs = 9;
  gint id = 9;
  g_object_get(b.batch, "batch-size", &bs, "device-id", &id, NULL);
  EXPECT_EQ(bs, 0u);
  EXPECT_EQ(id, -1);
}

// ---- per-pad regions ------------------------------------------------------------------------

namespace {

// Slot i of a batch with regions, as the meta describes it.
struct RegionSlot {
  std::string pad;
  int index = -1, id = -1;
  gboolean empty = TRUE;
  guint64 pts = GST_CLOCK_TIME_NONE;
  GstCudaPrepTransform transform{};
};
RegionSlot region_slot(GstBuffer* buf, guint i) {
  RegionSlot r;
  GstCudaPrepSlotInfo info;
  EXPECT_TRUE(gst_cuda_prep_buffer_get_slot_info(buf, i, &info)) << "slot " << i;
  EXPECT_TRUE(gst_cuda_prep_buffer_get_slot_transform(buf, i, &r.transform)) << "slot " << i;
  r.pad = info.source_pad ? info.source_pad : "";
  r.index = info.region_index;
  r.id = info.region_id;
  r.empty = info.empty;
  r.pts = info.source_pts;
  return r;
}

// A region of a camera's frame that a slot must hold: `cudatensorize roi=<roi>` of that frame.
struct Expected {
  int camera;       // index into the test's cameras
  std::string roi;  // "<x,y,w,h>" before clipping, "" for the whole frame
  int index, id;    // region-index, region-id
};

struct Camera {
  const char* photo;
  const char* format;
  GstVideoFormat gst_format;
  int w, h;
};

// Checks the slots of `tensors` (in order; slots of B each) against `expected` then empty slots:
// bytes equal to `cudatensorize <props> roi=...` of the camera's frame alone, meta naming the pad,
// region index and id, the frame's PTS and cudatensorize's transform; every tensor says k of n.
void expect_region_slots(const std::vector<GstSample*>& tensors, int slots, const std::string& props,
                         const std::vector<Camera>& cams, const std::vector<GstBuffer*>& frames,
                         const std::vector<Expected>& expected, const Bytes& empty) {
  const size_t slot_size = gst_buffer_get_size(gst_sample_get_buffer(tensors[0])) / slots;
  for (size_t k = 0; k < tensors.size(); k++) {
    GstBuffer* buf = gst_sample_get_buffer(tensors[k]);
    gint index = -1, count = -1;
    EXPECT_TRUE(gst_cuda_prep_buffer_get_tensor_count(buf, &index, &count));
    EXPECT_EQ(index, (gint)k);
    EXPECT_EQ(count, (gint)tensors.size());
    EXPECT_EQ(GST_BUFFER_PTS(buf), GST_BUFFER_PTS(gst_sample_get_buffer(tensors[0])));
    for (int i = 0; i < slots; i++) {
      const size_t n = k * slots + i;
      const RegionSlot m = region_slot(buf, i);
      if (n >= expected.size()) {
        EXPECT_TRUE(m.empty) << "tensor " << k << " slot " << i;
        EXPECT_TRUE(slot_bytes_of(tensors[k], i, slot_size) == empty) << "tensor " << k << " slot " << i;
        EXPECT_EQ(m.pad, "") << "tensor " << k << " slot " << i << ": a slot no pad had";
        continue;
      }
      const Expected& e = expected[n];
      const Camera& c = cams[e.camera];
      const std::string roi = e.roi.empty() ? "" : " roi=" + e.roi;
      Alone a = tensorize_alone(props + roi, video_caps(c.format, c.w, c.h), frames[e.camera]);
      EXPECT_FALSE(m.empty) << "tensor " << k << " slot " << i;
      EXPECT_TRUE(slot_bytes_of(tensors[k], i, slot_size) == a.tensor) << "tensor " << k << " slot " << i;
      EXPECT_EQ(m.pad, "sink_" + std::to_string(e.camera)) << "tensor " << k << " slot " << i;
      EXPECT_EQ(m.index, e.index) << "tensor " << k << " slot " << i;
      EXPECT_EQ(m.id, e.id) << "tensor " << k << " slot " << i;
      EXPECT_EQ(m.pts, GST_BUFFER_PTS(frames[e.camera]));
      expect_transform_eq(m.transform, a.transform);
    }
  }
}

// Pulls the tensors of one batch window: `n` tensors, then nothing more within 200 ms.
std::vector<GstSample*> pull_window(Batcher& b, size_t n) {
  std::vector<GstSample*> out;
  for (size_t k = 0; k < n; k++) {
    GstSample* s = b.pull();
    EXPECT_NE(s, nullptr) << "tensor " << k << ": " << b.error();
    if (!s) break;
    out.push_back(s);
  }
  return out;
}

void unref_all(std::vector<GstSample*>& samples) {
  for (GstSample* s : samples) gst_sample_unref(s);
  samples.clear();
}

GstVideoRegionOfInterestMeta* add_roi_meta(GstBuffer* buf, const char* type, guint x, guint y, guint w, guint h,
                                           gint id) {
  GstVideoRegionOfInterestMeta* m = gst_buffer_add_video_region_of_interest_meta(buf, type, x, y, w, h);
  m->id = id;
  return m;
}

constexpr size_t kFlexibleHeader = 128;  // NNStreamer's GstTensorMetaInfo header, version 1

// A flexible tensor (batch-mode=dynamic): its header's fields and the tensor after it.
struct Flexible {
  guint32 magic = 0, version = 0, type = 0, format = 0, media = 0;
  std::vector<guint32> dims;  // dimension[] up to the first 0
  bool rest_zero = true;      // every other word of the header is 0
  Bytes payload;
};
Flexible flexible_of(GstBuffer* buf) {
  Flexible f;
  const Bytes all = buffer_bytes(buf);
  EXPECT_GE(all.size(), kFlexibleHeader);
  if (all.size() < kFlexibleHeader) return f;
  guint32 w[kFlexibleHeader / 4];
  memcpy(w, all.data(), kFlexibleHeader);
  f.magic = w[0];
  f.version = w[1];
  f.type = w[2];
  int i = 3;
  for (; i < 19 && w[i]; i++) f.dims.push_back(w[i]);
  for (; i < 19; i++) f.rest_zero &= w[i] == 0;
  f.format = w[19];
  f.media = w[20];
  for (i = 21; i < (int)(kFlexibleHeader / 4); i++) f.rest_zero &= w[i] == 0;
  f.payload.assign(all.begin() + kFlexibleHeader, all.end());
  return f;
}

// The header of a float32 NCHW tensor of `count` w x h colour slots, and its size.
void expect_flexible_header(const Flexible& f, int w, int h, int count) {
  EXPECT_EQ(f.magic, 0xfeedccedu);
  EXPECT_EQ(f.version, 0xDE001000u);  // 1.0
  EXPECT_EQ(f.type, 7u);              // _NNS_FLOAT32
  EXPECT_EQ(f.dims, (std::vector<guint32>{(guint32)w, (guint32)h, 3u, (guint32)count}));
  EXPECT_EQ(f.format, 1u);  // _NNS_TENSOR_FORMAT_FLEXIBLE
  EXPECT_EQ(f.media, 4u);   // _NNS_TENSOR
  EXPECT_TRUE(f.rest_zero);
  EXPECT_EQ(f.payload.size(), (size_t)w * h * 3 * 4 * count);
}

// expect_region_slots for a dynamic batch of at most `slots` a tensor: tensor k holds exactly
// the window's slots [k * slots, k * slots + its batch), its header and meta say how many, and
// each is `cudatensorize <props> roi=...` of its camera's frame alone, with its meta.
void expect_dynamic_slots(const std::vector<GstSample*>& tensors, int slots, const std::string& props,
                          const std::vector<Camera>& cams, const std::vector<GstBuffer*>& frames,
                          const std::vector<Expected>& expected) {
  EXPECT_EQ(tensors.size(), (expected.size() + slots - 1) / slots);
  for (size_t k = 0; k < tensors.size(); k++) {
    GstBuffer* buf = gst_sample_get_buffer(tensors[k]);
    const int count = (int)std::min<size_t>(slots, expected.size() - std::min(expected.size(), k * slots));
    const Flexible f = flexible_of(buf);
    ASSERT_EQ(f.dims.size(), 4u) << "tensor " << k;
    expect_flexible_header(f, (int)f.dims[0], (int)f.dims[1], count);
    EXPECT_EQ(gst_cuda_prep_buffer_get_slot_count(buf), (guint)count) << "tensor " << k;
    gint index = -1, total = -1;
    EXPECT_TRUE(gst_cuda_prep_buffer_get_tensor_count(buf, &index, &total));
    EXPECT_EQ(index, (gint)k);
    EXPECT_EQ(total, (gint)tensors.size());
    EXPECT_EQ(GST_BUFFER_PTS(buf), GST_BUFFER_PTS(gst_sample_get_buffer(tensors[0])));
    const size_t slot_size = (size_t)f.dims[0] * f.dims[1] * 3 * 4;
    for (int i = 0; i < count && f.payload.size() >= (i + 1) * slot_size; i++) {
      const Expected& e = expected[k * slots + i];
      const Camera& c = cams[e.camera];
      const std::string roi = e.roi.empty() ? "" : " roi=" + e.roi;
      Alone a = tensorize_alone(props + roi, video_caps(c.format, c.w, c.h), frames[e.camera]);
      const RegionSlot m = region_slot(buf, i);
      EXPECT_FALSE(m.empty) << "tensor " << k << " slot " << i;
      EXPECT_TRUE(Bytes(f.payload.begin() + i * slot_size, f.payload.begin() + (i + 1) * slot_size) == a.tensor)
          << "tensor " << k << " slot " << i;
      EXPECT_EQ(m.pad, "sink_" + std::to_string(e.camera)) << "tensor " << k << " slot " << i;
      EXPECT_EQ(m.index, e.index) << "tensor " << k << " slot " << i;
      EXPECT_EQ(m.id, e.id) << "tensor " << k << " slot " << i;
      EXPECT_EQ(m.pts, GST_BUFFER_PTS(frames[e.camera]));
      expect_transform_eq(m.transform, a.transform);
    }
  }
}

}  // namespace

// Three cameras (NV12, BGR, I420 photos of different, odd sizes): sink_0 with three rois (two
// partly outside its frame: clipped), sink_1 with none (its roi: one slot, as before), sink_2
// with one roi entirely outside (skipped, one warning) and one inside. The five slots fill
// batch-size=3 twice: two tensors for the one batch window, same timestamps, none dropped, and
// every slot is `cudatensorize roi=<that region>` of that camera's frame alone, bit for bit.
TEST(TensorBatchRegions, EverySlotEqualsCudatensorizeRoiOfItsCamera) {
  const std::string props = "width=48 height=40 mean=<0.1,0.2,0.3> std=<0.5,0.25,2.0> pad-value=7";
  const std::vector<Camera> cams = {{"baboon.jpg", "NV12", GST_VIDEO_FORMAT_NV12, 161, 97},
                                    {"fruits.jpg", "BGR", GST_VIDEO_FORMAT_BGR, 75, 133},
                                    {"home.jpg", "I420", GST_VIDEO_FORMAT_I420, 128, 96}};
  Batcher b(props + " batch-size=3", 3);
  for (int i = 0; i < 3; i++) b.set_caps(i, video_caps(cams[i].format, cams[i].w, cams[i].h));
  b.set_pad(0, "rois", "<<0,0,100,60>,<120,50,80,80>,<-10,-10,30,30>>");
  b.set_pad(1, "roi", "<5,10,60,100>");
  b.set_pad(2, "rois", "<<200,0,10,10>,<32,16,64,48>>");
  ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);
  std::vector<GstBuffer*> frames;
  for (int i = 0; i < 3; i++) {
    frames.push_back(photo_frame(cams[i].photo, cams[i].gst_format, cams[i].w, cams[i].h, 0));
    b.push(i, gst_buffer_ref(frames[i]));
  }
  std::vector<GstSample*> tensors = pull_window(b, 2);
  ASSERT_EQ(tensors.size(), 2u);
  EXPECT_STREQ(dims_of(tensors[0]), "48:40:3:3");
  const std::vector<Expected> expected = {{0, "<0,0,100,60>", 0, -1},
                                          {0, "<120,50,80,80>", 1, -1},
                                          {0, "<-10,-10,30,30>", 2, -1},
                                          {1, "<5,10,60,100>", -1, -1},
                                          {2, "<32,16,64,48>", 1, -1}};
  expect_region_slots(tensors, 3, props, cams, frames, expected, empty_slot(props, 48, 40));
  // the clipped regions: the meta's source-rect says what was used
  const RegionSlot clipped = region_slot(gst_sample_get_buffer(tensors[0]), 1);
  EXPECT_DOUBLE_EQ(clipped.transform.source_rect[2], 41.0);
  EXPECT_DOUBLE_EQ(clipped.transform.source_rect[3], 47.0);
  const std::vector<std::string> warnings = b.warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("sink_2: rois item 0"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("entirely outside the frame"), std::string::npos) << warnings[0];
  EXPECT_EQ(b.error(), "");
  unref_all(tensors);
  for (GstBuffer* f : frames) gst_buffer_unref(f);
}

// roi-meta from GstVideoRegionOfInterestMeta: element-wide roi-meta, roi-type=car and
// roi-min-size, sink_1 with its own roi-type=person. Boxes of other classes or too small are
// left out, one partly outside is clipped, one entirely outside is skipped with one warning for
// the stream; region-index counts the frame's metas, region-id is the meta's id. In the next
// window sink_0's frame has no objects: it gives no slot.
TEST(TensorBatchRegions, RoiMetaRegionsFilteredPerPad) {
  const std::string props = "width=32 height=24";
  const std::vector<Camera> cams = {{"fruits.jpg", "BGR", GST_VIDEO_FORMAT_BGR, 96, 64},
                                    {"baboon.jpg", "NV12", GST_VIDEO_FORMAT_NV12, 80, 60}};
  Batcher b(props + " batch-size=4 roi-meta=true roi-type=car roi-min-size=8", 2);
  for (int i = 0; i < 2; i++) b.set_caps(i, video_caps(cams[i].format, cams[i].w, cams[i].h));
  b.set_pad(1, "roi-type", "person");
  ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);

  std::vector<GstBuffer*> frames = {photo_frame(cams[0].photo, cams[0].gst_format, cams[0].w, cams[0].h, 0),
                                    photo_frame(cams[1].photo, cams[1].gst_format, cams[1].w, cams[1].h, 0)};
  add_roi_meta(frames[0], "car", 10, 5, 30, 20, 70);      // 0: kept
  add_roi_meta(frames[0], "person", 0, 0, 20, 20, 71);    // 1: class
  add_roi_meta(frames[0], "car", 50, 30, 4, 4, 72);       // 2: too small
  add_roi_meta(frames[0], "car", 80, 40, 40, 40, 73);     // 3: partly outside, clipped
  add_roi_meta(frames[0], "car", 200, 200, 20, 20, 74);   // 4: entirely outside, skipped
  add_roi_meta(frames[1], "person", 20, 10, 30, 40, 80);  // 0: kept
  add_roi_meta(frames[1], "car", 0, 0, 30, 30, 81);       // 1: class (this pad's)
  for (int i = 0; i < 2; i++) b.push(i, gst_buffer_ref(frames[i]));
  std::vector<GstSample*> tensors = pull_window(b, 1);
  ASSERT_EQ(tensors.size(), 1u);
  const Bytes empty = empty_slot(props, 32, 24);
  expect_region_slots(tensors, 4, props, cams, frames,
                      {{0, "<10,5,30,20>", 0, 70}, {0, "<80,40,40,40>", 3, 73}, {1, "<20,10,30,40>", 0, 80}}, empty);
  unref_all(tensors);
  for (GstBuffer* f : frames) gst_buffer_unref(f);

  // next window: no object on sink_0 (one outside the frame again: no second warning)
  frames = {photo_frame(cams[0].photo, cams[0].gst_format, cams[0].w, cams[0].h, GST_SECOND),
            photo_frame(cams[1].photo, cams[1].gst_format, cams[1].w, cams[1].h, GST_SECOND)};
  add_roi_meta(frames[0], "car", 300, 0, 20, 20, 90);
  add_roi_meta(frames[1], "person", 5, 5, 20, 20, 91);
  for (int i = 0; i < 2; i++) b.push(i, gst_buffer_ref(frames[i]));
  tensors = pull_window(b, 1);
  ASSERT_EQ(tensors.size(), 1u);
  EXPECT_EQ(GST_BUFFER_PTS(gst_sample_get_buffer(tensors[0])), GST_SECOND);
  expect_region_slots(tensors, 4, props, cams, frames, {{1, "<5,5,20,20>", 0, 91}}, empty);
  unref_all(tensors);
  for (GstBuffer* f : frames) gst_buffer_unref(f);

  const std::vector<std::string> warnings = b.warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("sink_0: region meta 4"), std::string::npos) << warnings[0];
  EXPECT_EQ(b.error(), "");
}

// More regions than slots: batch-size=2 and two cameras of three rois each give three tensors
// per window, with the window's timestamps, in pad then region order, none dropped.
TEST(TensorBatchRegions, MoreRegionsThanSlotsGiveSeveralTensorsNoneDropped) {
  Batcher b("width=8 height=8 batch-size=2", {video_caps("BGR", 16, 16), video_caps("NV12", 20, 12)});
  b.set_pad(0, "rois", "<<0,0,8,8>,<8,8,8,8>,<4,4,8,8>>");
  b.set_pad(1, "rois", "<<0,0,10,6>,<10,6,10,6>,<5,3,10,6>>");
  ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);
  for (int window = 0; window < 2; window++) {
    const GstClockTime pts = window * GST_SECOND;
    b.push(0, timed(test::make_frame(GST_VIDEO_FORMAT_BGR, 16, 16, window).buffer, pts, GST_SECOND));
    b.push(1, timed(test::make_frame(GST_VIDEO_FORMAT_NV12, 20, 12, window + 7).buffer, pts, GST_SECOND));
    std::vector<GstSample*> tensors = pull_window(b, 3);
    ASSERT_EQ(tensors.size(), 3u);
    for (int k = 0; k < 3; k++) {
      GstBuffer* buf = gst_sample_get_buffer(tensors[k]);
      EXPECT_EQ(GST_BUFFER_PTS(buf), pts);
      EXPECT_EQ(GST_BUFFER_DURATION(buf), GST_SECOND);
      gint index = -1, count = -1;
      EXPECT_TRUE(gst_cuda_prep_buffer_get_tensor_count(buf, &index, &count));
      EXPECT_EQ(index, k);
      EXPECT_EQ(count, 3);
      for (int i = 0; i < 2; i++) {
        const int n = 2 * k + i;  // the window's n-th region: sink_0's three, then sink_1's
        const RegionSlot m = region_slot(buf, i);
        EXPECT_FALSE(m.empty);
        EXPECT_EQ(m.pad, n < 3 ? "sink_0" : "sink_1");
        EXPECT_EQ(m.index, n % 3);
        EXPECT_EQ(m.pts, pts);
      }
    }
    unref_all(tensors);
  }
  EXPECT_EQ(b.pull(200 * GST_MSECOND), nullptr) << "no tensor more";
}

// Pad properties of regions from a launch line: sink_0::rois (two regions) and sink_1::roi-meta
// (a test pattern without metas: no object, no slot).
TEST(TensorBatchRegions, RoisAndRoiMetaFromALaunchLine) {
  GError* err = nullptr;
  GstElement* pipeline = gst_parse_launch(
      "cudatensorbatch name=b backend=cpu width=32 height=32 batch-size=3 "
      "sink_0::rois=\"<<0,0,40,30>,<10,20,30,24>>\" sink_1::roi-meta=true sink_1::roi-type=car "
      "! appsink name=out sync=false "
      "videotestsrc num-buffers=1 ! video/x-raw,format=BGR,width=64,height=48 ! b. "
      "videotestsrc num-buffers=1 pattern=ball ! video/x-raw,format=NV12,width=80,height=60 ! b.",
      &err);
  ASSERT_EQ(err, nullptr) << err->message;
  ASSERT_NE(pipeline, nullptr);
  GstElement* batch = gst_bin_get_by_name(GST_BIN(pipeline), "b");
  GstPad* p0 = gst_element_get_static_pad(batch, "sink_0");
  GstPad* p1 = gst_element_get_static_pad(batch, "sink_1");
  ASSERT_NE(p0, nullptr);
  ASSERT_NE(p1, nullptr);
  GValue v = G_VALUE_INIT;
  g_value_init(&v, GST_TYPE_ARRAY);
  g_object_get_property(G_OBJECT(p0), "rois", &v);
  gchar* text = gst_value_serialize(&v);
  EXPECT_STREQ(text, "< (array)< (int)0, (int)0, (int)40, (int)30 >, (array)< (int)10, (int)20, (int)30, (int)24 > >");
  g_free(text);
  g_value_unset(&v);
  gboolean roi_meta = FALSE;
  gchar* type = nullptr;
  g_object_get(p1, "roi-meta", &roi_meta, "roi-type", &type, NULL);
  EXPECT_TRUE(roi_meta);
  EXPECT_STREQ(type, "car");
  g_free(type);
  GstElement* out = gst_bin_get_by_name(GST_BIN(pipeline), "out");
  ASSERT_NE(gst_element_set_state(pipeline, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
  GstSample* sample = gst_app_sink_try_pull_sample(GST_APP_SINK(out), 5 * GST_SECOND);
  ASSERT_NE(sample, nullptr);
  GstBuffer* buf = gst_sample_get_buffer(sample);
  for (int i = 0; i < 2; i++) {
    const RegionSlot m = region_slot(buf, i);
    EXPECT_FALSE(m.empty);
    EXPECT_EQ(m.pad, "sink_0");
    EXPECT_EQ(m.index, i);
  }
  EXPECT_TRUE(region_slot(buf, 2).empty);
  gst_sample_unref(sample);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(out);
  gst_object_unref(p0);
  gst_object_unref(p1);
  gst_object_unref(batch);
  gst_object_unref(pipeline);
}

// Bad region settings are refused at start, once, naming the pad and the property; regions
// need a fixed batch-size.
TEST(TensorBatchRegions, BadRegionSettingsAreRefusedAtStart) {
  struct Case {
    const char* props;
    const char* pad_prop;
    const char* pad_value;
    const char* expected;
  } cases[] = {
      {"", "rois", "<<0,0,8,8>>", "sink_0: rois needs a fixed batch-size"},
      {"roi-meta=true", nullptr, nullptr, "sink_0: roi-meta needs a fixed batch-size"},
      {"batch-size=2", "rois", "<<0,0,8>>", "sink_0: rois item 0 needs 4 values <x, y, width, height>, got 3"},
      {"batch-size=2 roi-meta=true roi-min-size=10", "roi-max-size", "5",
       "sink_0: roi-max-size 5 is below roi-min-size 10"},
      {"batch-size=2 roi-meta=true roi-type=\"car,,bus\"", nullptr, nullptr, "roi-type \"car,,bus\": class 2"}};
  for (const Case& c : cases) {
    Batcher b(c.props, 1);
    if (c.pad_prop) b.set_pad(0, c.pad_prop, c.pad_value);
    EXPECT_EQ(b.play(), GST_STATE_CHANGE_FAILURE) << c.props;
    const std::string err = b.error();
    EXPECT_NE(err.find(c.expected), std::string::npos) << err;
    EXPECT_EQ(b.error(), "") << "posted once";
  }
#if !CUDAPREP_HAVE_ANALYTICS_OD
  Batcher b("batch-size=2 roi-meta=true roi-source=analytics", 1);
  EXPECT_EQ(b.play(), GST_STATE_CHANGE_FAILURE);
  EXPECT_NE(b.error().find("roi-source=analytics reads GstAnalyticsODMtd"), std::string::npos);
#endif
}

// A pad's own rois or roi keeps it out of the element-wide roi-meta; the pad's own roi-meta=false
// too. Regions set while playing take effect at the next batch.
TEST(TensorBatchRegions, ElementRoiMetaAppliesToPadsWithoutTheirOwn) {
  Batcher b("width=8 height=8 batch-size=4 roi-meta=true",
            {video_caps("BGR", 16, 16), video_caps("BGR", 16, 16), video_caps("BGR", 16, 16)});
  b.set_pad(1, "roi", "<0,0,8,8>");
  b.set_pad(2, "roi-meta", "false");
  ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);
  for (int window = 0; window < 2; window++) {
    for (int i = 0; i < 3; i++) {
      GstBuffer* f = timed(test::make_frame(GST_VIDEO_FORMAT_BGR, 16, 16, i).buffer, window * GST_SECOND, GST_SECOND);
      add_roi_meta(f, "car", 2, 2, 6, 6, 5 + i);
      b.push(i, f);
    }
    GstSample* s = b.pull();
    ASSERT_NE(s, nullptr) << b.error();
    GstBuffer* buf = gst_sample_get_buffer(s);
    // sink_0: its frame's one meta region; sink_1: its roi; sink_2: its whole frame (window 0),
    // then its two rois (window 1)
    const RegionSlot s0 = region_slot(buf, 0), s1 = region_slot(buf, 1), s2 = region_slot(buf, 2);
    EXPECT_EQ(s0.pad, "sink_0");
    EXPECT_EQ(s0.id, 5);
    EXPECT_EQ(s1.pad, "sink_1");
    EXPECT_EQ(s1.index, -1);
    EXPECT_DOUBLE_EQ(s1.transform.source_rect[2], 8.0);
    EXPECT_EQ(s2.pad, "sink_2");
    EXPECT_EQ(s2.index, window == 0 ? -1 : 0);
    EXPECT_EQ(region_slot(buf, 3).empty, window == 0);
    if (window == 1) {
      EXPECT_EQ(region_slot(buf, 3).index, 1);
    }
    gst_sample_unref(s);
    if (window == 0) b.set_pad(2, "rois", "<<0,0,4,4>,<4,4,4,4>>");
  }
  EXPECT_EQ(b.error(), "");
}

#if CUDAPREP_HAVE_ANALYTICS_OD
// roi-meta from GstAnalyticsODMtd (GStreamer >= 1.24): two cameras whose detector wrote ODMtds
// (with a classification entry before each, so that ids differ from indices); sink_1 takes only
// persons at least 10 px. Each slot is `cudatensorize roi=<box>` of that frame alone, its
// region-id is the ODMtd's id, through which a result is related back to the detection.
TEST(TensorBatchRegions, OdMtdRegionsWithClassAndSizeFilters) {
  const std::string props = "width=32 height=24";
  const std::vector<Camera> cams = {{"home.jpg", "I420", GST_VIDEO_FORMAT_I420, 90, 70},
                                    {"building.jpg", "BGR", GST_VIDEO_FORMAT_BGR, 64, 96}};
  Batcher b(props + " batch-size=2 roi-meta=true", 2);
  for (int i = 0; i < 2; i++) b.set_caps(i, video_caps(cams[i].format, cams[i].w, cams[i].h));
  b.set_pad(1, "roi-type", "person");
  b.set_pad(1, "roi-min-size", "10");
  ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);
  std::vector<GstBuffer*> frames = {photo_frame(cams[0].photo, cams[0].gst_format, cams[0].w, cams[0].h, 0),
                                    photo_frame(cams[1].photo, cams[1].gst_format, cams[1].w, cams[1].h, 0)};
  struct Box {
    const char* type;
    int x, y, w, h;
  };
  const std::vector<std::vector<Box>> boxes = {
      {{"car", 10, 10, 30, 20}, {"dog", 60, 40, 40, 40}},                            // both kept (any class)
      {{"person", 5, 5, 20, 40}, {"person", 30, 30, 6, 6}, {"car", 0, 0, 20, 20}}};  // first kept
  std::vector<std::vector<int>> ids(2);
  for (int c = 0; c < 2; c++) {
    GstAnalyticsRelationMeta* rmeta = gst_buffer_add_analytics_relation_meta(frames[c]);
    for (const Box& box : boxes[c]) {
      GstAnalyticsClsMtd cls;
      EXPECT_TRUE(gst_analytics_relation_meta_add_one_cls_mtd(rmeta, 0.5f, g_quark_from_string("scene"), &cls));
      GstAnalyticsODMtd od;
      EXPECT_TRUE(gst_analytics_relation_meta_add_od_mtd(rmeta, g_quark_from_string(box.type), box.x, box.y, box.w,
                                                         box.h, 0.9f, &od));
      ids[c].push_back((int)od.id);
    }
  }
  for (int i = 0; i < 2; i++) b.push(i, gst_buffer_ref(frames[i]));
  std::vector<GstSample*> tensors = pull_window(b, 2);
  ASSERT_EQ(tensors.size(), 2u);
  expect_region_slots(
      tensors, 2, props, cams, frames,
      {{0, "<10,10,30,20>", 0, ids[0][0]}, {0, "<60,40,40,40>", 1, ids[0][1]}, {1, "<5,5,20,40>", 0, ids[1][0]}},
      empty_slot(props, 32, 24));
  // the id names the detection in the camera frame's relation meta
  const RegionSlot m = region_slot(gst_sample_get_buffer(tensors[1]), 0);
  GstAnalyticsRelationMeta* rmeta = gst_buffer_get_analytics_relation_meta(frames[1]);
  GstAnalyticsODMtd od;
  ASSERT_TRUE(gst_analytics_relation_meta_get_od_mtd(rmeta, (guint)m.id, &od));
  EXPECT_EQ(gst_analytics_od_mtd_get_obj_type(&od), g_quark_from_string("person"));
  unref_all(tensors);
  for (GstBuffer* f : frames) gst_buffer_unref(f);
  EXPECT_EQ(b.error(), "");
}
#endif

namespace {}  // namespace

// Live, regions: a camera that stalls (sink_0, roi-meta) does not hold the other camera's region
// slots past latency: the window goes out with sink_1's two regions in the first slots, then
// empty slots that no pad had (fixed) or as a batch of two (dynamic). When sink_0 comes back its
// region takes the first slot again.
TEST(TensorBatchRegions, StalledLiveCameraDoesNotHoldTheRegionBatch) {
  const std::string props = "width=16 height=16";
  const std::vector<Camera> cams = {{"baboon.jpg", "NV12", GST_VIDEO_FORMAT_NV12, 40, 30},
                                    {"fruits.jpg", "BGR", GST_VIDEO_FORMAT_BGR, 40, 30}};
  for (bool dynamic : {false, true}) {
    SCOPED_TRACE(dynamic ? "batch-mode=dynamic" : "batch-mode=fixed");
    Batcher b(props + " batch-size=4 latency=100000000 batch-mode=" + (dynamic ? "dynamic" : "fixed"),
              {video_caps("NV12", 40, 30), video_caps("BGR", 40, 30)}, /*live=*/true);
    b.set_pad(0, "roi-meta", "true");
    b.set_pad(1, "rois", "<<0,0,20,15>,<20,15,20,15>>");
    ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);
    std::vector<GstBuffer*> frames = {nullptr, photo_frame(cams[1].photo, cams[1].gst_format, 40, 30, 0)};
    const gint64 t0 = g_get_monotonic_time();
    b.push(1, gst_buffer_ref(frames[1]));
    std::vector<GstSample*> tensors = pull_window(b, 1);  // sink_0 never sends anything
    ASSERT_EQ(tensors.size(), 1u);
    EXPECT_LT(g_get_monotonic_time() - t0, 2 * G_USEC_PER_SEC) << "held past the latency";
    EXPECT_EQ(GST_BUFFER_PTS(gst_sample_get_buffer(tensors[0])), 0u);
    const std::vector<Expected> first = {{1, "<0,0,20,15>", 0, -1}, {1, "<20,15,20,15>", 1, -1}};
    if (dynamic)
      expect_dynamic_slots(tensors, 4, props, cams, frames, first);
    else
      expect_region_slots(tensors, 4, props, cams, frames, first, empty_slot(props, 16, 16));
    unref_all(tensors);

    // sink_0 comes back: a window well ahead of the clock, so that both frames are in it
    const GstClockTime later = running_time_now(b.batch) + GST_SECOND;
    gst_buffer_unref(frames[1]);
    frames[0] = photo_frame(cams[0].photo, cams[0].gst_format, 40, 30, later);
    frames[1] = photo_frame(cams[1].photo, cams[1].gst_format, 40, 30, later);
    add_roi_meta(frames[0], "car", 4, 6, 30, 20, 9);
    for (int i = 0; i < 2; i++) b.push(i, gst_buffer_ref(frames[i]));
    tensors = pull_window(b, 1);
    ASSERT_EQ(tensors.size(), 1u);
    EXPECT_EQ(GST_BUFFER_PTS(gst_sample_get_buffer(tensors[0])), later);
    const std::vector<Expected> second = {
        {0, "<4,6,30,20>", 0, 9}, {1, "<0,0,20,15>", 0, -1}, {1, "<20,15,20,15>", 1, -1}};
    if (dynamic)
      expect_dynamic_slots(tensors, 4, props, cams, frames, second);
    else
      expect_region_slots(tensors, 4, props, cams, frames, second, empty_slot(props, 16, 16));
    unref_all(tensors);
    for (GstBuffer* f : frames) gst_buffer_unref(f);
    EXPECT_EQ(b.error(), "");
  }
}

// A pad with rois requested while playing joins the next window with its regions (one partly
// outside its frame: clipped), after sink_0's; when sink_0 is released, sink_1's regions take
// the first slots. The caps stay W:H:C:4 throughout.
TEST(TensorBatchRegions, PadWithRegionsAddedAndRemovedWhilePlaying) {
  const std::string props = "width=16 height=16";
  const std::vector<Camera> cams = {{"fruits.jpg", "BGR", GST_VIDEO_FORMAT_BGR, 32, 24},
                                    {"home.jpg", "I420", GST_VIDEO_FORMAT_I420, 40, 30}};
  Batcher b(props + " batch-size=4", {video_caps("BGR", 32, 24)});
  b.set_pad(0, "rois", "<<0,0,16,12>,<16,12,16,12>>");
  ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);
  const GstClockTime d = GST_SECOND / 30;
  const Bytes empty = empty_slot(props, 16, 16);

  std::vector<GstBuffer*> frames = {photo_frame(cams[0].photo, cams[0].gst_format, 32, 24, 0), nullptr};
  b.push(0, gst_buffer_ref(frames[0]));
  std::vector<GstSample*> tensors = pull_window(b, 1);
  ASSERT_EQ(tensors.size(), 1u);
  EXPECT_STREQ(dims_of(tensors[0]), "16:16:3:4");
  expect_region_slots(tensors, 4, props, cams, frames, {{0, "<0,0,16,12>", 0, -1}, {0, "<16,12,16,12>", 1, -1}}, empty);
  unref_all(tensors);

  b.add_pad(1);
  b.set_caps(1, video_caps("I420", 40, 30));
  b.set_pad(1, "rois", "<<4,4,20,20>,<-5,10,20,40>>");
  gst_buffer_unref(frames[0]);
  frames = {photo_frame(cams[0].photo, cams[0].gst_format, 32, 24, d),
            photo_frame(cams[1].photo, cams[1].gst_format, 40, 30, d)};
  for (int i = 0; i < 2; i++) b.push(i, gst_buffer_ref(frames[i]));
  tensors = pull_window(b, 1);
  ASSERT_EQ(tensors.size(), 1u);
  EXPECT_STREQ(dims_of(tensors[0]), "16:16:3:4");
  EXPECT_EQ(GST_BUFFER_PTS(gst_sample_get_buffer(tensors[0])), d);
  expect_region_slots(
      tensors, 4, props, cams, frames,
      {{0, "<0,0,16,12>", 0, -1}, {0, "<16,12,16,12>", 1, -1}, {1, "<4,4,20,20>", 0, -1}, {1, "<-5,10,20,40>", 1, -1}},
      empty);
  EXPECT_DOUBLE_EQ(region_slot(gst_sample_get_buffer(tensors[0]), 3).transform.source_rect[2], 15.0);  // clipped
  unref_all(tensors);

  b.remove_pad(0);
  for (GstBuffer* f : frames) gst_buffer_unref(f);
  frames = {nullptr, photo_frame(cams[1].photo, cams[1].gst_format, 40, 30, 2 * d)};
  b.push(1, gst_buffer_ref(frames[1]));
  tensors = pull_window(b, 1);
  ASSERT_EQ(tensors.size(), 1u);
  EXPECT_STREQ(dims_of(tensors[0]), "16:16:3:4");
  EXPECT_EQ(GST_BUFFER_PTS(gst_sample_get_buffer(tensors[0])), 2 * d);
  expect_region_slots(tensors, 4, props, cams, frames, {{1, "<4,4,20,20>", 0, -1}, {1, "<-5,10,20,40>", 1, -1}}, empty);
  unref_all(tensors);
  gst_buffer_unref(frames[1]);
  EXPECT_EQ(b.pull(200 * GST_MSECOND), nullptr) << "no tensor more";
  EXPECT_EQ(b.error(), "");
}

// Caps change mid-stream (size and format) on a pad with rois and on one with roi-meta: the slots
// are `cudatensorize roi=` of the new frames; a roi partly outside the smaller frame is clipped,
// one entirely outside it is skipped with one warning naming the pad and gives no slot.
TEST(TensorBatchRegions, CapsChangeMidStreamOnPadsWithRegions) {
  const std::string props = "width=24 height=16";
  std::vector<Camera> cams = {{"fruits.jpg", "BGR", GST_VIDEO_FORMAT_BGR, 96, 64},
                              {"baboon.jpg", "NV12", GST_VIDEO_FORMAT_NV12, 80, 60}};
  Batcher b(props + " batch-size=4", {video_caps("BGR", 96, 64), video_caps("NV12", 80, 60)});
  b.set_pad(0, "rois", "<<0,0,30,20>,<40,30,30,20>,<60,40,30,20>>");
  b.set_pad(1, "roi-meta", "true");
  ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);
  const GstClockTime d = GST_SECOND / 30;
  const Bytes empty = empty_slot(props, 24, 16);

  std::vector<GstBuffer*> frames;
  for (int i = 0; i < 2; i++) frames.push_back(photo_frame(cams[i].photo, cams[i].gst_format, cams[i].w, cams[i].h, 0));
  add_roi_meta(frames[1], "car", 10, 10, 30, 30, 5);
  for (int i = 0; i < 2; i++) b.push(i, gst_buffer_ref(frames[i]));
  std::vector<GstSample*> tensors = pull_window(b, 1);
  ASSERT_EQ(tensors.size(), 1u);
  expect_region_slots(
      tensors, 4, props, cams, frames,
      {{0, "<0,0,30,20>", 0, -1}, {0, "<40,30,30,20>", 1, -1}, {0, "<60,40,30,20>", 2, -1}, {1, "<10,10,30,30>", 0, 5}},
      empty);
  unref_all(tensors);
  EXPECT_TRUE(b.warnings().empty());
  for (GstBuffer* f : frames) gst_buffer_unref(f);

  cams = {{"home.jpg", "I420", GST_VIDEO_FORMAT_I420, 50, 36}, {"building.jpg", "BGR", GST_VIDEO_FORMAT_BGR, 40, 30}};
  b.set_caps(0, video_caps("I420", 50, 36));
  b.set_caps(1, video_caps("BGR", 40, 30));
  frames.clear();
  for (int i = 0; i < 2; i++) frames.push_back(photo_frame(cams[i].photo, cams[i].gst_format, cams[i].w, cams[i].h, d));
  add_roi_meta(frames[1], "car", 20, 10, 30, 30, 6);  // partly outside: clipped
  for (int i = 0; i < 2; i++) b.push(i, gst_buffer_ref(frames[i]));
  tensors = pull_window(b, 1);
  ASSERT_EQ(tensors.size(), 1u);
  EXPECT_STREQ(dims_of(tensors[0]), "24:16:3:4");
  EXPECT_EQ(GST_BUFFER_PTS(gst_sample_get_buffer(tensors[0])), d);
  expect_region_slots(tensors, 4, props, cams, frames,
                      {{0, "<0,0,30,20>", 0, -1}, {0, "<40,30,30,20>", 1, -1}, {1, "<20,10,30,30>", 0, 6}}, empty);
  const GstCudaPrepTransform clipped = region_slot(gst_sample_get_buffer(tensors[0]), 1).transform;
  EXPECT_DOUBLE_EQ(clipped.source_rect[2], 10.0);
  EXPECT_DOUBLE_EQ(clipped.source_rect[3], 6.0);
  unref_all(tensors);
  for (GstBuffer* f : frames) gst_buffer_unref(f);
  const std::vector<std::string> warnings = b.warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("sink_0: rois item 2"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("entirely outside the frame"), std::string::npos) << warnings[0];
  EXPECT_EQ(b.error(), "");
}

// A pad's `roi` is not used while it has rois or roi-meta: after a caps change that leaves it
// outside the smaller frame it is no error, and the pad's regions fill their slots.
TEST(TensorBatchRegions, UnusedRoiOutsideTheNewFrameIsNoError) {
  const std::string props = "width=16 height=16";
  std::vector<Camera> cams = {{"fruits.jpg", "BGR", GST_VIDEO_FORMAT_BGR, 96, 64}};
  Batcher b(props + " batch-size=2", {video_caps("BGR", 96, 64)});
  b.set_pad(0, "roi", "<60,40,20,20>");
  b.set_pad(0, "rois", "<<0,0,30,20>>");
  ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);
  const Bytes empty = empty_slot(props, 16, 16);
  std::vector<GstBuffer*> frames = {photo_frame(cams[0].photo, cams[0].gst_format, 96, 64, 0)};
  b.push(0, gst_buffer_ref(frames[0]));
  std::vector<GstSample*> tensors = pull_window(b, 1);
  ASSERT_EQ(tensors.size(), 1u);
  expect_region_slots(tensors, 2, props, cams, frames, {{0, "<0,0,30,20>", 0, -1}}, empty);
  unref_all(tensors);
  gst_buffer_unref(frames[0]);

  cams = {{"home.jpg", "NV12", GST_VIDEO_FORMAT_NV12, 50, 36}};
  b.set_caps(0, video_caps("NV12", 50, 36));
  frames = {photo_frame(cams[0].photo, cams[0].gst_format, 50, 36, GST_SECOND / 30)};
  b.push(0, gst_buffer_ref(frames[0]));
  tensors = pull_window(b, 1);
  ASSERT_EQ(tensors.size(), 1u) << b.error();
  expect_region_slots(tensors, 2, props, cams, frames, {{0, "<0,0,30,20>", 0, -1}}, empty);
  unref_all(tensors);
  gst_buffer_unref(frames[0]);
  EXPECT_EQ(b.error(), "");
}

// Non-live, regions: EOS on one camera (sink_0) leaves out its region from then on, the other
// camera's go on in the first slots (fixed: the rest empty; dynamic: a smaller batch); EOS on
// both ends.
TEST(TensorBatchRegions, EosOnOneCameraWithRegions) {
  const std::string props = "width=8 height=8";
  const std::vector<Camera> cams = {{nullptr, "GRAY8", GST_VIDEO_FORMAT_GRAY8, 20, 12},
                                    {nullptr, "BGR", GST_VIDEO_FORMAT_BGR, 16, 16}};
  for (bool dynamic : {false, true}) {
    SCOPED_TRACE(dynamic ? "batch-mode=dynamic" : "batch-mode=fixed");
    Batcher b(props + " batch-size=3 batch-mode=" + (dynamic ? "dynamic" : "fixed"),
              {video_caps("GRAY8", 20, 12), video_caps("BGR", 16, 16)});
    b.set_pad(0, "rois", "<<2,2,10,8>>");
    b.set_pad(1, "rois", "<<0,0,8,8>,<8,8,8,8>>");
    ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);
    const GstClockTime d = GST_SECOND / 10;
    GstBuffer* gray = frame_at(GST_VIDEO_FORMAT_GRAY8, 20, 12, 2, 0, d);
    std::vector<GstBuffer*> bgr = {frame_at(GST_VIDEO_FORMAT_BGR, 16, 16, 1, 0, d),
                                   frame_at(GST_VIDEO_FORMAT_BGR, 16, 16, 3, d, d),
                                   frame_at(GST_VIDEO_FORMAT_BGR, 16, 16, 4, 2 * d, d)};
    b.push(0, gst_buffer_ref(gray));
    b.eos(0);
    for (GstBuffer* f : bgr) b.push(1, gst_buffer_ref(f));
    b.eos(1);
    for (int n = 0; n < 3; n++) {
      std::vector<GstSample*> tensors = pull_window(b, 1);
      ASSERT_EQ(tensors.size(), 1u) << "window " << n;
      GstBuffer* out = gst_sample_get_buffer(tensors[0]);
      EXPECT_EQ(GST_BUFFER_PTS(out), n * d);
      EXPECT_EQ(GST_BUFFER_DURATION(out), d);
      const std::vector<GstBuffer*> frames = {gray, bgr[n]};
      std::vector<Expected> expected;
      if (n == 0) expected.push_back({0, "<2,2,10,8>", 0, -1});
      expected.push_back({1, "<0,0,8,8>", 0, -1});
      expected.push_back({1, "<8,8,8,8>", 1, -1});
      if (dynamic)
        expect_dynamic_slots(tensors, 3, props, cams, frames, expected);
      else
        expect_region_slots(tensors, 3, props, cams, frames, expected, empty_slot(props, 8, 8));
      unref_all(tensors);
    }
    EXPECT_EQ(b.pull(GST_SECOND), nullptr);
    EXPECT_TRUE(b.at_eos());
    EXPECT_EQ(b.error(), "");
    gst_buffer_unref(gray);
    for (GstBuffer* f : bgr) gst_buffer_unref(f);
  }
}

// ---- a dynamic batch (batch-mode=dynamic) ---------------------------------------------------------

// batch-mode=dynamic: each tensor holds exactly its window's regions. Two cameras (BGR with two
// rois, NV12 with roi-meta), batch-size=4, the same frames into a fixed and a dynamic batcher: a
// window of 3 regions is one tensor of batch 3 (header W:H:C:3, 3 slots in the meta), one of 6
// regions two tensors of 4 and 2; every dynamic slot is, bit for bit, the fixed batch's slot and
// `cudatensorize roi=` of its camera's frame, with the same meta. The caps say flexible.
TEST(TensorBatchDynamic, TensorHoldsExactlyTheWindowsRegions) {
  const std::string props = "width=32 height=24";
  const std::vector<Camera> cams = {{"fruits.jpg", "BGR", GST_VIDEO_FORMAT_BGR, 96, 64},
                                    {"baboon.jpg", "NV12", GST_VIDEO_FORMAT_NV12, 80, 60}};
  Batcher fixed(props + " batch-size=4", 2), dynamic(props + " batch-size=4 batch-mode=dynamic", 2);
  for (Batcher* b : {&fixed, &dynamic}) {
    for (int i = 0; i < 2; i++) b->set_caps(i, video_caps(cams[i].format, cams[i].w, cams[i].h));
    b->set_pad(0, "rois", "<<0,0,40,30>,<50,20,40,40>>");
    b->set_pad(1, "roi-meta", "true");
    ASSERT_NE(b->play(), GST_STATE_CHANGE_FAILURE);
  }
  struct Box {
    int x, y, w, h;
  };
  const std::vector<std::vector<Box>> boxes = {{{10, 10, 30, 20}},
                                               {{0, 0, 20, 20}, {30, 5, 40, 40}, {60, 40, 30, 30}, {5, 30, 20, 25}}};
  const size_t slot = 32 * 24 * 3 * 4;
  for (int window = 0; window < 2; window++) {
    SCOPED_TRACE("window " + std::to_string(window));
    const GstClockTime pts = window * GST_SECOND;
    std::vector<GstBuffer*> frames;
    for (int i = 0; i < 2; i++)
      frames.push_back(photo_frame(cams[i].photo, cams[i].gst_format, cams[i].w, cams[i].h, pts));
    std::vector<Expected> expected = {{0, "<0,0,40,30>", 0, -1}, {0, "<50,20,40,40>", 1, -1}};
    for (size_t r = 0; r < boxes[window].size(); r++) {
      const Box& x = boxes[window][r];
      add_roi_meta(frames[1], "car", x.x, x.y, x.w, x.h, 100 + (int)r);
      expected.push_back({1,
                          "<" + std::to_string(x.x) + "," + std::to_string(x.y) + "," + std::to_string(x.w) + "," +
                              std::to_string(x.h) + ">",
                          (int)r, 100 + (int)r});
    }
    for (Batcher* b : {&fixed, &dynamic})
      for (int i = 0; i < 2; i++) b->push(i, gst_buffer_ref(frames[i]));
    const size_t n = expected.size(), count = (n + 3) / 4;
    EXPECT_EQ(count, window == 0 ? 1u : 2u);
    std::vector<GstSample*> f = pull_window(fixed, count), d = pull_window(dynamic, count);
    ASSERT_EQ(f.size(), count);
    ASSERT_EQ(d.size(), count);
    expect_dynamic_slots(d, 4, props, cams, frames, expected);
    for (size_t k = 0; k < count; k++) {
      const Flexible flex = flexible_of(gst_sample_get_buffer(d[k]));
      const size_t slots = std::min<size_t>(4, n - 4 * k);
      for (size_t i = 0; i < slots && flex.payload.size() >= (i + 1) * slot; i++) {
        const Bytes got(flex.payload.begin() + i * slot, flex.payload.begin() + (i + 1) * slot);
        EXPECT_TRUE(got == slot_bytes_of(f[k], (int)i, slot)) << "tensor " << k << " slot " << i;
      }
      for (size_t i = slots; i < 4; i++) EXPECT_TRUE(region_slot(gst_sample_get_buffer(f[k]), (guint)i).empty);
    }
    const GstStructure* caps = gst_caps_get_structure(gst_sample_get_caps(d[0]), 0);
    EXPECT_TRUE(gst_structure_has_name(caps, "other/tensors"));
    EXPECT_STREQ(gst_structure_get_string(caps, "format"), "flexible");
    EXPECT_FALSE(gst_structure_has_field(caps, "dimensions"));
    unref_all(f);
    unref_all(d);
    for (GstBuffer* x : frames) gst_buffer_unref(x);
  }
  EXPECT_EQ(dynamic.pull(200 * GST_MSECOND), nullptr) << "no tensor more";
  EXPECT_EQ(fixed.error(), "");
  EXPECT_EQ(dynamic.error(), "");
}

// A dynamic batch's window without any region gives no tensor (a flexible tensor cannot have a
// batch of 0): a GAP event with the window's start and duration goes downstream instead, and
// the tensors resume with the next regions.
TEST(TensorBatchDynamic, WindowWithoutRegionsGivesAGapNoTensor) {
  Batcher b("width=8 height=8 batch-size=2 batch-mode=dynamic roi-meta=true",
            {video_caps("BGR", 16, 16), video_caps("BGR", 16, 16)});
  b.watch_gaps();
  ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);
  const GstClockTime d = GST_SECOND / 10;
  auto push_window = [&](int n, int pad_with_object) {
    for (int i = 0; i < 2; i++) {
      GstBuffer* f = frame_at(GST_VIDEO_FORMAT_BGR, 16, 16, 10 * n + i, n * d, d);
      if (i == pad_with_object) add_roi_meta(f, "car", 2, 2, 8, 8, 10 * n + i);
      b.push(i, f);
    }
  };
  push_window(0, 0);
  GstSample* s = b.pull();
  ASSERT_NE(s, nullptr) << b.error();
  EXPECT_EQ(gst_cuda_prep_buffer_get_slot_count(gst_sample_get_buffer(s)), 1u);
  EXPECT_EQ(region_slot(gst_sample_get_buffer(s), 0).id, 0);
  gst_sample_unref(s);

  push_window(1, -1);
  push_window(2, 1);
  s = b.pull();
  ASSERT_NE(s, nullptr) << b.error();
  GstBuffer* out = gst_sample_get_buffer(s);
  EXPECT_EQ(GST_BUFFER_PTS(out), 2 * d) << "window 1 gave no tensor";
  EXPECT_EQ(gst_cuda_prep_buffer_get_slot_count(out), 1u);
  EXPECT_EQ(flexible_of(out).dims, (std::vector<guint32>{8, 8, 3, 1}));
  EXPECT_EQ(region_slot(out, 0).pad, "sink_1");
  EXPECT_EQ(region_slot(out, 0).id, 21);
  gst_sample_unref(s);
  const std::vector<std::pair<GstClockTime, GstClockTime>> gaps = b.gaps();
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].first, d);
  EXPECT_EQ(gaps[0].second, d);
  b.eos(0);
  b.eos(1);
  EXPECT_EQ(b.pull(GST_SECOND), nullptr);
  EXPECT_TRUE(b.at_eos());
  EXPECT_EQ(b.error(), "");
}

// Whole frames in a dynamic batch: a pad without a frame in the window gives no slot (a 30 fps
// and a 15 fps pad: a batch of 2, then a batch of sink_0 alone), each slot cudatensorize's
// output for that frame alone.
TEST(TensorBatchDynamic, PadsWithoutAFrameGiveNoSlot) {
  const std::string props = "width=8 height=8";
  const std::vector<Camera> cams = {{nullptr, "BGR", GST_VIDEO_FORMAT_BGR, 8, 8},
                                    {nullptr, "NV12", GST_VIDEO_FORMAT_NV12, 12, 10}};
  Batcher b(props + " batch-size=2 batch-mode=dynamic",
            {video_caps("BGR", 8, 8), "video/x-raw,format=NV12,width=12,height=10,framerate=15/1"});
  ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);
  const GstClockTime d30 = GST_SECOND / 30, d15 = GST_SECOND / 15;
  std::vector<GstBuffer*> f0 = {frame_at(GST_VIDEO_FORMAT_BGR, 8, 8, 1, 0, d30),
                                frame_at(GST_VIDEO_FORMAT_BGR, 8, 8, 2, d30, d30)};
  GstBuffer* f1 = frame_at(GST_VIDEO_FORMAT_NV12, 12, 10, 3, 0, d15);
  for (GstBuffer* f : f0) b.push(0, gst_buffer_ref(f));
  b.push(1, gst_buffer_ref(f1));
  b.eos(0);
  b.eos(1);
  for (int n = 0; n < 2; n++) {
    std::vector<GstSample*> tensors = pull_window(b, 1);
    ASSERT_EQ(tensors.size(), 1u);
    EXPECT_EQ(GST_BUFFER_PTS(gst_sample_get_buffer(tensors[0])), n * d30);
    std::vector<Expected> expected = {{0, "", -1, -1}};
    if (n == 0) expected.push_back({1, "", -1, -1});
    expect_dynamic_slots(tensors, 2, props, cams, {f0[n], f1}, expected);
    unref_all(tensors);
  }
  EXPECT_EQ(b.pull(GST_SECOND), nullptr);
  for (GstBuffer* f : f0) gst_buffer_unref(f);
  gst_buffer_unref(f1);
}

// A dynamic batch with a downstream that takes only static tensors is one negotiation error
// that says so (the same downstream takes the fixed batch); batch-mode=dynamic without a
// batch-size is refused at start.
TEST(TensorBatchDynamic, StaticOnlyDownstreamIsANegotiationError) {
  {
    Batcher b("width=8 height=8 batch-size=2 ! other/tensors,format=static", {video_caps("BGR", 8, 8)});
    ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);
    b.push(0, frame_at(GST_VIDEO_FORMAT_BGR, 8, 8, 1, 0, GST_SECOND));
    GstSample* s = b.pull();
    ASSERT_NE(s, nullptr) << b.error();
    gst_sample_unref(s);
  }
  Batcher b("width=8 height=8 batch-size=2 batch-mode=dynamic ! other/tensors,format=static",
            {video_caps("BGR", 8, 8)});
  ASSERT_NE(b.play(), GST_STATE_CHANGE_FAILURE);
  b.push(0, frame_at(GST_VIDEO_FORMAT_BGR, 8, 8, 1, 0, GST_SECOND));
  EXPECT_EQ(b.pull(GST_SECOND), nullptr);
  const std::string err = b.error();
  EXPECT_NE(err.find("Downstream does not accept a dynamic batch: batch-mode=dynamic makes "
                     "other/tensors,format=flexible"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("format=(string)static"), std::string::npos) << err;  // what downstream takes

  Batcher unsized("batch-mode=dynamic", 1);
  EXPECT_EQ(unsized.play(), GST_STATE_CHANGE_FAILURE);
  EXPECT_NE(unsized.error().find("batch-mode=dynamic needs a fixed batch-size"), std::string::npos);
}

// batch-mode from a launch line: read back, and the tensors are flexible with the header of
// the window's two regions.
TEST(TensorBatchDynamic, BatchModeFromALaunchLine) {
  GError* err = nullptr;
  GstElement* pipeline = gst_parse_launch(
      "cudatensorbatch name=b backend=cpu width=16 height=16 batch-size=4 batch-mode=dynamic "
      "sink_0::rois=\"<<0,0,32,24>,<8,8,16,16>>\" ! appsink name=out sync=false "
      "videotestsrc num-buffers=1 ! video/x-raw,format=BGR,width=64,height=48 ! b.",
      &err);
  ASSERT_EQ(err, nullptr) << err->message;
  ASSERT_NE(pipeline, nullptr);
  GstElement* batch = gst_bin_get_by_name(GST_BIN(pipeline), "b");
  GValue v = G_VALUE_INIT;
  g_value_init(&v, G_PARAM_SPEC_VALUE_TYPE(g_object_class_find_property(G_OBJECT_GET_CLASS(batch), "batch-mode")));
  g_object_get_property(G_OBJECT(batch), "batch-mode", &v);
  gchar* text = gst_value_serialize(&v);
  EXPECT_STREQ(text, "dynamic");
  g_free(text);
  g_value_unset(&v);
  GstElement* out = gst_bin_get_by_name(GST_BIN(pipeline), "out");
  ASSERT_NE(gst_element_set_state(pipeline, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
  GstSample* sample = gst_app_sink_try_pull_sample(GST_APP_SINK(out), 5 * GST_SECOND);
  ASSERT_NE(sample, nullptr);
  EXPECT_STREQ(gst_structure_get_string(gst_caps_get_structure(gst_sample_get_caps(sample), 0), "format"), "flexible");
  GstBuffer* buf = gst_sample_get_buffer(sample);
  expect_flexible_header(flexible_of(buf), 16, 16, 2);
  EXPECT_EQ(gst_cuda_prep_buffer_get_slot_count(buf), 2u);
  EXPECT_EQ(region_slot(buf, 1).index, 1);
  gst_sample_unref(sample);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(out);
  gst_object_unref(batch);
  gst_object_unref(pipeline);
}

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new test::GstEnv);
  return RUN_ALL_TESTS();
}
