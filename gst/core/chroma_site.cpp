/* The chroma-site property and the chroma siting of a frame. */
#include "enum_types.h"
#include "chroma_site.h"

using cudaprep::SlotSourceSpec;

GType gst_cuda_prep_chroma_site_get_type(void) {
  static GType type = 0;
  static const GEnumValue values[] = {
      {GST_CUDA_PREP_CHROMA_SITE_AUTO,
       "From the caps' chroma-site, as GStreamer reads it (none: centred, or its defaults)", "auto"},
      {GST_CUDA_PREP_CHROMA_SITE_JPEG, "Centred between luma samples on both axes", "jpeg"},
      {GST_CUDA_PREP_CHROMA_SITE_MPEG2, "Co-sited with the even luma columns, centred vertically (H.264 / H.265)",
       "mpeg2"},
      {GST_CUDA_PREP_CHROMA_SITE_COSITED, "Co-sited with the even luma columns and rows", "cosited"},
      {0, NULL, NULL}};
  return gst_cuda_prep_register_enum(&type, "GstCudaPrepChromaSite", values);
}

GParamSpec *gst_cuda_prep_param_spec_chroma_site(void) {
  return g_param_spec_enum("chroma-site", "Chroma site",
                           "Where YUV chroma samples sit; auto takes the caps' chroma-site",
                           gst_cuda_prep_chroma_site_get_type(), GST_CUDA_PREP_CHROMA_SITE_AUTO,
                           (GParamFlags)(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING));
}

void gst_cuda_prep_chroma_siting(int chroma_site, const GstVideoInfo *info, SlotSourceSpec *source) {
  switch (chroma_site) {
    case GST_CUDA_PREP_CHROMA_SITE_JPEG: source->chroma_h_cosited = source->chroma_v_cosited = false; break;
    case GST_CUDA_PREP_CHROMA_SITE_MPEG2:
      source->chroma_h_cosited = true;
      source->chroma_v_cosited = false;
      break;
    case GST_CUDA_PREP_CHROMA_SITE_COSITED: source->chroma_h_cosited = source->chroma_v_cosited = true; break;
    default:
      /* The caps' flags (ALT_LINE, of interlaced DV, has no meaning for progressive frames). */
      source->chroma_h_cosited = info && (info->chroma_site & GST_VIDEO_CHROMA_SITE_H_COSITED);
      source->chroma_v_cosited = info && (info->chroma_site & GST_VIDEO_CHROMA_SITE_V_COSITED);
      break;
  }
}

void gst_cuda_prep_read_chroma_site(const GstCaps *caps, GstVideoInfo *info) {
  const gchar *site = gst_structure_get_string(gst_caps_get_structure(caps, 0), "chroma-site");
  if (site) info->chroma_site = gst_video_chroma_site_from_string(site);
}
