/* GstCudaPrepTransformMeta: a GstCustomMeta whose mapping follows the frame it describes.
 *
 * Tagged "video" and "size", so elements that transform video metas pass it through their
 * transform function: a copy keeps it, a scale updates it to the scaled frame, and any other
 * transform drops it. Elements that know nothing of video metas drop tagged metas too. A meta
 * that no longer describes the frame is never carried silently. */
#include "transform_meta.h"

#include <gst/video/video.h>

static void
set_doubles (GstStructure * s, const char *field, const double *v, int n)
{
  GValue arr = G_VALUE_INIT;
  gst_value_array_init (&arr, n);
  for (int i = 0; i < n; i++) {
    GValue d = G_VALUE_INIT;
    g_value_init (&d, G_TYPE_DOUBLE);
    g_value_set_double (&d, v[i]);
    gst_value_array_append_and_take_value (&arr, &d);
  }
  gst_structure_take_value (s, field, &arr);
}

static void
write_transform (GstStructure * s, const GstCudaPrepTransform & t)
{
  gst_structure_set (s, "source-width", G_TYPE_INT, t.source_width, "source-height", G_TYPE_INT,
      t.source_height, "tensor-width", G_TYPE_INT, t.tensor_width, "tensor-height", G_TYPE_INT,
      t.tensor_height, NULL);
  set_doubles (s, "src-to-tensor", t.src_to_tensor, 6);
  set_doubles (s, "tensor-to-src", t.tensor_to_src, 6);
  set_doubles (s, "active-rect", t.active_rect, 4);
  set_doubles (s, "source-rect", t.source_rect, 4);
}

/* The frame went from in_w x in_h to out_w x out_h: pixel-centre coordinates map as
 * x' = (x + 0.5) * sx - 0.5. */
static void
scale_source (GstCudaPrepTransform * t, int out_w, int out_h)
{
  const double sx = (double) out_w / t->source_width, sy = (double) out_h / t->source_height;
  double *m = t->tensor_to_src, *n = t->src_to_tensor;
  const double s[2] = {sx, sy};
  for (int r = 0; r < 2; r++) {
    m[3 * r + 0] *= s[r];
    m[3 * r + 1] *= s[r];
    m[3 * r + 2] = s[r] * (m[3 * r + 2] + 0.5) - 0.5;
    /* tensor = n * (x, y, 1) with x = (x' + 0.5) / sx - 0.5 */
    n[3 * r + 2] += n[3 * r + 0] * (0.5 / sx - 0.5) + n[3 * r + 1] * (0.5 / sy - 0.5);
    n[3 * r + 0] /= sx;
    n[3 * r + 1] /= sy;
  }
  t->source_rect[0] *= sx;
  t->source_rect[2] *= sx;
  t->source_rect[1] *= sy;
  t->source_rect[3] *= sy;
  t->source_width = out_w;
  t->source_height = out_h;
}

static gboolean
transform_meta (GstBuffer * transbuf, GstCustomMeta * meta, GstBuffer * buffer, GQuark type,
    gpointer data, gpointer user_data)
{
  GstCudaPrepTransform t;
  if (!gst_cudaprep_buffer_get_transform (buffer, &t))
    return FALSE;
  if (GST_VIDEO_META_TRANSFORM_IS_SCALE (type)) {
    const GstVideoMetaTransform *scale = (const GstVideoMetaTransform *) data;
    scale_source (&t, GST_VIDEO_INFO_WIDTH (scale->out_info), GST_VIDEO_INFO_HEIGHT (scale->out_info));
  } else if (!GST_META_TRANSFORM_IS_COPY (type)) {
    return FALSE;               /* a transform we cannot follow: drop rather than mislead */
  }
  GstCustomMeta *copy = gst_buffer_add_custom_meta (transbuf, GST_CUDAPREP_TRANSFORM_META_NAME);
  if (!copy)
    return FALSE;
  write_transform (gst_custom_meta_get_structure (copy), t);
  return TRUE;
}

void
gst_cuda_prep_transform_meta_register (void)
{
  static gsize done = 0;
  if (g_once_init_enter (&done)) {
    static const gchar *tags[] = {GST_META_TAG_VIDEO_STR, GST_META_TAG_VIDEO_SIZE_STR, NULL};
    if (!gst_meta_get_info (GST_CUDAPREP_TRANSFORM_META_NAME))
      gst_meta_register_custom (GST_CUDAPREP_TRANSFORM_META_NAME, tags, transform_meta, NULL, NULL);
    g_once_init_leave (&done, 1);
  }
}

void
gst_cuda_prep_buffer_add_transform_meta (GstBuffer * buffer, const cudaprep::TensorTransform & tt,
    const cudaprep::Rect & roi)
{
  GstCustomMeta *meta = gst_buffer_add_custom_meta (buffer, GST_CUDAPREP_TRANSFORM_META_NAME);
  if (!meta)
    return;
  GstCudaPrepTransform t;
  t.source_width = tt.src_width;
  t.source_height = tt.src_height;
  t.tensor_width = tt.dst_width;
  t.tensor_height = tt.dst_height;
  for (int i = 0; i < 6; i++) {
    t.src_to_tensor[i] = tt.src_to_dst[i];
    t.tensor_to_src[i] = tt.dst_to_src[i];
  }
  for (int i = 0; i < 4; i++)
    t.active_rect[i] = tt.active[i];
  t.source_rect[0] = roi.x;
  t.source_rect[1] = roi.y;
  t.source_rect[2] = roi.w;
  t.source_rect[3] = roi.h;
  write_transform (gst_custom_meta_get_structure (meta), t);
}
