/* CudaPrepDevice: backend choice, CUDA context and stream of one element. */
#include "enum_types.h"
#include "cudaprep_device.h"

#if CUDAPREP_HAVE_CUDA
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>
#endif

#include "cuda_device.h"

GST_DEBUG_CATEGORY_STATIC(cudaprep_device_debug);
#define GST_CAT_DEFAULT cudaprep_device_debug

static void init_debug_once(void) {
  static gsize done = 0;
  if (g_once_init_enter(&done)) {
    GST_DEBUG_CATEGORY_INIT(cudaprep_device_debug, "cudaprepdevice", 0, "cudaprep device and stream");
    g_once_init_leave(&done, 1);
  }
}

/* Says once per start which path runs: in the log and as a "cudaprep-backend" element message
 * (backend=cuda|cpu, device-id: the CUDA device or -1, reason), so that backend=auto falling
 * back to the CPU is visible (gst-launch-1.0 -m prints it). */
static void announce_backend(GstElement *element, gboolean gpu, int device_id, const std::string &reason) {
  GST_INFO_OBJECT(element, "backend=%s device-id=%d: %s", gpu ? "cuda" : "cpu", device_id, reason.c_str());
  gst_element_post_message(
      element, gst_message_new_element(
                   GST_OBJECT(element),
                   gst_structure_new("cudaprep-backend", "backend", G_TYPE_STRING, gpu ? "cuda" : "cpu", "device-id",
                                     G_TYPE_INT, device_id, "reason", G_TYPE_STRING, reason.c_str(), NULL)));
}

GType gst_cuda_prep_backend_get_type(void) {
  static GType type = 0;
  static const GEnumValue values[] = {
      {GST_CUDA_PREP_BACKEND_AUTO, "CUDA when a device is usable, else the CPU", "auto"},
      {GST_CUDA_PREP_BACKEND_CUDA, "CUDA only (error without a usable device)", "cuda"},
      {GST_CUDA_PREP_BACKEND_CPU, "CPU only (system memory)", "cpu"},
      {0, NULL, NULL},
  };
  if (g_once_init_enter(&type)) {
    GType t = g_enum_register_static("GstCudaPrepBackend", values);
    g_once_init_leave(&type, t);
  }
  return type;
}

GType gst_cuda_prep_gpu_wait_get_type(void) {
  using cudaprep::GpuWait;
  static GType type = 0;
  static const GEnumValue values[] = {
      {(gint)GpuWait::Spin, "Spin until the GPU is done: lowest latency, a CPU core busy meanwhile", "spin"},
      {(gint)GpuWait::StreamSync,
       "cudaStreamSynchronize (honours a context made with blocking "
       "synchronisation)",
       "stream-sync"},
      {(gint)GpuWait::Blocking,
       "Sleep on a blocking-sync event until the driver wakes the thread: "
       "least CPU, the wake-up can come late",
       "blocking"},
      {(gint)GpuWait::Poll,
       "Sleep through most of the usual time (learned from recent waits), then "
       "check every few microseconds",
       "poll"},
      {0, NULL, NULL},
  };
  return gst_cuda_prep_register_enum(&type, "GstCudaPrepGpuWait", values);
}

CudaPrepDevice::~CudaPrepDevice() { close(); }

gboolean CudaPrepDevice::gpu_possible(GstCudaPrepBackend backend) {
  if (backend == GST_CUDA_PREP_BACKEND_CPU) return FALSE;
  /* Probing the driver is slow and its answer does not change while the process runs. */
  static gsize devices_plus_one = 0;
  if (g_once_init_enter(&devices_plus_one))
    g_once_init_leave(&devices_plus_one, (gsize)cudaprep::cuda::device_count() + 1);
  return devices_plus_one > 1;
}

