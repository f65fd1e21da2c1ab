/* GstCudaPrepTransformMeta: a GstCustomMeta whose mapping follows the frame it describes.
 *
 * Tagged "video" and "size", so elements that transform video metas pass it through their
 * transform function: a copy keeps it, a scale updates it to the scaled frame, GStreamer 1.28's
 * matrix transform (crop, borders, flips, rotations by quarter turns, compositing) maps it onto
 * the new frame when the matrix is affine, and any other transform drops it. Elements that know nothing of video metas
 * drop tagged metas too. A meta that no longer describes the frame is never carried silently. */
#include "transform_meta.h"

#include <gst/video/video.h>

static void set_doubles(GstStructure *s, const char *field, const double *v, int n) {
  GValue arr = G_VALUE_INIT;
  gst_value_array_init(&arr, n);
  for (int i = 0; i < n; i++) {
    GValue d = G_VALUE_INIT;
    g_value_init(&d, G_TYPE_DOUBLE);
    g_value_set_double(&d, v[i]);
    gst_value_array_append_and_take_value(&arr, &d);
  }
  gst_structure_take_value(s, field, &arr);
}

static void write_transform(GstStructure *s, const GstCudaPrepTransform &t) {
  gst_structure_set(s, "source-width", G_TYPE_INT, t.source_width, "source-height", G_TYPE_INT, t.source_height,
                    "tensor-width", G_TYPE_INT, t.tensor_width, "tensor-height", G_TYPE_INT, t.tensor_height, NULL);
  set_doubles(s, "src-to-tensor", t.src_to_tensor, 6);
  set_doubles(s, "tensor-to-src", t.tensor_to_src, 6);
  set_doubles(s, "active-rect", t.active_rect, 4);
  set_doubles(s, "source-rect", t.source_rect, 4);
}

/* The frame went from in_w x in_h to out_w x out_h: pixel-centre coordinates map as
 * x' = (x + 0.5) * sx - 0.5. */
