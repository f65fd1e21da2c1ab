/* The chroma-site property of cudatensorize and cudatensorbatch, and the chroma siting of a
 * frame from it and the caps. */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include "tensorize.h"

/* auto (the caps), or the siting GStreamer's chroma-site strings name. */
enum
{
  GST_CUDA_PREP_CHROMA_SITE_AUTO = -1,
  GST_CUDA_PREP_CHROMA_SITE_JPEG,       /* centred on both axes */
  GST_CUDA_PREP_CHROMA_SITE_MPEG2,      /* co-sited horizontally, centred vertically */
  GST_CUDA_PREP_CHROMA_SITE_COSITED,    /* co-sited on both axes */
};

GType gst_cuda_prep_chroma_site_get_type (void);
/* "chroma-site", default auto, mutable while playing. */
GParamSpec *gst_cuda_prep_param_spec_chroma_site (void);

/* The siting of @source's chroma: the @chroma_site property, or for auto the caps' chroma-site
 * (@info as CudaPrepVideoInput reads it; none: centred, as GStreamer reads a missing field). */
void gst_cuda_prep_chroma_siting (int chroma_site, const GstVideoInfo * info,
    cudaprep::SlotSourceSpec * source);

/* GStreamer 1.22.0's gst_video_info_from_caps () reads every chroma-site as jpeg: sets
 * @info's chroma site from the caps' field itself (left as it is when there is none). */
void gst_cuda_prep_read_chroma_site (const GstCaps * caps, GstVideoInfo * info);
