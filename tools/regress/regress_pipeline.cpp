// cudaprep-regress: the pipeline of a run, from its description: parsing it with the clip put
// in, the elements' description for the manifest, the appsinks; the manifest of the run.
// Playing it is regress_run.cpp, each sink's frames regress_capture.cpp.
#include "regress_pipeline.h"
#include "regress_device_id.h"

#include <unistd.h>

#include <algorithm>

#include "config.h"
#include "regress_capture.h"
#include "regress_elements.h"

namespace regress {

const char* tool_version() { return VERSION; }

std::string sink_kind(const std::string& name) {
  if (name.rfind("match", 0) == 0 || name.rfind("roi", 0) == 0) return "matches";
  return name.rfind("detect", 0) == 0 ? "detections" : "tensor";
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

namespace {

std::string iso_date_now() {
  GDateTime* now = g_date_time_new_now_utc();
  gchar* s = g_date_time_format(now, "%Y-%m-%dT%H:%M:%SZ");
  std::string out = s;
  g_free(s);
  g_date_time_unref(now);
  return out;
}

}  // namespace

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
  if (!parse_description(token, error) || !put_clip(token, error)) return false;
  if (config.device_id >= 0) apply_device_id(pipeline_, config.device_id);
  describe_elements();
  return find_sinks(error);
}

// Parses the description with {clip} replaced by `token` into pipeline_.
bool PipelineRun::parse_description(const std::string& token, std::string* error) {
  std::string desc;
  if (!decoders_for_device(substitute_clip(config_.description, token), config_.device_id, &desc, error)) return false;
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
    *error = "the pipeline does not parse: " + msg + "\n  pipeline: " + config_.description;
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
  return true;
}

// Sets the clip's path where the token is.
bool PipelineRun::put_clip(const std::string& token, std::string* error) {
  std::string clip_error;
  const int set = apply_clip(pipeline_, token, config_.clip, &clip_error);
  if (!clip_error.empty() || set == 0) {
    *error = clip_error.empty() ? "{clip} is in no element property after parsing: write it as a property value "
                                  "(filesrc location={clip})"
                                : clip_error;
    *error += "\n  pipeline: " + config_.description;
    return false;
  }
  return true;
}

// Every element, with GStreamer's automatic names renumbered by creation order, described for
// the manifest (elements_, in name order) and kept with its name (element_objects_).
void PipelineRun::describe_elements() {
  std::vector<GstElement*> all = elements_of(GST_BIN(pipeline_));
  std::map<GstElement*, std::string> canonical = canonical_names(all);
  std::string abs_clip;
  {
    gchar* a = g_canonicalize_filename(config_.clip.c_str(), nullptr);
    abs_clip = a;
    g_free(a);
  }
  for (GstElement* x : all) {
    elements_.push_back(describe_element(x, canonical[x], config_.clip, abs_clip));
    element_objects_.emplace_back(x, canonical[x]);
  }
  std::sort(elements_.begin(), elements_.end(),
            [](const ElementInfo& a, const ElementInfo& b) { return a.name < b.name; });
}

// The appsinks, in name order, each with its SinkState; refuses a name that cannot name files
// and a matches sink without a cudatemplatematch upstream.
bool PipelineRun::find_sinks(std::string* error) {
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
    *error =
        "the pipeline has no appsink: end each branch in an appsink named after what it carries "
        "(... ! cudatensorize ! appsink name=tensor, ... ! cudatemplatematch ! appsink name=matches)";
    return false;
  }
  for (auto& [name, sink] : appsinks) {
    if (!valid_sink_name(name)) {
      *error = "appsink name '" + name + "' cannot name files: use letters, digits, '_', '-', '.' (and not 'frame')";
      return false;
    }
    if (sink_kind(name) == "matches" && !upstream_has_factory(sink, "cudatemplatematch")) {
      *error = "appsink '" + name +
               "' is a matches sink (its name starts with match or roi) but no cudatemplatematch "
               "is upstream of it: it would record no match in any frame. Put it right after cudatemplatematch "
               "(... ! cudatemplatematch ! appsink name=" +
               name + "), or name a tensor sink otherwise";
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
