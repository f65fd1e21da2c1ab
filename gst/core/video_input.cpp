/* CudaPrepVideoInput: input frames mapped in place or staged on the GPU. */
#include "video_input.h"

#include <cstring>

#if CUDAPREP_HAVE_CUDA
#include <gst/cuda/gstcudamemory.h>
#endif

#include "chroma_site.h"
#include "pixel_format.h"

GST_DEBUG_CATEGORY_STATIC(cudaprep_input_debug);
#define GST_CAT_DEFAULT cudaprep_input_debug

static void init_debug_once(void) {
  static gsize done = 0;
  if (g_once_init_enter(&done)) {
    GST_DEBUG_CATEGORY_INIT(cudaprep_input_debug, "cudaprepinput", 0,
                            "cudaprep input frames: mapped, staged, ordered after their producer");
    g_once_init_leave(&done, 1);
  }
}

gboolean gst_cuda_prep_view_from_frame(const GstVideoFrame *frame, cudaprep::ImageView *view) {
  cudaprep::PixelFormat fmt = cudaprep::PixelFormat::GRAY8;
  if (!gst_cuda_prep_pixel_format_from_video(GST_VIDEO_FRAME_FORMAT(frame), &fmt)) return FALSE;
  view->format = fmt;
  view->width = GST_VIDEO_FRAME_WIDTH(frame);
  view->height = GST_VIDEO_FRAME_HEIGHT(frame);
  for (guint p = 0; p < 3; p++) {
    if (p < GST_VIDEO_FRAME_N_PLANES(frame)) {
      view->planes[p].data = (const uint8_t *)GST_VIDEO_FRAME_PLANE_DATA(frame, p);
      view->planes[p].stride = GST_VIDEO_FRAME_PLANE_STRIDE(frame, p);
    } else {
      view->planes[p] = cudaprep::Plane();
    }
  }
  return TRUE;
}

gboolean CudaPrepVideoInput::configure(GstElement *element, CudaPrepDevice &device, GstCaps *caps) {
  init_debug_once();
  if (!gst_video_info_from_caps(&info_, caps)) {
    GST_ELEMENT_ERROR(element, CORE, NEGOTIATION, ("Invalid input caps"), ("could not parse %" GST_PTR_FORMAT, caps));
    return FALSE;
  }
  gst_cuda_prep_read_chroma_site(caps, &info_);
  cudaprep::PixelFormat fmt;
  if (!gst_cuda_prep_pixel_format_from_video(GST_VIDEO_INFO_FORMAT(&info_), &fmt)) {
    GST_ELEMENT_ERROR(element, CORE, NEGOTIATION,
                      ("Unsupported input format %s", gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&info_))),
                      (NULL));
    return FALSE;
  }
  if (!device.gpu()) return TRUE;

  /* Finish work on the old caps' staging before replacing it. One pitched allocation with
   * every plane stacked, so the copy and the kernel see ordinary strided planes. */
  device.sync();
  reset();
  gsize width_bytes = 0, rows = 0, packed_bytes = 0;
  for (guint p = 0; p < planes_(); p++) {
    gst_cuda_prep_plane_size(&info_, p, &row_bytes_[p], &rows_[p]);
    width_bytes = MAX(width_bytes, row_bytes_[p]);
    rows += rows_[p];
    slot_offset_[p] = packed_bytes;
    packed_bytes += row_bytes_[p] * rows_[p];
  }
  cudaprep::Status st = staging_.allocate_pitched(width_bytes, rows);
  if (st.ok()) st = producer_done_.create(false);
  for (UploadSlot &slot : slots_) {
    if (st.ok()) st = slot.host.allocate(packed_bytes);
    if (st.ok()) st = slot.copied.create(true);
  }
  if (!st.ok()) {
    GST_ELEMENT_ERROR(element, RESOURCE, NO_SPACE_LEFT, ("Could not allocate CUDA staging memory"),
                      ("%s", st.message().c_str()));
    return FALSE;
  }
  gsize row = 0;
  for (guint p = 0; p < planes_(); p++) {
    staging_offset_[p] = row * staging_.pitch();
    row += rows_[p];
  }
  return TRUE;
}

void CudaPrepVideoInput::reset() {
  staging_.reset();
  producer_done_.reset();
  for (UploadSlot &slot : slots_) {
    slot.host.reset();
    slot.copied.reset();
    slot.in_use = FALSE;
  }
  next_slot_ = 0;
}

