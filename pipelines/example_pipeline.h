// What both example consumers share: running a gst-launch description that ends in
// `appsink name=sink`, and ending with one clear line, never a hang, when it cannot run (a
// missing file, a missing element, a syntax error) or fails while running.
#pragma once

#include <gst/app/gstappsink.h>
#include <gst/gst.h>

#include <cstdio>
#include <string>

class ExamplePipeline {
 public:
  explicit ExamplePipeline(const char* program) : program_(program) {}
  ~ExamplePipeline() {
    if (pipeline_) gst_element_set_state(pipeline_, GST_STATE_NULL);
    if (sink_) gst_object_unref(sink_);
    if (pipeline_) gst_object_unref(pipeline_);
  }

  // Parses and starts `desc`. On failure prints one line and returns the exit status (2), else 0.
  int start(const std::string& desc) {
    GError* err = nullptr;
    pipeline_ = gst_parse_launch(desc.c_str(), &err);
    // A missing element is a recoverable parse error: gst_parse_launch returns the partial
    // pipeline with err set, which would run and never reach EOS.
    if (!pipeline_ || err) {
      std::fprintf(stderr, "%s: could not parse the pipeline: %s\n", program_, err ? err->message : "?");
      if (err) g_error_free(err);
      return 2;
    }
    GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline_), "sink");
    if (!sink || !GST_IS_APP_SINK(sink)) {
      std::fprintf(stderr, "%s: the pipeline needs an 'appsink name=sink'\n", program_);
      if (sink) gst_object_unref(sink);
      return 2;
    }
    sink_ = GST_APP_SINK(sink);
    g_object_set(sink_, "sync", FALSE, NULL);
    if (gst_element_set_state(pipeline_, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
      report_error("could not start the pipeline");
      return 2;
    }
    return 0;
  }

  // The next sample, or nullptr at the end of the stream or on an error (see finish()).
  GstSample* next() {
    for (;;) {
      if (GstSample* s = gst_app_sink_try_pull_sample(sink_, 100 * GST_MSECOND)) return s;
      if (gst_app_sink_is_eos(sink_)) return nullptr;
      if (GstMessage* m = gst_bus_peek(GST_ELEMENT_BUS(pipeline_))) {
        const bool error = GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR;
        gst_message_unref(m);
        if (error) return nullptr;
        gst_message_unref(gst_bus_pop(GST_ELEMENT_BUS(pipeline_)));  // anything else: not needed
      }
    }
  }

  // After the last sample: prints the pipeline's error in one line and returns 1, else 0.
  int finish() { return report_error(nullptr) ? 1 : 0; }

 private:
  // Prints "PROGRAM: [what: ]MESSAGE (DETAIL)" for the first error on the bus, DETAIL being the
  // last line of its debug text (e.g. `No such file "clip.mp4"`). Returns whether there was one.
  bool report_error(const char* what) {
    GstMessage* msg = gst_bus_timed_pop_filtered(GST_ELEMENT_BUS(pipeline_), 0, GST_MESSAGE_ERROR);
    if (!msg) {
      if (what) std::fprintf(stderr, "%s: %s\n", program_, what);
      return what != nullptr;
    }
    GError* e = nullptr;
    gchar* dbg = nullptr;
    gst_message_parse_error(msg, &e, &dbg);
    std::string detail = dbg ? dbg : "";
    const size_t nl = detail.find_last_of('\n');
    if (nl != std::string::npos) detail = detail.substr(nl + 1);
    std::fprintf(stderr, "%s: %s%serror from %s: %s%s%s%s\n", program_, what ? what : "", what ? ": " : "",
                 GST_OBJECT_NAME(msg->src), e->message, detail.empty() ? "" : " (", detail.c_str(),
                 detail.empty() ? "" : ")");
    g_error_free(e);
    g_free(dbg);
    gst_message_unref(msg);
    return true;
  }

  const char* program_;
  GstElement* pipeline_ = nullptr;
  GstAppSink* sink_ = nullptr;
};

// Whether a sample's caps are a tensor; prints why not (one line) otherwise.
inline bool example_is_tensor(const char* program, GstSample* sample) {
  GstCaps* caps = gst_sample_get_caps(sample);
  const GstStructure* s = caps && !gst_caps_is_empty(caps) ? gst_caps_get_structure(caps, 0) : nullptr;
  if (s && gst_structure_has_name(s, "other/tensors") && gst_structure_get_string(s, "dimensions")) return true;
  std::fprintf(stderr,
               "%s: what reaches 'sink' is %s, not a tensor (other/tensors): put cudatensorize or "
               "cudatensorbatch before the appsink\n",
               program, s ? gst_structure_get_name(s) : "a stream without caps");
  return false;
}
