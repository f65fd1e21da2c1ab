// cudaprep-regress: runs a gst-launch description over a clip and hands every appsink sample
// to a handler, already digested (tensor bytes + SHA-256 + stats + transform meta, or the
// template-match ROI metas). Also describes the pipeline for the manifest.
#pragma once

#include <gst/gst.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "regress_store.h"

namespace regress {

// Receives samples from the streaming threads (a tensor sink's frames from its queue's worker
// threads, in frame order): never two at once for the same sink, but different sinks
// concurrently.
class SampleHandler {
 public:
  virtual ~SampleHandler() = default;
  // data: the frame's bytes; null where expected_tensor() gave an entry that the frame equals (or
  // the frame has no bytes).
  virtual void on_tensor(const std::string& sink, uint64_t index, const TensorEntry& entry, DType type,
                         const uint8_t* data) = 0;
  // The entry a tensor frame is held to by its digest alone (a digest-only golden), if any: a
  // frame equal to it is handed over without its bytes, and with that entry's stats. Called on
  // the streaming thread; the entry must outlive the run.
  virtual const TensorEntry* expected_tensor(const std::string& sink, uint64_t index, DType type) {
    (void)sink, (void)index, (void)type;
    return nullptr;
  }
  virtual void on_matches(const std::string& sink, uint64_t index, const MatchesEntry& entry) = 0;
  virtual void on_detections(const std::string& sink, uint64_t index, const DetectionsEntry& entry) = 0;
  // Appended to the progress line ("2 failing").
  virtual std::string progress_note() { return ""; }
};

struct RunConfig {
  std::string clip;         // path as given
  std::string description;  // gst-launch syntax with {clip}
  std::string label = "run";
  bool progress = false;         // print progress on stderr (also when not a tty)
  uint64_t expected_frames = 0;  // for the progress display; 0 = unknown
  int device_id = -1;            // >= 0: set on every element with a device-id (the GPU to run on)
};

// The clip path never goes through gst-launch's quoting and escaping (which cannot carry every
// file name): the description is parsed with every {clip} replaced by `token`, a plain word,
// and apply_clip() then sets each string property holding the token to its value with the path
// in place of the token (filesrc location={clip}: location is the path, byte for byte).
std::string substitute_clip(const std::string& description, const std::string& token);
// Returns how many properties it set; 0 means no element property holds the token.
int apply_clip(GstElement* pipeline, const std::string& token, const std::string& clip, std::string* error);
// Collapses whitespace runs, trims: descriptions are compared in this form.
std::string normalize_description(const std::string& description);
// What an appsink carries, from its name: "matches" for names starting with "match" or "roi",
// "detections" for names starting with "detect", "tensor" otherwise.
std::string sink_kind(const std::string& appsink_name);
// The tool's own version ("0.1.0").
const char* tool_version();

// While an InterruptGuard lives, SIGINT and SIGTERM do not kill the process: they are
// delivered through g_unix_signal_add (no work in a signal handler) and stop run(), which then
// fails with "interrupted by SIGINT", so that the caller can remove what it started.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  unsigned ids_[2] = {0, 0};
};
// The signal that arrived under an InterruptGuard (SIGINT, SIGTERM), or 0. Dispatches pending
// signal sources of the default main context first.
int interrupted();
// "SIGINT", "SIGTERM"
std::string signal_name(int sig);

struct SinkState;    // regress_capture.h
struct RunEnd;       // regress_run.cpp
class ProgressLine;  // regress_run.cpp

class PipelineRun {
 public:
  PipelineRun();
  ~PipelineRun();
  PipelineRun(const PipelineRun&) = delete;
  PipelineRun& operator=(const PipelineRun&) = delete;

  // Parses the description and finds the appsinks. False with a message on any error, among
  // them a matches sink without a cudatemplatematch upstream of it.
  bool prepare(const RunConfig& config, std::string* error);
  // Element settings as read after parsing (for the manifest and the settings check).
  const std::vector<ElementInfo>& elements() const { return elements_; }
  std::vector<std::string> sink_names() const;
  // Plays the clip to its end. False with a message when the pipeline fails or gives no frame,
  // when a matches sink receives something other than video frames, or when interrupted.
  bool run(SampleHandler* handler, std::string* error);
  // The manifest of this run (after run()): store is "full" or "digest".
  Manifest manifest(const std::string& store) const;
  // Sink problems found while running (caps changing mid-stream, ...), empty if none.
  std::vector<std::string> sink_errors() const;

 private:
  // prepare()'s steps (regress_pipeline.cpp)
  bool parse_description(const std::string& token, std::string* error);
  bool put_clip(const std::string& token, std::string* error);
  void describe_elements();
  bool find_sinks(std::string* error);
  // run()'s steps (regress_run.cpp)
  void attach_sinks(SampleHandler* handler);
  RunEnd play_to_end(ProgressLine* progress);
  void note_devices();
  bool report(const RunEnd& end, std::string* error);
  uint64_t frames_done() const;   // the most frames any sink has received
  SinkState* sink_abort() const;  // a sink whose error stops the run, or null

  RunConfig config_;
  GstElement* pipeline_ = nullptr;
  std::vector<std::unique_ptr<SinkState>> sinks_;
  std::vector<ElementInfo> elements_;
  std::vector<std::pair<GstElement*, std::string>> element_objects_;  // canonical names
  DeviceInfo device_;
};

}  // namespace regress