static void scale_source(GstCudaPrepTransform *t, int out_w, int out_h) {
  const double sx = (double)out_w / t->source_width, sy = (double)out_h / t->source_height;
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

/* How the frame changed: a scale to out_w x out_h, or (matrix) an affine map of pixel-centre
 * coordinates x' = A x + b into an out_w x out_h frame. */
struct SourceChange {
  bool affine = false;
  double a[4] = {1, 0, 0, 1}, b[2] = {0, 0};
  int out_w = 0, out_h = 0;
};

/* The frame's content moved by x' = A x + b (pixel centres) into an out_w x out_h frame. */
static void map_source(GstCudaPrepTransform *t, const SourceChange &c) {
  const double *a = c.a, *b = c.b;
  const double det = a[0] * a[3] - a[1] * a[2];
  const double inv[4] = {a[3] / det, -a[1] / det, -a[2] / det, a[0] / det};
  const double inv_b[2] = {-(inv[0] * b[0] + inv[1] * b[1]), -(inv[2] * b[0] + inv[3] * b[1])};
  double m[6], n[6];
  for (int r = 0; r < 2; r++) {
    /* tensor -> new frame: A * tensor_to_src + b */
    for (int k = 0; k < 3; k++) m[3 * r + k] = a[2 * r] * t->tensor_to_src[k] + a[2 * r + 1] * t->tensor_to_src[3 + k];
    m[3 * r + 2] += b[r];
  }
  for (int r = 0; r < 2; r++) {
    /* new frame -> tensor: src_to_tensor * (A^-1 x - A^-1 b) */
    const double *row = t->src_to_tensor + 3 * r;
    n[3 * r + 0] = row[0] * inv[0] + row[1] * inv[2];
    n[3 * r + 1] = row[0] * inv[1] + row[1] * inv[3];
    n[3 * r + 2] = row[0] * inv_b[0] + row[1] * inv_b[1] + row[2];
  }
  for (int i = 0; i < 6; i++) t->tensor_to_src[i] = m[i], t->src_to_tensor[i] = n[i];
  /* source-rect (edges: pixel x covers [x, x + 1)): the box around its mapped corners. */
  const double *sr = t->source_rect;
  double lo[2] = {G_MAXDOUBLE, G_MAXDOUBLE}, hi[2] = {-G_MAXDOUBLE, -G_MAXDOUBLE};
  for (int corner = 0; corner < 4; corner++) {
    const double ex = sr[0] + (corner & 1 ? sr[2] : 0), ey = sr[1] + (corner & 2 ? sr[3] : 0);
    for (int r = 0; r < 2; r++) {
      /* edges are pixel centres + 0.5 */
      const double v = a[2 * r] * (ex - 0.5) + a[2 * r + 1] * (ey - 0.5) + b[r] + 0.5;
      lo[r] = MIN(lo[r], v);
      hi[r] = MAX(hi[r], v);
    }
  }
  t->source_rect[0] = lo[0];
  t->source_rect[1] = lo[1];
  t->source_rect[2] = hi[0] - lo[0];
  t->source_rect[3] = hi[1] - lo[1];
  t->source_width = c.out_w;
  t->source_height = c.out_h;
}

/* A copy of @in with its transform fields following @change. */
static GstStructure *changed_copy(const GstStructure *in, const SourceChange &change) {
  GstStructure *out = gst_structure_copy(in);
  GstCudaPrepTransform t;
  if (gst_cuda_prep_structure_get_transform(in, &t)) {
    if (change.affine)
      map_source(&t, change);
    else
      scale_source(&t, change.out_w, change.out_h);
    write_transform(out, t);
  }
  return out;
}

#if GST_CHECK_VERSION(1, 28, 0)
/* GStreamer 1.28's matrix transform (videocrop, videobox, videoflip, compositor, ...): the content
 * of in_rectangle, its edges' coordinates relative to that rectangle, goes through the 3x3 matrix
 * into out_rectangle. FALSE for a projective or singular matrix, which no affine map follows. */
static gboolean change_from_matrix(const GstVideoMetaTransformMatrix *m, SourceChange *c) {
  if (m->matrix[2][0] != 0 || m->matrix[2][1] != 0 || m->matrix[2][2] != 1) return FALSE;
  const double a[4] = {m->matrix[0][0], m->matrix[0][1], m->matrix[1][0], m->matrix[1][1]};
  if (a[0] * a[3] - a[1] * a[2] == 0) return FALSE;
  /* edges: e' = A (e - in.xy) + t + out.xy; pixel centres are edges - 0.5 */
  const double in[2] = {(double)m->in_rectangle.x, (double)m->in_rectangle.y};
  const double out[2] = {(double)m->out_rectangle.x, (double)m->out_rectangle.y};
  const double t[2] = {m->matrix[0][2], m->matrix[1][2]};
  c->affine = true;
  for (int r = 0; r < 2; r++) {
    c->a[2 * r] = a[2 * r];
    c->a[2 * r + 1] = a[2 * r + 1];
    c->b[r] = a[2 * r] * (0.5 - in[0]) + a[2 * r + 1] * (0.5 - in[1]) + t[r] + out[r] - 0.5;
  }
  c->out_w = GST_VIDEO_INFO_WIDTH(m->out_info);
  c->out_h = GST_VIDEO_INFO_HEIGHT(m->out_info);
  return TRUE;
}
#endif

static gboolean transform_meta(GstBuffer *transbuf, GstCustomMeta *meta, GstBuffer *buffer, GQuark type, gpointer data,
                               gpointer user_data) {
  const GstStructure *in = gst_custom_meta_get_structure(meta);
  GstCudaPrepTransform t;
  if (!gst_cuda_prep_structure_get_transform(in, &t)) return FALSE;
  SourceChange change;
  change.out_w = t.source_width;
  change.out_h = t.source_height;
  if (GST_VIDEO_META_TRANSFORM_IS_SCALE(type)) {
    const GstVideoMetaTransform *scale = (const GstVideoMetaTransform *)data;
    change.out_w = GST_VIDEO_INFO_WIDTH(scale->out_info);
    change.out_h = GST_VIDEO_INFO_HEIGHT(scale->out_info);
#if GST_CHECK_VERSION(1, 28, 0)
  } else if (GST_VIDEO_META_TRANSFORM_IS_MATRIX(type)) {
    if (!change_from_matrix((const GstVideoMetaTransformMatrix *)data, &change)) return FALSE;
#endif
  } else if (!GST_META_TRANSFORM_IS_COPY(type)) {
    return FALSE; /* a transform we cannot follow: drop rather than mislead */
  }
  GstCustomMeta *copy = gst_buffer_add_custom_meta(transbuf, GST_CUDA_PREP_TRANSFORM_META_NAME);
  if (!copy) return FALSE;
  GstStructure *out = gst_custom_meta_get_structure(copy);
  GstStructure *scaled = changed_copy(in, change);
  /* Every slot shows the same frame, so every slot scales with it. */
  const GValue *slots = gst_structure_get_value(in, "slots");
  if (slots && GST_VALUE_HOLDS_ARRAY(slots)) {
    GValue arr = G_VALUE_INIT;
    gst_value_array_init(&arr, gst_value_array_get_size(slots));
    for (guint i = 0; i < gst_value_array_get_size(slots); i++) {
      const GValue *v = gst_value_array_get_value(slots, i);
      if (!GST_VALUE_HOLDS_STRUCTURE(v)) continue;
      GValue sv = G_VALUE_INIT;
      g_value_init(&sv, GST_TYPE_STRUCTURE);
      g_value_take_boxed(&sv, changed_copy(gst_value_get_structure(v), change));
      gst_value_array_append_and_take_value(&arr, &sv);
    }
    gst_structure_take_value(scaled, "slots", &arr);
  }
  /* The custom meta's structure belongs to the meta: copy the fields into it. */
  gst_structure_foreach(
      scaled,
      [](GQuark field, const GValue *value, gpointer dst) -> gboolean {
        gst_structure_id_set_value((GstStructure *)dst, field, value);
        return TRUE;
      },
      out);
  gst_structure_free(scaled);
  return TRUE;
}

void gst_cuda_prep_transform_meta_register(void) {
  static gsize done = 0;
  if (g_once_init_enter(&done)) {
    static const gchar *tags[] = {GST_META_TAG_VIDEO_STR, GST_META_TAG_VIDEO_SIZE_STR, NULL};
    if (!gst_meta_get_info(GST_CUDA_PREP_TRANSFORM_META_NAME))
      gst_meta_register_custom(GST_CUDA_PREP_TRANSFORM_META_NAME, tags, transform_meta, NULL, NULL);
    g_once_init_leave(&done, 1);
  }
}

static GstCudaPrepTransform to_c_transform(const cudaprep::TensorTransform &tt, const cudaprep::Rect &roi) {
  GstCudaPrepTransform t;
  t.source_width = tt.src_width;
  t.source_height = tt.src_height;
  t.tensor_width = tt.dst_width;
  t.tensor_height = tt.dst_height;
  for (int i = 0; i < 6; i++) {
    t.src_to_tensor[i] = tt.src_to_dst[i];
    t.tensor_to_src[i] = tt.dst_to_src[i];
  }
  for (int i = 0; i < 4; i++) t.active_rect[i] = tt.active[i];
  t.source_rect[0] = roi.x;
  t.source_rect[1] = roi.y;
  t.source_rect[2] = roi.w;
  t.source_rect[3] = roi.h;
  return t;
}

void gst_cuda_prep_buffer_add_batch_transform_meta(GstBuffer *buffer, const CudaPrepSlotMeta *slots, int n) {
  if (n < 1) return;
  GstCustomMeta *meta = gst_buffer_add_custom_meta(buffer, GST_CUDA_PREP_TRANSFORM_META_NAME);
  if (!meta) return;
  GstStructure *s = gst_custom_meta_get_structure(meta);
  write_transform(s, to_c_transform(slots[0].transform, slots[0].source_rect));
  GValue arr = G_VALUE_INIT;
  gst_value_array_init(&arr, n);
  for (int i = 0; i < n; i++) {
    const CudaPrepSlotMeta &m = slots[i];
    GstStructure *slot = gst_structure_new("cudaprep/slot", "empty", G_TYPE_BOOLEAN, (gboolean)m.empty, "region-index",
                                           G_TYPE_INT, m.region_index, "region-id", G_TYPE_INT, m.region_id,
                                           "source-pts", G_TYPE_UINT64, (guint64)m.source_pts, NULL);
    if (m.source_pad) gst_structure_set(slot, "source-pad", G_TYPE_STRING, m.source_pad, NULL);
    write_transform(slot, to_c_transform(m.transform, m.source_rect));
    GValue v = G_VALUE_INIT;
    g_value_init(&v, GST_TYPE_STRUCTURE);
    g_value_take_boxed(&v, slot);
    gst_value_array_append_and_take_value(&arr, &v);
  }
  gst_structure_take_value(s, "slots", &arr);
}

void gst_cuda_prep_buffer_add_transform_meta(GstBuffer *buffer, const cudaprep::TensorTransform &tt,
                                             const cudaprep::Rect &roi) {
  CudaPrepSlotMeta slot;
  slot.transform = tt;
  slot.source_rect = roi;
  gst_cuda_prep_buffer_add_batch_transform_meta(buffer, &slot, 1);
}

/* ---- reuse on pool buffers ------------------------------------------------------------- */

static bool same_transform(const cudaprep::TensorTransform &a, const cudaprep::TensorTransform &b) {
  if (a.src_width != b.src_width || a.src_height != b.src_height || a.dst_width != b.dst_width ||
      a.dst_height != b.dst_height)
    return false;
  for (int i = 0; i < 6; i++)
    if (a.src_to_dst[i] != b.src_to_dst[i] || a.dst_to_src[i] != b.dst_to_src[i]) return false;
  for (int i = 0; i < 4; i++)
    if (a.active[i] != b.active[i]) return false;
  return true;
}

/* Everything the meta says of a slot but its source PTS. */
static bool same_slot_but_pts(const CudaPrepSlotMeta &a, const CudaPrepSlotMeta &b) {
  return a.empty == b.empty && a.region_index == b.region_index && a.region_id == b.region_id &&
         a.source_rect.x == b.source_rect.x && a.source_rect.y == b.source_rect.y &&
         a.source_rect.w == b.source_rect.w && a.source_rect.h == b.source_rect.h &&
         g_strcmp0(a.source_pad, b.source_pad) == 0 && same_transform(a.transform, b.transform);
}

static GQuark stamp_quark(void) {
  static GQuark quark = g_quark_from_static_string("cudaprep-transform-meta-stamp");
  return quark;
}

static gpointer new_stamp(void) {
  static gint last = 0;
  return GINT_TO_POINTER(g_atomic_int_add(&last, 1) + 1);
}

/* Writes each slot's source PTS into @s, the meta's structure (the buffer is writable). */
static void write_source_pts(GstStructure *s, const CudaPrepSlotMeta *slots, int n) {
  static const GQuark slots_quark = g_quark_from_static_string("slots");
  static const GQuark pts_quark = g_quark_from_static_string("source-pts");
  const GValue *array = gst_structure_id_get_value(s, slots_quark);
  for (int i = 0; i < n; i++) {
    /* The slot structures belong to the meta's structure, which this buffer's writer owns. */
    GstStructure *slot = (GstStructure *)gst_value_get_structure(gst_value_array_get_value(array, (guint)i));
    g_value_set_uint64((GValue *)gst_structure_id_get_value(slot, pts_quark), (guint64)slots[i].source_pts);
  }
}

/* Which of the tensors of one frame or batch window this is: set on either path below. */
static void write_tensor_count(GstCustomMeta *meta, int tensor_index, int tensors) {
  gst_structure_set(gst_custom_meta_get_structure(meta), "tensor-index", G_TYPE_INT, tensor_index, "tensors",
                    G_TYPE_INT, tensors, NULL);
}

void CudaPrepTransformMetaWriter::attach(GstBuffer *buffer, const CudaPrepSlotMeta *slots, int n, int tensor_index,
                                         int tensors) {
  if (n < 1) return;
  bool same = stamp_ && written_.size() == (size_t)n;
  for (int i = 0; same && i < n; i++) same = same_slot_but_pts(written_[i], slots[i]);
  if (!same) {
    written_.assign(slots, slots + n);
    stamp_ = new_stamp();
  }
  GstCustomMeta *meta = gst_buffer_get_custom_meta(buffer, GST_CUDA_PREP_TRANSFORM_META_NAME);
  if (meta && gst_mini_object_get_qdata(GST_MINI_OBJECT(buffer), stamp_quark()) == stamp_) {
    write_source_pts(gst_custom_meta_get_structure(meta), slots, n);
    write_tensor_count(meta, tensor_index, tensors);
    return;
  }
  if (meta) gst_buffer_remove_meta(buffer, (GstMeta *)meta);
  gst_cuda_prep_buffer_add_batch_transform_meta(buffer, slots, n);
  meta = gst_buffer_get_custom_meta(buffer, GST_CUDA_PREP_TRANSFORM_META_NAME);
  if (!meta) return;
  write_tensor_count(meta, tensor_index, tensors);
  GstMeta *base = (GstMeta *)meta;
  base->flags = (GstMetaFlags)(base->flags | GST_META_FLAG_POOLED); /* the macro is C-only */
  gst_mini_object_set_qdata(GST_MINI_OBJECT(buffer), stamp_quark(), stamp_, NULL);
}
