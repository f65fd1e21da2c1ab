/* The chroma-site property of cudatensorize and cudatensorbatch, and the chroma siting of a
 * frame from it and the caps. */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include "tensorize.h"

/* auto (the caps), or the siting GStreamer's chroma-site strings name. */
enum {
  GST_CUDA_PREP_CHROMA_SITE_AUTO = -1,
  GST_CUDA_PREP_CHROMA_SITE_JPEG,    /* centred on both axes */
  GST_CUDA_PREP_CHROMA_SITE_MPEG2,   /* co-sited horizontally, centred vertically */
  GST_CUDA_PREP_CHROMA_SITE_COSITED, /* co-sited on both axes */
};

GType gst_cuda_prep_chroma_site_get_type(void);
/* "chroma-site", default auto, mutable while playing. */
GParamSpec *gst_cuda_prep_param_spec_chroma_site(void);

/* The siting of @source's chroma: the @chroma_site property, or for auto the caps' chroma-site
 * as GStreamer reads it (@info, as CudaPrepVideoInput fills it: unknown is centred). */
void gst_cuda_prep_chroma_siting(int chroma_site, const GstVideoInfo *info, cudaprep::SlotSourceSpec *source);

/* GStreamer 1.22.0's gst_video_info_from_caps () lets its defaults (by frame height) override
 * the caps' chroma-site when the caps have no colorimetry: sets @info's chroma site from the
 * field itself (left as GStreamer read it when there is none). */
void gst_cuda_prep_read_chroma_site(const GstCaps *caps, GstVideoInfo *info);
