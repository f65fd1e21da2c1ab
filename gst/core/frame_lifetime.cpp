/* FrameLifetime: the rules are in frame_lifetime.h. */
#include "frame_lifetime.h"

void FrameLifetime::begin_output(gboolean may_hold) {
  pending_ = nullptr;
  may_hold_ = may_hold;
  must_wait_ = FALSE;
}

void FrameLifetime::add_input(GstBuffer *buffer, gboolean stream_ordered) {
  if (stream_ordered) return; /* 2a */
  if (may_hold_ && !pending_) {
    pending_ = buffer; /* 2b */
    return;
  }
  must_wait_ = TRUE; /* 2c, or a second input to hold */
}

cudaprep::Status FrameLifetime::end_output(gboolean left_on_stream, void *stream) {
  GstBuffer *buffer = pending_;
  pending_ = nullptr;
  if (!left_on_stream || !buffer) return cudaprep::Status(); /* complete: its inputs were read */
  return hold(buffer, stream);
}

void FrameLifetime::release_oldest() {
  gst_clear_buffer(&oldest().buffer);
  first_ = (first_ + 1) % kDepth;
  count_--;
}

cudaprep::Status FrameLifetime::release_finished() {
  while (count_ > 0) {
    bool done = false;
    CUDAPREP_RETURN_IF_ERROR(oldest().done.query(&done));
    if (!done) break;
    release_oldest();
  }
  return cudaprep::Status();
}

cudaprep::Status FrameLifetime::hold(GstBuffer *buffer, void *stream) {
  CUDAPREP_RETURN_IF_ERROR(release_finished());
  if (count_ == kDepth) {
    CUDAPREP_RETURN_IF_ERROR(oldest().done.synchronize());
    release_oldest();
  }
  Entry &e = entries_[(first_ + count_) % kDepth];
  if (!e.done.valid()) /* once per stream start: never per frame */
    CUDAPREP_RETURN_IF_ERROR(e.done.create(true));
  CUDAPREP_RETURN_IF_ERROR(e.done.record(stream));
  e.buffer = gst_buffer_ref(buffer);
  count_++;
  return cudaprep::Status();
}

cudaprep::Status FrameLifetime::release_all() {
  while (count_ > 0) {
    CUDAPREP_RETURN_IF_ERROR(oldest().done.synchronize());
    release_oldest();
  }
  return cudaprep::Status();
}

void FrameLifetime::reset() {
  pending_ = nullptr;
  while (count_ > 0) release_oldest();
  for (Entry &e : entries_) e.done.reset();
  first_ = 0;
}
