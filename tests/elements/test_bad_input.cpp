// Bad input found from outside (issue 24, "Bad input found from outside" items 1-7): real
// pipelines (gst_parse_launch + bus, backend=cpu) that each failed or misreported before the
// fixes. Every case counts the ERROR messages on the bus until EOS or an error plus a short drain,
// and ends within seconds. Item 8 (one array level too many) is in test_property_arrays.cpp.
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>

#include <string>
#include <vector>

#include "harness_util.h"

using test::make_frame;
using test::video_caps;

namespace {

struct Message {
  std::string source;   // name of the element that posted it
  std::string factory;  // its factory's name ("" if not an element)
  std::string text;     // message | debug
};

struct Outcome {
  std::vector<Message> errors, warnings;
  bool eos = false;
  // The errors posted by an element of `factory`.
  std::vector<Message> errors_from(const char* factory) const {
    std::vector<Message> out;
    for (const auto& m : errors)
      if (m.factory == factory) out.push_back(m);
    return out;
  }
  std::string all_errors() const {
    std::string out;
    for (const auto& m : errors) out += "\n  [" + m.source + "] " + m.text;
    return out.empty() ? "(no errors)" : out;
  }
};

Message describe(GstMessage* msg) {
  Message m;
  GstObject* src = GST_MESSAGE_SRC(msg);
  if (src) m.source = GST_OBJECT_NAME(src);
  if (src && GST_IS_ELEMENT(src)) {
    GstElementFactory* f = gst_element_get_factory(GST_ELEMENT(src));
    if (f) m.factory = GST_OBJECT_NAME(f);
  }
  GError* err = nullptr;
  gchar* dbg = nullptr;
  if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR)
    gst_message_parse_error(msg, &err, &dbg);
  else
    gst_message_parse_warning(msg, &err, &dbg);
  m.text = std::string(err ? err->message : "") + " | " + (dbg ? dbg : "");
  if (err) g_error_free(err);
  g_free(dbg);
  return m;
}

// Collects ERROR / WARNING messages until EOS or the first error (then `drain_ms` more, so an
// error posted again shows), or until `timeout_ms`.
void collect(GstElement* pipeline, Outcome* o, int timeout_ms = 5000, int drain_ms = 500) {
  GstBus* bus = gst_element_get_bus(pipeline);
  const gint64 start = g_get_monotonic_time();
  gint64 deadline = start + (gint64)timeout_ms * 1000;
  bool draining = false;
  for (;;) {
    const gint64 now = g_get_monotonic_time();
    if (now >= deadline) break;
    GstMessage* msg =
        gst_bus_timed_pop_filtered(bus, (GstClockTime)(deadline - now) * 1000,
                                   (GstMessageType)(GST_MESSAGE_ERROR | GST_MESSAGE_WARNING | GST_MESSAGE_EOS));
    if (!msg) break;
    switch (GST_MESSAGE_TYPE(msg)) {
      case GST_MESSAGE_ERROR: o->errors.push_back(describe(msg)); break;
      case GST_MESSAGE_WARNING: o->warnings.push_back(describe(msg)); break;
      default: o->eos = true; break;
    }
    gst_message_unref(msg);
    if (!draining && (o->eos || !o->errors.empty())) {
      draining = true;
      deadline = MIN(deadline, g_get_monotonic_time() + (gint64)drain_ms * 1000);
    }
  }
  gst_object_unref(bus);
}

using Prepare = void (*)(GstElement* pipeline, void* data);

// Parses `line`, calls `prepare` (properties set from code), plays it and collects the bus.
Outcome run(const std::string& line, Prepare prepare = nullptr, void* data = nullptr, int timeout_ms = 5000) {
  Outcome o;
  GError* err = nullptr;
  GstElement* pipeline = gst_parse_launch(line.c_str(), &err);
  EXPECT_EQ(err, nullptr) << line << ": " << (err ? err->message : "");
  if (err) g_error_free(err);
  if (!pipeline) return o;
  if (prepare) prepare(pipeline, data);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  collect(pipeline, &o, timeout_ms);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
  return o;
}

