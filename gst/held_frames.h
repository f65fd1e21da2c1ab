/* Input frames kept until the GPU has finished reading them.
 *
 * An element whose output is ordered on its stream (1.24+: CUDA memory carrying the stream) need
 * not wait for its kernel before pushing. But a frame whose memory carries another stream (a
 * decoder's) goes back to its producer as soon as the element drops it, and the producer then
 * writes the next picture into it on its own stream, perhaps while the kernel still reads it.
 * Holding the buffer until an event recorded after the kernel has completed keeps that order
 * without a host wait: finished frames are released at the next frame (an event query), and the
 * thread waits, sleeping, only when kDepth frames are still in flight. */
#pragma once

#include <gst/gst.h>

#include "cuda_device.h"
#include "status.h"

class CudaPrepHeldFrames
{
public:
  /* The most frames held at once; the element asks upstream for this many buffers more. */
  static constexpr guint kDepth = 2;

  CudaPrepHeldFrames () = default;
  ~CudaPrepHeldFrames () { reset (); }
  CudaPrepHeldFrames (const CudaPrepHeldFrames &) = delete;
  CudaPrepHeldFrames & operator= (const CudaPrepHeldFrames &) = delete;

  /* Keeps a reference to @buffer until the work enqueued so far on @stream has completed.
   * Releases the frames already finished first, and when kDepth are still held waits for the
   * oldest. Context current. */
  cudaprep::Status hold (GstBuffer * buffer, void *stream);
  /* Releases the frames whose work has completed, without waiting. Context current. */
  cudaprep::Status release_finished ();
  /* Waits (sleeping) for every held frame and releases them: EOS, new caps. Context current. */
  cudaprep::Status release_all ();
  /* Releases every frame without waiting and destroys the events: only once the stream has
   * been synchronised (stop). Context current. */
  void reset ();

  guint held () const { return count_; }

private:
  struct Entry
  {
    GstBuffer *buffer = nullptr;
    cudaprep::cuda::Event done;         /* recorded after the work that reads the buffer */
  };
  Entry &oldest () { return entries_[first_]; }
  void release_oldest ();

  Entry entries_[kDepth];
  guint first_ = 0, count_ = 0;
};
