/* Where a cudaprep element's frames are processed, and the CUDA objects it needs there.
 *
 * One CudaPrepDevice per element, owned by composition so that a GstBaseTransform and a
 * GstAggregator share the same code: open() decides once per start between the GPU and the CPU
 * (property "backend"), shares or creates the GstCudaContext (GstContext negotiation with the
 * neighbours) and creates one CUDA stream; close() drops them in stop. Nothing here is touched
 * by property setters: they only change settings, which open() reads as a snapshot.
 */
#pragma once

#include <gst/gst.h>

#include "config.h"
#include "status.h"

#if CUDAPREP_HAVE_CUDA
#include <gst/cuda/gstcudacontext.h>
#else
typedef struct _GstCudaContext GstCudaContext;
#endif

typedef enum
{
  GST_CUDA_PREP_BACKEND_AUTO,
  GST_CUDA_PREP_BACKEND_CUDA,
  GST_CUDA_PREP_BACKEND_CPU,
} GstCudaPrepBackend;

#define GST_TYPE_CUDA_PREP_BACKEND (gst_cuda_prep_backend_get_type ())
GType gst_cuda_prep_backend_get_type (void);

struct CudaPrepDeviceSettings
{
  GstCudaPrepBackend backend = GST_CUDA_PREP_BACKEND_AUTO;
  int device_id = -1;           /* -1: share the neighbours' context or take device 0 */
};

/* Installs "device-id" and "backend" (GST_PARAM_MUTABLE_READY) at the given ids: the same
 * properties on every cudaprep element. */
void gst_cuda_prep_device_properties_install (GObjectClass * klass, guint device_id_prop,
    guint backend_prop);

class CudaPrepDevice
{
public:
  CudaPrepDevice () = default;
  ~CudaPrepDevice ();
  CudaPrepDevice (const CudaPrepDevice &) = delete;
  CudaPrepDevice & operator= (const CudaPrepDevice &) = delete;

  /* Decides where frames run. Posts an error on @element and returns FALSE when backend=cuda
   * finds no usable device or CUDA cannot be set up; posts a warning when a device-id was named
   * but cannot be used and the CPU takes over (backend=auto). */
  gboolean open (GstElement * element, const CudaPrepDeviceSettings & settings);
  /* Waits for the stream and releases context and stream. */
  void close ();

  gboolean is_open () const { return open_; }
  gboolean gpu () const { return gpu_; }
  void *stream () const { return stream_; }
  GstCudaContext *context () const { return context_; }

  /* Makes the context current on this thread (no-op on the CPU path); posts an error on
   * failure. Pair with pop(). */
  gboolean push (GstElement * element);
  void pop ();
  /* Blocks until everything enqueued on the stream is done. */
  cudaprep::Status sync ();

  /* GstContext plumbing, for GstElement::set_context and context queries. */
  void set_context (GstElement * element, GstContext * context, int device_id);
  gboolean answer_context_query (GstElement * element, GstQuery * query);

  /* Whether a GPU path can be taken with @backend: before open(), for caps queries. The
   * driver is probed once per process. */
  static gboolean gpu_possible (GstCudaPrepBackend backend);

private:
  GstCudaContext *context_ = nullptr;
  void *stream_ = nullptr;
  gboolean gpu_ = FALSE;
  gboolean open_ = FALSE;
};

/* Makes the device's context current for a scope (no-op on the CPU path). */
class CudaPrepScopedContext
{
public:
  CudaPrepScopedContext (CudaPrepDevice & device, GstElement * element)
      : device_ (device), ok_ (device.push (element)) {}
  ~CudaPrepScopedContext () { if (ok_) device_.pop (); }
  CudaPrepScopedContext (const CudaPrepScopedContext &) = delete;
  CudaPrepScopedContext & operator= (const CudaPrepScopedContext &) = delete;
  gboolean ok () const { return ok_; }

private:
  CudaPrepDevice & device_;
  gboolean ok_;
};
