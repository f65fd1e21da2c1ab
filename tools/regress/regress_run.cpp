// cudaprep-regress: playing a prepared pipeline to its end (PipelineRun::run): the bus, the
// progress line, which device the cudaprep elements used, and what the run reports.
#include <gst/app/gstappsink.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "regress_capture.h"
#include "regress_device.h"
#include "regress_elements.h"
#include "regress_pipeline.h"
#include "regress_progress.h"

namespace regress {

// How the bus loop ended.
struct RunEnd {
  std::string failure;        // the pipeline's error, empty if none
  bool decode_error = false;  // the error points at the clip (does it decode?)
  bool eos = false;
  int sig = 0;  // the signal that interrupted the run, 0 if none
};

// The progress line on stderr: redrawn in place on a tty (every 0.25 s); otherwise, when
// config.progress asks for it, a line every 2 s once frames come.
class ProgressLine {
 public:
  ProgressLine(const RunConfig& config, GstElement* pipeline, SampleHandler* handler, std::function<uint64_t()> frames)
      : config_(config), pipeline_(pipeline), handler_(handler), frames_(std::move(frames)) {}

  void update(bool final) {
    if (!show_) return;
    const auto now = std::chrono::steady_clock::now();
    const double interval = tty_ ? 0.25 : 2.0;
    if (!final && std::chrono::duration<double>(now - last_).count() < interval) return;
    if (final && !printed_) return;
    const uint64_t n = frames_();
    if (final && !tty_ && n == printed_n_) return;
    if (!final && !tty_ && n == 0) return;
    last_ = now;
    printed_n_ = n;
    const std::string line = progress_line(snapshot(n, now));
    if (tty_)
      fprintf(stderr, "\r%s\033[K%s", line.c_str(), final ? "\n" : "");
    else
      fprintf(stderr, "%s\n", line.c_str());
    fflush(stderr);
    printed_ = true;
  }

 private:
  ProgressSnapshot snapshot(uint64_t frames, std::chrono::steady_clock::time_point now) {
    ProgressSnapshot snap;
    snap.label = config_.label;
    snap.frames = frames;
    snap.expected = config_.expected_frames;
    snap.elapsed_s = std::chrono::duration<double>(now - start_).count();
    snap.note = handler_->progress_note();
    gint64 pos = 0, dur = 0;
    if (!snap.expected && gst_element_query_position(pipeline_, GST_FORMAT_TIME, &pos) &&
        gst_element_query_duration(pipeline_, GST_FORMAT_TIME, &dur) && dur > 0)
      snap.stream_fraction = (double)pos / (double)dur;
    return snap;
  }

