/* gst-cudaprep: the transform meta that cudatensorize attaches to every tensor.
 *
 * It is a GstCustomMeta named "GstCudaPrepTransformMeta", so any language with GStreamer
 * bindings can read it (gst_buffer_get_custom_meta + gst_custom_meta_get_structure, or
 * buffer.get_custom_meta("GstCudaPrepTransformMeta").get_structure() in Python).
 * Structure "cudaprep/transform" fields:
 *   source-width, source-height  (gint)   frame size the tensor was made from
 *   tensor-width, tensor-height  (gint)
 *   src-to-tensor, tensor-to-src (GstValueArray of 6 gdouble, row-major 2x3, pixel-index
 *                                 coordinates: pixel i has its centre at i)
 *   active-rect                  (GstValueArray of 4 gdouble: x, y, w, h of the unpadded
 *                                 image inside the tensor)
 *   source-rect                  (GstValueArray of 4 gdouble: x, y, w, h of the frame region
 *                                 the tensor was made from: the roi, clipped to the frame)
 *   slots                        (GstValueArray of GstStructure "cudaprep/slot", one per slot
 *                                 of the batch, B = the tensor's last dimension)
 *   tensor-index, tensors        (gint, optional) where one frame (cudatensorize rois / roi-meta)
 *                                 or one batch window (cudatensorbatch regions) has more regions
 *                                 than slots, it gives `tensors` tensors with the same timestamps:
 *                                 this is the tensor-index-th (0-based); 0 and 1 otherwise
 * The top-level fields above are those of slot 0 (a batch of one reads as before). Each
 * "cudaprep/slot" structure has the same seven transform fields, plus:
 *   empty         (gboolean) no source in this slot: it holds the pad value, ignore it
 *   region-index  (gint)     which region of the frame the slot came from (rois / roi-meta
 *                            order), -1 when the slot is a whole frame or a single roi
 *   region-id     (gint)     the id of the upstream GstVideoRegionOfInterestMeta, or of the
 *                            GstAnalyticsODMtd in its relation meta (to relate a result to the
 *                            detection: gst_analytics_relation_meta_set_relation), -1 if none
 *   source-pts    (guint64)  PTS of the source buffer (GST_CLOCK_TIME_NONE if unknown)
 *   source-pad    (gchararray, optional) the aggregator pad the slot came from
 * From C: gst_cuda_prep_buffer_get_slot_count, gst_cuda_prep_buffer_get_slot_transform and
 * gst_cuda_prep_buffer_get_slot_info below. From Python:
 *   s = buf.get_custom_meta("GstCudaPrepTransformMeta").get_structure()
 *   ok, slots = s.get_array("slots")
 *   slot = slots.get_nth(i)                  # a Gst.Structure
 *   slot.get_value("tensor-to-src"), slot.get_value("empty"), slot.get_value("region-id")
 *   s.get_value("tensors")                   # tensors of this frame / batch window
 *
 * The mapping is between the tensor and the frame as it entered cudatensorize. The meta is
 * tagged "video" and "size": a scaler that transforms video metas (videoscale,
 * videoconvertscale) updates it to the scaled frame; on GStreamer 1.28 and newer, elements that
 * give metas their geometry as an affine matrix (videocrop, videobox, compositor) move it onto
 * the frame they make; other elements that transform buffers drop it rather than carry a mapping
 * that may no longer hold (except 1.28's videoflip, which copies it unchanged: see
 * docs/cudatensorize.md).
 *
 * This header is self-contained (inline functions only): include it from an application
 * to map detector boxes back to the frame without linking the plugin.
 */
#ifndef GST_CUDA_PREP_META_H
#define GST_CUDA_PREP_META_H

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_CUDA_PREP_TRANSFORM_META_NAME "GstCudaPrepTransformMeta"

typedef struct {
  gint source_width, source_height;
  gint tensor_width, tensor_height;
  gdouble src_to_tensor[6];
  gdouble tensor_to_src[6];
  gdouble active_rect[4];
  gdouble source_rect[4];
} GstCudaPrepTransform;

