/* CudaPrepHeldFrames: input frames released once the GPU has read them. */
#include "held_frames.h"

void
CudaPrepHeldFrames::release_oldest ()
{
  gst_clear_buffer (&oldest ().buffer);
  first_ = (first_ + 1) % kDepth;
  count_--;
}

cudaprep::Status
CudaPrepHeldFrames::release_finished ()
{
  while (count_ > 0) {
    bool done = false;
    CUDAPREP_RETURN_IF_ERROR (oldest ().done.query (&done));
    if (!done)
      break;
    release_oldest ();
  }
  return cudaprep::Status ();
}

cudaprep::Status
CudaPrepHeldFrames::hold (GstBuffer * buffer, void *stream)
{
  CUDAPREP_RETURN_IF_ERROR (release_finished ());
  if (count_ == kDepth) {
    CUDAPREP_RETURN_IF_ERROR (oldest ().done.synchronize ());
    release_oldest ();
  }
  Entry &e = entries_[(first_ + count_) % kDepth];
  if (!e.done.valid ())         /* once per stream start: never per frame */
    CUDAPREP_RETURN_IF_ERROR (e.done.create (true));
  CUDAPREP_RETURN_IF_ERROR (e.done.record (stream));
  e.buffer = gst_buffer_ref (buffer);
  count_++;
  return cudaprep::Status ();
}

cudaprep::Status
CudaPrepHeldFrames::release_all ()
{
  while (count_ > 0) {
    CUDAPREP_RETURN_IF_ERROR (oldest ().done.synchronize ());
    release_oldest ();
  }
  return cudaprep::Status ();
}

void
CudaPrepHeldFrames::reset ()
{
  while (count_ > 0)
    release_oldest ();
  for (Entry & e : entries_)
    e.done.reset ();
  first_ = 0;
}
