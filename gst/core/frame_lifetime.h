/* When may an input frame leave a cudaprep element, and when must the element wait for the GPU?
 * One policy for the three elements, its rules written here once.
 *
 * The GPU path enqueues work on the element's stream and returns. Then:
 *  1. Work whose result the element itself reads or hands over in host memory (a system-memory
 *     tensor, the matcher's match list) is waited for before that: the wait the element's
 *     gpu-wait property chooses. Every input has been read by then.
 *  2. An output in CUDA memory that carries the element's stream (GStreamer 1.24+) is left on
 *     that stream: whoever uses it next orders its work after ours, and nobody waits.
 *     Its inputs must still not be rewritten by their producers before the kernel has read them:
 *     a. an input ordered on the element's stream (uploaded into the element's staging, or CUDA
 *        memory carrying the element's stream: CudaPrepVideoInput::stream_ordered) needs
 *        nothing more;
 *     b. another input is held until an event recorded after the kernel has completed, where
 *        the element may hold it: it asked upstream for kDepth buffers more (propose_allocation)
 *        and the frame does not travel on downstream itself (a held reference would make it
 *        read-only). Finished frames are released at the next frame, and the thread waits
 *        (sleeping) only when kDepth frames are still in flight. One such input an output;
 *     c. otherwise (the frame of cudatemplatematch or of cudatensorize output=video-meta, the
 *        slots of cudatensorbatch) the element waits for the GPU before the output leaves.
 *  3. Any other output (CUDA memory not carrying the stream, before 1.24) is waited for.
 * On the CPU path everything is done on return: nothing is held or waited for.
 */
#pragma once

#include <gst/gst.h>

#include "cuda_device.h"
#include "cudaprep_device.h"
#include "status.h"

class FrameLifetime {
 public:
  /* The most frames held at once; the element asks upstream for this many buffers more. */
  static constexpr guint kDepth = 2;

  FrameLifetime() = default;
  ~FrameLifetime() { reset(); }
  FrameLifetime(const FrameLifetime &) = delete;
  FrameLifetime &operator=(const FrameLifetime &) = delete;

  /* Starts an output whose unordered inputs the element may hold (rule 2b) or not (2c). */
  void begin_output(gboolean may_hold);
  /* An input of this output, @stream_ordered as CudaPrepVideoInput says (rule 2a). */
  void add_input(GstBuffer *buffer, gboolean stream_ordered);
  /* Rule 2: whether the output may be left on the stream as far as its inputs go. */
  gboolean inputs_may_stay() const { return !must_wait_; }
  /* After the output is complete, or left on @stream: holds the input of rule 2b. Context
   * current. */
  cudaprep::Status end_output(gboolean left_on_stream, void *stream);

  /* Releases the held frames whose work has completed, without waiting. Context current. */
  cudaprep::Status release_finished();
  /* Waits (sleeping) for every held frame and releases them: EOS, new caps. Context current. */
  cudaprep::Status release_all();
  /* Releases every frame without waiting and destroys the events: only once the stream has
   * been synchronised (stop). Context current. */
  void reset();

  guint held() const { return count_; }

 private:
  struct Entry {
    GstBuffer *buffer = nullptr;
    cudaprep::cuda::Event done; /* recorded after the work that reads the buffer */
  };
  cudaprep::Status hold(GstBuffer *buffer, void *stream);
  Entry &oldest() { return entries_[first_]; }
  void release_oldest();

  /* This output's input to hold (not referenced: the element has it until end_output). */
  GstBuffer *pending_ = nullptr;
  gboolean may_hold_ = FALSE;
  gboolean must_wait_ = FALSE;

  Entry entries_[kDepth];
  guint first_ = 0, count_ = 0;
};
