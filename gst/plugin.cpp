/* gst-cudaprep: CUDA preprocessing elements for detectors. */
#include "config.h"

#include <gst/gst.h>

#include "gstcudaprepmeta.h"
#include "gstcudatemplatematch.h"
#include "gstcudatensorize.h"

static gboolean
plugin_init (GstPlugin * plugin)
{
  static const gchar *no_tags[] = {NULL};
  if (!gst_meta_get_info (GST_CUDAPREP_TRANSFORM_META_NAME))
    gst_meta_register_custom (GST_CUDAPREP_TRANSFORM_META_NAME, no_tags, NULL, NULL, NULL);

  gboolean ok = GST_ELEMENT_REGISTER (cudatensorize, plugin);
  ok &= GST_ELEMENT_REGISTER (cudatemplatematch, plugin);
  return ok;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, cudaprep,
    "CUDA preprocessing for detectors: fused tensorize and template matching",
    plugin_init, VERSION, GST_LICENSE, GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
