#include "regress_pipeline.h"

#include <gst/app/gstappsink.h>
#include <gst/video/gstvideometa.h>
#include <gst/video/video.h>
#include <glib-unix.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <map>

#include "config.h"
#include "gstcudaprepmeta.h"
#include "regress_device.h"
#include "regress_progress.h"
#include "regress_slots.h"

namespace regress {

const char* tool_version() { return VERSION; }

std::string sink_kind(const std::string& name) {
  return (name.rfind("match", 0) == 0 || name.rfind("roi", 0) == 0) ? "matches" : "tensor";
}

std::string substitute_clip(const std::string& description, const std::string& token) {
  std::string out;
  size_t pos = 0;
  for (;;) {
    size_t at = description.find("{clip}", pos);
    if (at == std::string::npos) break;
    out += description.substr(pos, at - pos) + token;
    pos = at + 6;
  }
  return out + description.substr(pos);
}

// Every element inside `bin`, recursively, each with a reference the caller drops.
static std::vector<GstElement*> elements_of(GstBin* bin) {
  std::vector<GstElement*> all;
  GstIterator* it = gst_bin_iterate_recurse(bin);
  GValue item = G_VALUE_INIT;
  bool done = false;
  while (!done) {
    switch (gst_iterator_next(it, &item)) {
      case GST_ITERATOR_OK:
        all.push_back((GstElement*)gst_object_ref(g_value_get_object(&item)));
        g_value_reset(&item);
        break;
      case GST_ITERATOR_RESYNC:
        for (GstElement* x : all) gst_object_unref(x);
        all.clear();
        gst_iterator_resync(it);
        break;
      default: done = true; break;
    }
  }
  g_value_unset(&item);
  gst_iterator_free(it);
  return all;
}

int apply_clip(GstElement* pipeline, const std::string& token, const std::string& clip, std::string* error) {
  std::vector<GstElement*> all{(GstElement*)gst_object_ref(pipeline)};
  if (GST_IS_BIN(pipeline)) {
    std::vector<GstElement*> inside = elements_of(GST_BIN(pipeline));
    all.insert(all.end(), inside.begin(), inside.end());
  }
  int set = 0;
  for (GstElement* e : all) {
    guint n = 0;
    GParamSpec** specs = g_object_class_list_properties(G_OBJECT_GET_CLASS(e), &n);
    for (guint i = 0; i < n; i++) {
      GParamSpec* p = specs[i];
      if (G_PARAM_SPEC_VALUE_TYPE(p) != G_TYPE_STRING || !(p->flags & G_PARAM_READABLE) ||
          g_str_equal(p->name, "name"))  // the object's name: not where a clip goes
        continue;
      gchar* v = nullptr;
      g_object_get(e, p->name, &v, NULL);
      std::string value = v ? v : "";
      g_free(v);
      if (value.find(token) == std::string::npos) continue;
      if (!(p->flags & G_PARAM_WRITABLE) || (p->flags & G_PARAM_CONSTRUCT_ONLY)) {
        if (error->empty())
          *error = std::string("{clip} is in property '") + p->name + "' of " + GST_OBJECT_NAME(e) +
                   ", which cannot be set after the element is made";
        continue;
      }
      size_t at = 0;
      while ((at = value.find(token, at)) != std::string::npos) {
        value.replace(at, token.size(), clip);
        at += clip.size();
      }
      g_object_set(e, p->name, value.c_str(), NULL);
      set++;
    }
    g_free(specs);
  }
  for (GstElement* e : all) gst_object_unref(e);
  return set;
}

std::string normalize_description(const std::string& description) {
  std::string out;
  bool space = false;
  for (char c : description) {
    if (g_ascii_isspace(c)) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

/* ---- sinks ------------------------------------------------------------------------------ */

struct SinkState {
  std::string name, kind;
  GstElement* appsink = nullptr;
  SampleHandler* handler = nullptr;
  std::atomic<uint64_t> count{0};
  std::mutex mu;  // fields below
  bool have_caps = false;
  std::string caps, memory, dtype = "uint8";
  DType type = DType::U8;
  uint64_t tensor_bytes = 0, batch = 0;  // what the caps fix (0: nothing)
  std::string error;
  bool fatal = false;  // error stops the run (run() returns it)
  // The frame being gathered (tensor sinks): a frame with more regions than batch-size gives
  // several tensors in a row. Touched by the sink's streaming thread, and by run() once the
  // pipeline has stopped.
  bool pending = false;
  TensorEntry pending_entry;
  std::vector<uint8_t> pending_bytes;  // keeps its capacity from frame to frame
};

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
  if (!gst_meta_get_info(GST_CUDAPREP_TRANSFORM_META_NAME)) return;  // plugin not loaded
  GstCudaPrepTransform t;
  if (gst_cudaprep_buffer_get_transform(buf, &t)) copy_transform(t, out);
}

// The transform meta's slots (every tensor has at least one), numbered as tensor 0.
void read_slots(GstBuffer* buf, std::vector<SlotEntry>* out) {
  out->clear();
  if (!gst_meta_get_info(GST_CUDAPREP_TRANSFORM_META_NAME)) return;
  const guint n = gst_cudaprep_buffer_get_slot_count(buf);
  for (guint i = 0; i < n; i++) {
    SlotEntry e;
    e.slot = i;
    GstCudaPrepSlotInfo info;
    if (gst_cudaprep_buffer_get_slot_info(buf, i, &info)) {
      e.empty = info.empty;
      e.region_index = info.region_index;
      e.region_id = info.region_id;
      e.source_pts = GST_CLOCK_TIME_IS_VALID(info.source_pts) ? (int64_t)info.source_pts : -1;
      if (info.source_pad) e.source_pad = info.source_pad;
    }
    GstCudaPrepTransform t;
    if (gst_cudaprep_buffer_get_slot_transform(buf, i, &t)) {
      copy_transform(t, &e.transform);
      memcpy(e.source_rect, t.source_rect, sizeof t.source_rect);
    }
    out->push_back(e);
  }
}

void add_to_pending(SinkState* s, TensorEntry part, const uint8_t* data, size_t size) {
  if (!s->pending) {
    s->pending = true;
    s->pending_entry = std::move(part);
    s->pending_bytes.assign(data, data + size);
    return;
  }
  TensorEntry& e = s->pending_entry;
  for (SlotEntry& slot : part.slots) {
    slot.tensor = e.tensors;
    e.slots.push_back(slot);
  }
  e.tensors++;
  s->pending_bytes.insert(s->pending_bytes.end(), data, data + size);
}

// Hands the pending frame to the handler, digested. Its slots are kept where there is a batch
// (several slots or tensors, a region, an aggregator's pad): a plain tensor's single slot is
// its transform, recorded as before.
void flush_pending(SinkState* s) {
  if (!s->pending) return;
  s->pending = false;
  const uint64_t index = s->count.load();
  TensorEntry& e = s->pending_entry;
  const std::vector<uint8_t>& bytes = s->pending_bytes;
  DType type;
  uint64_t tensor_bytes, batch;
  {
    std::lock_guard<std::mutex> lock(s->mu);
    type = s->type;
    tensor_bytes = s->tensor_bytes;
    batch = s->batch;
  }
  if (e.slots.size() == 1 && e.tensors == 1 && e.slots[0].region_index < 0 && e.slots[0].source_pad.empty())
    e.slots.clear();
  e.bytes = bytes.size();
  e.sha256 = sha256_hex(bytes.data(), bytes.size());
  e.stats = tensor_stats(bytes.data(), bytes.size() - bytes.size() % dtype_size(type), type);
  digest_slots(bytes.data(), bytes.size(), &e.slots);
  std::string why;
  if (!check_frame_tensors(e, tensor_bytes, batch, &why)) {
    std::lock_guard<std::mutex> lock(s->mu);
    if (s->error.empty())
      s->error = "sink '" + s->name + "': frame " + std::to_string(index) + " does not agree with its caps (" +
                 s->caps + "): " + why;
  }
  s->handler->on_tensor(s->name, index, e, type, bytes.data());
  s->count.store(index + 1);
}

std::vector<MatchRec> read_matches(GstBuffer* buf) {
  std::vector<MatchRec> out;
  const GQuark type = g_quark_from_static_string("template-match");
  gpointer state = nullptr;
  GstMeta* meta;
  while ((meta = gst_buffer_iterate_meta_filtered(buf, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    auto* roi = (GstVideoRegionOfInterestMeta*)meta;
    if (roi->roi_type != type) continue;
    MatchRec r;
    r.x = (int)roi->x;
    r.y = (int)roi->y;
    r.w = (int)roi->w;
    r.h = (int)roi->h;
    r.sub_x = r.x;
    r.sub_y = r.y;
    GstStructure* p = gst_video_region_of_interest_meta_get_param(roi, "template-match");
    if (p) {
      gst_structure_get_double(p, "score", &r.score);
      gst_structure_get_double(p, "x", &r.sub_x);
      gst_structure_get_double(p, "y", &r.sub_y);
    }
    out.push_back(r);
  }
  // best first, ties by position: independent of the order metas are kept in
  std::stable_sort(out.begin(), out.end(), [](const MatchRec& a, const MatchRec& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.y != b.y) return a.y < b.y;
    return a.x < b.x;
  });
  return out;
}

int64_t clock_or_none(GstClockTime t) { return GST_CLOCK_TIME_IS_VALID(t) ? (int64_t)t : -1; }

GstFlowReturn on_new_sample(GstAppSink* appsink, gpointer user) {
  SinkState* s = (SinkState*)user;
  GstSample* sample = gst_app_sink_pull_sample(appsink);
  if (!sample) return GST_FLOW_FLUSHING;
  GstCaps* caps = gst_sample_get_caps(sample);
  GstBuffer* buf = gst_sample_get_buffer(sample);
  const uint64_t index = s->count.load();
  {
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
      } else if (!caps || gst_caps_get_size(caps) == 0 ||
                 !gst_structure_has_name(gst_caps_get_structure(caps, 0), "video/x-raw")) {
        // the ROI metas of cudatemplatematch come on video frames: anything else here means
        // the sink is not where it should be (after cudatensorize, say), and would record
        // a golden without a single match
        s->error = "sink '" + s->name + "' is a matches sink (its name starts with match or roi) but receives " +
                   (text.empty() ? std::string("buffers without caps") : text) +
                   ", not video frames: put it right after cudatemplatematch, whose video frames carry the "
                   "template-match ROI metas (a tensor sink's name must not start with match or roi)";
        s->fatal = true;
        gst_sample_unref(sample);
        return GST_FLOW_ERROR;
      }
    } else if (text != s->caps && s->error.empty()) {
      s->error = "sink '" + s->name + "': caps changed at frame " + std::to_string(index) + " from " + s->caps +
                 " to " + text + " (a recording holds one caps per sink)";
    }
  }
  if (buf) {
    if (s->kind == "matches") {
      MatchesEntry e;
      e.pts = clock_or_none(GST_BUFFER_PTS(buf));
      e.duration = clock_or_none(GST_BUFFER_DURATION(buf));
      e.items = read_matches(buf);
      s->handler->on_matches(s->name, index, e);
    } else {
      GstMapInfo map;
      if (!gst_buffer_map(buf, &map, GST_MAP_READ)) {
        std::lock_guard<std::mutex> lock(s->mu);
        if (s->error.empty()) s->error = "sink '" + s->name + "': cannot map frame " + std::to_string(index);
        gst_sample_unref(sample);
        return GST_FLOW_ERROR;
      }
      TensorEntry part;
      part.pts = clock_or_none(GST_BUFFER_PTS(buf));
      part.duration = clock_or_none(GST_BUFFER_DURATION(buf));
      read_transform(buf, &part.transform);
      read_slots(buf, &part.slots);
      if (!s->pending || !continues_frame(s->pending_entry, part)) flush_pending(s);
      add_to_pending(s, std::move(part), map.data, map.size);
      gst_buffer_unmap(buf, &map);
      gst_sample_unref(sample);
      return GST_FLOW_OK;  // counted when the frame is complete (flush_pending)
    }
  }
  s->count.store(index + 1);
  gst_sample_unref(sample);
  return GST_FLOW_OK;
}

/* ---- element description ---------------------------------------------------------------- */

// GStreamer's default object name prefix: the type name without "Gst", lowercased.
std::string default_name_prefix(GstElement* e) {
  std::string t = G_OBJECT_TYPE_NAME(e);
  if (t.rfind("Gst", 0) == 0) t = t.substr(3);
  for (auto& c : t) c = g_ascii_tolower(c);
  return t;
}

// Whether `name` is an automatic name ("queue3", "avdec_h264-0"); sets its number.
bool auto_name_number(const std::string& name, const std::string& prefix, long* number) {
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return false;
  std::string rest = name.substr(prefix.size());
  const bool digit_end = !prefix.empty() && g_ascii_isdigit(prefix.back());
  if (digit_end) {
    if (rest[0] != '-') return false;
    rest = rest.substr(1);
  }
  if (rest.empty() || rest.size() > 9) return false;
  for (char c : rest)
    if (!g_ascii_isdigit(c)) return false;
  *number = std::stol(rest);
  return true;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  size_t pos = 0;
  while ((pos = s.find(from, pos)) != std::string::npos) {
    s.replace(pos, from.size(), to);
    pos += to.size();
  }
  return s;
}

bool serialize_value(const GValue* v, std::string* out) {
  if (G_VALUE_HOLDS_ENUM(v)) {
    GEnumClass* klass = (GEnumClass*)g_type_class_ref(G_VALUE_TYPE(v));
    GEnumValue* ev = g_enum_get_value(klass, g_value_get_enum(v));
    *out = ev ? ev->value_nick : std::to_string(g_value_get_enum(v));
    g_type_class_unref(klass);
    return true;
  }
  if (G_VALUE_HOLDS_STRING(v)) {
    const gchar* s = g_value_get_string(v);
    *out = s ? s : "(null)";
    return true;
  }
  gchar* s = gst_value_serialize(v);
  if (!s) return false;
  *out = s;
  g_free(s);
  return true;
}

bool is_cudaprep(GstElement* e) {
  GstElementFactory* f = gst_element_get_factory(e);
  if (!f) return false;
  GstPlugin* p = gst_plugin_feature_get_plugin(GST_PLUGIN_FEATURE(f));
  bool yes = p && g_strcmp0(gst_plugin_get_name(p), "cudaprep") == 0;
  if (p) gst_object_unref(p);
  return yes;
}

// Writable properties as strings: every one for the cudaprep elements, the non-default ones
// for the others; the clip path is replaced by {clip}.
std::vector<std::pair<std::string, std::string>> element_properties(GstElement* e, const std::string& clip,
                                                                    bool all) {
  std::vector<std::pair<std::string, std::string>> out;
  guint n = 0;
  GParamSpec** specs = g_object_class_list_properties(G_OBJECT_GET_CLASS(e), &n);
  for (guint i = 0; i < n; i++) {
    GParamSpec* p = specs[i];
    const std::string name = p->name;
    if (!(p->flags & G_PARAM_READABLE) || !(p->flags & G_PARAM_WRITABLE)) continue;
    if (name == "name" || name == "parent" || name == "last-sample" || name == "stats") continue;
    const GType vt = G_PARAM_SPEC_VALUE_TYPE(p);
    if (G_TYPE_IS_OBJECT(vt) || G_TYPE_IS_INTERFACE(vt) || vt == G_TYPE_POINTER || vt == GST_TYPE_SAMPLE) continue;
    GValue v = G_VALUE_INIT;
    g_value_init(&v, vt);
    g_object_get_property(G_OBJECT(e), p->name, &v);
    const bool is_default = g_param_value_defaults(p, &v);
    std::string text;
    if ((all || !is_default) && serialize_value(&v, &text)) {
      if (!clip.empty()) text = replace_all(text, clip, "{clip}");
      out.emplace_back(name, text);
    }
    g_value_unset(&v);
  }
  g_free(specs);
  std::sort(out.begin(), out.end());
  return out;
}

bool sink_pad_has_cuda_memory(GstElement* e) {
  GstPad* pad = gst_element_get_static_pad(e, "sink");
  if (!pad) return false;
  GstCaps* caps = gst_pad_get_current_caps(pad);
  bool cuda = false;
  if (caps && gst_caps_get_size(caps) > 0) {
    GstCapsFeatures* f = gst_caps_get_features(caps, 0);
    cuda = f && gst_caps_features_contains(f, "memory:CUDAMemory");
  }
  if (caps) gst_caps_unref(caps);
  gst_object_unref(pad);
  return cuda;
}

std::string iso_date_now() {
  GDateTime* now = g_date_time_new_now_utc();
  gchar* s = g_date_time_format(now, "%Y-%m-%dT%H:%M:%SZ");
  std::string out = s;
  g_free(s);
  g_date_time_unref(now);
  return out;
}

bool valid_sink_name(const std::string& n) {
  if (n.empty() || n == "frame") return false;
  for (char c : n)
    if (!g_ascii_isalnum(c) && c != '_' && c != '-' && c != '.') return false;
  return true;
}

// The element whose pad feeds `sink_pad` (through bins' ghost pads), or null when unlinked.
GstElement* upstream_element(GstPad* sink_pad) {
  GstPad* pad = gst_pad_get_peer(sink_pad);
  for (int hops = 0; pad && hops < 64; hops++) {
    GstPad* next = nullptr;
    if (GST_IS_GHOST_PAD(pad)) {
      next = gst_ghost_pad_get_target(GST_GHOST_PAD(pad));  // a bin's output: the pad inside
    } else if (GST_IS_PROXY_PAD(pad)) {
      // the inner side of a bin's input ghost pad: continue outside the bin
      GstProxyPad* ghost = gst_proxy_pad_get_internal(GST_PROXY_PAD(pad));
      if (ghost) {
        next = gst_pad_get_peer(GST_PAD(ghost));
        gst_object_unref(ghost);
      }
    } else {
      GstElement* e = gst_pad_get_parent_element(pad);
      gst_object_unref(pad);
      return e;
    }
    gst_object_unref(pad);
    pad = next;
  }
  if (pad) gst_object_unref(pad);
  return nullptr;
}

// Whether an element made by `factory` feeds `e` (through any of its inputs, any distance).
bool upstream_has_factory(GstElement* e, const char* factory) {
  std::vector<GstElement*> todo{(GstElement*)gst_object_ref(e)};
  std::vector<GstElement*> seen;
  bool found = false;
  while (!todo.empty() && !found) {
    GstElement* x = todo.back();
    todo.pop_back();
    if (std::find(seen.begin(), seen.end(), x) != seen.end()) {
      gst_object_unref(x);
      continue;
    }
    seen.push_back(x);
    GstIterator* it = gst_element_iterate_sink_pads(x);
    GValue item = G_VALUE_INIT;
    bool done = false;
    while (!done) {
      switch (gst_iterator_next(it, &item)) {
        case GST_ITERATOR_OK: {
          GstElement* up = upstream_element(GST_PAD(g_value_get_object(&item)));
          if (up) {
            GstElementFactory* f = gst_element_get_factory(up);
            if (f && g_strcmp0(GST_OBJECT_NAME(f), factory) == 0) found = true;
            todo.push_back(up);
          }
          g_value_reset(&item);
          break;
        }
        case GST_ITERATOR_RESYNC: gst_iterator_resync(it); break;
        default: done = true; break;
      }
    }
    g_value_unset(&item);
    gst_iterator_free(it);
  }
  for (GstElement* x : todo) gst_object_unref(x);
  for (GstElement* x : seen) gst_object_unref(x);
  return found;
}

std::atomic<int> g_interrupt_signal{0};

gboolean on_unix_signal(gpointer data) {
  g_interrupt_signal.store(GPOINTER_TO_INT(data));
  return G_SOURCE_CONTINUE;
}

}  // namespace