bool has(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

// Exactly one error from `factory`, containing every one of `parts`.
void expect_one_error(const Outcome& o, const char* factory, const std::vector<const char*>& parts) {
  const std::vector<Message> mine = o.errors_from(factory);
  ASSERT_EQ(mine.size(), 1u) << "errors from " << factory << ":" << o.all_errors();
  for (const char* p : parts) EXPECT_TRUE(has(mine[0].text, p)) << "'" << p << "' not in: " << mine[0].text;
}

const char* kBgrSource = "videotestsrc num-buffers=3 ! video/x-raw,format=BGR,width=64,height=48";

void set_appsink_caps(GstElement* pipeline, void* caps_str) {
  GstElement* s = gst_bin_get_by_name(GST_BIN(pipeline), "s");
  ASSERT_NE(s, nullptr);
  GstCaps* caps = gst_caps_from_string(static_cast<const char*>(caps_str));
  g_object_set(s, "caps", caps, nullptr);
  gst_caps_unref(caps);
  gst_object_unref(s);
}

}  // namespace

// 1a. A property contradicting downstream's dimensions: one error (it was posted several times),
// from cudatensorize, naming both sides.
TEST(BadInput, ContradictionWithDownstreamIsPostedOnce) {
  Outcome o = run(std::string(kBgrSource) +
                  " ! cudatensorize backend=cpu width=320 ! other/tensors,dimensions=(string)3:640:640:1 ! fakesink");
  expect_one_error(o, "cudatensorize", {"width=320 (set on cudatensorize)", "width 640"});
}

// 1b. A downstream that takes no tensor cudatensorize makes (set on appsink from code, so the
// launch line links): one error from cudatensorize saying so and naming what downstream takes.
// The frames come from appsrc, which sends its caps downstream without asking first, so the
// caps reach cudatensorize (before: the same refusal posted 6 times).
struct NoTensorCase {
  const char* caps;
  const char* named;
};
const NoTensorCase kNoTensorCases[] = {{"other/tensors,types=float64", "float64"},
                                       {"other/tensors,num_tensors=2", "num_tensors=(int)2"},
                                       {"video/x-raw", "video/x-raw"}};

TEST(BadInput, DownstreamTakingNoTensorIsNamed) {
  for (const NoTensorCase& c : kNoTensorCases) {
    SCOPED_TRACE(c.caps);
    GError* err = nullptr;
    const std::string line = "appsrc name=src format=time caps=\"" + video_caps("BGR", 64, 48) +
                             "\" ! cudatensorize backend=cpu ! appsink name=s sync=false";
    GstElement* pipeline = gst_parse_launch(line.c_str(), &err);
    ASSERT_EQ(err, nullptr) << err->message;
    set_appsink_caps(pipeline, const_cast<char*>(c.caps));
    GstElement* src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
    gst_element_set_state(pipeline, GST_STATE_PLAYING);
    for (int i = 0; i < 3; i++) {
      GstBuffer* b = make_frame(GST_VIDEO_FORMAT_BGR, 64, 48, 20 + i).buffer;
      GST_BUFFER_PTS(b) = i * GST_SECOND / 30;
      gst_app_src_push_buffer(GST_APP_SRC(src), b);
    }
    gst_app_src_end_of_stream(GST_APP_SRC(src));
    Outcome o;
    collect(pipeline, &o);
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(src);
    gst_object_unref(pipeline);
    expect_one_error(o, "cudatensorize", {"Downstream does not accept the tensor cudatensorize produces", c.named});
  }
}

