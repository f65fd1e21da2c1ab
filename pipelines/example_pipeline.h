// What both example consumers share: running a gst-launch description that ends in
// `appsink name=sink` (and in further named appsinks, read side by side), and ending with one
// clear line, never a hang, when it cannot run (a missing file, a missing element, a syntax
// error) or fails while running.
#pragma once

#include <gst/app/gstappsink.h>
#include <gst/gst.h>

#include <cstdio>
#include <string>
#include <vector>

class ExamplePipeline {
 public:
  explicit ExamplePipeline(const char* program) : program_(program) {}
  ~ExamplePipeline() {
    if (pipeline_) gst_element_set_state(pipeline_, GST_STATE_NULL);
    for (GstAppSink* sink : sinks_) gst_object_unref(sink);
    if (pipeline_) gst_object_unref(pipeline_);
  }

  // Parses and starts `desc`, whose samples are read from `appsink name=sink` (index 0 of
  // next()'s `which`) and from the appsinks named in `more` (1, 2, ...). On failure prints one
  // line and returns the exit status (2), else 0.
  int start(const std::string& desc, const std::vector<std::string>& more = {}) {
    GError* err = nullptr;
    pipeline_ = gst_parse_launch(desc.c_str(), &err);
    // A missing element is a recoverable parse error: gst_parse_launch returns the partial
    // pipeline with err set, which would run and never reach EOS.
    if (!pipeline_ || err) {
      std::fprintf(stderr, "%s: could not parse the pipeline: %s\n", program_, err ? err->message : "?");
      if (err) g_error_free(err);
      return 2;
    }
    std::vector<std::string> names{"sink"};
    names.insert(names.end(), more.begin(), more.end());
    for (const std::string& name : names) {
      GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline_), name.c_str());
      if (!sink || !GST_IS_APP_SINK(sink)) {
        std::fprintf(stderr, "%s: the pipeline needs an 'appsink name=%s'\n", program_, name.c_str());
        if (sink) gst_object_unref(sink);
        return 2;
      }
      sinks_.push_back(GST_APP_SINK(sink));
      g_object_set(sink, "sync", FALSE, NULL);
    }
    if (gst_element_set_state(pipeline_, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
      report_error("could not start the pipeline");
      return 2;
    }
    return 0;
  }

  // The next sample of any of the appsinks (taken in turn, so that none waits for the others'
  // end; `which` says whose: 0 for `sink`), or nullptr once every one is at the end of its
  // stream, or on an error (see finish()).
  GstSample* next(size_t* which = nullptr) {
    const GstClockTime wait = 100 * GST_MSECOND / sinks_.size();
    for (;;) {
      bool all_eos = true;
      for (size_t k = 0; k < sinks_.size(); k++) {
        const size_t i = (turn_ + k) % sinks_.size();
        if (gst_app_sink_is_eos(sinks_[i])) continue;
        all_eos = false;
        if (GstSample* s = gst_app_sink_try_pull_sample(sinks_[i], wait)) {
          turn_ = i + 1;
          if (which) *which = i;
          return s;
        }
      }
      if (all_eos) return nullptr;
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
  std::vector<GstAppSink*> sinks_;
  size_t turn_ = 0;  // the sink next() tries first
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
