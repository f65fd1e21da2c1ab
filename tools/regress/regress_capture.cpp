#include "regress_capture.h"

#include <gst/video/gstvideometa.h>
#include <gst/video/video.h>

#include <algorithm>
#include <cstring>

#include "config.h"
#include "gstcudaprepmeta.h"
#include "regress_slots.h"
#if CUDAPREP_HAVE_ANALYTICS_OD
#include <gst/analytics/analytics.h>
#endif
#if CUDAPREP_HAVE_TENSOR_META
#include <gst/analytics/gsttensormeta.h>
#endif

namespace regress {

namespace {

void describe_caps(GstCaps* caps, std::string* text, std::string* memory) {
  GstCaps* c = gst_caps_copy(caps);
  *memory = "system";
  GstCapsFeatures* f = gst_caps_get_size(c) ? gst_caps_get_features(c, 0) : nullptr;
  if (f && !gst_caps_features_is_any(f) && !gst_caps_features_is_equal(f, GST_CAPS_FEATURES_MEMORY_SYSTEM_MEMORY)) {
    gchar* fs = gst_caps_features_to_string(f);
    *memory = fs;
    g_free(fs);
  }
  for (guint i = 0; i < gst_caps_get_size(c); i++) gst_caps_set_features(c, i, nullptr);
  gchar* s = gst_caps_to_string(c);
  *text = s;
  g_free(s);
  gst_caps_unref(c);
}

void copy_transform(const GstCudaPrepTransform& t, Transform* out) {
  out->present = true;
  out->source_w = t.source_width;
  out->source_h = t.source_height;
  out->tensor_w = t.tensor_width;
  out->tensor_h = t.tensor_height;
  memcpy(out->src_to_tensor, t.src_to_tensor, sizeof t.src_to_tensor);
  memcpy(out->tensor_to_src, t.tensor_to_src, sizeof t.tensor_to_src);
  memcpy(out->active_rect, t.active_rect, sizeof t.active_rect);
}

void read_transform(GstBuffer* buf, Transform* out) {
  if (!gst_meta_get_info(GST_CUDA_PREP_TRANSFORM_META_NAME)) return;  // plugin not loaded
  GstCudaPrepTransform t;
  if (gst_cuda_prep_buffer_get_transform(buf, &t)) copy_transform(t, out);
}

// The transform meta's slots (every tensor has at least one), numbered as tensor 0.
void read_slots(GstBuffer* buf, std::vector<SlotEntry>* out) {
  out->clear();
  if (!gst_meta_get_info(GST_CUDA_PREP_TRANSFORM_META_NAME)) return;
  const guint n = gst_cuda_prep_buffer_get_slot_count(buf);
  for (guint i = 0; i < n; i++) {
    SlotEntry e;
    e.slot = i;
    GstCudaPrepSlotInfo info;
    if (gst_cuda_prep_buffer_get_slot_info(buf, i, &info)) {
      e.empty = info.empty;
      e.region_index = info.region_index;
      e.region_id = info.region_id;
      e.source_pts = GST_CLOCK_TIME_IS_VALID(info.source_pts) ? (int64_t)info.source_pts : -1;
      if (info.source_pad) e.source_pad = info.source_pad;
    }
    GstCudaPrepTransform t;
    if (gst_cuda_prep_buffer_get_slot_transform(buf, i, &t)) {
      copy_transform(t, &e.transform);
      memcpy(e.source_rect, t.source_rect, sizeof t.source_rect);
    }
    out->push_back(e);
  }
}

void add_to_pending(SinkState* s, TensorEntry part, GstBuffer* buf) {
  s->pending_buffers.push_back(gst_buffer_ref(buf));
  if (!s->pending) {
    s->pending = true;
    s->pending_entry = std::move(part);
    return;
  }
  TensorEntry& e = s->pending_entry;
  for (SlotEntry& slot : part.slots) {
    slot.tensor = e.tensors;
    e.slots.push_back(slot);
  }
  e.tensors++;
}

// Every ROI meta with a "template-match" parameter structure, whatever its roi-type (a bank's
// matches are of their template's label): its template label ("template", else the roi-type),
// score, sub-pixel position, scale, angle and full-search flag.
std::vector<MatchRec> read_matches(GstBuffer* buf) {
  std::vector<MatchRec> out;
  gpointer state = nullptr;
  GstMeta* meta;
  while ((meta = gst_buffer_iterate_meta_filtered(buf, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    auto* roi = (GstVideoRegionOfInterestMeta*)meta;
    GstStructure* p = gst_video_region_of_interest_meta_get_param(roi, kSingleTemplateLabel);
    if (!p) continue;
    MatchRec r;
    r.x = (int)roi->x;
    r.y = (int)roi->y;
    r.w = (int)roi->w;
    r.h = (int)roi->h;
    r.sub_x = r.x;
    r.sub_y = r.y;
    gst_structure_get_double(p, "score", &r.score);
    gst_structure_get_double(p, "x", &r.sub_x);
    gst_structure_get_double(p, "y", &r.sub_y);
    const gchar* label = gst_structure_get_string(p, "template");
    if (label && *label)
      r.label = label;
    else if (roi->roi_type)
      r.label = g_quark_to_string(roi->roi_type);
    gst_structure_get_double(p, "scale", &r.scale);
    gst_structure_get_double(p, "angle", &r.angle);
    gboolean full = TRUE;
    if (gst_structure_get_boolean(p, "full-search", &full)) r.full_search = full;
    out.push_back(r);
  }
  // best first, ties by position, then by template and its member: independent of the order
  // metas are kept in
  std::stable_sort(out.begin(), out.end(), [](const MatchRec& a, const MatchRec& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.y != b.y) return a.y < b.y;
    if (a.x != b.x) return a.x < b.x;
    if (a.label != b.label) return a.label < b.label;
    if (a.scale != b.scale) return a.scale < b.scale;
    return a.angle < b.angle;
  });
  return out;
}

// A numeric field of a parameter structure, whatever its number type.
bool number_field(const GstStructure* p, const char* field, double* out) {
  const GValue* v = gst_structure_get_value(p, field);
  if (!v) return false;
  GValue d = G_VALUE_INIT;
  g_value_init(&d, G_TYPE_DOUBLE);
  const bool ok = g_value_type_transformable(G_VALUE_TYPE(v), G_TYPE_DOUBLE) && g_value_transform(v, &d);
  if (ok) *out = g_value_get_double(&d);
  g_value_unset(&d);
  return ok;
}

#if CUDAPREP_HAVE_ANALYTICS_OD
// A float confidence as the shortest decimal that reads back to the same float (0.9f is
// recorded as 0.9, not 0.8999999761581421).
double float_value(float f) {
  char text[G_ASCII_DTOSTR_BUF_SIZE], format[8];
  for (int digits = 1; digits <= 9; digits++) {
    g_snprintf(format, sizeof format, "%%.%dg", digits);
    g_ascii_formatd(text, sizeof text, format, (double)f);
    const double v = g_ascii_strtod(text, nullptr);
    if ((float)v == f) return v;
  }
  return f;
}

std::vector<ClassLevel> cls_levels(GstAnalyticsClsMtd* cls) {
  std::vector<ClassLevel> out;
  const gsize n = gst_analytics_cls_mtd_get_length(cls);
  for (gsize i = 0; i < n; i++) {
    ClassLevel c;
    const GQuark q = gst_analytics_cls_mtd_get_quark(cls, i);
    c.label = q ? g_quark_to_string(q) : "";
    c.confidence = float_value(gst_analytics_cls_mtd_get_level(cls, i));
    out.push_back(c);
  }
  return out;
}

// The ODMtds of the buffer's relation meta, with the ClsMtds related to each (either way); the
// ClsMtds related to no ODMtd are the buffer's classifications.
void read_analytics(GstBuffer* buf, DetectionsEntry* e) {
  GstAnalyticsRelationMeta* rmeta = gst_buffer_get_analytics_relation_meta(buf);
  if (!rmeta) return;
  std::vector<GstAnalyticsMtd> ods, clss;
  gpointer state = nullptr;
  GstAnalyticsMtd mtd;
  while (gst_analytics_relation_meta_iterate(rmeta, &state, gst_analytics_od_mtd_get_mtd_type(), &mtd))
    ods.push_back(mtd);
  state = nullptr;
  while (gst_analytics_relation_meta_iterate(rmeta, &state, gst_analytics_cls_mtd_get_mtd_type(), &mtd))
    clss.push_back(mtd);
  std::vector<bool> cls_used(clss.size());
  for (GstAnalyticsMtd& od : ods) {
    DetRec d;
    d.source = "od";
    d.id = od.id;
    const GQuark type = gst_analytics_od_mtd_get_obj_type(&od);
    d.label = type ? g_quark_to_string(type) : "";
    gint x = 0, y = 0, w = 0, h = 0;
    gfloat conf = 0;
    gst_analytics_od_mtd_get_location(&od, &x, &y, &w, &h, &conf);
    d.x = x;
    d.y = y;
    d.w = w;
    d.h = h;
    d.has_confidence = true;
    d.confidence = float_value(conf);
    for (size_t i = 0; i < clss.size(); i++) {
      if (gst_analytics_relation_meta_get_relation(rmeta, od.id, clss[i].id) == GST_ANALYTICS_REL_TYPE_NONE &&
          gst_analytics_relation_meta_get_relation(rmeta, clss[i].id, od.id) == GST_ANALYTICS_REL_TYPE_NONE)
        continue;
      cls_used[i] = true;
      std::vector<ClassLevel> levels = cls_levels(&clss[i]);
      d.classes.insert(d.classes.end(), levels.begin(), levels.end());
    }
    e->items.push_back(d);
  }
  for (size_t i = 0; i < clss.size(); i++) {
    if (cls_used[i]) continue;
    ClsRec c;
    c.id = clss[i].id;
    c.classes = cls_levels(&clss[i]);
    e->classifications.push_back(c);
  }
}
#endif

#if CUDAPREP_HAVE_TENSOR_META
const char* tensor_dtype(GstTensorDataType t) {
  switch (t) {
    case GST_TENSOR_DATA_TYPE_INT8: return "int8";
    case GST_TENSOR_DATA_TYPE_INT16: return "int16";
    case GST_TENSOR_DATA_TYPE_INT32: return "int32";
    case GST_TENSOR_DATA_TYPE_INT64: return "int64";
    case GST_TENSOR_DATA_TYPE_UINT8: return "uint8";
    case GST_TENSOR_DATA_TYPE_UINT16: return "uint16";
    case GST_TENSOR_DATA_TYPE_UINT32: return "uint32";
    case GST_TENSOR_DATA_TYPE_UINT64: return "uint64";
    case GST_TENSOR_DATA_TYPE_FLOAT16: return "float16";
    case GST_TENSOR_DATA_TYPE_FLOAT32: return "float32";
    case GST_TENSOR_DATA_TYPE_FLOAT64: return "float64";
    default: return "other";  // int4, uint4, bfloat16: compared as bytes, by digest
  }
}

// Every tensor of the buffer's GstTensorMetas, by id: type, dimensions, digest and stats of its
// bytes, and the bytes themselves when small enough to keep in frames.jsonl.
void read_tensor_metas(GstBuffer* buf, DetectionsEntry* e) {
  gpointer state = nullptr;
  GstMeta* meta;
  while ((meta = gst_buffer_iterate_meta_filtered(buf, &state, gst_tensor_meta_api_get_type()))) {
    auto* tm = (GstTensorMeta*)meta;
    for (gsize i = 0; i < tm->num_tensors; i++) {
      const GstTensor* t = tm->tensors[i];
      if (!t) continue;
      MetaTensorRec r;
      r.id = t->id ? g_quark_to_string(t->id) : "";
      r.dtype = tensor_dtype(t->data_type);
      for (gsize k = 0; k < t->num_dims; k++) r.dims.push_back(t->dims[k]);
      GstMapInfo map;
      if (t->data && gst_buffer_map(t->data, &map, GST_MAP_READ)) {
        DType type = DType::U8;
        dtype_from_name(r.dtype, &type);
        r.bytes = map.size;
        r.sha256 = sha256_hex(map.data, map.size);
        r.stats = tensor_stats(map.data, map.size - map.size % dtype_size(type), type);
        if (map.size <= kInlineTensorBytes) r.data.assign(map.data, map.data + map.size);
        gst_buffer_unmap(t->data, &map);
      } else {
        r.sha256 = sha256_hex(nullptr, 0);
      }
      e->tensors.push_back(std::move(r));
    }
  }
  std::stable_sort(e->tensors.begin(), e->tensors.end(),
                   [](const MetaTensorRec& a, const MetaTensorRec& b) { return a.id < b.id; });
}
#endif

// Every ROI meta (any roi-type: its parameter structures, serialised, and a "confidence" or
// "score" field of one of them as the confidence), then, with GStreamer's analytics library,
// every ODMtd and ClsMtd: in id order, as the producer added them.
DetectionsEntry read_detections(GstBuffer* buf) {
  DetectionsEntry e;
  gpointer state = nullptr;
  GstMeta* meta;
  while ((meta = gst_buffer_iterate_meta_filtered(buf, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    auto* roi = (GstVideoRegionOfInterestMeta*)meta;
    DetRec d;
    d.source = "roi";
    d.id = roi->id;
    d.label = roi->roi_type ? g_quark_to_string(roi->roi_type) : "";
    d.x = roi->x;
    d.y = roi->y;
    d.w = roi->w;
    d.h = roi->h;
    for (GList* l = roi->params; l; l = l->next) {
      const GstStructure* p = (const GstStructure*)l->data;
      gchar* text = gst_structure_to_string(p);
      d.params.push_back(text);
      g_free(text);
      double c;
      if (!d.has_confidence && (number_field(p, "confidence", &c) || number_field(p, "score", &c))) {
        d.has_confidence = true;
        d.confidence = c;
      }
    }
    e.items.push_back(d);
  }
  std::stable_sort(e.items.begin(), e.items.end(), [](const DetRec& a, const DetRec& b) { return a.id < b.id; });
#if CUDAPREP_HAVE_ANALYTICS_OD
  read_analytics(buf, &e);
#endif
#if CUDAPREP_HAVE_TENSOR_META
  read_tensor_metas(buf, &e);
#endif
  return e;
}

int64_t clock_or_none(GstClockTime t) { return GST_CLOCK_TIME_IS_VALID(t) ? (int64_t)t : -1; }

}  // namespace

namespace {

// On a queue worker: the frame's digests and stats. Its slots are kept where there is a batch
// (several slots or tensors, a region, an aggregator's pad): a plain tensor's single slot is
// its transform, recorded as before.
void digest_frame_entry(QueuedFrame& f) {
  f.unreadable = false;
  std::vector<GstMapInfo>& maps = f.maps;
  maps.clear();
  f.parts.clear();
  for (GstBuffer* b : f.buffers) {
    GstMapInfo map;
    if (!gst_buffer_map(b, &map, GST_MAP_READ)) {
      f.unreadable = true;
      break;
    }
    maps.push_back(map);
    f.parts.emplace_back(map.data, map.size);
  }
  TensorEntry& e = f.entry;
  if (!f.unreadable) {
    if (e.slots.size() == 1 && e.tensors == 1 && e.slots[0].region_index < 0 && e.slots[0].source_pad.empty())
      e.slots.clear();
    pass_frame(f.parts, f.type, f.expected, &e, &f.bytes);
  }
  for (size_t i = 0; i < maps.size(); i++) gst_buffer_unmap(f.buffers[i], &maps[i]);
  for (GstBuffer* b : f.buffers) gst_buffer_unref(b);
  f.buffers.clear();
}

// On a queue worker, one frame at a time in frame order: checks the frame against the caps and
// hands it to the handler.
void deliver_frame(SinkState* s, QueuedFrame& f) {
  if (f.unreadable) {
    std::lock_guard<std::mutex> lock(s->mu);
    if (s->error.empty()) s->error = "sink '" + s->name + "': cannot map frame " + std::to_string(f.index);
    return;
  }
  std::string why;
  if (!check_frame_tensors(f.entry, f.tensor_bytes, f.batch, &why)) {
    std::lock_guard<std::mutex> lock(s->mu);
    if (s->error.empty())
      s->error = "sink '" + s->name + "': frame " + std::to_string(f.index) + " does not agree with its caps (" +
                 s->caps + "): " + why;
  }
  s->handler->on_tensor(s->name, f.index, f.entry, f.type, f.bytes.empty() ? nullptr : f.bytes.data());
  s->count.store(f.index + 1);
}

}  // namespace

void flush_pending(SinkState* s) {
  if (!s->pending) return;
  s->pending = false;
  if (!s->queue) {
    const int threads = FrameQueue::default_threads();
    s->queue.reset(new FrameQueue(threads, FrameQueue::default_depth(threads), digest_frame_entry,
                                  [s](QueuedFrame& f) { deliver_frame(s, f); }));
  }
  QueuedFrame* f = s->queue->acquire();
  f->index = s->submitted++;
  f->entry = std::move(s->pending_entry);
  f->buffers.swap(s->pending_buffers);
  {
    std::lock_guard<std::mutex> lock(s->mu);
    f->type = s->type;
    f->tensor_bytes = s->tensor_bytes;
    f->batch = s->batch;
  }
  f->expected = s->handler->expected_tensor(s->name, f->index, f->type);
  s->queue->submit(f);
}

void drain_frames(SinkState* s) {
  if (s->queue) s->queue->drain();
}

namespace {

// Notes the caps of the sink's first sample (a tensor sink's dtype, frame size and batch), or
// that they changed. False, with the sink's fatal error set, when a matches sink receives
// something other than video frames.
bool take_caps(SinkState* s, GstCaps* caps, uint64_t index) {
  std::lock_guard<std::mutex> lock(s->mu);
  std::string text, memory;
  if (caps) describe_caps(caps, &text, &memory);
  if (!s->have_caps) {
    s->have_caps = true;
    s->caps = text;
    s->memory = memory;
    if (s->kind == "tensor") {
      s->dtype = caps_dtype(text);
      dtype_from_name(s->dtype, &s->type);
      s->tensor_bytes = caps_frame_bytes(text);
      s->batch = caps_batch(text);
    } else if (s->kind == "matches" && (!caps || gst_caps_get_size(caps) == 0 ||
                                        !gst_structure_has_name(gst_caps_get_structure(caps, 0), "video/x-raw"))) {
      // the ROI metas of cudatemplatematch come on video frames: anything else here means
      // the sink is not where it should be (after cudatensorize, say), and would record
      // a golden without a single match
      s->error = "sink '" + s->name + "' is a matches sink (its name starts with match or roi) but receives " +
                 (text.empty() ? std::string("buffers without caps") : text) +
                 ", not video frames: put it right after cudatemplatematch, whose video frames carry the "
                 "template-match ROI metas (a tensor sink's name must not start with match or roi)";
      s->fatal = true;
      return false;
    }
  } else if (text != s->caps && s->error.empty()) {
    s->error = "sink '" + s->name + "': caps changed at frame " + std::to_string(index) + " from " + s->caps + " to " +
               text + " (a recording holds one caps per sink)";
  }
  return true;
}

void take_matches(SinkState* s, GstBuffer* buf, uint64_t index) {
  MatchesEntry e;
  e.pts = clock_or_none(GST_BUFFER_PTS(buf));
  e.duration = clock_or_none(GST_BUFFER_DURATION(buf));
  e.items = read_matches(buf);
  s->handler->on_matches(s->name, index, e);
}

void take_detections(SinkState* s, GstBuffer* buf, uint64_t index) {
  DetectionsEntry e = read_detections(buf);
  e.pts = clock_or_none(GST_BUFFER_PTS(buf));
  e.duration = clock_or_none(GST_BUFFER_DURATION(buf));
  s->handler->on_detections(s->name, index, e);
}

// Adds the tensor to the frame being gathered, handing the previous frame on when this tensor
// starts a new one. The frame is counted when complete and queued (flush_pending).
GstFlowReturn take_tensor(SinkState* s, GstBuffer* buf) {
  TensorEntry part;
  part.pts = clock_or_none(GST_BUFFER_PTS(buf));
  part.duration = clock_or_none(GST_BUFFER_DURATION(buf));
  read_transform(buf, &part.transform);
  read_slots(buf, &part.slots);
  // which of the tensors of its frame / batch window the meta says this one is (-1: not said)
  int tensor_index = -1;
  GstCustomMeta* meta = gst_meta_get_info(GST_CUDA_PREP_TRANSFORM_META_NAME)
                            ? gst_buffer_get_custom_meta(buf, GST_CUDA_PREP_TRANSFORM_META_NAME)
                            : nullptr;
  if (!meta || !gst_structure_get_int(gst_custom_meta_get_structure(meta), "tensor-index", &tensor_index))
    tensor_index = -1;
  if (!s->pending || !continues_frame(s->pending_entry, part, tensor_index)) flush_pending(s);
  add_to_pending(s, std::move(part), buf);  // read on a queue worker
  return GST_FLOW_OK;
}

}  // namespace

GstFlowReturn on_new_sample(GstAppSink* appsink, gpointer user) {
  SinkState* s = (SinkState*)user;
  GstSample* sample = gst_app_sink_pull_sample(appsink);
  if (!sample) return GST_FLOW_FLUSHING;
  GstBuffer* buf = gst_sample_get_buffer(sample);
  // a tensor sink's frames are counted when queued, the others' when handled
  const uint64_t index = s->kind == "tensor" ? s->submitted : s->count.load();
  GstFlowReturn ret = GST_FLOW_OK;
  if (!take_caps(s, gst_sample_get_caps(sample), index)) {
    ret = GST_FLOW_ERROR;
  } else if (buf && s->kind == "tensor") {
    ret = take_tensor(s, buf);
  } else {
    if (buf && s->kind == "matches") take_matches(s, buf, index);
    if (buf && s->kind == "detections") take_detections(s, buf, index);
    s->count.store(index + 1);
  }
  gst_sample_unref(sample);
  return ret;
}

}  // namespace regress
