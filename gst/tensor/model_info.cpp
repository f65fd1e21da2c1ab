/* The reader of .modelinfo files (model_info.h). */
#include "model_info.h"

#include <glib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <memory>

using namespace cudaprep;

namespace {

const char kModelInfoSection[] = "modelinfo";

struct KeyFileDeleter {
  void operator()(GKeyFile *kf) const { g_key_file_free(kf); }
};
using KeyFilePtr = std::unique_ptr<GKeyFile, KeyFileDeleter>;

/* A string key, "" when missing. */
std::string get_string(GKeyFile *kf, const char *group, const char *key) {
  gchar *v = g_key_file_get_string(kf, group, key, NULL);
  std::string out = v ? v : "";
  g_free(v);
  return out;
}

bool has_key(GKeyFile *kf, const char *group, const char *key) { return g_key_file_has_key(kf, group, key, NULL); }

std::string trim(const std::string &s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return std::string();
  const size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t pos = s.find(sep, start);
    out.push_back(s.substr(start, pos == std::string::npos ? std::string::npos : pos - start));
    if (pos == std::string::npos) return out;
    start = pos + 1;
  }
}

/* A whole string as a number (C locale); FALSE for anything else. */
bool parse_double(const std::string &text, double *out) {
  const std::string t = trim(text);
  if (t.empty()) return false;
  gchar *end = NULL;
  errno = 0;
  const double v = g_ascii_strtod(t.c_str(), &end);
  if (errno != 0 || !end || *end != '\0' || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

bool parse_int(const std::string &text, long *out) {
  const std::string t = trim(text);
  if (t.empty()) return false;
  gchar *end = NULL;
  errno = 0;
  const gint64 v = g_ascii_strtoll(t.c_str(), &end, 10);
  if (errno != 0 || !end || *end != '\0' || v < G_MININT || v > G_MAXINT) return false;
  *out = (long)v;
  return true;
}

class Reader {
 public:
  Reader(const std::string &path) : path_(path) {}

  Status fail(const std::string &where, const std::string &what) const {
    return Status::error("model-info " + path_ + ": " + where + what);
  }
  /* "[section] key: " */
  static std::string at(const std::string &section, const char *key) { return "[" + section + "] " + key + ": "; }

  Status load(KeyFilePtr *out) const {
    KeyFilePtr kf(g_key_file_new());
    g_key_file_set_list_separator(kf.get(), ',');
    GError *err = NULL;
    if (!g_key_file_load_from_file(kf.get(), path_.c_str(), G_KEY_FILE_NONE, &err)) {
      const std::string msg = err ? err->message : "unknown error";
      const bool parse_error = err && err->domain == G_KEY_FILE_ERROR;
      g_clear_error(&err);
      /* GKeyFile's parse errors quote the offending line. */
      return fail(parse_error ? "not an ini file: " : "cannot be read: ",
                  msg + (parse_error ? " (expected [section] headers and key=value lines)" : ""));
    }
    *out = std::move(kf);
    return Status();
  }

  Status check_version(GKeyFile *kf) const {
    if (!g_key_file_has_group(kf, kModelInfoSection))
      return fail("", "no [modelinfo] section (expected [modelinfo] with version=1.x, then one section per tensor)");
    const std::string version = get_string(kf, kModelInfoSection, "version");
    if (version.empty()) return fail(at(kModelInfoSection, "version"), "missing (expected 1.x)");
    const std::vector<std::string> parts = split(version, '.');
    long major = 0, minor = 0;
    if (parts.size() != 2 || !parse_int(parts[0], &major) || !parse_int(parts[1], &minor))
      return fail(at(kModelInfoSection, "version"), "expected major.minor (1.x), got \"" + version + "\"");
    if (major != 1) return fail(at(kModelInfoSection, "version"), "expected 1.x, got \"" + version + "\"");
    return Status();
  }

  /* The section of the input tensor. */
  Status pick_input(GKeyFile *kf, const std::string &input_name, std::string *section) const {
    gchar **groups = g_key_file_get_groups(kf, NULL);
    std::vector<std::string> inputs;
    for (gchar **g = groups; *g; g++) {
      if (g_strcmp0(*g, kModelInfoSection) == 0) continue;
      if (get_string(kf, *g, "dir") == "input") inputs.push_back(*g);
    }
    g_strfreev(groups);
    auto describe = [&](const std::vector<std::string> &list) {
      std::string out;
      for (const auto &s : list) {
        const std::string id = get_string(kf, s.c_str(), "id");
        out += (out.empty() ? "" : ", ") + ("[" + s + "]") + (id.empty() ? "" : " id=" + id);
      }
      return out;
    };
    if (inputs.empty()) return fail("", "no tensor section with dir=input (expected one, [name] with dir=input)");
    if (!input_name.empty()) {
      for (const auto &s : inputs)
        if (get_string(kf, s.c_str(), "id") == input_name) {
          *section = s;
          return Status();
        }
      for (const auto &s : inputs)
        if (s == input_name) {
          *section = s;
          return Status();
        }
      return fail("", "model-input=" + input_name +
                          " names no input tensor (by id or section name); its inputs: " + describe(inputs));
    }
    if (inputs.size() > 1)
      return fail("", "describes " + std::to_string(inputs.size()) + " input tensors (" + describe(inputs) +
                          "): set model-input to the id of the one to make");
    *section = inputs[0];
    return Status();
  }

  Status read_type(GKeyFile *kf, const std::string &section, DType *dtype) const {
    static const char kExpected[] = "expected float32, float16, uint8 or int8";
    if (!has_key(kf, section.c_str(), "type"))
      return fail(at(section, "type"), std::string("missing (") + kExpected + ")");
    const std::string type = trim(get_string(kf, section.c_str(), "type"));
    for (int i = 0; i < kDTypeCount; i++)
      if (type == kDTypes[i].name) {
        *dtype = kDTypes[i].dtype;
        return Status();
      }
    return fail(at(section, "type"), std::string(kExpected) + ", got \"" + type + "\"");
  }

  Status read_dims(GKeyFile *kf, const std::string &section, Layout layout_hint, ModelInput *m) const {
    const char *s = section.c_str();
    static const char kExpected[] =
        "expected 4 comma-separated integers (batch, channels, height, width as NCHW or batch, height, width, "
        "channels as NHWC; 3 without the batch), each -1 (any) or positive";
    if (!has_key(kf, s, "dims")) return fail(at(section, "dims"), std::string("missing (") + kExpected + ")");
    m->dims_text = trim(get_string(kf, s, "dims"));
    const std::string order = has_key(kf, s, "dims-order") ? trim(get_string(kf, s, "dims-order")) : "row-major";
    if (order != "row-major" && order != "col-major")
      return fail(at(section, "dims-order"), "expected row-major or col-major, got \"" + order + "\"");
    m->col_major = order == "col-major";

    std::vector<long> dims;
    for (const auto &part : split(m->dims_text, ',')) {
      long v = 0;
      if (!parse_int(part, &v) || v == 0 || v < -1)
        return fail(at(section, "dims"), std::string(kExpected) + ", got \"" + m->dims_text + "\"");
      dims.push_back(v);
    }
    if (dims.size() != 3 && dims.size() != 4)
      return fail(at(section, "dims"), std::string(kExpected) + ", got \"" + m->dims_text + "\"");
    if (m->col_major) dims = std::vector<long>(dims.rbegin(), dims.rend()); /* outermost first from here on */
    const size_t first = dims.size() == 4 ? 1 : 0;
    m->batch = dims.size() == 4 ? (int)dims[0] : -1;
    const long lead = dims[first], last = dims[first + 2];
    auto is_channels = [](long v) { return v == 1 || v == 3; };
    bool nchw;
    if (is_channels(lead) && is_channels(last))
      nchw = layout_hint == Layout::NCHW;
    else if (is_channels(lead))
      nchw = true;
    else if (is_channels(last))
      nchw = false;
    else
      return fail(at(section, "dims"),
                  "found no channel dimension of 1 (gray) or 3 (colour) next to the batch (NCHW) or last (NHWC) in \"" +
                      m->dims_text + "\"" + (m->col_major ? " (dims-order=col-major: innermost first)" : ""));
    m->layout = nchw ? Layout::NCHW : Layout::NHWC;
    m->channels = (int)(nchw ? lead : last);
    m->height = (int)(nchw ? dims[first + 1] : dims[first]);
    m->width = (int)(nchw ? dims[first + 2] : dims[first + 1]);
    if (m->width > kMaxTensorSide || m->height > kMaxTensorSide)
      return fail(at(section, "dims"), "width and height must be at most " + std::to_string(kMaxTensorSide) +
                                           ", got \"" + m->dims_text + "\"");
    return Status();
  }

  Status read_ranges(GKeyFile *kf, const std::string &section, ModelInput *m) const {
    if (!has_key(kf, section.c_str(), "ranges")) return Status();
    /* The list separator is ',': the raw value keeps "min,max;min,max" whole. */
    gchar *raw = g_key_file_get_value(kf, section.c_str(), "ranges", NULL);
    m->ranges_text = trim(raw ? raw : "");
    g_free(raw);
    const std::string expected = "expected min,max for every channel (1 pair, or " + std::to_string(m->channels) +
                                 " separated by ';', e.g. 0,1 or -1,1;-1,1;-1,1), got \"" + m->ranges_text + "\"";
    const std::vector<std::string> pairs = split(m->ranges_text, ';');
    if (pairs.size() != 1 && pairs.size() != (size_t)m->channels) return fail(at(section, "ranges"), expected);
    for (size_t i = 0; i < pairs.size(); i++) {
      const std::vector<std::string> mm = split(pairs[i], ',');
      double lo = 0, hi = 0;
      if (mm.size() != 2 || !parse_double(mm[0], &lo) || !parse_double(mm[1], &hi))
        return fail(at(section, "ranges"), expected);
      if (lo == hi)
        return fail(at(section, "ranges"), "channel " + std::to_string(i) + ": min and max are both " + trim(mm[0]) +
                                               " (expected a range: min != max)");
      m->range_min.push_back(lo);
      m->range_max.push_back(hi);
    }
    return Status();
  }

 private:
  std::string path_;
};

}  // namespace

Status gst_cuda_prep_model_info_read(const std::string &path, const std::string &input_name, Layout layout_hint,
                                     ModelInput *out) {
  Reader r(path);
  KeyFilePtr kf;
  CUDAPREP_RETURN_IF_ERROR(r.load(&kf));
  CUDAPREP_RETURN_IF_ERROR(r.check_version(kf.get()));
  ModelInput m;
  m.file = path;
  m.group_id = get_string(kf.get(), kModelInfoSection, "group-id");
  CUDAPREP_RETURN_IF_ERROR(r.pick_input(kf.get(), input_name, &m.section));
  m.id = get_string(kf.get(), m.section.c_str(), "id");
  CUDAPREP_RETURN_IF_ERROR(r.read_type(kf.get(), m.section, &m.dtype));
  CUDAPREP_RETURN_IF_ERROR(r.read_dims(kf.get(), m.section, layout_hint, &m));
  CUDAPREP_RETURN_IF_ERROR(r.read_ranges(kf.get(), m.section, &m));
  *out = std::move(m);
  return Status();
}

bool gst_cuda_prep_model_info_normalisation(const ModelInput &m, double *scale, double mean[3], double std[3]) {
  if (m.range_min.empty()) return false;
  *scale = 1.0 / 255.0;
  for (int c = 0; c < 3; c++) {
    const size_t i = m.range_min.size() == 1 ? 0 : (size_t)std::min(c, (int)m.range_min.size() - 1);
    const double span = m.range_max[i] - m.range_min[i];
    mean[c] = (0.0 - m.range_min[i]) / span; /* 0, not -0, for min 0 */
    std[c] = 1.0 / span;
  }
  return true;
}
