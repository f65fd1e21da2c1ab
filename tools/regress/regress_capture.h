// cudaprep-regress: what each appsink of a run receives, digested before it goes to the
// SampleHandler: a tensor sink's frames (tensor bytes, SHA-256, stats, transform meta and batch
// slots; a frame with more regions than batch-size is gathered from several tensors in a row),
// a matches sink's template-match ROI metas. A tensor sink's streaming thread only gathers and
// copies the bytes: its FrameQueue digests the frames on worker threads and delivers them in
// order; the other sinks' samples are handled on their streaming threads.
#pragma once

#include <gst/app/gstappsink.h>
#include <gst/gst.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "regress_frame_queue.h"
#include "regress_pipeline.h"
#include "regress_store.h"

namespace regress {

struct SinkState {
  std::string name, kind;
  GstElement* appsink = nullptr;
  SampleHandler* handler = nullptr;
  std::atomic<uint64_t> count{0};  // frames handed to the handler
  std::mutex mu;                   // fields below
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
  std::vector<GstBuffer*> pending_buffers;  // held; swapped with a queued frame's (empty) list
  uint64_t submitted = 0;                   // frames handed to the queue (a tensor sink's frame numbers)
  // A tensor sink's frames on their way to the handler (made by the first one). Last: destroyed
  // first, delivering what it holds while the fields above still exist.
  std::unique_ptr<FrameQueue> queue;

  ~SinkState() {
    for (GstBuffer* b : pending_buffers) gst_buffer_unref(b);  // a frame never queued (stopped)
  }
};

// The appsink's new-sample callback; `user` is the sink's SinkState.
GstFlowReturn on_new_sample(GstAppSink* appsink, gpointer user);
// Queues the frame being gathered, to be digested and handed to the handler (at EOS: its last
// tensor has come).
void flush_pending(SinkState* s);
// Returns when every queued frame of the sink has been handed to the handler.
void drain_frames(SinkState* s);

}  // namespace regress
