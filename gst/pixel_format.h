/* Mapping between GStreamer video formats and the kernels' pixel formats. */
#pragma once

#include <gst/video/video.h>

#include "image.h"

#define GST_CUDA_PREP_FORMATS "{ NV12, I420, BGR, RGB, BGRx, RGBx, BGRA, RGBA, GRAY8 }"

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
