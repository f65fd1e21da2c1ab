#include "regress_store.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <gst/gst.h>

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include <sys/stat.h>

#include "regress_slots.h"
#include "regress_verify.h"

namespace regress {

const SinkInfo* Manifest::sink(const std::string& name) const {
  for (const auto& s : sinks)
    if (s.name == name) return &s;
  return nullptr;
}

const ElementInfo* Manifest::element(const std::string& name) const {
  for (const auto& e : elements)
    if (e.name == name) return &e;
  return nullptr;
}

std::string tensor_file_name(const std::string& sink, uint64_t frame, DType t) {
  char buf[32];
  g_snprintf(buf, sizeof buf, "%05" G_GUINT64_FORMAT, frame);
  return "tensors/" + sink + "-" + buf + "." + dtype_ext(t);
}

/* ---- caps ------------------------------------------------------------------------------- */

namespace {

std::vector<std::string> split_trim(const char* text, const char* sep) {
  std::vector<std::string> out;
  gchar** parts = g_strsplit(text, sep, -1);
  for (gchar** p = parts; *p; p++) out.push_back(g_strstrip(*p));
  g_strfreev(parts);
  return out;
}

}  // namespace

std::string caps_dtype(const std::string& text) {
  GstCaps* caps = text.empty() ? nullptr : gst_caps_from_string(text.c_str());
  std::string out = "uint8";
  if (caps && gst_caps_get_size(caps) > 0) {
    const GstStructure* s = gst_caps_get_structure(caps, 0);
    const gchar* types = gst_structure_get_string(s, "types");
    if (!types) types = gst_structure_get_string(s, "type");
    if (types) {
      std::vector<std::string> parts = split_trim(types, ",");
      bool same = !parts.empty();
      for (const auto& p : parts)
        if (p != parts[0]) same = false;
      DType t;
      if (same && dtype_from_name(parts[0], &t)) out = parts[0];
    }
  }
  if (caps) gst_caps_unref(caps);
  return out;
}

bool static_tensor_caps(const std::string& text, TensorCapsText* out) {
  GstCaps* caps = text.empty() ? nullptr : gst_caps_from_string(text.c_str());
  if (!caps) return false;
  bool ok = false;
  if (gst_caps_get_size(caps) > 0) {
    const GstStructure* s = gst_caps_get_structure(caps, 0);
    const bool plural = gst_structure_has_name(s, "other/tensors");
    const gchar* format = gst_structure_get_string(s, "format");
    const gchar* types = gst_structure_get_string(s, plural ? "types" : "type");
    const gchar* dims = gst_structure_get_string(s, plural ? "dimensions" : "dimension");
    ok = (plural || gst_structure_has_name(s, "other/tensor")) && (!format || g_str_equal(format, "static")) && types &&
         dims;
    if (ok) {
      out->types = split_trim(types, ",");
      out->dimensions = split_trim(dims, ",");
      out->num_tensors = (int)out->types.size();
      if (plural) gst_structure_get_int(s, "num_tensors", &out->num_tensors);
    }
  }
  gst_caps_unref(caps);
  return ok;
}

uint64_t caps_frame_bytes(const std::string& text) {
  TensorCapsText c;
  if (!static_tensor_caps(text, &c)) return 0;
  const std::vector<std::string>& tl = c.types;
  const std::vector<std::string>& dl = c.dimensions;
  bool ok = !tl.empty() && tl.size() == dl.size() && c.num_tensors == (int)tl.size();
  uint64_t total = 0;
  for (size_t i = 0; ok && i < tl.size(); i++) {
    DType t;
    if (!dtype_from_name(tl[i], &t)) {
      ok = false;
      break;
    }
    // "W:H:C:N"; trailing 0 (unused ranks) are left out, a 0 inside is not fixed
    std::vector<std::string> comps = split_trim(dl[i].c_str(), ":");
    while (comps.size() > 1 && comps.back() == "0") comps.pop_back();
    uint64_t count = 1;
    for (const auto& comp : comps) {
      if (comp.empty() || comp.size() > 9 || comp.find_first_not_of("0123456789") != std::string::npos) {
        ok = false;
        break;
      }
      const uint64_t v = std::strtoull(comp.c_str(), nullptr, 10);
      if (v == 0 || count > (UINT64_MAX >> 32) / v) {
        ok = false;
        break;
      }
      count *= v;
    }
    if (ok) total += count * dtype_size(t);
  }
  return ok ? total : 0;
}

/* ---- paths ------------------------------------------------------------------------------ */

bool path_inside(const std::string& dir, const std::string& rel, std::string* why) {
  if (rel.empty()) {
    *why = "is empty";
    return false;
  }
  if (g_path_is_absolute(rel.c_str())) {
    *why = "is an absolute path";
    return false;
  }
  gchar** comps = g_strsplit(rel.c_str(), "/", -1);
  bool dotdot = false;
  for (gchar** c = comps; *c; c++)
    if (g_str_equal(*c, "..")) dotdot = true;
  g_strfreev(comps);
  if (dotdot) {
    *why = "has a '..' component";
    return false;
  }
  // where it exists: resolved (symlinks followed), it must still be inside the directory
  char* base = realpath(dir.c_str(), nullptr);
  char* target = realpath((dir + "/" + rel).c_str(), nullptr);
  bool inside = true;
  if (base && target) {
    const std::string b = base, t = target;
    inside = t.size() > b.size() && t.compare(0, b.size(), b) == 0 && (b == "/" || t[b.size()] == '/');
    if (!inside) *why = "resolves (through a symlink) to " + t + ", outside " + b;
  }
  free(base);
  free(target);
  return inside;
}

/* ---- manifest --------------------------------------------------------------------------- */

Json manifest_to_json(const Manifest& m) {
  Json j = Json::object();
  j.set("layout", Json::integer(m.layout));
  j.set("tool", Json::string("cudaprep-regress"));
  j.set("tool_version", Json::string(m.tool_version));
  j.set("date", Json::string(m.date));
  j.set("clip", Json::string(m.clip));
  j.set("pipeline", Json::string(m.pipeline));
  j.set("store", Json::string(m.store));
  j.set("frames", Json::integer((int64_t)m.frames));
  Json dev = Json::object();
  dev.set("kind", Json::string(m.device.kind));
  dev.set("name", Json::string(m.device.name));
  dev.set("driver", Json::string(m.device.driver));
  dev.set("runtime", Json::string(m.device.runtime));
  dev.set("arch", Json::string(m.device.arch));
  j.set("device", dev);
  j.set("gstreamer_version", Json::string(m.gstreamer_version));
  Json sinks = Json::array();
  for (const auto& s : m.sinks) {
    Json o = Json::object();
    o.set("name", Json::string(s.name));
    o.set("kind", Json::string(s.kind));
    o.set("caps", Json::string(s.caps));
    o.set("memory", Json::string(s.memory));
    if (s.kind == "tensor") o.set("dtype", Json::string(s.dtype));
    if (s.kind == "tensor" && s.batch) o.set("batch", Json::integer((int64_t)s.batch));
    o.set("frames", Json::integer((int64_t)s.frames));
    sinks.push(o);
  }
  j.set("sinks", sinks);
  Json elements = Json::array();
  for (const auto& e : m.elements) {
    Json o = Json::object();
    o.set("name", Json::string(e.name));
    o.set("factory", Json::string(e.factory));
    o.set("plugin", Json::string(e.plugin));
    o.set("plugin_version", Json::string(e.plugin_version));
    if (!e.device.empty()) o.set("device", Json::string(e.device));
    Json props = Json::object();
    for (const auto& p : e.properties) props.set(p.first, Json::string(p.second));
    o.set("properties", props);
    elements.push(o);
  }
  j.set("elements", elements);
  return j;
}

namespace {

bool need_string(const Json& j, const char* key, std::string* out, std::string* error) {
  if (!j[key].get_string(out)) {
    *error = std::string("field \"") + key + "\" missing or not a string";
    return false;
  }
  return true;
}

bool need_uint(const Json& j, const char* key, uint64_t* out, std::string* error) {
  int64_t v;
  if (!j[key].get_int(&v) || v < 0) {
    *error = std::string("field \"") + key + "\" missing or not a count";
    return false;
  }
  *out = (uint64_t)v;
  return true;
}

bool opt_string(const Json& j, const char* key, std::string* out) {
  if (j[key].is_null()) return true;
  return j[key].get_string(out);
}

bool need_double(const Json& j, const char* key, double* out, std::string* error) {
  if (!j[key].get_double(out)) {
    *error = std::string("field \"") + key + "\" missing or not a number";
    return false;
  }
  return true;
}

bool opt_time(const Json& j, const char* key, int64_t* out, std::string* error) {
  if (j[key].is_null()) {
    *out = -1;
    return true;
  }
  if (!j[key].get_int(out) || *out < 0) {
    *error = std::string("field \"") + key + "\" is not a time in ns";
    return false;
  }
  return true;
}

bool doubles(const Json& j, size_t n, double* out) {
  if (!j.is_array() || j.size() != n) return false;
  for (size_t i = 0; i < n; i++)
    if (!j.at(i).get_double(&out[i])) return false;
  return true;
}

Json doubles_json(const double* v, size_t n) {
  Json a = Json::array();
  for (size_t i = 0; i < n; i++) a.push(Json::number(v[i]));
  return a;
}

}  // namespace

bool manifest_from_json(const Json& j, Manifest* m, std::string* error) {
  if (!j.is_object()) {
    *error = "not a JSON object";
    return false;
  }
  int64_t layout;
  if (!j["layout"].get_int(&layout)) {
    *error = "field \"layout\" missing";
    return false;
  }
  if (layout != kLayoutVersion) {
    *error = "layout version " + std::to_string(layout) + " is not supported (this tool reads version " +
             std::to_string(kLayoutVersion) + ")";
    return false;
  }
  m->layout = (int)layout;
  if (!need_string(j, "tool_version", &m->tool_version, error) || !need_string(j, "pipeline", &m->pipeline, error) ||
      !need_string(j, "store", &m->store, error) || !need_uint(j, "frames", &m->frames, error))
    return false;
  opt_string(j, "date", &m->date);
  opt_string(j, "clip", &m->clip);
  opt_string(j, "gstreamer_version", &m->gstreamer_version);
  if (m->store != "full" && m->store != "digest") {
    *error = "field \"store\" is \"" + m->store + "\", expected \"full\" or \"digest\"";
    return false;
  }
  const Json& dev = j["device"];
  opt_string(dev, "kind", &m->device.kind);
  opt_string(dev, "name", &m->device.name);
  opt_string(dev, "driver", &m->device.driver);
  opt_string(dev, "runtime", &m->device.runtime);
  opt_string(dev, "arch", &m->device.arch);
  const Json& sinks = j["sinks"];
  if (!sinks.is_array() || sinks.size() == 0) {
    *error = "field \"sinks\" missing or empty";
    return false;
  }
  m->sinks.clear();
  for (size_t i = 0; i < sinks.size(); i++) {
    SinkInfo s;
    const Json& o = sinks.at(i);
    if (!need_string(o, "name", &s.name, error) || !need_string(o, "kind", &s.kind, error) ||
        !need_string(o, "caps", &s.caps, error) || !need_uint(o, "frames", &s.frames, error)) {
      *error = "sinks[" + std::to_string(i) + "]: " + *error;
      return false;
    }
    opt_string(o, "memory", &s.memory);
    opt_string(o, "dtype", &s.dtype);
    if (o.has("batch") && !need_uint(o, "batch", &s.batch, error)) {
      *error = "sinks[" + std::to_string(i) + "]: " + *error;
      return false;
    }
    DType t;
    if (s.kind == "tensor" && !dtype_from_name(s.dtype, &t)) {
      *error = "sinks[" + std::to_string(i) + "]: unknown dtype \"" + s.dtype + "\"";
      return false;
    }
    if (s.kind != "tensor" && s.kind != "matches" && s.kind != "detections") {
      *error = "sinks[" + std::to_string(i) + "]: kind \"" + s.kind + "\" is not tensor, matches or detections";
      return false;
    }
    m->sinks.push_back(s);
  }
  m->elements.clear();
  const Json& elements = j["elements"];
  for (size_t i = 0; elements.is_array() && i < elements.size(); i++) {
    ElementInfo e;
    const Json& o = elements.at(i);
    if (!need_string(o, "name", &e.name, error) || !need_string(o, "factory", &e.factory, error)) {
      *error = "elements[" + std::to_string(i) + "]: " + *error;
      return false;
    }
    opt_string(o, "plugin", &e.plugin);
    opt_string(o, "plugin_version", &e.plugin_version);
    opt_string(o, "device", &e.device);
    for (const auto& p : o["properties"].members()) {
      std::string v;
      if (!p.second.get_string(&v)) {
        *error = "elements[" + std::to_string(i) + "].properties." + p.first + " is not a string";
        return false;
      }
      e.properties.emplace_back(p.first, v);
    }
    m->elements.push_back(e);
  }
  return true;
}

/* ---- frames ----------------------------------------------------------------------------- */

Json transform_to_json(const Transform& tr) {
  Json x = Json::object();
  Json src = Json::array(), ten = Json::array();
  src.push(Json::integer(tr.source_w)).push(Json::integer(tr.source_h));
  ten.push(Json::integer(tr.tensor_w)).push(Json::integer(tr.tensor_h));
  x.set("source", src);
  x.set("tensor", ten);
  x.set("src_to_tensor", doubles_json(tr.src_to_tensor, 6));
  x.set("tensor_to_src", doubles_json(tr.tensor_to_src, 6));
  x.set("active_rect", doubles_json(tr.active_rect, 4));
  return x;
}

bool transform_from_json(const Json& x, Transform* t) {
  double src[2], ten[2];
  if (!doubles(x["source"], 2, src) || !doubles(x["tensor"], 2, ten) ||
      !doubles(x["src_to_tensor"], 6, t->src_to_tensor) || !doubles(x["tensor_to_src"], 6, t->tensor_to_src) ||
      !doubles(x["active_rect"], 4, t->active_rect))
    return false;
  t->present = true;
  t->source_w = (int)src[0];
  t->source_h = (int)src[1];
  t->tensor_w = (int)ten[0];
  t->tensor_h = (int)ten[1];
  return true;
}

// A match's template and bank member. Recordings made before matches carried them read as the
// single template: label "template-match", scale 1, angle 0, found by a full search.
static bool match_member_from_json(const Json& it, MatchRec* r, std::string* error) {
  if (it.has("template") && (!it["template"].get_string(&r->label) || r->label.empty())) {
    *error = "field \"template\" is not a template label (a non-empty string)";
    return false;
  }
  if (it.has("scale") && (!it["scale"].get_double(&r->scale) || !std::isfinite(r->scale) || !(r->scale > 0))) {
    *error = "field \"scale\" is not a scale (a finite number > 0)";
    return false;
  }
  if (it.has("angle") && (!it["angle"].get_double(&r->angle) || !std::isfinite(r->angle))) {
    *error = "field \"angle\" is not an angle (a finite number of degrees)";
    return false;
  }
  if (it.has("full_search") && !it["full_search"].get_bool(&r->full_search)) {
    *error = "field \"full_search\" is not true or false";
    return false;
  }
  return true;
}

Json frame_to_json(const FrameEntry& f) {
  Json j = Json::object();
  j.set("frame", Json::integer((int64_t)f.index));
  // sinks in name order, whatever their kind
  std::map<std::string, Json> sinks;
  for (const auto& [name, t] : f.tensors) {
    Json o = Json::object();
    o.set("pts", t.pts < 0 ? Json::null() : Json::integer(t.pts));
    o.set("duration", t.duration < 0 ? Json::null() : Json::integer(t.duration));
    o.set("bytes", Json::integer((int64_t)t.bytes));
    o.set("sha256", Json::string(t.sha256));
    o.set("min", Json::number(t.stats.min));
    o.set("max", Json::number(t.stats.max));
    o.set("mean", Json::number(t.stats.mean));
    o.set("l2", Json::number(t.stats.l2));
    o.set("nonfinite", Json::integer((int64_t)t.stats.nonfinite));
    if (!t.file.empty()) o.set("file", Json::string(t.file));
    if (t.transform.present) o.set("transform", transform_to_json(t.transform));
    if (t.tensors != 1) o.set("tensors", Json::integer(t.tensors));
    if (!t.slots.empty()) o.set("slots", slots_to_json(t.slots));
    sinks[name] = o;
  }
  for (const auto& [name, m] : f.matches) {
    Json o = Json::object();
    o.set("pts", m.pts < 0 ? Json::null() : Json::integer(m.pts));
    o.set("duration", m.duration < 0 ? Json::null() : Json::integer(m.duration));
    Json items = Json::array();
    for (const MatchRec& r : m.items) {
      Json it = Json::object();
      it.set("template", Json::string(r.label));
      it.set("score", Json::number(r.score));
      it.set("x", Json::number(r.sub_x));
      it.set("y", Json::number(r.sub_y));
      Json box = Json::array();
      box.push(Json::integer(r.x)).push(Json::integer(r.y)).push(Json::integer(r.w)).push(Json::integer(r.h));
      it.set("box", box);
      it.set("scale", Json::number(r.scale));
      it.set("angle", Json::number(r.angle));
      it.set("full_search", Json::boolean(r.full_search));
      items.push(it);
    }
    o.set("matches", items);
    sinks[name] = o;
  }
  for (const auto& [name, d] : f.detections) {
    Json o = Json::object();
    o.set("pts", d.pts < 0 ? Json::null() : Json::integer(d.pts));
    o.set("duration", d.duration < 0 ? Json::null() : Json::integer(d.duration));
    detections_to_json(d, &o);
    sinks[name] = o;
  }
  for (auto& [name, o] : sinks) j.set(name, o);
  return j;
}

bool frame_from_json(const Json& j, FrameEntry* f, std::string* error) {
  if (!j.is_object()) {
    *error = "not a JSON object";
    return false;
  }
  if (!need_uint(j, "frame", &f->index, error)) return false;
  for (const auto& [name, o] : j.members()) {
    if (name == "frame") continue;
    if (!o.is_object()) {
      *error = "sink \"" + name + "\" is not an object";
      return false;
    }
    if (o.has("matches")) {
      MatchesEntry m;
      if (!opt_time(o, "pts", &m.pts, error) || !opt_time(o, "duration", &m.duration, error)) {
        *error = name + ": " + *error;
        return false;
      }
      const Json& items = o["matches"];
      if (!items.is_array()) {
        *error = name + ": \"matches\" is not a list";
        return false;
      }
      for (size_t i = 0; i < items.size(); i++) {
        const Json& it = items.at(i);
        MatchRec r;
        double box[4];
        if (!need_double(it, "score", &r.score, error) || !need_double(it, "x", &r.sub_x, error) ||
            !need_double(it, "y", &r.sub_y, error) || !doubles(it["box"], 4, box)) {
          *error = name + ": match " + std::to_string(i) + ": " + (error->empty() ? "bad box" : *error);
          return false;
        }
        r.x = (int)box[0];
        r.y = (int)box[1];
        r.w = (int)box[2];
        r.h = (int)box[3];
        if (!match_member_from_json(it, &r, error)) {
          *error = name + ": match " + std::to_string(i) + ": " + *error;
          return false;
        }
        m.items.push_back(r);
      }
      f->matches[name] = m;
    } else if (o.has("detections")) {
      DetectionsEntry d;
      if (!opt_time(o, "pts", &d.pts, error) || !opt_time(o, "duration", &d.duration, error) ||
          !detections_from_json(o, &d, error)) {
        *error = name + ": " + *error;
        return false;
      }
      f->detections[name] = d;
    } else {
      TensorEntry t;
      if (!opt_time(o, "pts", &t.pts, error) || !opt_time(o, "duration", &t.duration, error) ||
          !need_uint(o, "bytes", &t.bytes, error) || !need_string(o, "sha256", &t.sha256, error) ||
          !need_double(o, "min", &t.stats.min, error) || !need_double(o, "max", &t.stats.max, error) ||
          !need_double(o, "mean", &t.stats.mean, error) || !need_double(o, "l2", &t.stats.l2, error)) {
        *error = name + ": " + *error;
        return false;
      }
      if (t.sha256.size() != 64) {
        *error = name + ": sha256 is not 64 hex digits";
        return false;
      }
      uint64_t nonfinite = 0;
      if (o.has("nonfinite") && !need_uint(o, "nonfinite", &nonfinite, error)) return false;
      t.stats.nonfinite = nonfinite;
      opt_string(o, "file", &t.file);
      if (o["transform"].is_object() && !transform_from_json(o["transform"], &t.transform)) {
        *error = name + ": malformed \"transform\"";
        return false;
      }
      int64_t tensors = 1;
      if (o.has("tensors") && (!o["tensors"].get_int(&tensors) || tensors < 1 || tensors > UINT32_MAX)) {
        *error = name + ": field \"tensors\" is not a count of tensors (1 or more)";
        return false;
      }
      t.tensors = (uint32_t)tensors;
      if (o.has("slots") && !slots_from_json(o["slots"], &t.slots, error)) {
        *error = name + ": " + *error;
        return false;
      }
      f->tensors[name] = t;
    }
  }
  return true;
}

/* ---- files ------------------------------------------------------------------------------ */

bool read_file(const std::string& path, std::string* out, std::string* error) {
  gchar* contents = nullptr;
  gsize len = 0;
  GError* err = nullptr;
  if (!g_file_get_contents(path.c_str(), &contents, &len, &err)) {
    *error = err->message;
    g_clear_error(&err);
    return false;
  }
  out->assign(contents, len);
  g_free(contents);
  return true;
}

bool write_file(const std::string& path, const void* data, size_t size, std::string* error) {
  FILE* f = fopen(path.c_str(), "wb");
  if (!f) {
    *error = "cannot write " + path + ": " + g_strerror(errno);
    return false;
  }
  bool ok = fwrite(data, 1, size, f) == size;
  ok = (fclose(f) == 0) && ok;
  if (!ok) *error = "cannot write " + path + ": " + g_strerror(errno);
  return ok;
}

bool remove_tree(const std::string& path) {
  if (g_file_test(path.c_str(), G_FILE_TEST_IS_SYMLINK) || !g_file_test(path.c_str(), G_FILE_TEST_IS_DIR))
    return g_remove(path.c_str()) == 0 || !g_file_test(path.c_str(), G_FILE_TEST_EXISTS);
  GDir* dir = g_dir_open(path.c_str(), 0, nullptr);
  if (dir) {
    const gchar* name;
    while ((name = g_dir_read_name(dir))) remove_tree(path + "/" + name);
    g_dir_close(dir);
  }
  return g_rmdir(path.c_str()) == 0;
}

/* ---- a recording ------------------------------------------------------------------------ */

bool Recording::load(const std::string& d, std::string* error) {
  dir = d;
  frames.clear();
  if (!g_file_test(d.c_str(), G_FILE_TEST_IS_DIR)) {
    *error = d + ": no such directory";
    return false;
  }
  std::string text, err;
  const std::string mpath = d + "/manifest.json";
  if (!g_file_test(mpath.c_str(), G_FILE_TEST_EXISTS)) {
    *error = mpath + ": missing (not a recording made by cudaprep-regress record)";
    return false;
  }
  if (!read_file(mpath, &text, &err)) {
    *error = mpath + ": " + err;
    return false;
  }
  Json j;
  if (!Json::parse(text, &j, &err)) {
    *error = mpath + ": corrupt: " + err;
    return false;
  }
  if (!manifest_from_json(j, &manifest, &err)) {
    *error = mpath + ": corrupt: " + err;
    return false;
  }
  // the sinks' dtype and frame size as their caps say (a dtype that disagrees would compare
  // the tensor bytes as another element type)
  std::map<std::string, uint64_t> frame_bytes, batches;
  for (size_t i = 0; i < manifest.sinks.size(); i++) {
    const SinkInfo& s = manifest.sinks[i];
    if (s.kind != "tensor" || s.caps.empty()) continue;
    const std::string want = caps_dtype(s.caps);
    if (s.dtype != want) {
      *error = mpath + ": corrupt: sinks[" + std::to_string(i) + "] ('" + s.name + "'): field \"dtype\" is \"" +
               s.dtype + "\" but its field \"caps\" (" + s.caps + ") makes it \"" + want +
               "\": the recording contradicts itself";
      return false;
    }
    frame_bytes[s.name] = caps_frame_bytes(s.caps);
    const uint64_t batch = caps_batch(s.caps);
    if (s.batch && batch && s.batch != batch) {
      *error = mpath + ": corrupt: sinks[" + std::to_string(i) + "] ('" + s.name + "'): field \"batch\" is " +
               std::to_string(s.batch) + " but its field \"caps\" (" + s.caps + ") makes it " + std::to_string(batch) +
               ": the recording contradicts itself";
      return false;
    }
    batches[s.name] = batch;
  }

  const std::string fpath = d + "/frames.jsonl";
  if (!g_file_test(fpath.c_str(), G_FILE_TEST_EXISTS)) {
    *error = fpath + ": missing";
    return false;
  }
  if (!read_file(fpath, &text, &err)) {
    *error = fpath + ": " + err;
    return false;
  }
  std::istringstream in(text);
  std::string line;
  uint64_t lineno = 0;
  std::map<std::string, uint64_t> counts;
  while (std::getline(in, line)) {
    lineno++;
    if (line.empty()) continue;
    FrameEntry f;
    if (!Json::parse(line, &j, &err) || !frame_from_json(j, &f, &err)) {
      *error = fpath + " line " + std::to_string(lineno) + ": corrupt: " + err;
      return false;
    }
    if (f.index != frames.size()) {
      *error = fpath + " line " + std::to_string(lineno) + ": corrupt: frame " + std::to_string(f.index) +
               " where frame " + std::to_string(frames.size()) + " was expected";
      return false;
    }
    for (const auto& [name, t] : f.tensors) {
      const SinkInfo* s = manifest.sink(name);
      if (!s || s->kind != "tensor") {
        *error = fpath + " line " + std::to_string(lineno) + ": corrupt: tensor sink \"" + name +
                 "\" is not in the manifest";
        return false;
      }
      counts[name]++;
      const std::string where = fpath + " line " + std::to_string(lineno) + ": corrupt: sink \"" + name + "\"";
      DType type = DType::U8;
      dtype_from_name(s->dtype, &type);
      std::string why;
      if (!check_frame_tensors(t, frame_bytes[name], batches[name], &why)) {
        *error = where + " " + why + ": the recording contradicts itself (caps " + s->caps + ")";
        return false;
      }
      if (t.bytes % dtype_size(type) != 0) {
        *error = where + " field \"bytes\" is " + std::to_string(t.bytes) + ", not a whole number of " + s->dtype +
                 " elements (the manifest's field \"dtype\")";
        return false;
      }
      if (!t.file.empty()) {
        std::string why;
        if (!path_inside(d, t.file, &why)) {
          *error = where + " field \"file\" \"" + t.file + "\" " + why +
                   ": a tensor file must be inside the recording's directory (refused)";
          return false;
        }
        const std::string ext = std::string(".") + dtype_ext(type);
        if (t.file.size() < ext.size() || t.file.compare(t.file.size() - ext.size(), ext.size(), ext) != 0) {
          *error = where + " field \"file\" \"" + t.file + "\" is not a " + s->dtype + " file (" + ext +
                   ") as the manifest's field \"dtype\" says: the recording contradicts itself";
          return false;
        }
      }
      if (full()) {
        if (t.file.empty()) {
          *error = fpath + " line " + std::to_string(lineno) + ": corrupt: sink \"" + name +
                   "\" names no tensor file in a full recording";
          return false;
        }
        const std::string p = d + "/" + t.file;
        GStatBuf st;
        if (g_stat(p.c_str(), &st) != 0) {
          *error = p + ": missing (frame " + std::to_string(f.index) + ", sink " + name + ")";
          return false;
        }
        if (!S_ISREG(st.st_mode)) {
          *error = p + ": corrupt: not a regular file (frame " + std::to_string(f.index) + ", sink " + name + ")";
          return false;
        }
        if ((uint64_t)st.st_size != t.bytes) {
          *error = p + ": corrupt: " + std::to_string((uint64_t)st.st_size) + " bytes, frames.jsonl says " +
                   std::to_string(t.bytes);
          return false;
        }
      }
    }
    for (const auto& [name, m] : f.matches) {
      const SinkInfo* s = manifest.sink(name);
      if (!s || s->kind != "matches") {
        *error = fpath + " line " + std::to_string(lineno) + ": corrupt: matches sink \"" + name +
                 "\" is not in the manifest";
        return false;
      }
      counts[name]++;
    }
    for (const auto& [name, d] : f.detections) {
      const SinkInfo* s = manifest.sink(name);
      if (!s || s->kind != "detections") {
        *error = fpath + " line " + std::to_string(lineno) + ": corrupt: detections sink \"" + name +
                 "\" is not in the manifest";
        return false;
      }
      counts[name]++;
    }
    frames.push_back(std::move(f));
  }
  if (frames.size() != manifest.frames) {
    *error = fpath + ": corrupt: " + std::to_string(frames.size()) + " frames, manifest.json says " +
             std::to_string(manifest.frames);
    return false;
  }
  for (const auto& s : manifest.sinks) {
    if (counts[s.name] != s.frames) {
      *error = fpath + ": corrupt: sink \"" + s.name + "\" has " + std::to_string(counts[s.name]) +
               " frames, manifest.json says " + std::to_string(s.frames);
      return false;
    }
  }
  return verify_stored_digests(*this, error);  // a full recording's digests against its bytes
}

bool Recording::read_tensor(const TensorEntry& e, std::vector<uint8_t>* data, std::string* error) const {
  const std::string p = dir + "/" + e.file;
  std::string text, err;
  if (!read_file(p, &text, &err)) {
    *error = p + ": " + err;
    return false;
  }
  if (text.size() != e.bytes) {
    *error = p + ": corrupt: " + std::to_string(text.size()) + " bytes, frames.jsonl says " + std::to_string(e.bytes);
    return false;
  }
  data->assign(text.begin(), text.end());
  if (sha256_hex(data->data(), data->size()) != e.sha256) {
    *error = p + ": corrupt: its SHA-256 differs from the one in frames.jsonl";
    return false;
  }
  return true;
}

}  // namespace regress
