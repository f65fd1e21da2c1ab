// cudaprep-regress: what each appsink of a run receives, digested on the sink's streaming
// thread before it goes to the SampleHandler: a tensor sink's frames (tensor bytes, SHA-256,
// stats, transform meta and batch slots; a frame with more regions than batch-size is gathered
// from several tensors in a row), a matches sink's template-match ROI metas.
#pragma once

#include <gst/app/gstappsink.h>
#include <gst/gst.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "regress_pipeline.h"
#include "regress_store.h"

namespace regress {

struct SinkState {
  std::string name, kind;
  GstElement* appsink = nullptr;
  SampleHandler* handler = nullptr;
  std::atomic<uint64_t> count{0};
  std::mutex mu;  // fields below
  bool have_caps = false;
  std::string caps, memory, dtype = "uint8";
  DType type = DType::U8;
  uint64_t tensor_bytes = 0, batch = 0;  // what the caps fix (0: nothing)
  std::string error;
  bool fatal = false;  // error stops the run (run() returns it)
  // The frame being gathered (tensor sinks): a frame with more regions than batch-size gives
  // several tensors in a row. Touched by the sink's streaming thread, and by run() once the
  // pipeline has stopped.
  bool pending = false;
  TensorEntry pending_entry;
  std::vector<uint8_t> pending_bytes;  // keeps its capacity from frame to frame
};

// The appsink's new-sample callback; `user` is the sink's SinkState.
GstFlowReturn on_new_sample(GstAppSink* appsink, gpointer user);
// Hands the frame being gathered to the handler, digested (at EOS: its last tensor has come).
void flush_pending(SinkState* s);

}  // namespace regress
