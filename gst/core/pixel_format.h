/* The GStreamer side of the kernels' pixel-format table (kernels/common/pixel_formats.h): formats map by
 * GStreamer's format name, and caps, format lists and plane row sizes all come from that table. */
#pragma once

#include <gst/video/video.h>

#include "pixel_formats.h"
#include "tensorize.h"

static inline gboolean gst_cuda_prep_pixel_format_from_video(GstVideoFormat format, cudaprep::PixelFormat *out) {
  if (format == GST_VIDEO_FORMAT_UNKNOWN) return FALSE; /* gst_video_format_to_string () would complain */
  const gchar *name = gst_video_format_to_string(format);
  return name != NULL && cudaprep::pixel_format_from_name(name, out);
}

/* Fills `list` (an unset GValue) with the table's format names as a GST_TYPE_LIST, for a caps
 * "format" field. */
static inline void gst_cuda_prep_video_formats_value(GValue *list) {
  g_value_init(list, GST_TYPE_LIST);
  for (const cudaprep::PixelFormatInfo &info : cudaprep::kPixelFormats) {
    GValue name = G_VALUE_INIT;
    g_value_init(&name, G_TYPE_STRING);
    g_value_set_static_string(&name, info.name);
    gst_value_list_append_and_take_value(list, &name);
  }
}

/* video/x-raw in every format of the table, 1 to kMaxSourceSide pixels a side, any frame rate,
 * with the caps feature `features` ("memory:CUDAMemory") or, for NULL, system memory.
 * Transfer full. */
static inline GstCaps *gst_cuda_prep_video_caps(const gchar *features) {
  GstStructure *s = gst_structure_new_empty("video/x-raw");
  GValue formats = G_VALUE_INIT;
  gst_cuda_prep_video_formats_value(&formats);
  gst_structure_take_value(s, "format", &formats);
  gst_structure_set(s, "width", GST_TYPE_INT_RANGE, 1, cudaprep::kMaxSourceSide, "height", GST_TYPE_INT_RANGE, 1,
                    cudaprep::kMaxSourceSide, "framerate", GST_TYPE_FRACTION_RANGE, 0, 1, G_MAXINT, 1, NULL);
  GstCaps *caps = gst_caps_new_full(s, NULL);
  if (features) gst_caps_set_features(caps, 0, gst_caps_features_new(features, NULL));
  return caps;
}

/* The video side of both elements' pad templates: CUDA memory first, then system memory.
 * Transfer full. */
static inline GstCaps *gst_cuda_prep_video_template_caps(void) {
  GstCaps *caps = gst_cuda_prep_video_caps("memory:CUDAMemory");
  gst_caps_append(caps, gst_cuda_prep_video_caps(NULL));
  return caps;
}

/* The pixel data of plane `plane` of the frames `info` describes: bytes per row (what a copy of
 * the plane moves per row; the stride may be larger) and rows. FALSE, and zeros, for a format
 * not in the table. */
static inline gboolean gst_cuda_prep_plane_size(const GstVideoInfo *info, guint plane, gsize *row_bytes, gsize *rows) {
  cudaprep::PixelFormat format;
  *row_bytes = *rows = 0;
  if (!gst_cuda_prep_pixel_format_from_video(GST_VIDEO_INFO_FORMAT(info), &format)) return FALSE;
  *row_bytes = (gsize)cudaprep::plane_row_bytes(format, (int)plane, GST_VIDEO_INFO_WIDTH(info));
  *rows = (gsize)cudaprep::plane_rows(format, (int)plane, GST_VIDEO_INFO_HEIGHT(info));
  return TRUE;
}
