/* The negotiated input video of a cudaprep element and how its frames reach the processing
 * path: mapped in place (system memory on the CPU path; CUDA memory the element's context can
 * read on the GPU path) or uploaded on the element's stream into staging made once per caps.
 * Owned by composition, like CudaPrepDevice, so any element kind can use it. */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include "cuda_device.h"
#include "cudaprep_device.h"
#include "image.h"

/* A kernel image view of a mapped frame (host or device pointers, as mapped). FALSE for a
 * format the kernels do not know. */
gboolean gst_cuda_prep_view_from_frame(const GstVideoFrame *frame, cudaprep::ImageView *view);

class CudaPrepVideoInput {
 public:
  /* Parses @caps and, on the GPU path, (re)allocates the staging. Call with the device's
   * context current. Posts an error on @element and returns FALSE on failure. */
  gboolean configure(GstElement *element, CudaPrepDevice &device, GstCaps *caps);
  /* Drops the staging (context current). */
  void reset();

  const GstVideoInfo *info() const { return &info_; }

  /* Maps @buffer as a frame of the negotiated info; @view points where the processing path
   * reads it (device memory on the GPU path). Context current on the GPU path. Pair with
   * unmap(). @writable maps for editing in place. */
  gboolean map(GstElement *element, CudaPrepDevice &device, GstBuffer *buffer, gboolean writable, GstVideoFrame *frame,
               cudaprep::ImageView *view);
  /* Maps @frame (from map(), read-only) again for writing, for drawing into it: memory that is
   * shared (a tee's other branch) is copied only now, when there is something to draw. @view
   * points where the processing path writes (a staged frame keeps its staging: unmap() copies
   * the edits back). On failure posts an error; @frame stays for unmap(). */
  gboolean remap_writable(GstElement *element, GstVideoFrame *frame, cudaprep::ImageView *view);
  /* Whether work that others do later on @frame's memory is ordered after the element's GPU
   * work on it, so that the element need not wait before the buffer moves on: a staged frame
   * (unmap() copies edits back and waits), or (1.24+) CUDA memory carrying the element's stream.
   * A mapped frame of this input. */
  gboolean stream_ordered(const CudaPrepDevice &device, GstVideoFrame *frame) const;
  /* Copies a staged frame back when it was @modified, waiting for it (host memory must hold
   * the edits before it is unmapped), and unmaps. Otherwise it does not wait for the GPU: the
   * element finishes the frame (CudaPrepDevice::sync) before the buffer leaves it unless the
   * frame is stream_ordered(). */
  gboolean unmap(GstElement *element, CudaPrepDevice &device, GstVideoFrame *frame, gboolean modified);

 private:
  /* Planes of the negotiated format, bounded for the compiler's sake (GStreamer's are <= 4). */
  guint planes_() const { return MIN(GST_VIDEO_INFO_N_PLANES(&info_), (guint)GST_VIDEO_MAX_PLANES); }

  gboolean upload(GstElement *element, CudaPrepDevice &device, const GstVideoFrame *frame, cudaprep::ImageView *view);
  gboolean order_after_producer(GstElement *element, CudaPrepDevice &device, GstBuffer *buffer);

  /* A system-memory frame on the GPU path is copied by the host into the next pinned slot of a
   * ring, then to the device staging asynchronously, so an upload never waits for the previous
   * frame's kernel; a slot is refilled once the copy that read it has ended (its event). One
   * device staging suffices: the stream orders each upload after the kernel that read the last. */
  static constexpr int kUploadSlots = 3;
  struct UploadSlot {
    cudaprep::cuda::PinnedBuffer host; /* planes packed, row_bytes_ apart */
    cudaprep::cuda::Event copied;      /* recorded after the copy that read it */
    gboolean in_use = FALSE;
  };

  GstVideoInfo info_{};
  cudaprep::cuda::DeviceBuffer staging_;
  gsize staging_offset_[GST_VIDEO_MAX_PLANES]{};
  gsize row_bytes_[GST_VIDEO_MAX_PLANES]{}, rows_[GST_VIDEO_MAX_PLANES]{}; /* pixel data per plane */
  UploadSlot slots_[kUploadSlots];
  cudaprep::cuda::Event producer_done_; /* recorded on a CUDA frame's producer stream */
  gsize slot_offset_[GST_VIDEO_MAX_PLANES]{};
  int next_slot_ = 0;
};
