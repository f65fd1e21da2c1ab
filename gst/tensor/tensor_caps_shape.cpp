/* Negotiating the tensor's shape with downstream (tensor_caps.h). */
#include <string>
#include <vector>

#include "tensor_caps.h"

using cudaprep::DType;
using cudaprep::Layout;
using cudaprep::Status;

static const char *layout_name(Layout layout) { return layout == Layout::NCHW ? "nchw" : "nhwc"; }

static gboolean parse_side(const std::string &text, int *out) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos) return FALSE;
  *out = std::stoi(text);
  return *out >= 1;
}

gboolean gst_cuda_prep_tensor_parse_dimensions(const gchar *dims, const TensorShape &preferred, TensorShape *shape) {
  if (!dims) return FALSE;
  gchar **parts = g_strsplit(dims, ":", -1);
  std::vector<std::string> f;
  for (gchar **p = parts; *p; p++) f.emplace_back(*p);
  g_strfreev(parts);
  /* A batch of one may be left out; trailing ranks of 1 after it are NNStreamer's padding. */
  while (f.size() > 4 && f.back() == "1") f.pop_back();
  int v[4] = {0, 0, 0, 1};
  if (f.size() < 3 || f.size() > 4) return FALSE;
  for (size_t i = 0; i < f.size(); i++)
    if (!parse_side(f[i], &v[i])) return FALSE;
  int best = -1;
  for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
    const gboolean nchw = layout == Layout::NCHW;
    const int channels = v[nchw ? 2 : 0];
    if (channels != 1 && channels != 3) continue;
    const int score = 2 * (channels == preferred.channels) + (layout == preferred.layout);
    if (score <= best) continue;
    best = score;
    shape->layout = layout;
    shape->channels = channels;
    shape->width = nchw ? v[0] : v[1];
    shape->height = nchw ? v[1] : v[2];
    shape->batch = v[3];
  }
  return best >= 0;
}

/* "float32, float16, uint8 or int8": every row of kDTypes. */
static std::string type_names() {
  std::string out;
  for (int i = 0; i < cudaprep::kDTypeCount; i++)
    out += std::string(i == 0 ? "" : i + 1 == cudaprep::kDTypeCount ? " or " : ", ") + cudaprep::kDTypes[i].name;
  return out;
}

/* Why @dims / @types disagree with what the user set; empty when they agree. */
static std::string conflict(const gchar *dims, const gchar *types, const TensorShapeSettings &s, const char *element) {
  const TensorShape &v = s.value;
  std::string out;
  auto add = [&](bool differs, const std::string &prop, const std::string &theirs, bool set = true) {
    if (differs)
      out += (out.empty() ? "" : "; ") + prop +
             (set ? std::string(" (set on ") + element + ")" : std::string(" (the default)")) +
             " but downstream takes " + theirs;
  };
  TensorShape d;
  if (dims && gst_cuda_prep_tensor_parse_dimensions(dims, v, &d)) {
    const std::string in = std::string(" in dimensions=") + dims;
    add(s.width_set && d.width != v.width, "width=" + std::to_string(v.width), "width " + std::to_string(d.width) + in);
    add(s.height_set && d.height != v.height, "height=" + std::to_string(v.height),
        "height " + std::to_string(d.height) + in);
    /* Gray nchw and nhwc are the same bytes: only the dimensions string tells them apart. */
    add(s.layout_set && d.layout != v.layout && d.channels == 3, std::string("layout=") + layout_name(v.layout),
        std::string("layout ") + layout_name(d.layout) + in);
    add(s.channels_set && d.channels != v.channels, "channels=" + std::to_string(v.channels),
        "channels " + std::to_string(d.channels) + in);
    if (s.batch_from_pads && d.batch != v.batch)
      out += (out.empty() ? "" : "; ") + std::string("batch ") + std::to_string(v.batch) +
             " (one slot per sink pad: batch-size=0) but downstream takes batch " + std::to_string(d.batch) + in;
    else
      add(d.batch != v.batch, "batch-size=" + std::to_string(v.batch), "batch " + std::to_string(d.batch) + in,
          s.batch_set);
  }
  if (types && gst_cuda_prep_tensor_parse_type(types, &d.dtype))
    add(s.dtype_set && d.dtype != v.dtype, std::string("dtype=") + gst_cuda_prep_tensor_type_name(v.dtype),
        std::string("types=") + types);
  return out;
}

/* Fixates string field @field of @s: an absent field takes @fallback; a list, its first entry
 * @agrees accepts (else its first). */
template <typename Agrees>
static void fixate_string(GstStructure *s, const char *field, const std::string &fallback, Agrees agrees) {
  const GValue *v = gst_structure_get_value(s, field);
  if (!v) {
    gst_structure_set(s, field, G_TYPE_STRING, fallback.c_str(), NULL);
    return;
  }
  if (!GST_VALUE_HOLDS_LIST(v) || gst_value_list_get_size(v) == 0) return;
  const GValue *pick = gst_value_list_get_value(v, 0);
  for (guint i = 0; i < gst_value_list_get_size(v); i++) {
    const GValue *e = gst_value_list_get_value(v, i);
    if (G_VALUE_HOLDS_STRING(e) && agrees(g_value_get_string(e))) {
      pick = e;
      break;
    }
  }
  GValue copy = G_VALUE_INIT;
  g_value_init(&copy, G_VALUE_TYPE(pick));
  g_value_copy(pick, &copy);
  gst_structure_take_value(s, field, &copy);
}

void gst_cuda_prep_tensor_fixate_shape(GstStructure *s, const TensorShapeSettings &settings) {
  const TensorShape &v = settings.value;
  gchar *dims = gst_cuda_prep_tensor_dimensions(v);
  fixate_string(s, "dimensions", dims, [&](const gchar *d) {
    TensorShape p;
    return gst_cuda_prep_tensor_parse_dimensions(d, v, &p) && conflict(d, NULL, settings, "").empty();
  });
  g_free(dims);
  fixate_string(s, "types", gst_cuda_prep_tensor_type_name(v.dtype), [&](const gchar *t) {
    DType d;
    /* The property's value (set, or its default) when downstream lists it. */
    return gst_cuda_prep_tensor_parse_type(t, &d) && d == v.dtype;
  });
}

Status gst_cuda_prep_tensor_shape_from_caps(GstCaps *caps, const TensorShapeSettings &settings, const char *element,
                                            TensorShape *shape) {
  const GstStructure *s = gst_caps_get_structure(caps, 0);
  const gchar *dims = gst_structure_get_string(s, "dimensions");
  const gchar *types = gst_structure_get_string(s, "types");
  std::string why = conflict(dims, types, settings, element);
  if (!why.empty()) return Status::error(why);
  if (!gst_cuda_prep_tensor_parse_dimensions(dims, settings.value, shape))
    return Status::error(std::string("downstream takes dimensions=") + (dims ? dims : "(none)") +
                         ", not an image tensor W:H:C:B (nchw) or C:W:H:B (nhwc) with C = 3 (colour) or 1 (gray) "
                         "channels, B = batch-size");
  if (!gst_cuda_prep_tensor_parse_type(types, &shape->dtype))
    return Status::error(std::string("downstream takes types=") + (types ? types : "(none)") + ", " + element +
                         " makes " + type_names());
  if (shape->width > cudaprep::kMaxTensorSide || shape->height > cudaprep::kMaxTensorSide)
    return Status::error("downstream takes a " + std::to_string(shape->width) + "x" + std::to_string(shape->height) +
                         " tensor, larger than " + std::to_string(cudaprep::kMaxTensorSide) + " a side");
  return Status();
}
