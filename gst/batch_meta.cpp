/* Per-slot transform meta of cudatensorbatch tensors. */
#include "batch_meta.h"

#include "transform_meta.h"

/* TEMPORARY until transform_meta.* has the per-slot array (other branch): a "slots" array of
 * "cudaprep/slot" structures next to the single-tensor fields of slot 0. */
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

void
gst_cuda_prep_buffer_add_batch_meta (GstBuffer * buffer, const BatchSlotMeta * slots, int n)
{
  gst_cuda_prep_buffer_add_transform_meta (buffer, slots[0].transform, slots[0].roi);
  GstCustomMeta *meta = gst_buffer_get_custom_meta (buffer, GST_CUDAPREP_TRANSFORM_META_NAME);
  if (!meta)
    return;
  GValue arr = G_VALUE_INIT;
  gst_value_array_init (&arr, n);
  for (int i = 0; i < n; i++) {
    const BatchSlotMeta &m = slots[i];
    const cudaprep::TensorTransform &t = m.transform;
    GstStructure *s = gst_structure_new ("cudaprep/slot", "source-pad", G_TYPE_STRING,
        m.pad_name ? m.pad_name : "", "source-pts", G_TYPE_UINT64, (guint64) m.pts,
        "region-index", G_TYPE_INT, -1, "region-id", G_TYPE_INT, -1, "empty", G_TYPE_BOOLEAN,
        m.empty, "source-width", G_TYPE_INT, t.src_width, "source-height",
        G_TYPE_INT, t.src_height, "tensor-width", G_TYPE_INT, t.dst_width, "tensor-height",
        G_TYPE_INT, t.dst_height, NULL);
    set_doubles (s, "src-to-tensor", t.src_to_dst, 6);
    set_doubles (s, "tensor-to-src", t.dst_to_src, 6);
    set_doubles (s, "active-rect", t.active, 4);
    const double rect[4] = {(double) m.roi.x, (double) m.roi.y, (double) m.roi.w, (double) m.roi.h};
    set_doubles (s, "source-rect", rect, 4);
    GValue v = G_VALUE_INIT;
    g_value_init (&v, GST_TYPE_STRUCTURE);
    g_value_take_boxed (&v, s);
    gst_value_array_append_and_take_value (&arr, &v);
  }
  gst_structure_take_value (gst_custom_meta_get_structure (meta), "slots", &arr);
}