  const RunConfig& config_;
  GstElement* pipeline_;
  SampleHandler* handler_;
  std::function<uint64_t()> frames_;
  const bool tty_ = isatty(2);
  const bool show_ = config_.progress || tty_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_ = start_ - std::chrono::hours(1);
  bool printed_ = false;
  uint64_t printed_n_ = UINT64_MAX;
};

namespace {

// Whether a bus error comes from reading the clip: posted by a source, demuxer, parser or
// decoder, or a stream-format error.
bool is_decode_error(GstMessage* msg, const GError* err) {
  if (GST_IS_ELEMENT(GST_MESSAGE_SRC(msg))) {
    GstElementFactory* f = gst_element_get_factory(GST_ELEMENT(GST_MESSAGE_SRC(msg)));
    const gchar* klass = f ? gst_element_factory_get_metadata(f, GST_ELEMENT_METADATA_KLASS) : nullptr;
    if (klass &&
        (strstr(klass, "Demux") || strstr(klass, "Decoder") || strstr(klass, "Parser") || strstr(klass, "Source")))
      return true;
  }
  return err && (err->domain == GST_STREAM_ERROR &&
                 (err->code == GST_STREAM_ERROR_DEMUX || err->code == GST_STREAM_ERROR_DECODE ||
                  err->code == GST_STREAM_ERROR_TYPE_NOT_FOUND || err->code == GST_STREAM_ERROR_WRONG_TYPE ||
                  err->code == GST_STREAM_ERROR_CODEC_NOT_FOUND));
}

// Records an error message as the run reports it: its source, message and debug text.
void take_error(GstMessage* msg, RunEnd* end) {
  GError* err = nullptr;
  gchar* debug = nullptr;
  gst_message_parse_error(msg, &err, &debug);
  gchar* src = gst_object_get_name(GST_MESSAGE_SRC(msg));
  if (is_decode_error(msg, err)) end->decode_error = true;
  end->failure = std::string("error from ") + (src ? src : "?") + ": " + (err ? err->message : "?");
  if (debug) end->failure += std::string("\n  (debug: ") + debug + ")";
  g_free(src);
  g_free(debug);
  g_clear_error(&err);
}

}  // namespace

bool PipelineRun::run(SampleHandler* handler, std::string* error) {
  attach_sinks(handler);
  ProgressLine progress(config_, pipeline_, handler, [this] { return frames_done(); });
  const RunEnd end = play_to_end(&progress);
  // the frames still gathered: their last tensor has come
  if (end.eos)
    for (auto& s : sinks_) flush_pending(s.get());
  // the run ends when the handler has every frame queued so far
  for (auto& s : sinks_) drain_frames(s.get());
  progress.update(true);
  note_devices();  // reads the caps at the elements' inputs: before the pipeline stops
  gst_element_set_state(pipeline_, GST_STATE_NULL);
  // after an error or a signal, the frames queued before the streaming threads stopped
  for (auto& s : sinks_) drain_frames(s.get());
  return report(end, error);
}

void PipelineRun::attach_sinks(SampleHandler* handler) {
  for (auto& s : sinks_) {
    s->handler = handler;
    GstAppSinkCallbacks cb = {};
    cb.new_sample = on_new_sample;
    gst_app_sink_set_callbacks(GST_APP_SINK(s->appsink), &cb, s.get(), nullptr);
    // as fast as the pipeline goes; the data does not depend on the clock
    g_object_set(s->appsink, "sync", FALSE, "enable-last-sample", FALSE, NULL);
  }
}

uint64_t PipelineRun::frames_done() const {
  uint64_t n = 0;
  for (auto& s : sinks_) n = std::max(n, s->count.load());
  return n;
}

SinkState* PipelineRun::sink_abort() const {
  for (auto& s : sinks_) {
    std::lock_guard<std::mutex> lock(s->mu);
    if (s->fatal) return s.get();
  }
  return nullptr;
}

// Sets the pipeline playing (unless a signal came before) and reads its bus until an error,
// the end of the stream, a signal or a sink's fatal error.
RunEnd PipelineRun::play_to_end(ProgressLine* progress) {
  RunEnd end;
  GstBus* bus = gst_element_get_bus(pipeline_);
  end.sig = interrupted();
  GstStateChangeReturn r = end.sig ? GST_STATE_CHANGE_SUCCESS : gst_element_set_state(pipeline_, GST_STATE_PLAYING);
  if (r == GST_STATE_CHANGE_FAILURE) {
    GstMessage* msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    if (msg) {
      take_error(msg, &end);
      gst_message_unref(msg);
    } else {
      end.failure = "the pipeline could not start";
    }
  }
  while (end.failure.empty() && !end.eos && !end.sig && !sink_abort()) {
    GstMessage* msg =
        gst_bus_timed_pop_filtered(bus, 100 * GST_MSECOND, (GstMessageType)(GST_MESSAGE_ERROR | GST_MESSAGE_EOS));
    if (msg) {
      if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR)
        take_error(msg, &end);
      else
        end.eos = true;
      gst_message_unref(msg);
    }
    progress->update(false);
    end.sig = interrupted();
  }
  gst_object_unref(bus);
  return end;
}

// Which device each cudaprep element used (its backend property; for auto, CUDA memory at its
// input or a CUDA device present), and from them the device of the run.
void PipelineRun::note_devices() {
  bool any_cuda = false;
  int cuda_index = 0;
  for (auto& eo : element_objects_) {
    if (!is_cudaprep(eo.first)) continue;
    std::string backend = "auto";
    for (auto& info : elements_)
      if (info.name == eo.second)
        for (auto& kv : info.properties)
          if (kv.first == "backend") backend = kv.second;
    bool cuda;
    if (backend == "cpu")
      cuda = false;
    else if (backend == "cuda")
      cuda = true;
    else
      cuda = sink_pad_has_cuda_memory(eo.first) || cuda_device_count() > 0;
    for (auto& info : elements_)
      if (info.name == eo.second) {
        info.device = cuda ? "cuda" : "cpu";
        for (auto& kv : info.properties)
          if (kv.first == "device-id" && cuda) cuda_index = std::max(0, atoi(kv.second.c_str()));
      }
    any_cuda = any_cuda || cuda;
  }

  device_ = DeviceInfo();
  device_.arch = host_arch();
  if (any_cuda) {
    device_.kind = "cuda";
    if (!cuda_device_describe(cuda_index, &device_.name, &device_.driver, &device_.runtime))
      device_.name = "CUDA device " + std::to_string(cuda_index) + " (name unknown)";
  } else {
    device_.kind = "cpu";
    device_.name = host_cpu_model();
  }
}

// run()'s result: the first of interrupted, a sink's fatal error, the pipeline's error, no frame.
bool PipelineRun::report(const RunEnd& end, std::string* error) {
  if (end.sig) {
    *error = "interrupted by " + signal_name(end.sig) + " after " + std::to_string(frames_done()) + " frames";
    return false;
  }
  if (SinkState* s = sink_abort()) {
    std::lock_guard<std::mutex> lock(s->mu);
    *error = s->error;  // reported here, not again by sink_errors()
    s->error.clear();
    return false;
  }
  if (!end.failure.empty()) {
    *error = "the pipeline failed on the clip " + config_.clip + " after " + std::to_string(frames_done()) + " frames" +
             (end.decode_error ? " (the clip does not decode?)" : "") + ": " + end.failure;
    return false;
  }
  if (frames_done() == 0) {
    *error = "the clip " + config_.clip + " gave no frames (does it decode? is it empty?)";
    return false;
  }
  return true;
}

}  // namespace regress