// 1b with videotestsrc, as issue 24 describes it: the source asks downstream's caps first, and
// the answer through cudatensorize is empty, so it stops before any caps reach cudatensorize:
// the element explains the refusal when it answers that query.
TEST(BadInput, DownstreamTakingNoTensorIsNamedAfterVideotestsrc) {
  for (const NoTensorCase& c : kNoTensorCases) {
    SCOPED_TRACE(c.caps);
    Outcome o = run(std::string(kBgrSource) + " ! cudatensorize backend=cpu ! appsink name=s sync=false",
                    set_appsink_caps, const_cast<char*>(c.caps));
    expect_one_error(o, "cudatensorize", {"Downstream does not accept the tensor cudatensorize produces", c.named});
  }
}

// 1c. The same contradiction on cudatensorbatch (which ignored downstream's shape): one error
// naming the property.
TEST(BadInput, BatchContradictionWithDownstreamIsPostedOnce) {
  Outcome o =
      run("cudatensorbatch name=b backend=cpu width=320 ! other/tensors,dimensions=(string)3:640:640:1 ! "
          "fakesink " +
          std::string(kBgrSource) + " ! b.sink_0");
  expect_one_error(o, "cudatensorbatch", {"width=320 (set on cudatensorbatch)", "width 640"});
}

// 1d. cudatensorbatch takes its shape from downstream like cudatensorize (before: not
// negotiated).
TEST(BadInput, BatchShapeComesFromDownstream) {
  GError* err = nullptr;
  GstElement* pipeline = gst_parse_launch(
      (std::string("cudatensorbatch name=b backend=cpu ! other/tensors,dimensions=(string)32:24:3:1,types=uint8 ! "
                   "appsink name=s sync=false ") +
       kBgrSource + " ! b.sink_0")
          .c_str(),
      &err);
  ASSERT_EQ(err, nullptr) << err->message;
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "s");
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstSample* sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 5 * GST_SECOND);
  Outcome o;
  if (!sample) collect(pipeline, &o, 1000);
  ASSERT_NE(sample, nullptr) << "no batch:" << o.all_errors();
  const GstStructure* s = gst_caps_get_structure(gst_sample_get_caps(sample), 0);
  EXPECT_STREQ(gst_structure_get_string(s, "dimensions"), "32:24:3:1");
  EXPECT_STREQ(gst_structure_get_string(s, "types"), "uint8");
  EXPECT_EQ(gst_buffer_get_size(gst_sample_get_buffer(sample)), 32u * 24 * 3);
  gst_sample_unref(sample);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
}

// 2. A batch-size never set is called the default (it was "set on cudatensorize"); one set is
// called set; cudatensorbatch's batch-size=0 says it is one slot per sink pad.
TEST(BadInput, BatchSizeSaysWhetherItWasSet) {
  {
    SCOPED_TRACE("cudatensorize, batch-size unset");
    Outcome o = run(std::string(kBgrSource) +
                    " ! cudatensorize backend=cpu ! other/tensors,dimensions=(string)64:64:3:4 ! fakesink");
    expect_one_error(o, "cudatensorize", {"batch-size=1 (the default)", "batch 4"});
  }
  {
    SCOPED_TRACE("cudatensorize, batch-size=2");
    Outcome o =
        run(std::string(kBgrSource) +
            " ! cudatensorize backend=cpu batch-size=2 ! other/tensors,dimensions=(string)64:64:3:4 ! fakesink");
    expect_one_error(o, "cudatensorize", {"batch-size=2 (set on cudatensorize)", "batch 4"});
  }
  {
    SCOPED_TRACE("cudatensorbatch, batch-size=0, one pad");
    Outcome o = run("cudatensorbatch name=b backend=cpu ! other/tensors,dimensions=(string)64:64:3:4 ! fakesink " +
                    std::string(kBgrSource) + " ! b.sink_0");
    expect_one_error(o, "cudatensorbatch", {"(one slot per sink pad: batch-size=0)", "batch 4"});
  }
}

