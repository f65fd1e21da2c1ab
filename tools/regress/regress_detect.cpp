#include "regress_detect.h"

#include <glib.h>

#include <algorithm>
#include <cmath>

#include "regress_math.h"

namespace regress {

namespace {

std::string fmt(double v) { return format_short(v, 6); }

Json classes_to_json(const std::vector<ClassLevel>& classes) {
  Json a = Json::array();
  for (const ClassLevel& c : classes) {
    Json o = Json::object();
    o.set("class", Json::string(c.label));
    o.set("confidence", Json::number(c.confidence));
    a.push(o);
  }
  return a;
}

bool classes_from_json(const Json& a, std::vector<ClassLevel>* out, std::string* error) {
  if (a.is_null()) return true;
  if (!a.is_array()) {
    *error = "\"classes\" is not a list";
    return false;
  }
  for (size_t i = 0; i < a.size(); i++) {
    ClassLevel c;
    if (!a.at(i)["class"].get_string(&c.label) || !a.at(i)["confidence"].get_double(&c.confidence)) {
      *error = "class " + std::to_string(i) + " lacks \"class\" (a string) or \"confidence\" (a number)";
      return false;
    }
    out->push_back(c);
  }
  return true;
}

std::string box_text(const DetRec& d) {
  return "[" + fmt(d.x) + "," + fmt(d.y) + "," + fmt(d.w) + "," + fmt(d.h) + "]";
}

std::string conf_text(const DetRec& d) { return d.has_confidence ? fmt(d.confidence) : std::string("none"); }

std::string classes_text(const std::vector<ClassLevel>& classes) {
  if (classes.empty()) return "none";
  std::string s;
  for (const ClassLevel& c : classes) s += (s.empty() ? "" : ", ") + c.label + " " + fmt(c.confidence);
  return s;
}

// The classes of a pair (or of a buffer's classification on both sides): the same labels, each
// confidence within the tolerance.
void compare_classes(const std::string& who, const std::vector<ClassLevel>& a, const std::vector<ClassLevel>& b,
                     const DetOptions& opt, const std::string& rl, const std::string& ul, DetDiff* d) {
  std::map<std::string, double> ma, mb;
  for (const ClassLevel& c : a) ma[c.label] = c.confidence;
  for (const ClassLevel& c : b) mb[c.label] = c.confidence;
  bool same_labels = ma.size() == mb.size();
  for (const auto& [label, v] : ma) same_labels = same_labels && mb.count(label);
  if (!same_labels) {
    d->failures.push_back(who + " classes " + classes_text(a) + " in " + rl + ", " + classes_text(b) + " in " + ul);
    return;
  }
  for (const auto& [label, v] : ma) {
    const double dc = std::fabs(mb[label] - v);
    d->max_dconf = std::max(d->max_dconf, dc);
    if (!(dc <= opt.conf_tol))
      d->failures.push_back(who + " class " + label + " confidence " + fmt(v) + " -> " + fmt(mb[label]) +
                            " (tolerance " + fmt(opt.conf_tol) + ")");
  }
}

}  // namespace

void detections_to_json(const DetectionsEntry& e, Json* o) {
  Json items = Json::array();
  for (const DetRec& d : e.items) {
    Json it = Json::object();
    it.set("source", Json::string(d.source));
    it.set("class", Json::string(d.label));
    Json box = Json::array();
    box.push(Json::number(d.x)).push(Json::number(d.y)).push(Json::number(d.w)).push(Json::number(d.h));
    it.set("box", box);
    it.set("confidence", d.has_confidence ? Json::number(d.confidence) : Json::null());
    it.set("id", Json::integer(d.id));
    if (!d.params.empty()) {
      Json p = Json::array();
      for (const std::string& s : d.params) p.push(Json::string(s));
      it.set("params", p);
    }
    if (!d.classes.empty()) it.set("classes", classes_to_json(d.classes));
    items.push(it);
  }
  o->set("detections", items);
  if (!e.tensors.empty()) {
    Json ts = Json::array();
    for (const MetaTensorRec& t : e.tensors) {
      Json it = Json::object();
      it.set("id", Json::string(t.id));
      it.set("dtype", Json::string(t.dtype));
      Json dims = Json::array();
      for (uint64_t d : t.dims) dims.push(Json::integer((int64_t)d));
      it.set("dims", dims);
      it.set("bytes", Json::integer((int64_t)t.bytes));
      it.set("sha256", Json::string(t.sha256));
      it.set("min", Json::number(t.stats.min));
      it.set("max", Json::number(t.stats.max));
      it.set("mean", Json::number(t.stats.mean));
      it.set("l2", Json::number(t.stats.l2));
      it.set("nonfinite", Json::integer((int64_t)t.stats.nonfinite));
      if (!t.data.empty()) {
        gchar* b64 = g_base64_encode(t.data.data(), t.data.size());
        it.set("data", Json::string(b64));
        g_free(b64);
      }
      ts.push(it);
    }
    o->set("tensor_metas", ts);
  }
  if (!e.classifications.empty()) {
    Json cls = Json::array();
    for (const ClsRec& c : e.classifications) {
      Json it = Json::object();
      it.set("id", Json::integer(c.id));
      it.set("classes", classes_to_json(c.classes));
      cls.push(it);
    }
    o->set("classifications", cls);
  }
}

bool detections_from_json(const Json& o, DetectionsEntry* e, std::string* error) {
  const Json& items = o["detections"];
  if (!items.is_array()) {
    *error = "\"detections\" is not a list";
    return false;
  }
  for (size_t i = 0; i < items.size(); i++) {
    const Json& it = items.at(i);
    DetRec d;
    const std::string where = "detection " + std::to_string(i) + ": ";
    const Json& box = it["box"];
    double b[4];
    bool box_ok = box.is_array() && box.size() == 4;
    for (size_t k = 0; box_ok && k < 4; k++) box_ok = box.at(k).get_double(&b[k]) && std::isfinite(b[k]);
    if (!it["source"].get_string(&d.source) || (d.source != "roi" && d.source != "od")) {
      *error = where + "\"source\" is neither \"roi\" nor \"od\"";
      return false;
    }
    if (!it["class"].get_string(&d.label)) {
      *error = where + "\"class\" is not a string";
      return false;
    }
    if (!box_ok) {
      *error = where + "\"box\" is not four finite numbers";
      return false;
    }
    d.x = b[0];
    d.y = b[1];
    d.w = b[2];
    d.h = b[3];
    if (!it["confidence"].is_null()) {
      if (!it["confidence"].get_double(&d.confidence)) {
        *error = where + "\"confidence\" is neither a number nor null";
        return false;
      }
      d.has_confidence = true;
    }
    if (it.has("id") && !it["id"].get_int(&d.id)) {
      *error = where + "\"id\" is not an integer";
      return false;
    }
    const Json& params = it["params"];
    if (!params.is_null()) {
      if (!params.is_array()) {
        *error = where + "\"params\" is not a list";
        return false;
      }
      for (size_t k = 0; k < params.size(); k++) {
        std::string s;
        if (!params.at(k).get_string(&s)) {
          *error = where + "\"params\" holds something other than a string";
          return false;
        }
        d.params.push_back(s);
      }
    }
    if (!classes_from_json(it["classes"], &d.classes, error)) {
      *error = where + *error;
      return false;
    }
    e->items.push_back(d);
  }
  const Json& cls = o["classifications"];
  if (!cls.is_null()) {
    if (!cls.is_array()) {
      *error = "\"classifications\" is not a list";
      return false;
    }
    for (size_t i = 0; i < cls.size(); i++) {
      ClsRec c;
      if ((cls.at(i).has("id") && !cls.at(i)["id"].get_int(&c.id)) ||
          !classes_from_json(cls.at(i)["classes"], &c.classes, error)) {
        *error = "classification " + std::to_string(i) + ": " + (error->empty() ? "\"id\" is not an integer" : *error);
        return false;
      }
      e->classifications.push_back(c);
    }
  }
  const Json& ts = o["tensor_metas"];
  if (!ts.is_null()) {
    if (!ts.is_array()) {
      *error = "\"tensor_metas\" is not a list";
      return false;
    }
    for (size_t i = 0; i < ts.size(); i++) {
      const Json& it = ts.at(i);
      MetaTensorRec t;
      const std::string where = "tensor_metas " + std::to_string(i) + ": ";
      int64_t bytes = -1, nonfinite = 0;
      DType type;
      if (!it["id"].get_string(&t.id) || !it["dtype"].get_string(&t.dtype) || !it["bytes"].get_int(&bytes) ||
          bytes < 0 || !it["sha256"].get_string(&t.sha256) || t.sha256.size() != 64 ||
          !it["min"].get_double(&t.stats.min) || !it["max"].get_double(&t.stats.max) ||
          !it["mean"].get_double(&t.stats.mean) || !it["l2"].get_double(&t.stats.l2) ||
          (it.has("nonfinite") && !it["nonfinite"].get_int(&nonfinite)) || !it["dims"].is_array()) {
        *error = where + "needs id, dtype, dims, bytes, sha256 (64 hex digits), min, max, mean, l2";
        return false;
      }
      if (t.dtype != "other" && !dtype_from_name(t.dtype, &type)) {
        *error = where + "unknown dtype \"" + t.dtype + "\"";
        return false;
      }
      t.bytes = (uint64_t)bytes;
      t.stats.nonfinite = (uint64_t)nonfinite;
      for (size_t k = 0; k < it["dims"].size(); k++) {
        int64_t d;
        if (!it["dims"].at(k).get_int(&d) || d < 0) {
          *error = where + "\"dims\" is not a list of sizes";
          return false;
        }
        t.dims.push_back((uint64_t)d);
      }
      std::string b64;
      if (it.has("data")) {
        if (!it["data"].get_string(&b64)) {
          *error = where + "\"data\" is not a base64 string";
          return false;
        }
        gsize n = 0;
        guchar* raw = g_base64_decode(b64.c_str(), &n);
        t.data.assign(raw, raw + n);
        g_free(raw);
        if (t.data.size() != t.bytes || sha256_hex(t.data.data(), t.data.size()) != t.sha256) {
          *error = where + "\"data\" contradicts its \"bytes\" or \"sha256\"";
          return false;
        }
      }
      e->tensors.push_back(std::move(t));
    }
  }
  return true;
}

std::string det_class_key(const DetRec& d) { return d.source == "od" ? "od:" + d.label : d.label; }

std::string det_text(const DetRec& d) { return d.label + " " + box_text(d) + (d.source == "od" ? " (ODMtd)" : ""); }

double box_iou(const DetRec& a, const DetRec& b) {
  const double ix = std::max(0.0, std::min(a.x + a.w, b.x + b.w) - std::max(a.x, b.x));
  const double iy = std::max(0.0, std::min(a.y + a.h, b.y + b.h) - std::max(a.y, b.y));
  const double inter = ix * iy;
  const double uni = a.w * a.h + b.w * b.h - inter;
  if (uni <= 0) return (a.x == b.x && a.y == b.y && a.w == b.w && a.h == b.h) ? 1 : 0;
  return inter / uni;
}

double corner_shift(const DetRec& a, const DetRec& b) {
  const double tl = std::hypot(b.x - a.x, b.y - a.y);
  const double br = std::hypot((b.x + b.w) - (a.x + a.w), (b.y + b.h) - (a.y + a.h));
  return std::max(tl, br);
}

DetDiff diff_detections(const DetectionsEntry& ref, const DetectionsEntry& run, const DetOptions& opt,
                        const std::string& rl, const std::string& ul) {
  DetDiff d;
  d.n_ref = ref.items.size();
  d.n_run = run.items.size();
  std::map<std::string, std::pair<std::vector<size_t>, std::vector<size_t>>> by_class;
  for (size_t i = 0; i < ref.items.size(); i++) by_class[det_class_key(ref.items[i])].first.push_back(i);
  for (size_t i = 0; i < run.items.size(); i++) by_class[det_class_key(run.items[i])].second.push_back(i);
  for (const auto& [key, lists] : by_class) {
    DetClassCount& count = d.classes[key];
    count.n_ref = lists.first.size();
    count.n_run = lists.second.size();
    std::vector<DetPair> candidates;
    for (size_t a : lists.first)
      for (size_t b : lists.second) {
        const double iou = box_iou(ref.items[a], run.items[b]);
        if (iou >= opt.iou) candidates.push_back({a, b, iou, 0, 0});
      }
    std::stable_sort(candidates.begin(), candidates.end(), [](const DetPair& x, const DetPair& y) {
      if (x.iou != y.iou) return x.iou > y.iou;
      if (x.ref != y.ref) return x.ref < y.ref;
      return x.run < y.run;
    });
    std::vector<bool> used_a(ref.items.size()), used_b(run.items.size());
    for (DetPair p : candidates) {
      if (used_a[p.ref] || used_b[p.run]) continue;
      used_a[p.ref] = used_b[p.run] = true;
      d.pairs.push_back(p);
    }
    for (size_t a : lists.first)
      if (!used_a[a]) {
        d.missed.push_back(a);
        count.missed++;
      }
    for (size_t b : lists.second)
      if (!used_b[b]) {
        d.extra.push_back(b);
        count.extra++;
      }
  }
  // pairs in reference order, so that the reasons read in the order of the reference's list
  std::sort(d.pairs.begin(), d.pairs.end(), [](const DetPair& x, const DetPair& y) { return x.ref < y.ref; });
  std::sort(d.missed.begin(), d.missed.end());
  std::sort(d.extra.begin(), d.extra.end());

  for (DetPair& p : d.pairs) {
    const DetRec &a = ref.items[p.ref], &b = run.items[p.run];
    p.shift = corner_shift(a, b);
    d.max_shift = std::max(d.max_shift, p.shift);
    if (!(p.shift <= opt.pos_tol))
      d.failures.push_back("box " + det_text(a) + " moved " + fmt(p.shift) + " px to " + box_text(b) + " (tolerance " +
                           fmt(opt.pos_tol) + ")");
    if (a.has_confidence != b.has_confidence) {
      p.dconf = INFINITY;
      d.failures.push_back(det_text(a) + " confidence " + conf_text(a) + " in " + rl + ", " + conf_text(b) + " in " +
                           ul);
    } else if (a.has_confidence) {
      p.dconf = std::fabs(b.confidence - a.confidence);
      if (!(p.dconf <= opt.conf_tol))
        d.failures.push_back(det_text(a) + " confidence " + fmt(a.confidence) + " -> " + fmt(b.confidence) +
                             " (tolerance " + fmt(opt.conf_tol) + ")");
    }
    if (std::isfinite(p.dconf)) d.max_dconf = std::max(d.max_dconf, p.dconf);
    if (!a.classes.empty() || !b.classes.empty())
      compare_classes(det_text(a) + ":", a.classes, b.classes, opt, rl, ul, &d);
  }
  if (d.missed.size() > opt.missed) {
    if (opt.missed)
      d.failures.push_back(std::to_string(d.missed.size()) + " missed detections (tolerance " +
                           std::to_string(opt.missed) + ")");
    for (size_t i : d.missed) d.failures.push_back("missed detection " + det_text(ref.items[i]));
  }
  if (d.extra.size() > opt.extra) {
    if (opt.extra)
      d.failures.push_back(std::to_string(d.extra.size()) + " extra detections (tolerance " +
                           std::to_string(opt.extra) + ")");
    for (size_t i : d.extra) d.failures.push_back("extra detection " + det_text(run.items[i]));
  }
  // GstTensorMeta tensors, by id: the same type and dimensions, and values within --tensor-tol
  // (exactly, by digest, where a side kept only the digest of a large tensor)
  std::map<std::string, std::pair<const MetaTensorRec*, const MetaTensorRec*>> tensors;
  for (const MetaTensorRec& t : ref.tensors) tensors[t.id].first = &t;
  for (const MetaTensorRec& t : run.tensors) tensors[t.id].second = &t;
  for (const auto& [id, p] : tensors) {
    const std::string who = "tensor meta '" + id + "': ";
    if (!p.first || !p.second) {
      d.failures.push_back(who + "only in " + (p.first ? rl : ul));
      continue;
    }
    const MetaTensorRec &a = *p.first, &b = *p.second;
    auto dims = [](const MetaTensorRec& t) {
      std::string s;
      for (uint64_t x : t.dims) s += (s.empty() ? "" : "x") + std::to_string(x);
      return s.empty() ? std::string("scalar") : s;
    };
    if (a.dtype != b.dtype || a.dims != b.dims) {
      d.failures.push_back(who + a.dtype + " " + dims(a) + " in " + rl + ", " + b.dtype + " " + dims(b) + " in " + ul);
      continue;
    }
    if (a.sha256 == b.sha256 && a.bytes == b.bytes) continue;
    DType type;
    if (a.data.empty() || b.data.empty() || !dtype_from_name(a.dtype, &type)) {
      d.failures.push_back(who + "differs (SHA-256; values not stored, compared exactly)");
      continue;
    }
    const TensorDiff td = diff_tensors(a.data.data(), a.data.size(), b.data.data(), b.data.size(), type);
    d.max_tensor_abs = std::max(d.max_tensor_abs, td.max_abs);
    const std::string why = tensor_diff_failure(td, opt.tensor_tol);
    if (!why.empty()) d.failures.push_back(who + why);
  }
  // the buffer's own classifications, paired by position
  const size_t nc = std::max(ref.classifications.size(), run.classifications.size());
  for (size_t i = 0; i < nc; i++) {
    const std::string who = "classification " + std::to_string(i) + ":";
    if (i >= ref.classifications.size() || i >= run.classifications.size()) {
      const bool in_ref = i < ref.classifications.size();
      d.failures.push_back(who + " only in " + (in_ref ? rl : ul) + " (" +
                           classes_text(in_ref ? ref.classifications[i].classes : run.classifications[i].classes) +
                           ")");
      continue;
    }
    compare_classes(who, ref.classifications[i].classes, run.classifications[i].classes, opt, rl, ul, &d);
  }
  return d;
}

}  // namespace regress