std::string signal_name(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: return "signal " + std::to_string(sig);
  }
}

InterruptGuard::InterruptGuard() {
  ids_[0] = g_unix_signal_add(SIGINT, on_unix_signal, GINT_TO_POINTER(SIGINT));
  ids_[1] = g_unix_signal_add(SIGTERM, on_unix_signal, GINT_TO_POINTER(SIGTERM));
}

InterruptGuard::~InterruptGuard() {
  interrupted();  // dispatch what arrived meanwhile
  for (unsigned id : ids_)
    if (id) g_source_remove(id);
}

int interrupted() {
  while (g_main_context_iteration(nullptr, FALSE)) {
  }
  return g_interrupt_signal.load();
}

/* ---- PipelineRun ------------------------------------------------------------------------ */

PipelineRun::PipelineRun() = default;

PipelineRun::~PipelineRun() {
  for (auto& eo : element_objects_) gst_object_unref(eo.first);
  if (pipeline_) {
    gst_element_set_state(pipeline_, GST_STATE_NULL);
    gst_object_unref(pipeline_);
  }
}

std::vector<std::string> PipelineRun::sink_names() const {
  std::vector<std::string> out;
  for (const auto& s : sinks_) out.push_back(s->name);
  return out;
}

bool PipelineRun::prepare(const RunConfig& config, std::string* error) {
  config_ = config;
  if (config.description.find("{clip}") == std::string::npos) {
    *error = "the pipeline description has no {clip} placeholder for the clip (e.g. filesrc location={clip})";
    return false;
  }
  // a word gst-launch takes as it is; the path goes in as a property value (apply_clip)
  char token[64];
  g_snprintf(token, sizeof token, "cudaprep-regress-clip-%08x%08x", g_random_int(), (unsigned)getpid());
  const std::string desc = substitute_clip(config.description, token);
  GError* err = nullptr;
  GstParseContext* ctx = gst_parse_context_new();
  GstElement* e = gst_parse_launch_full(desc.c_str(), ctx, GST_PARSE_FLAG_FATAL_ERRORS, &err);
  if (err || !e) {
    std::string msg = replace_all(err ? err->message : "unknown error", token, "{clip}");
    gchar** missing = gst_parse_context_get_missing_elements(ctx);
    if (missing && missing[0]) {
      msg += " (missing element:";
      for (gchar** m = missing; *m; m++) msg += std::string(" ") + *m;
      msg += ")";
    }
    g_strfreev(missing);
    *error = "the pipeline does not parse: " + msg + "\n  pipeline: " + config.description;
    g_clear_error(&err);
    if (e) gst_object_unref(e);
    gst_parse_context_free(ctx);
    return false;
  }
  gst_parse_context_free(ctx);
  if (!GST_IS_PIPELINE(e)) {
    *error = "the pipeline description is a single element: it needs a source and appsink elements";
    gst_object_unref(e);
    return false;
  }
  pipeline_ = e;
  {
    std::string clip_error;
    const int set = apply_clip(pipeline_, token, config.clip, &clip_error);
    if (!clip_error.empty() || set == 0) {
      *error = clip_error.empty() ? "{clip} is in no element property after parsing: write it as a property value "
                                    "(filesrc location={clip})"
                                  : clip_error;
      *error += "\n  pipeline: " + config.description;
      return false;
    }
  }

  // every element, with GStreamer's automatic names renumbered by creation order
  std::vector<GstElement*> all = elements_of(GST_BIN(pipeline_));

  std::map<std::string, std::vector<std::pair<long, GstElement*>>> autos;
  std::map<GstElement*, std::string> canonical;
  for (GstElement* x : all) {
    gchar* n = gst_element_get_name(x);
    const std::string name = n;
    g_free(n);
    const std::string prefix = default_name_prefix(x);
    long number;
    if (auto_name_number(name, prefix, &number))
      autos[prefix].emplace_back(number, x);
    else
      canonical[x] = name;
  }
  for (auto& [prefix, list] : autos) {
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    const bool digit_end = !prefix.empty() && g_ascii_isdigit(prefix.back());
    for (size_t i = 0; i < list.size(); i++)
      canonical[list[i].second] = prefix + (digit_end ? "-" : "") + std::to_string(i);
  }

  std::string abs_clip;
  {
    gchar* a = g_canonicalize_filename(config.clip.c_str(), nullptr);
    abs_clip = a;
    g_free(a);
  }
  for (GstElement* x : all) {
    ElementInfo info;
    info.name = canonical[x];
    GstElementFactory* f = gst_element_get_factory(x);
    info.factory = f ? GST_OBJECT_NAME(f) : G_OBJECT_TYPE_NAME(x);
    if (f) {
      GstPlugin* p = gst_plugin_feature_get_plugin(GST_PLUGIN_FEATURE(f));
      if (p) {
        info.plugin = gst_plugin_get_name(p);
        info.plugin_version = gst_plugin_get_version(p);
        gst_object_unref(p);
      }
    }
    std::vector<std::pair<std::string, std::string>> props = element_properties(x, config.clip, is_cudaprep(x));
    for (auto& kv : props)
      if (abs_clip != config.clip) kv.second = replace_all(kv.second, abs_clip, "{clip}");
    info.properties = props;
    elements_.push_back(info);
    element_objects_.emplace_back(x, info.name);
  }
  std::sort(elements_.begin(), elements_.end(), [](const ElementInfo& a, const ElementInfo& b) { return a.name < b.name; });

  // the appsinks, in name order
  std::vector<std::pair<std::string, GstElement*>> appsinks;
  for (auto& eo : element_objects_) {
    GstElementFactory* f = gst_element_get_factory(eo.first);
    if (f && g_strcmp0(GST_OBJECT_NAME(f), "appsink") == 0) {
      gchar* n = gst_element_get_name(eo.first);
      appsinks.emplace_back(n, eo.first);
      g_free(n);
    }
  }
  std::sort(appsinks.begin(), appsinks.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  if (appsinks.empty()) {
    *error = "the pipeline has no appsink: end each branch in an appsink named after what it carries "
             "(... ! cudatensorize ! appsink name=tensor, ... ! cudatemplatematch ! appsink name=matches)";
    return false;
  }
  for (auto& [name, sink] : appsinks) {
    if (!valid_sink_name(name)) {
      *error = "appsink name '" + name + "' cannot name files: use letters, digits, '_', '-', '.' (and not 'frame')";
      return false;
    }
    if (sink_kind(name) == "matches" && !upstream_has_factory(sink, "cudatemplatematch")) {
      *error = "appsink '" + name + "' is a matches sink (its name starts with match or roi) but no cudatemplatematch "
               "is upstream of it: it would record no match in any frame. Put it right after cudatemplatematch "
               "(... ! cudatemplatematch ! appsink name=" + name + "), or name a tensor sink otherwise";
      return false;
    }
    auto s = std::make_unique<SinkState>();
    s->name = name;
    s->kind = sink_kind(name);
    s->appsink = sink;
    sinks_.push_back(std::move(s));
  }
  return true;
}

bool PipelineRun::run(SampleHandler* handler, std::string* error) {
  for (auto& s : sinks_) {
    s->handler = handler;
    GstAppSinkCallbacks cb = {};
    cb.new_sample = on_new_sample;
    gst_app_sink_set_callbacks(GST_APP_SINK(s->appsink), &cb, s.get(), nullptr);
    // as fast as the pipeline goes; the data does not depend on the clock
    g_object_set(s->appsink, "sync", FALSE, "enable-last-sample", FALSE, NULL);
  }

  GstBus* bus = gst_element_get_bus(pipeline_);
  std::string failure;
  bool decode_error = false;
  auto take_error = [&](GstMessage* msg) {
    GError* err = nullptr;
    gchar* debug = nullptr;
    gst_message_parse_error(msg, &err, &debug);
    gchar* src = gst_object_get_name(GST_MESSAGE_SRC(msg));
    // errors of sources, demuxers, parsers and decoders, or stream-format errors: the clip
    if (GST_IS_ELEMENT(GST_MESSAGE_SRC(msg))) {
      GstElementFactory* f = gst_element_get_factory(GST_ELEMENT(GST_MESSAGE_SRC(msg)));
      const gchar* klass = f ? gst_element_factory_get_metadata(f, GST_ELEMENT_METADATA_KLASS) : nullptr;
      if (klass && (strstr(klass, "Demux") || strstr(klass, "Decoder") || strstr(klass, "Parser") ||
                    strstr(klass, "Source")))
        decode_error = true;
    }
    if (err && (err->domain == GST_STREAM_ERROR &&
                (err->code == GST_STREAM_ERROR_DEMUX || err->code == GST_STREAM_ERROR_DECODE ||
                 err->code == GST_STREAM_ERROR_TYPE_NOT_FOUND || err->code == GST_STREAM_ERROR_WRONG_TYPE ||
                 err->code == GST_STREAM_ERROR_CODEC_NOT_FOUND)))
      decode_error = true;
    failure = std::string("error from ") + (src ? src : "?") + ": " + (err ? err->message : "?");
    if (debug) failure += std::string("\n  (debug: ") + debug + ")";
    g_free(src);
    g_free(debug);
    g_clear_error(&err);
  };

  const bool tty = isatty(2);
  const bool show = config_.progress || tty;
  const auto start = std::chrono::steady_clock::now();
  auto last = start - std::chrono::hours(1);
  bool printed = false;
  uint64_t printed_n = UINT64_MAX;
  auto frames_now = [&]() {
    uint64_t n = 0;
    for (auto& s : sinks_) n = std::max(n, s->count.load());
    return n;
  };
  auto progress = [&](bool final) {
    if (!show) return;
    const auto now = std::chrono::steady_clock::now();
    const double interval = tty ? 0.25 : 2.0;
    if (!final && std::chrono::duration<double>(now - last).count() < interval) return;
    if (final && !printed) return;
    const uint64_t n = frames_now();
    if (final && !tty && n == printed_n) return;
    if (!final && !tty && n == 0) return;
    last = now;
    printed_n = n;
    ProgressSnapshot snap;
    snap.label = config_.label;
    snap.frames = n;
    snap.expected = config_.expected_frames;
    snap.elapsed_s = std::chrono::duration<double>(now - start).count();
    snap.note = handler->progress_note();
    gint64 pos = 0, dur = 0;
    if (!snap.expected && gst_element_query_position(pipeline_, GST_FORMAT_TIME, &pos) &&
        gst_element_query_duration(pipeline_, GST_FORMAT_TIME, &dur) && dur > 0)
      snap.stream_fraction = (double)pos / (double)dur;
    const std::string line = progress_line(snap);
    if (tty)
      fprintf(stderr, "\r%s\033[K%s", line.c_str(), final ? "\n" : "");
    else
      fprintf(stderr, "%s\n", line.c_str());
    fflush(stderr);
    printed = true;
  };

  auto sink_abort = [&]() -> SinkState* {
    for (auto& s : sinks_) {
      std::lock_guard<std::mutex> lock(s->mu);
      if (s->fatal) return s.get();
    }
    return nullptr;
  };
  int sig = interrupted();
  GstStateChangeReturn r = sig ? GST_STATE_CHANGE_SUCCESS : gst_element_set_state(pipeline_, GST_STATE_PLAYING);
  bool eos = false;
  if (r == GST_STATE_CHANGE_FAILURE) {
    GstMessage* msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    if (msg) {
      take_error(msg);
      gst_message_unref(msg);
    } else {
      failure = "the pipeline could not start";
    }
  }
  while (failure.empty() && !eos && !sig && !sink_abort()) {
    GstMessage* msg = gst_bus_timed_pop_filtered(bus, 100 * GST_MSECOND,
                                                 (GstMessageType)(GST_MESSAGE_ERROR | GST_MESSAGE_EOS));
    if (msg) {
      if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR)
        take_error(msg);
      else
        eos = true;
      gst_message_unref(msg);
    }
    progress(false);
    sig = interrupted();
  }
  // the frames still gathered: their last tensor has come
  if (eos)
    for (auto& s : sinks_) flush_pending(s.get());
  progress(true);

  // which device the cudaprep elements used: backend, and CUDA memory at their input
  bool any_cuda = false;
  int cuda_index = 0;
  for (auto& eo : element_objects_) {
    if (!is_cudaprep(eo.first)) continue;
    std::string backend = "auto";
    for (auto& info : elements_)
      if (info.name == eo.second)
        for (auto& kv : info.properties)
          if (kv.first == "backend") backend = kv.second;
    bool cuda;
    if (backend == "cpu")
      cuda = false;
    else if (backend == "cuda")
      cuda = true;
    else
      cuda = sink_pad_has_cuda_memory(eo.first) || cuda_device_count() > 0;
    for (auto& info : elements_)
      if (info.name == eo.second) {
        info.device = cuda ? "cuda" : "cpu";
        for (auto& kv : info.properties)
          if (kv.first == "device-id" && cuda) cuda_index = std::max(0, atoi(kv.second.c_str()));
      }
    any_cuda = any_cuda || cuda;
  }
  gst_element_set_state(pipeline_, GST_STATE_NULL);
  gst_object_unref(bus);

  device_ = DeviceInfo();
  device_.arch = host_arch();
  if (any_cuda) {
    device_.kind = "cuda";
    if (!cuda_device_describe(cuda_index, &device_.name, &device_.driver, &device_.runtime))
      device_.name = "CUDA device " + std::to_string(cuda_index) + " (name unknown)";
  } else {
    device_.kind = "cpu";
    device_.name = host_cpu_model();
  }

  if (sig) {
    *error = "interrupted by " + signal_name(sig) + " after " + std::to_string(frames_now()) + " frames";
    return false;
  }
  if (SinkState* s = sink_abort()) {
    std::lock_guard<std::mutex> lock(s->mu);
    *error = s->error;  // reported here, not again by sink_errors()
    s->error.clear();
    return false;
  }
  if (!failure.empty()) {
    *error = "the pipeline failed on the clip " + config_.clip + " after " + std::to_string(frames_now()) +
             " frames" + (decode_error ? " (the clip does not decode?)" : "") + ": " + failure;
    return false;
  }
  if (frames_now() == 0) {
    *error = "the clip " + config_.clip + " gave no frames (does it decode? is it empty?)";
    return false;
  }
  return true;
}