// 3. A channels value the elements refuse (2: inside the property's range 1-3) set while playing
// is refused as at start ("channels 2 is not supported"), not as a negotiation failure with
// downstream ("downstream takes dimensions=16:16:2:1").
TEST(BadInput, UnsupportedChannelsWhilePlayingSaysSoAsAtStart) {
  const test::StartResult at_start = test::start_with_props("cudatensorize backend=cpu", "channels=2");
  EXPECT_FALSE(at_start.errors.empty()) << "channels=2 refused nowhere at start";
  if (!at_start.errors.empty()) {
    EXPECT_TRUE(has(at_start.errors[0], "channels 2 is not supported")) << at_start.errors[0];
  }

  GError* err = nullptr;
  const std::string line = "appsrc name=src format=time caps=\"" + video_caps("BGR", 64, 48) +
                           "\" ! cudatensorize name=t backend=cpu width=16 height=16 ! "
                           "appsink name=s sync=false max-buffers=1 drop=true";
  GstElement* pipeline = gst_parse_launch(line.c_str(), &err);
  ASSERT_EQ(err, nullptr) << err->message;
  GstElement* src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "s");
  GstElement* t = gst_bin_get_by_name(GST_BIN(pipeline), "t");
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  auto push = [&](int i) {
    GstBuffer* b = make_frame(GST_VIDEO_FORMAT_BGR, 64, 48, 10 + i).buffer;
    GST_BUFFER_PTS(b) = i * GST_SECOND / 30;
    GST_BUFFER_DURATION(b) = GST_SECOND / 30;
    return gst_app_src_push_buffer(GST_APP_SRC(src), b);
  };
  for (int i = 0; i < 2; i++) {
    ASSERT_EQ(push(i), GST_FLOW_OK);
    GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 5 * GST_SECOND);
    ASSERT_NE(s, nullptr) << "frame " << i;
    gst_sample_unref(s);
  }
  gst_util_set_object_arg(G_OBJECT(t), "channels", "2");
  for (int i = 2; i < 4; i++) push(i);
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  Outcome o;
  collect(pipeline, &o);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(t);
  gst_object_unref(sink);
  gst_object_unref(src);
  gst_object_unref(pipeline);
  const std::vector<Message> mine = o.errors_from("cudatensorize");
  ASSERT_FALSE(mine.empty()) << o.all_errors();
  EXPECT_TRUE(has(mine[0].text, "channels 2 is not supported")) << mine[0].text;
  EXPECT_FALSE(has(mine[0].text, "Downstream does not accept")) << mine[0].text;
}

// 4. A region grown by roi-margin past the range of int is clipped to the frame (it overflowed
// to a negative size and was skipped): the tensor is the whole frame's.
TEST(BadInput, RegionGrownPastIntRangeIsClipped) {
  auto tensor = [](const std::string& props, std::vector<std::string>* warnings) {
    GstHarness* h = gst_harness_new_parse(("cudatensorize backend=cpu width=32 height=32 " + props).c_str());
    test::BusWatch bus(h);  // before the caps: the regions are resolved when they arrive
    gst_harness_set_src_caps_str(h, video_caps("BGR", 64, 48).c_str());
    GstBuffer* out = gst_harness_push_and_pull(h, make_frame(GST_VIDEO_FORMAT_BGR, 64, 48, 7).buffer);
    std::vector<uint8_t> bytes = out ? test::buffer_bytes(out) : std::vector<uint8_t>();
    if (out) gst_buffer_unref(out);
    if (warnings) *warnings = bus.take(GST_MESSAGE_WARNING);
    gst_harness_teardown(h);
    return bytes;
  };
  const std::vector<uint8_t> whole = tensor("", nullptr);
  ASSERT_FALSE(whole.empty());
  for (const char* rois : {"<<0,0,2147483647,2147483647>>", "<<-2147483648,-2147483648,2147483647,2147483647>>"}) {
    SCOPED_TRACE(rois);
    std::vector<std::string> warnings;
    const std::vector<uint8_t> got = tensor(std::string("rois=") + rois + " roi-margin=1", &warnings);
    for (const auto& w : warnings) ADD_FAILURE() << "warning: " << w;
    EXPECT_TRUE(got == whole) << "the tensor differs from the whole frame's (" << got.size() << " bytes)";
  }
}

