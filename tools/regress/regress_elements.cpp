#include "regress_elements.h"

#include <algorithm>

namespace regress {

std::vector<GstElement*> elements_of(GstBin* bin) {
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

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  size_t pos = 0;
  while ((pos = s.find(from, pos)) != std::string::npos) {
    s.replace(pos, from.size(), to);
    pos += to.size();
  }
  return s;
}

bool is_cudaprep(GstElement* e) {
  GstElementFactory* f = gst_element_get_factory(e);
  if (!f) return false;
  GstPlugin* p = gst_plugin_feature_get_plugin(GST_PLUGIN_FEATURE(f));
  bool yes = p && g_strcmp0(gst_plugin_get_name(p), "cudaprep") == 0;
  if (p) gst_object_unref(p);
  return yes;
}

bool valid_sink_name(const std::string& n) {
  if (n.empty() || n == "frame") return false;
  for (char c : n)
    if (!g_ascii_isalnum(c) && c != '_' && c != '-' && c != '.') return false;
  return true;
}

namespace {

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

// Writable properties as strings: every one for the cudaprep elements, the non-default ones
// for the others; the clip path is replaced by {clip}.
std::vector<std::pair<std::string, std::string>> element_properties(GstElement* e, const std::string& clip, bool all) {
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

}  // namespace

std::map<GstElement*, std::string> canonical_names(const std::vector<GstElement*>& all) {
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
  return canonical;
}

ElementInfo describe_element(GstElement* e, const std::string& name, const std::string& clip,
                             const std::string& abs_clip) {
  ElementInfo info;
  info.name = name;
  GstElementFactory* f = gst_element_get_factory(e);
  info.factory = f ? GST_OBJECT_NAME(f) : G_OBJECT_TYPE_NAME(e);
  if (f) {
    GstPlugin* p = gst_plugin_feature_get_plugin(GST_PLUGIN_FEATURE(f));
    if (p) {
      info.plugin = gst_plugin_get_name(p);
      info.plugin_version = gst_plugin_get_version(p);
      gst_object_unref(p);
    }
  }
  std::vector<std::pair<std::string, std::string>> props = element_properties(e, clip, is_cudaprep(e));
  for (auto& kv : props)
    if (abs_clip != clip) kv.second = replace_all(kv.second, abs_clip, "{clip}");
  info.properties = props;
  return info;
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

}  // namespace regress