/* Stages a mapped system-memory frame through the next slot of the ring; @view then points at
 * the device staging. */
gboolean CudaPrepVideoInput::upload(GstElement *element, CudaPrepDevice &device, const GstVideoFrame *frame,
                                    cudaprep::ImageView *view) {
  UploadSlot &slot = slots_[next_slot_];
  next_slot_ = (next_slot_ + 1) % kUploadSlots;
  /* Normally long done: the copy of kUploadSlots frames ago. */
  cudaprep::Status st = slot.in_use ? slot.copied.synchronize() : cudaprep::Status();
  for (guint p = 0; st.ok() && p < planes_(); p++) {
    uint8_t *packed = slot.host.data() + slot_offset_[p];
    const uint8_t *src = (const uint8_t *)GST_VIDEO_FRAME_PLANE_DATA(frame, p);
    const gint stride = GST_VIDEO_FRAME_PLANE_STRIDE(frame, p);
    for (gsize y = 0; y < rows_[p]; y++) memcpy(packed + y * row_bytes_[p], src + (gssize)y * stride, row_bytes_[p]);
    uint8_t *dst = staging_.data() + staging_offset_[p];
    st = cudaprep::cuda::copy_2d_async(dst, staging_.pitch(), packed, row_bytes_[p], row_bytes_[p], rows_[p],
                                       cudaprep::cuda::CopyKind::HostToDevice, device.stream());
    view->planes[p].data = dst;
    view->planes[p].stride = (int64_t)staging_.pitch();
  }
  if (st.ok()) st = slot.copied.record(device.stream());
  slot.in_use = st.ok();
  if (!st.ok())
    GST_ELEMENT_ERROR(element, STREAM, FAILED, ("Could not upload the frame to the GPU"), ("%s", st.message().c_str()));
  return st.ok();
}

#if CUDAPREP_HAVE_CUDA
/* CUDA memory the device's context can read in place: its own, or a peer context's. */
static gboolean readable_in_place(CudaPrepDevice &device, GstBuffer *buffer) {
  if (gst_buffer_n_memory(buffer) != 1) return FALSE;
  GstMemory *mem = gst_buffer_peek_memory(buffer, 0);
  if (!gst_is_cuda_memory(mem)) return FALSE;
  GstCudaContext *ctx = GST_CUDA_MEMORY_CAST(mem)->context;
  return ctx == device.context() || gst_cuda_context_can_access_peer(device.context(), ctx);
}
#endif

/* Since 1.24 CUDA memory can carry pending work on its producer's stream (a decoder's copy).
 * Our stream waits for it on the GPU where the memory is of our context; other memory is
 * waited for by the host. Memory that carries our own stream is ordered already. */
gboolean CudaPrepVideoInput::order_after_producer(GstElement *element, CudaPrepDevice &device, GstBuffer *buffer) {
#if CUDAPREP_HAVE_GST_CUDA_STREAM
  GstCudaMemory *mem = GST_CUDA_MEMORY_CAST(gst_buffer_peek_memory(buffer, 0));
  if (device.orders(buffer) || !GST_MEMORY_FLAG_IS_SET(mem, GST_CUDA_MEMORY_TRANSFER_NEED_SYNC)) return TRUE;
  GstCudaStream *producer = gst_cuda_memory_get_stream(mem);
  if (!producer || mem->context != device.context() || !producer_done_.valid()) {
    GST_LOG_OBJECT(element, "host wait for the producer's stream (stream %p, context %p, ours %p)", producer,
                   mem->context, device.context());
    gst_cuda_memory_sync(mem);
    return TRUE;
  }
  GST_LOG_OBJECT(element, "our stream waits for the producer's stream %p", producer);
  cudaprep::Status st = producer_done_.record((void *)gst_cuda_stream_get_handle(producer));
  if (st.ok()) st = producer_done_.make_stream_wait(device.stream());
  if (!st.ok())
    GST_ELEMENT_ERROR(element, STREAM, FAILED, ("Could not order on the input frame's stream"),
                      ("%s", st.message().c_str()));
  return st.ok();
#else
  (void)element;
  (void)device;
  (void)buffer;
  return TRUE;
#endif
}

