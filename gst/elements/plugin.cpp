/* gst-cudaprep: CUDA preprocessing elements for detectors. */
#include "config.h"

#include <gst/gst.h>

#include "transform_meta.h"
#include "gstcudatemplatematch.h"
#include "gstcudatensorbatch.h"
#include "gstcudatensorize.h"

static gboolean plugin_init(GstPlugin* plugin) {
  gst_cuda_prep_transform_meta_register();

  gboolean ok = GST_ELEMENT_REGISTER(cudatensorize, plugin);
  ok &= GST_ELEMENT_REGISTER(cudatemplatematch, plugin);
  ok &= GST_ELEMENT_REGISTER(cudatensorbatch, plugin);
  return ok;
}

GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, cudaprep,
                  "CUDA preprocessing for detectors: fused tensorize and template matching", plugin_init, VERSION,
                  GST_LICENSE, GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
