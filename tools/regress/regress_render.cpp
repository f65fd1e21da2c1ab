#include "regress_render.h"

#include <gst/gst.h>

#include <algorithm>
#include <cmath>

namespace regress {

const uint8_t kNonFiniteColour[3] = {0, 200, 255};

namespace {

// Black -> dark red -> red -> yellow -> pale yellow (not white: it would vanish on the page): a
// single bright pixel stands out on black.
const double kStops[][4] = {
    {0.0, 0, 0, 0}, {0.25, 120, 0, 0}, {0.5, 230, 30, 0}, {0.75, 255, 200, 0}, {1.0, 255, 255, 170}};

std::string property(const ElementInfo& e, const std::string& name) {
  for (const auto& kv : e.properties)
    if (kv.first == name) return kv.second;
  return "";
}

// "< (double)0.5, (double)1 >" (1 or 3 values) into three values.
bool parse_triple(const std::string& text, double out[3]) {
  GValue v = G_VALUE_INIT;
  g_value_init(&v, GST_TYPE_ARRAY);
  bool ok = gst_value_deserialize(&v, text.c_str());
  const guint n = ok ? gst_value_array_get_size(&v) : 0;
  ok = ok && (n == 1 || n == 3);
  for (guint i = 0; ok && i < 3; i++) {
    const GValue* item = gst_value_array_get_value(&v, n == 1 ? 0 : i);
    ok = G_VALUE_HOLDS_DOUBLE(item);
    if (ok) out[i] = g_value_get_double(item);
  }
  g_value_unset(&v);
  return ok;
}

// NNStreamer's dimensions, innermost first: "64:64:3:1", "64:64:1:1" (first tensor only).
std::vector<int> caps_dimensions(const std::string& caps_text) {
  std::vector<int> dims;
  GstCaps* caps = gst_caps_from_string(caps_text.c_str());
  if (!caps) return dims;
  const gchar* d =
      gst_caps_get_size(caps) ? gst_structure_get_string(gst_caps_get_structure(caps, 0), "dimensions") : nullptr;
  if (d) {
    gchar** tensors = g_strsplit(d, ",", 2);
    gchar** parts = g_strsplit(tensors[0], ":", -1);
    for (gchar** p = parts; *p; p++) dims.push_back(atoi(*p));
    g_strfreev(parts);
    g_strfreev(tensors);
  }
  gst_caps_unref(caps);
  return dims;
}

}  // namespace

bool tensor_picture(const Manifest& m, const SinkInfo& sink, TensorPicture* out, std::string* why) {
  const std::vector<int> dims = caps_dimensions(sink.caps);
  if (dims.size() < 3) {
    *why = "sink '" + sink.name + "' has no tensor dimensions in its caps";
    return false;
  }
  int fits = 0;
  for (const auto& e : m.elements) {
    if (e.factory != "cudatensorize") continue;
    const bool nhwc = property(e, "layout") == "nhwc";
    const int w = atoi(property(e, "width").c_str()), h = atoi(property(e, "height").c_str());
    // recordings made before the channels property are colour
    const std::string channels_text = property(e, "channels");
    const int c = channels_text.empty() ? 3 : atoi(channels_text.c_str());
    const bool size_fits =
        nhwc ? (dims[0] == c && dims[1] == w && dims[2] == h) : (dims[0] == w && dims[1] == h && dims[2] == c);
    if (!size_fits || property(e, "dtype") != sink.dtype) continue;
    if (fits++) continue;  // the first that fits (named in the report)
    TensorPicture p;
    p.width = w;
    p.height = h;
    p.nhwc = nhwc;
    p.bgr = property(e, "channel-order") == "bgr";
    p.channels = c;
    dtype_from_name(sink.dtype, &p.type);
    p.scale = g_ascii_strtod(property(e, "scale").c_str(), nullptr);
    if (!(p.scale > 0) || !parse_triple(property(e, "mean"), p.mean) || !parse_triple(property(e, "std"), p.std)) {
      *why = "cannot read scale / mean / std of " + e.name + " from the manifest";
      return false;
    }
    p.element = e.name;
    *out = p;
  }
  if (!fits) {
    *why = "no cudatensorize in the manifest makes sink '" + sink.name + "'s tensors (" + sink.caps + ")";
    return false;
  }
  if (fits > 1) out->element += " (the first of " + std::to_string(fits) + " that fit)";
  return true;
}

namespace {

// Element index of channel c (in tensor order) at pixel (x, y).
size_t element_index(const TensorPicture& p, int x, int y, int c) {
  const size_t pixel = (size_t)y * p.width + x;
  return p.nhwc ? pixel * p.channels + c : (size_t)c * p.width * p.height + pixel;
}

}  // namespace

RgbImage tensor_to_image(const uint8_t* data, size_t bytes, const TensorPicture& p) {
  RgbImage img(p.width, p.height);
  if (bytes < p.bytes()) return img;
  const bool gray = p.channels == 1;
  for (int y = 0; y < p.height; y++)
    for (int x = 0; x < p.width; x++)
      for (int c = 0; c < 3; c++) {
        const int k = gray ? 0 : c;  // gray: the one channel, normalised with mean[0] and std[0]
        const double v = element_value(data, p.type, element_index(p, x, y, k));
        double px = (v * p.std[k] + p.mean[k]) / p.scale;
        px = std::isfinite(px) ? std::min(255.0, std::max(0.0, std::round(px))) : 0;
        img.at(x, y)[p.bgr && !gray ? 2 - c : c] = (uint8_t)px;
      }
  return img;
}

void heat_colour(double t, uint8_t rgb[3]) {
  t = std::min(1.0, std::max(0.0, t));
  const size_t n = sizeof kStops / sizeof kStops[0];
  size_t i = 1;
  while (i < n - 1 && t > kStops[i][0]) i++;
  const double* a = kStops[i - 1];
  const double* b = kStops[i];
  const double f = (t - a[0]) / (b[0] - a[0]);
  for (int c = 0; c < 3; c++) rgb[c] = (uint8_t)std::lround(a[c + 1] + f * (b[c + 1] - a[c + 1]));
}

std::string heat_css_gradient() {
  std::string css = "linear-gradient(to right";
  for (const auto& s : kStops)
    css += ", rgb(" + std::to_string((int)s[1]) + "," + std::to_string((int)s[2]) + "," + std::to_string((int)s[3]) +
           ") " + std::to_string((int)(s[0] * 100)) + "%";
  return css + ")";
}

HeatMap diff_heat_map(const uint8_t* ref, const uint8_t* run, size_t bytes, const TensorPicture& p) {
  HeatMap h;
  h.image = RgbImage(p.width, p.height);
  if (bytes < p.bytes()) return h;
  std::vector<double> diff((size_t)p.width * p.height, 0.0);
  for (int y = 0; y < p.height; y++)
    for (int x = 0; x < p.width; x++) {
      double& d = diff[(size_t)y * p.width + x];
      for (int c = 0; c < p.channels; c++) {
        const size_t i = element_index(p, x, y, c);
        const double a = element_value(ref, p.type, i), b = element_value(run, p.type, i);
        // the same rule as the comparison: NaN meets NaN is equal, NaN meets a number is not
        const double e = (std::isnan(a) || std::isnan(b)) ? ((std::isnan(a) && std::isnan(b)) ? 0 : INFINITY)
                                                          : (a == b ? 0 : std::fabs(a - b));
        d = std::max(d, e);
      }
      if (d != 0) h.differing++;
      if (std::isinf(d)) {
        h.nonfinite++;
      } else if (d > h.max) {
        h.max = d;
        h.worst_x = x;
        h.worst_y = y;
        h.at_max = 1;
      } else if (d == h.max && d > 0) {
        h.at_max++;
      }
    }
  for (int y = 0; y < p.height; y++)
    for (int x = 0; x < p.width; x++) {
      const double d = diff[(size_t)y * p.width + x];
      uint8_t* px = h.image.at(x, y);
      if (std::isinf(d)) {
        std::copy(kNonFiniteColour, kNonFiniteColour + 3, px);
      } else {
        // a difference, however small, is never drawn black
        const double t = h.max > 0 ? d / h.max : 0;
        heat_colour(d > 0 ? std::max(t, 0.08) : 0.0, px);
      }
    }
  return h;
}

}  // namespace regress
