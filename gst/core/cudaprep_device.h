/* Where a cudaprep element's frames are processed, and the CUDA objects it needs there.
 *
 * One CudaPrepDevice per element, owned by composition so that a GstBaseTransform and a
 * GstAggregator share the same code: open() decides once per start between the GPU and the CPU
 * (property "backend"), shares or creates the GstCudaContext (GstContext negotiation with the
 * neighbours) and creates one CUDA stream (a GstCudaStream since 1.24, so that memory can carry
 * it); close() drops them in stop. Nothing here is touched
 * by property setters: they only change settings, which open() reads as a snapshot.
 */
#pragma once

#include <gst/gst.h>

#include "config.h"
#include "cuda_device.h"
#include "gpu_wait.h"
#include "status.h"

#if CUDAPREP_HAVE_CUDA
#include <gst/cuda/gstcudacontext.h>
#else
typedef struct _GstCudaContext GstCudaContext;
#endif

/* Since 1.24 CUDA memory can carry the stream its pending work runs on: the element's stream is
 * then a GstCudaStream, and a consumer orders on it instead of the element waiting. */
#if CUDAPREP_HAVE_CUDA && GST_CHECK_VERSION(1, 24, 0)
#define CUDAPREP_HAVE_GST_CUDA_STREAM 1
#include <gst/cuda/gstcudastream.h>
#else
#define CUDAPREP_HAVE_GST_CUDA_STREAM 0
typedef struct _GstCudaStream GstCudaStream;
#endif

typedef enum {
  GST_CUDA_PREP_BACKEND_AUTO,
  GST_CUDA_PREP_BACKEND_CUDA,
  GST_CUDA_PREP_BACKEND_CPU,
} GstCudaPrepBackend;

#define GST_TYPE_CUDA_PREP_BACKEND (gst_cuda_prep_backend_get_type())
GType gst_cuda_prep_backend_get_type(void);

/* The "gpu-wait" enum of every element (cudaprep::GpuWait's values; gpu_wait.h). */
#define GST_TYPE_CUDA_PREP_GPU_WAIT (gst_cuda_prep_gpu_wait_get_type())
GType gst_cuda_prep_gpu_wait_get_type(void);

struct CudaPrepDeviceSettings {
  GstCudaPrepBackend backend = GST_CUDA_PREP_BACKEND_AUTO;
  int device_id = -1; /* -1: share the neighbours' context or take device 0 */

  bool operator==(const CudaPrepDeviceSettings &o) const { return backend == o.backend && device_id == o.device_id; }
};

class CudaPrepDevice {
 public:
  CudaPrepDevice() = default;
  ~CudaPrepDevice();
  CudaPrepDevice(const CudaPrepDevice &) = delete;
  CudaPrepDevice &operator=(const CudaPrepDevice &) = delete;

  /* Decides where frames run. Posts an error on @element and returns FALSE when backend=cuda
   * finds no usable device or CUDA cannot be set up; posts a warning when a device-id was named
   * but cannot be used and the CPU takes over (backend=auto). */
  gboolean open(GstElement *element, const CudaPrepDeviceSettings &settings);
  /* Waits for the stream and releases context and stream. */
  void close();

  gboolean is_open() const { return open_; }
  gboolean gpu() const { return gpu_; }
  void *stream() const { return stream_; }
  GstCudaContext *context() const { return context_; }
  /* The stream as a GstCudaStream, for buffer pools and memory (1.24+); NULL before 1.24. */
  GstCudaStream *cuda_stream() const { return cuda_stream_; }
  /* Whether @buffer is one CUDA memory carrying this element's stream (1.24+): work on it is
   * ordered on the stream, so the element need not wait for its own work on it. */
  gboolean orders(GstBuffer *buffer) const;

  /* Makes the context current on this thread (no-op on the CPU path); posts an error on
   * failure. Pair with pop(). */
  gboolean push(GstElement *element);
  void pop();
  /* Blocks until everything enqueued on the stream is done (spinning, the driver's default). */
  cudaprep::Status sync();
  /* The same, for the element's one long wait (a download into system memory), the way @mode
   * says: a spinning core would cost as much CPU time as the GPU work takes. Polling learns
   * that wait's usual time. */
  cudaprep::Status wait_for_download(cudaprep::GpuWait mode);

  /* GstContext plumbing, for GstElement::set_context and context queries. */
  void set_context(GstElement *element, GstContext *context, int device_id);
  gboolean answer_context_query(GstElement *element, GstQuery *query);

  /* Whether a GPU path can be taken with @backend: before open(), for caps queries. The
   * driver is probed once per process. */
  static gboolean gpu_possible(GstCudaPrepBackend backend);

 private:
  cudaprep::Status create_stream();

  GstCudaContext *context_ = nullptr;
  GstCudaStream *cuda_stream_ = nullptr; /* 1.24+: owns stream_ */
  void *stream_ = nullptr;
  cudaprep::cuda::StreamWaiter download_wait_; /* wait_for_download(): its events and timings */
  gboolean gpu_ = FALSE;
  gboolean open_ = FALSE;
};

/* Makes the device's context current for a scope (no-op on the CPU path). */
class CudaPrepScopedContext {
 public:
  CudaPrepScopedContext(CudaPrepDevice &device, GstElement *element) : device_(device), ok_(device.push(element)) {}
  ~CudaPrepScopedContext() {
    if (ok_) device_.pop();
  }
  CudaPrepScopedContext(const CudaPrepScopedContext &) = delete;
  CudaPrepScopedContext &operator=(const CudaPrepScopedContext &) = delete;
  gboolean ok() const { return ok_; }

 private:
  CudaPrepDevice &device_;
  gboolean ok_;
};