static inline gboolean gst_cuda_prep_read_doubles_(const GstStructure *s, const gchar *field, gdouble *out, guint n) {
  const GValue *arr = gst_structure_get_value(s, field);
  guint i;
  if (!arr || !GST_VALUE_HOLDS_ARRAY(arr) || gst_value_array_get_size(arr) != n) return FALSE;
  for (i = 0; i < n; i++) {
    const GValue *v = gst_value_array_get_value(arr, i);
    if (!G_VALUE_HOLDS_DOUBLE(v)) return FALSE;
    out[i] = g_value_get_double(v);
  }
  return TRUE;
}

/* What a slot of a batch holds besides its transform. */
typedef struct {
  gboolean empty;
  gint region_index;
  gint region_id;
  GstClockTime source_pts;
  /* cudatensorbatch: the sink pad (camera) the slot came from; NULL otherwise. Owned by the
   * buffer's meta: valid while the buffer is. */
  const gchar *source_pad;
} GstCudaPrepSlotInfo;

/* Reads the transform fields of a "cudaprep/transform" or "cudaprep/slot" structure. */
static inline gboolean gst_cuda_prep_structure_get_transform(const GstStructure *s, GstCudaPrepTransform *t) {
  return gst_structure_get_int(s, "source-width", &t->source_width) &&
         gst_structure_get_int(s, "source-height", &t->source_height) &&
         gst_structure_get_int(s, "tensor-width", &t->tensor_width) &&
         gst_structure_get_int(s, "tensor-height", &t->tensor_height) &&
         gst_cuda_prep_read_doubles_(s, "src-to-tensor", t->src_to_tensor, 6) &&
         gst_cuda_prep_read_doubles_(s, "tensor-to-src", t->tensor_to_src, 6) &&
         gst_cuda_prep_read_doubles_(s, "active-rect", t->active_rect, 4) &&
         gst_cuda_prep_read_doubles_(s, "source-rect", t->source_rect, 4);
}

/* Which of the tensors of one frame or batch window @buffer is (@index of @count, the same
 * timestamps on all); a meta without the fields reads as 0 of 1. FALSE without the meta. */
static inline gboolean gst_cuda_prep_buffer_get_tensor_count(GstBuffer *buffer, gint *index, gint *count) {
  GstCustomMeta *meta = gst_buffer_get_custom_meta(buffer, GST_CUDA_PREP_TRANSFORM_META_NAME);
  const GstStructure *s;
  if (!meta) return FALSE;
  s = gst_custom_meta_get_structure(meta);
  if (!gst_structure_get_int(s, "tensor-index", index)) *index = 0;
  if (!gst_structure_get_int(s, "tensors", count)) *count = 1;
  return TRUE;
}

/* Reads the transform attached to @buffer (slot 0 of a batch). Returns FALSE if there is none. */
static inline gboolean gst_cuda_prep_buffer_get_transform(GstBuffer *buffer, GstCudaPrepTransform *t) {
  GstCustomMeta *meta = gst_buffer_get_custom_meta(buffer, GST_CUDA_PREP_TRANSFORM_META_NAME);
  if (!meta) return FALSE;
  return gst_cuda_prep_structure_get_transform(gst_custom_meta_get_structure(meta), t);
}

/* The "slots" array of @buffer's transform meta, or NULL. */
static inline const GValue *gst_cuda_prep_slots_(GstBuffer *buffer) {
  GstCustomMeta *meta = gst_buffer_get_custom_meta(buffer, GST_CUDA_PREP_TRANSFORM_META_NAME);
  const GValue *slots;
  if (!meta) return NULL;
  slots = gst_structure_get_value(gst_custom_meta_get_structure(meta), "slots");
  return slots && GST_VALUE_HOLDS_ARRAY(slots) ? slots : NULL;
}

/* The "cudaprep/slot" structure of slot @i, or NULL. */
static inline const GstStructure *gst_cuda_prep_slot_structure_(GstBuffer *buffer, guint i) {
  const GValue *slots = gst_cuda_prep_slots_(buffer);
  const GValue *v;
  if (!slots || i >= gst_value_array_get_size(slots)) return NULL;
  v = gst_value_array_get_value(slots, i);
  return GST_VALUE_HOLDS_STRUCTURE(v) ? gst_value_get_structure(v) : NULL;
}

