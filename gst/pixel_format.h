/* Mapping between GStreamer video formats and the kernels' pixel formats. */
#pragma once

#include <gst/video/video.h>

#include "image.h"

#define GST_CUDA_PREP_FORMATS "{ NV12, I420, BGR, RGB, BGRx, RGBx, BGRA, RGBA, GRAY8 }"

/* Video caps the elements take: those formats, at most 32768 pixels a side (the kernels'
 * kMaxSourceSide). @features: "" or "(memory:CUDAMemory)". */
#define GST_CUDA_PREP_VIDEO_CAPS(features) \
  "video/x-raw" features ", format = (string) " GST_CUDA_PREP_FORMATS ", " \
  "width = (int) [ 1, 32768 ], height = (int) [ 1, 32768 ], framerate = (fraction) [ 0, max ]"

static inline gboolean
gst_cuda_prep_pixel_format_from_video (GstVideoFormat format, cudaprep::PixelFormat * out)
{
  switch (format) {
    case GST_VIDEO_FORMAT_NV12: *out = cudaprep::PixelFormat::NV12; return TRUE;
    case GST_VIDEO_FORMAT_I420: *out = cudaprep::PixelFormat::I420; return TRUE;
    case GST_VIDEO_FORMAT_BGR: *out = cudaprep::PixelFormat::BGR; return TRUE;
    case GST_VIDEO_FORMAT_RGB: *out = cudaprep::PixelFormat::RGB; return TRUE;
    case GST_VIDEO_FORMAT_BGRx: *out = cudaprep::PixelFormat::BGRx; return TRUE;
    case GST_VIDEO_FORMAT_RGBx: *out = cudaprep::PixelFormat::RGBx; return TRUE;
    case GST_VIDEO_FORMAT_BGRA: *out = cudaprep::PixelFormat::BGRA; return TRUE;
    case GST_VIDEO_FORMAT_RGBA: *out = cudaprep::PixelFormat::RGBA; return TRUE;
    case GST_VIDEO_FORMAT_GRAY8: *out = cudaprep::PixelFormat::GRAY8; return TRUE;
    default: return FALSE;
  }
}

/* Bytes of pixel data in one row of plane @p (no padding). */
static inline gsize
gst_cuda_prep_plane_row_bytes (const GstVideoInfo * info, guint p)
{
  if (GST_VIDEO_INFO_FORMAT (info) == GST_VIDEO_FORMAT_NV12 && p == 1)
    return (gsize) GST_VIDEO_INFO_COMP_WIDTH (info, 1) * 2;   /* interleaved U and V */
  return (gsize) GST_VIDEO_INFO_COMP_WIDTH (info, p) * GST_VIDEO_INFO_COMP_PSTRIDE (info, p);
}