gboolean CudaPrepDevice::open(GstElement *element, const CudaPrepDeviceSettings &settings) {
  init_debug_once();
  /* context_ may already hold a neighbour's context, given through set_context(). */
  g_return_val_if_fail(!open_, FALSE);
  open_ = TRUE;
  if (settings.backend == GST_CUDA_PREP_BACKEND_CPU) {
    announce_backend(element, FALSE, -1, "backend=cpu");
    return TRUE;
  }
  std::string why = cudaprep::cuda::built_with_cuda() ? "no CUDA device or driver could be opened"
                                                      : "the plugin was built without CUDA";
#if CUDAPREP_HAVE_CUDA
  if (gpu_possible(settings.backend) && gst_cuda_load_library()) {
    gst_cuda_memory_init_once();
    if (gst_cuda_ensure_element_context(element, settings.device_id, &context_)) {
      cudaprep::Status st;
      if (!gst_cuda_context_push(context_)) {
        st = cudaprep::Status::error("could not make the CUDA context current");
      } else {
        st = create_stream();
        gst_cuda_context_pop(NULL);
      }
      if (!st.ok()) {
        GST_ELEMENT_ERROR(element, RESOURCE, FAILED, ("CUDA initialisation failed"), ("%s", st.message().c_str()));
        gst_clear_object(&context_);
        open_ = FALSE;
        return FALSE;
      }
      gpu_ = TRUE;
      gint id = settings.device_id;
      g_object_get(context_, "cuda-device-id", &id, NULL);
      announce_backend(
          element, TRUE, id,
          settings.backend == GST_CUDA_PREP_BACKEND_CUDA ? "backend=cuda" : "backend=auto: a CUDA device is usable");
      return TRUE;
    }
    why = "device " + std::to_string(settings.device_id) + " could not be opened";
  }
#endif
  if (settings.backend == GST_CUDA_PREP_BACKEND_CUDA) {
    open_ = FALSE;
    GST_ELEMENT_ERROR(element, RESOURCE, NOT_FOUND, ("No usable CUDA device"),
                      ("backend=cuda but %s (device-id=%d)", why.c_str(), settings.device_id));
    return FALSE;
  }
  if (settings.device_id >= 0) {
    /* The user named a device: falling back silently would hide a configuration mistake. */
    GST_ELEMENT_WARNING(element, RESOURCE, NOT_FOUND,
                        ("CUDA device %d is not usable: processing on the CPU", settings.device_id),
                        ("device-id=%d with backend=auto, but %s", settings.device_id, why.c_str()));
  }
  announce_backend(element, FALSE, -1, "backend=auto: " + why);
  return TRUE;
}

void CudaPrepDevice::close() {
#if CUDAPREP_HAVE_CUDA
  if (context_ && gst_cuda_context_push(context_)) {
    if (stream_) cudaprep::cuda::stream_sync(stream_);
    download_wait_.reset();
#if CUDAPREP_HAVE_GST_CUDA_STREAM
    /* Memory still in flight holds its own reference: the stream lives as long as it does. */
    gst_clear_cuda_stream(&cuda_stream_);
#else
    cudaprep::cuda::stream_destroy(stream_);
#endif
    gst_cuda_context_pop(NULL);
  }
#endif
  stream_ = nullptr;
  gpu_ = FALSE;
  open_ = FALSE;
  gst_clear_object(&context_);
}

/* With the context current. */
cudaprep::Status CudaPrepDevice::create_stream() {
#if CUDAPREP_HAVE_GST_CUDA_STREAM
  cuda_stream_ = gst_cuda_stream_new(context_);
  if (!cuda_stream_) return cudaprep::Status::error("gst_cuda_stream_new failed");
  stream_ = (void *)gst_cuda_stream_get_handle(cuda_stream_);
  return cudaprep::Status();
#else
  return cudaprep::cuda::stream_create(&stream_);
#endif
}

gboolean CudaPrepDevice::orders(GstBuffer *buffer) const {
#if CUDAPREP_HAVE_GST_CUDA_STREAM
  if (!gpu_ || !cuda_stream_ || gst_buffer_n_memory(buffer) != 1) return FALSE;
  GstMemory *mem = gst_buffer_peek_memory(buffer, 0);
  return gst_is_cuda_memory(mem) && gst_cuda_memory_get_stream(GST_CUDA_MEMORY_CAST(mem)) == cuda_stream_;
#else
  (void)buffer;
  return FALSE;
#endif
}

gboolean CudaPrepDevice::push(GstElement *element) {
#if CUDAPREP_HAVE_CUDA
  if (gpu_ && !gst_cuda_context_push(context_)) {
    GST_ELEMENT_ERROR(element, RESOURCE, FAILED, ("Could not make the CUDA context current"), (NULL));
    return FALSE;
  }
#endif
  return TRUE;
}

void CudaPrepDevice::pop() {
#if CUDAPREP_HAVE_CUDA
  if (gpu_) gst_cuda_context_pop(NULL);
#endif
}

cudaprep::Status CudaPrepDevice::sync() {
  if (!gpu_) return cudaprep::Status();
  return cudaprep::cuda::stream_sync(stream_);
}

cudaprep::Status CudaPrepDevice::wait_for_download(cudaprep::GpuWait mode) {
  if (!gpu_) return cudaprep::Status();
  return download_wait_.wait(stream_, mode);
}

void CudaPrepDevice::set_context(GstElement *element, GstContext *context, int device_id) {
#if CUDAPREP_HAVE_CUDA
  if (gst_cuda_load_library()) gst_cuda_handle_set_context(element, context, device_id, &context_);
#endif
}

gboolean CudaPrepDevice::answer_context_query(GstElement *element, GstQuery *query) {
#if CUDAPREP_HAVE_CUDA
  return GST_QUERY_TYPE(query) == GST_QUERY_CONTEXT && context_ &&
         gst_cuda_handle_context_query(element, query, context_);
#else
  return FALSE;
#endif
}
