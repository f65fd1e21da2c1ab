// cudaprep-regress: the frames of a tensor sink, digested off the streaming thread. The sink's
// streaming thread hands each complete frame (its bytes and entry) to a FrameQueue; a few
// worker threads digest frames (SHA-256, stats, slot digests) side by side, and each frame is
// then delivered, in the order frames were submitted, one at a time.
//
// A fixed number of frames is in flight: submitting waits while all of them are taken, so a
// slow handler slows the pipeline instead of piling frames up in memory. The streaming thread
// hands over the frame's buffers unread; a worker maps them (downloading CUDA memory) into the
// frame's byte buffer, which is reused: once every frame's has grown to a frame's size no frame
// allocates bytes.
#pragma once

#include <gst/gst.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "regress_math.h"
#include "regress_slots.h"
#include "regress_store.h"

namespace regress {

struct QueuedFrame {
  uint64_t index = 0;  // the sink's frame number
  TensorEntry entry;
  // The frame's tensors as they came (held, not yet read: a CUDA tensor is downloaded where it is
  // mapped, on a worker), gathered into `bytes` there, in order.
  std::vector<GstBuffer*> buffers;
  bool unreadable = false;  // a buffer could not be mapped
  // What a digest-only comparison holds the frame to (the handler's, pass_frame), else null.
  const TensorEntry* expected = nullptr;
  std::vector<uint8_t> bytes;  // empty where the frame equals `expected` (not copied)
  // The worker's maps of `buffers` while it reads them (kept for their capacity: no allocation
  // per frame).
  std::vector<GstMapInfo> maps;
  std::vector<FramePart> parts;
  DType type = DType::U8;
  uint64_t tensor_bytes = 0, batch = 0;  // what the sink's caps fix
};

class FrameQueue {
 public:
  // digest(frame) runs on any worker, several frames at once; deliver(frame) runs on one
  // worker at a time, in submission order. Neither may throw.
  FrameQueue(int threads, int depth, std::function<void(QueuedFrame&)> digest,
             std::function<void(QueuedFrame&)> deliver);
  ~FrameQueue();  // delivers what was submitted, then joins the workers
  FrameQueue(const FrameQueue&) = delete;
  FrameQueue& operator=(const FrameQueue&) = delete;

  // A free frame to fill, waiting while every frame is in flight. Its bytes are those of an
  // earlier frame (swap them with the caller's buffer, or assign). Pass it to submit().
  QueuedFrame* acquire();
  // Queues the frame acquired last (one acquire, one submit, from one thread at a time).
  void submit(QueuedFrame* frame);
  // Returns when every submitted frame has been delivered.
  void drain();

  // The threads and depth a sink's queue gets on this machine: a few workers (at least 2), and
  // two frames in flight beyond them.
  static int default_threads();
  static int default_depth(int threads) { return threads + 2; }

 private:
  struct Slot {
    QueuedFrame frame;
    bool digested = false;
  };
  void work();
  void deliver_ready(std::unique_lock<std::mutex>& lock);  // under mu_

  const int threads_;
  std::function<void(QueuedFrame&)> digest_, deliver_;
  std::mutex mu_;
  std::condition_variable work_cv_;  // a frame to digest, or stopping
  std::condition_variable free_cv_;  // a frame freed, or the queue drained
  std::vector<Slot> slots_;
  std::vector<Slot*> free_;
  std::deque<Slot*> todo_;   // submitted, not yet taken by a worker
  std::deque<Slot*> order_;  // submitted, not yet delivered: in submission order
  bool delivering_ = false;  // a worker is delivering (deliveries are one at a time)
  bool stopping_ = false;
  std::vector<std::thread> workers_;  // started on the first submit
};

}  // namespace regress