gboolean CudaPrepVideoInput::map(GstElement *element, CudaPrepDevice &device, GstBuffer *buffer, gboolean writable,
                                 GstVideoFrame *frame, cudaprep::ImageView *view) {
  GstMapFlags access = writable ? (GstMapFlags)(GST_MAP_READ | GST_MAP_WRITE) : GST_MAP_READ;

#if CUDAPREP_HAVE_CUDA
  if (device.gpu() && readable_in_place(device, buffer)) {
    if (!order_after_producer(element, device, buffer)) return FALSE;
    if (!gst_video_frame_map(frame, &info_, buffer, (GstMapFlags)(access | GST_MAP_CUDA))) {
      GST_ELEMENT_ERROR(element, STREAM, FAILED, ("Could not map the input CUDA frame"), (NULL));
      return FALSE;
    }
    return gst_cuda_prep_view_from_frame(frame, view);
  }
#endif
  if (!gst_video_frame_map(frame, &info_, buffer, access)) {
    GST_ELEMENT_ERROR(element, STREAM, FAILED, ("Could not map the input frame"), (NULL));
    return FALSE;
  }
  gst_cuda_prep_view_from_frame(frame, view);
  if (!device.gpu()) return TRUE;

  /* System memory (or CUDA memory of a foreign context) on the GPU path: stage it. */
  if (!upload(element, device, frame, view)) {
    gst_video_frame_unmap(frame);
    return FALSE;
  }
  return TRUE;
}

gboolean CudaPrepVideoInput::remap_writable(GstElement *element, GstVideoFrame *frame, cudaprep::ImageView *view) {
  GstBuffer *buffer = frame->buffer;
  const GstMapFlags read = (GstMapFlags)(frame->map[0].flags & ~GST_MAP_WRITE);
  /* A staged view points at the staging, which already holds the frame: keep it. */
  const gboolean in_place = view->planes[0].data == (const uint8_t *)GST_VIDEO_FRAME_PLANE_DATA(frame, 0);
  gst_video_frame_unmap(frame);
  if (gst_video_frame_map(frame, &info_, buffer, (GstMapFlags)(read | GST_MAP_WRITE))) {
    if (in_place) gst_cuda_prep_view_from_frame(frame, view);
    return TRUE;
  }
  GST_ELEMENT_ERROR(element, STREAM, FAILED, ("Could not map the frame for drawing"), (NULL));
  if (!gst_video_frame_map(frame, &info_, buffer, read))
    *frame = GstVideoFrame(); /* unmapped: unmap() then only reports the failure */
  return FALSE;
}

gboolean CudaPrepVideoInput::stream_ordered(const CudaPrepDevice &device, GstVideoFrame *frame) const {
#if CUDAPREP_HAVE_CUDA
  if (!device.gpu()) return TRUE;
  const gboolean staged = !(frame->map[0].flags & GST_MAP_CUDA);
  return staged || device.orders(frame->buffer);
#else
  return TRUE; /* nothing runs on a GPU */
#endif
}

gboolean CudaPrepVideoInput::unmap(GstElement *element, CudaPrepDevice &device, GstVideoFrame *frame,
                                   gboolean modified) {
  if (!frame->buffer) return FALSE; /* lost by a failed remap_writable() */
  gboolean ok = TRUE;
#if CUDAPREP_HAVE_CUDA
  const gboolean staged = device.gpu() && !(frame->map[0].flags & GST_MAP_CUDA);
  for (guint p = 0; staged && modified && ok && p < planes_(); p++) {
    cudaprep::Status st =
        cudaprep::cuda::copy_2d_async(GST_VIDEO_FRAME_PLANE_DATA(frame, p), GST_VIDEO_FRAME_PLANE_STRIDE(frame, p),
                                      staging_.data() + staging_offset_[p], staging_.pitch(), row_bytes_[p], rows_[p],
                                      cudaprep::cuda::CopyKind::DeviceToHost, device.stream());
    if (!st.ok()) {
      GST_ELEMENT_ERROR(element, STREAM, FAILED, ("Could not copy the edited frame back"),
                        ("%s", st.message().c_str()));
      ok = FALSE;
    }
  }
  /* Host memory the GPU writes must hold the edits before it is unmapped. */
  if (staged && modified && ok) {
    cudaprep::Status st = device.sync();
    if (!st.ok()) {
      GST_ELEMENT_ERROR(element, STREAM, FAILED, ("CUDA error"), ("%s", st.message().c_str()));
      ok = FALSE;
    }
  }
#endif
  gst_video_frame_unmap(frame);
  return ok;
}