/* Number of slots described by @buffer's transform meta (0 if there is none). */
static inline guint gst_cuda_prep_buffer_get_slot_count(GstBuffer *buffer) {
  const GValue *slots = gst_cuda_prep_slots_(buffer);
  return slots ? gst_value_array_get_size(slots) : 0;
}

/* Reads the transform of slot @i. Returns FALSE if there is no such slot. */
static inline gboolean gst_cuda_prep_buffer_get_slot_transform(GstBuffer *buffer, guint i, GstCudaPrepTransform *t) {
  const GstStructure *s = gst_cuda_prep_slot_structure_(buffer, i);
  return s && gst_cuda_prep_structure_get_transform(s, t);
}

/* Reads what slot @i holds (empty, region, source). Returns FALSE if there is no such slot. */
static inline gboolean gst_cuda_prep_buffer_get_slot_info(GstBuffer *buffer, guint i, GstCudaPrepSlotInfo *info) {
  const GstStructure *s = gst_cuda_prep_slot_structure_(buffer, i);
  guint64 pts = GST_CLOCK_TIME_NONE;
  if (!s || !gst_structure_get_boolean(s, "empty", &info->empty) ||
      !gst_structure_get_int(s, "region-index", &info->region_index) ||
      !gst_structure_get_int(s, "region-id", &info->region_id))
    return FALSE;
  gst_structure_get_uint64(s, "source-pts", &pts);
  info->source_pts = pts;
  info->source_pad = gst_structure_get_string(s, "source-pad");
  return TRUE;
}

/* Maps an axis-aligned box (x, y, w, h) given in tensor pixels back into frame pixels,
 * clipped to the frame. Box edges are pixel edges (a box of width w covers w pixels). */
static inline void gst_cuda_prep_transform_box_to_frame(const GstCudaPrepTransform *t, const gdouble box[4],
                                                        gdouble out[4]) {
  const gdouble *m = t->tensor_to_src;
  /* edges -> centre coordinates of the first / last covered pixel, mapped, back to edges */
  gdouble x0 = box[0] - 0.5, y0 = box[1] - 0.5;
  gdouble x1 = box[0] + box[2] - 0.5, y1 = box[1] + box[3] - 0.5;
  gdouble ax = m[0] * x0 + m[1] * y0 + m[2], ay = m[3] * x0 + m[4] * y0 + m[5];
  gdouble bx = m[0] * x1 + m[1] * y1 + m[2], by = m[3] * x1 + m[4] * y1 + m[5];
  gdouble fx0 = MIN(ax, bx) + 0.5, fy0 = MIN(ay, by) + 0.5;
  gdouble fx1 = MAX(ax, bx) + 0.5, fy1 = MAX(ay, by) + 0.5;
  fx0 = CLAMP(fx0, 0.0, (gdouble)t->source_width);
  fx1 = CLAMP(fx1, 0.0, (gdouble)t->source_width);
  fy0 = CLAMP(fy0, 0.0, (gdouble)t->source_height);
  fy1 = CLAMP(fy1, 0.0, (gdouble)t->source_height);
  out[0] = fx0;
  out[1] = fy0;
  out[2] = fx1 - fx0;
  out[3] = fy1 - fy0;
}

/* The names of these functions before every C symbol of the plugin took the gst_cuda_prep_
 * prefix of its types (GstCudaPrep...): kept for applications written against them. */
#define GST_CUDAPREP_TRANSFORM_META_NAME GST_CUDA_PREP_TRANSFORM_META_NAME
#define gst_cudaprep_buffer_get_transform gst_cuda_prep_buffer_get_transform
#define gst_cudaprep_structure_get_transform gst_cuda_prep_structure_get_transform
#define gst_cudaprep_buffer_get_slot_count gst_cuda_prep_buffer_get_slot_count
#define gst_cudaprep_buffer_get_slot_transform gst_cuda_prep_buffer_get_slot_transform
#define gst_cudaprep_buffer_get_slot_info gst_cuda_prep_buffer_get_slot_info
#define gst_cudaprep_transform_box_to_frame gst_cuda_prep_transform_box_to_frame

G_END_DECLS

#endif /* GST_CUDA_PREP_META_H */
