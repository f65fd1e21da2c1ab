/* GstCudaPrepBase: the GstBaseTransform that cudatensorize and cudatemplatematch share.
 *
 * It holds the CUDA element core (cuda_element_core.h: the properties "backend" and
 * "device-id", a CudaPrepDevice opened in start and closed in stop, context sharing) and the
 * CudaPrepVideoInput configured from the input caps. Subclasses build their per-caps state in configure() and process
 * frames with the device and input they get here; how the two are built is not tied to GstBaseTransform (see
 * cudaprep_device.h, video_input.h).
 */
#pragma once

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include "cuda_element_core.h"
#include "video_input.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_PREP_BASE (gst_cuda_prep_base_get_type())
G_DECLARE_DERIVABLE_TYPE(GstCudaPrepBase, gst_cuda_prep_base, GST, CUDA_PREP_BASE, GstBaseTransform)

struct _GstCudaPrepBaseClass {
  GstBaseTransformClass parent_class;

  /* Called from set_caps once the input is parsed (and staged memory allocated); build
   * per-caps state here. Posts its own error on failure. */
  gboolean (*configure)(GstCudaPrepBase *self, GstCaps *incaps, GstCaps *outcaps);
};

/* Valid between start and stop. */
CudaPrepDevice &gst_cuda_prep_base_device(GstCudaPrepBase *self);
/* Valid between set_caps and stop. */
CudaPrepVideoInput &gst_cuda_prep_base_input(GstCudaPrepBase *self);

/* Whether frames will go through the GPU: decided in start; before that, whether the backend
 * allows it and a device is present. For transform_caps, to offer CUDA memory or not. */
gboolean gst_cuda_prep_base_gpu_possible(GstCudaPrepBase *self);

G_END_DECLS
