/* GstCudaPrepBase: what cudatensorize and cudatemplatematch share.
 *
 * Owns the GstCudaContext (shared with neighbours through GstContext), one CUDA stream,
 * the negotiated input GstVideoInfo and the per-caps staging used to bring system-memory
 * frames to the GPU. Decides once per start whether frames are processed on the GPU or on
 * the CPU (property "backend"). Subclasses only wrap a kernel host object.
 */
#pragma once

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include "config.h"
#include "cuda_device.h"
#include "image.h"

#if CUDAPREP_HAVE_CUDA
#include <gst/cuda/gstcudacontext.h>
#else
typedef struct _GstCudaContext GstCudaContext;
#endif

G_BEGIN_DECLS

#define GST_TYPE_CUDA_PREP_BASE (gst_cuda_prep_base_get_type ())
G_DECLARE_DERIVABLE_TYPE (GstCudaPrepBase, gst_cuda_prep_base, GST, CUDA_PREP_BASE, GstBaseTransform)

typedef enum
{
  GST_CUDA_PREP_BACKEND_AUTO,
  GST_CUDA_PREP_BACKEND_CUDA,
  GST_CUDA_PREP_BACKEND_CPU,
} GstCudaPrepBackend;

#define GST_TYPE_CUDA_PREP_BACKEND (gst_cuda_prep_backend_get_type ())
GType gst_cuda_prep_backend_get_type (void);

struct _GstCudaPrepBaseClass
{
  GstBaseTransformClass parent_class;

  /* Called from set_caps once the input info is parsed; build per-caps state here. */
  gboolean (*configure) (GstCudaPrepBase * self, GstCaps * incaps, GstCaps * outcaps);
};

/* Streaming state readable by subclasses (valid between set_caps and stop). */
gboolean gst_cuda_prep_base_uses_gpu (GstCudaPrepBase * self);
gboolean gst_cuda_prep_base_input_is_cuda (GstCudaPrepBase * self);
const GstVideoInfo *gst_cuda_prep_base_input_info (GstCudaPrepBase * self);
void *gst_cuda_prep_base_stream (GstCudaPrepBase * self);
GstCudaContext *gst_cuda_prep_base_context (GstCudaPrepBase * self);

gboolean gst_cuda_prep_base_push_context (GstCudaPrepBase * self);
void gst_cuda_prep_base_pop_context (GstCudaPrepBase * self);

/* Maps @buffer as a video frame of the input info. On the GPU path the view points to device
 * memory: CUDA memory of our context is used in place, anything else is copied (async, on our
 * stream) into per-caps staging. Must be paired with gst_cuda_prep_base_unmap_input. Call with
 * the context pushed when on the GPU path. @writable maps for writing (frames edited in place);
 * unmap_input copies staged frames back when told they were @modified. */
gboolean gst_cuda_prep_base_map_input (GstCudaPrepBase * self, GstBuffer * buffer,
    gboolean writable, GstVideoFrame * frame, cudaprep::ImageView * view);
gboolean gst_cuda_prep_base_unmap_input (GstCudaPrepBase * self, GstVideoFrame * frame,
    gboolean modified);

/* Fills a kernel image view from a mapped frame (host or device pointers as mapped). */
gboolean gst_cuda_prep_base_view_from_frame (const GstVideoFrame * frame, cudaprep::ImageView * view);

/* The caps features helpers used by transform_caps implementations. */
gboolean gst_cuda_prep_caps_has_cuda_feature (GstCaps * caps, guint idx);
/* Whether frames will go through the GPU: decided in start(); before that, whether the backend
 * allows it and a device is present. Used by transform_caps to offer CUDA memory or not. */
gboolean gst_cuda_prep_base_gpu_possible (GstCudaPrepBase * self);

G_END_DECLS