std::vector<std::string> PipelineRun::sink_errors() const {
  std::vector<std::string> out;
  for (auto& s : sinks_) {
    std::lock_guard<std::mutex> lock(s->mu);
    if (!s->error.empty()) out.push_back(s->error);
  }
  return out;
}

Manifest PipelineRun::manifest(const std::string& store) const {
  Manifest m;
  m.tool_version = tool_version();
  m.date = iso_date_now();
  m.pipeline = config_.description;
  gchar* base = g_filename_display_basename(config_.clip.c_str());  // UTF-8 whatever the file name
  m.clip = base;
  g_free(base);
  m.store = store;
  gchar* v = gst_version_string();
  m.gstreamer_version = v;
  g_free(v);
  m.device = device_;
  for (auto& s : sinks_) {
    std::lock_guard<std::mutex> lock(s->mu);
    SinkInfo si;
    si.name = s->name;
    si.kind = s->kind;
    si.caps = s->caps;
    si.memory = s->memory;
    si.dtype = s->kind == "tensor" ? s->dtype : "";
    si.batch = s->kind == "tensor" ? s->batch : 0;
    si.frames = s->count.load();
    m.frames = std::max(m.frames, si.frames);
    m.sinks.push_back(si);
  }
  m.elements = elements_;
  return m;
}

}  // namespace regress
