// cudaprep-regress: running a pipeline on a given GPU (record / check --device-id N).
#include "regress_device_id.h"

namespace regress {

bool decoders_for_device(const std::string& description, int id, std::string* out, std::string* error) {
  *out = description;
  if (id <= 0) return true;
  // An element's factory name: a word of [a-z0-9] at the start of the description or after '!'
  // or a space, ending the same way (a property value such as name=nvh264dec follows '=' and is
  // left alone).
  auto separator = [](char c) { return g_ascii_isspace(c) || c == '!'; };
  std::string result;
  const size_t n = description.size();
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && (g_ascii_islower(description[j]) || g_ascii_isdigit(description[j]))) j++;
    if (j == i) {
      result += description[i++];
      continue;
    }
    const std::string word = description.substr(i, j - i);
    const bool whole = (i == 0 || separator(description[i - 1])) && (j == n || separator(description[j]));
    const bool decoder = whole && word.size() > 5 && word.compare(0, 2, "nv") == 0 &&
                         word.compare(word.size() - 3, 3, "dec") == 0 && word.find("device") == std::string::npos;
    GstElementFactory* f = decoder ? gst_element_factory_find(word.c_str()) : nullptr;
    if (!f) {  // not a decoder of the default GPU (or not an element here: the parser says so)
      result += word;
      i = j;
      continue;
    }
    gst_object_unref(f);
    const std::string codec = word.substr(2, word.size() - 5);
    const std::string on_device = "nv" + codec + "device" + std::to_string(id) + "dec";
    f = gst_element_factory_find(on_device.c_str());
    if (!f) {
      *error = "--device-id " + std::to_string(id) + ": " + word + " has no element for GPU " + std::to_string(id) +
               " (" + on_device + "): GStreamer's nvcodec registers one decoder per GPU that has the codec";
      return false;
    }
    gst_object_unref(f);
    result += on_device;
    i = j;
  }
  *out = result;
  return true;
}

namespace {

// Sets the writable integer property `name` of `e` to `id`; whether it was set.
bool set_int_property(GstElement* e, const char* name, int id) {
  GParamSpec* p = g_object_class_find_property(G_OBJECT_GET_CLASS(e), name);
  if (!p || !(p->flags & G_PARAM_WRITABLE) || (p->flags & G_PARAM_CONSTRUCT_ONLY)) return false;
  if (G_PARAM_SPEC_VALUE_TYPE(p) != G_TYPE_INT && G_PARAM_SPEC_VALUE_TYPE(p) != G_TYPE_UINT) return false;
  GValue v = G_VALUE_INIT;
  g_value_init(&v, G_PARAM_SPEC_VALUE_TYPE(p));
  if (G_VALUE_HOLDS_INT(&v))
    g_value_set_int(&v, id);
  else
    g_value_set_uint(&v, (guint)id);
  const bool valid = !g_param_value_validate(p, &v);
  if (valid) g_object_set_property(G_OBJECT(e), name, &v);
  g_value_unset(&v);
  return valid;
}

}  // namespace

int apply_device_id(GstElement* pipeline, int id) {
  int set = 0;
  auto one = [&](GstElement* e) {
    set += set_int_property(e, "device-id", id);
    set += set_int_property(e, "cuda-device-id", id);
  };
  one(pipeline);
  if (GST_IS_BIN(pipeline)) {
    GstIterator* it = gst_bin_iterate_recurse(GST_BIN(pipeline));
    GValue item = G_VALUE_INIT;
    while (gst_iterator_next(it, &item) == GST_ITERATOR_OK) {
      one(GST_ELEMENT(g_value_get_object(&item)));
      g_value_reset(&item);
    }
    g_value_unset(&item);
    gst_iterator_free(it);
  }
  return set;
}

}  // namespace regress