// 5. A frame wider than the elements take: an error from cudatensorize naming the size and the
// limit (before: only the source's not-negotiated).
TEST(BadInput, OversizedFrameNamesTheLimit) {
  const std::string caps = video_caps("GRAY8", 32769, 2);
  GError* err = nullptr;
  GstElement* pipeline = gst_parse_launch(
      ("appsrc name=src format=time caps=\"" + caps + "\" ! cudatensorize backend=cpu ! fakesink").c_str(), &err);
  ASSERT_EQ(err, nullptr) << err->message;
  GstElement* src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstVideoInfo info;
  gst_video_info_set_format(&info, GST_VIDEO_FORMAT_GRAY8, 32769, 2);
  GstBuffer* b = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&info), nullptr);
  gst_buffer_memset(b, 0, 128, GST_VIDEO_INFO_SIZE(&info));
  GST_BUFFER_PTS(b) = 0;
  gst_app_src_push_buffer(GST_APP_SRC(src), b);
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  Outcome o;
  collect(pipeline, &o);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(src);
  gst_object_unref(pipeline);
  const std::vector<Message> mine = o.errors_from("cudatensorize");
  ASSERT_FALSE(mine.empty()) << o.all_errors();
  EXPECT_TRUE(has(mine[0].text, "32769x2")) << mine[0].text;
  EXPECT_TRUE(has(mine[0].text, "32768")) << mine[0].text;
}

// 6. More sink pads than a fixed batch-size from a launch line: the link fails and a warning in
// log domain "cudaprep" says why (before: only "could not link").
namespace {
std::vector<std::string> g_cudaprep_warnings;
void capture_warning(const gchar*, GLogLevelFlags, const gchar* message, gpointer) {
  g_cudaprep_warnings.push_back(message ? message : "");
}
}  // namespace

TEST(BadInput, NoSlotLeftIsLoggedForALaunchLine) {
  g_cudaprep_warnings.clear();
  const guint handler = g_log_set_handler("cudaprep", G_LOG_LEVEL_WARNING, capture_warning, nullptr);
  GError* err = nullptr;
  GstElement* pipeline = gst_parse_launch(
      "cudatensorbatch name=b batch-size=1 backend=cpu ! fakesink videotestsrc ! b. videotestsrc ! b.", &err);
  g_log_remove_handler("cudaprep", handler);
  ASSERT_NE(err, nullptr) << "the launch line linked";
  EXPECT_TRUE(g_error_matches(err, GST_PARSE_ERROR, GST_PARSE_ERROR_LINK)) << err->message;
  g_error_free(err);
  if (pipeline) {
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(pipeline);
  }
  ASSERT_EQ(g_cudaprep_warnings.size(), 1u) << "warnings in log domain cudaprep";
  EXPECT_TRUE(has(g_cudaprep_warnings[0], "batch-size=1")) << g_cudaprep_warnings[0];
  EXPECT_TRUE(has(g_cudaprep_warnings[0], "no slot left")) << g_cudaprep_warnings[0];
}

// 7. An empty template-rect is called empty (it was "not inside the 768x576 frame").
TEST(BadInput, EmptyTemplateRectIsCalledEmpty) {
  Outcome o =
      run("videotestsrc num-buffers=2 ! video/x-raw,format=BGR,width=768,height=576 ! "
          "cudatemplatematch backend=cpu template-rect=\"<10,10,0,0>\" ! fakesink");
  const std::vector<Message> mine = o.errors_from("cudatemplatematch");
  ASSERT_FALSE(mine.empty()) << o.all_errors();
  EXPECT_TRUE(has(mine[0].text, "is empty")) << mine[0].text;
  EXPECT_FALSE(has(mine[0].text, "is not inside")) << mine[0].text;
}

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new test::GstEnv);
  return RUN_ALL_TESTS();
}
