#include "template_bank_spec.h"

#include <glib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "template_loader.h"
#include "template_resample.h"
#include "templatematch.h"

using cudaprep::kMaxBankMembers;
using cudaprep::kMaxBankTemplates;

namespace {

std::string number(double v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string trim(const std::string &s) {
  const size_t a = s.find_first_not_of(" \t\r\n");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r\n") - a + 1);
}

/* A number in C locale, the whole text. */
bool parse_double(const std::string &text, double *v) {
  const std::string t = trim(text);
  if (t.empty()) return false;
  char *end = nullptr;
  *v = g_ascii_strtod(t.c_str(), &end);
  return end && *end == '\0' && std::isfinite(*v);
}

bool parse_int(const std::string &text, int *v) {
  const std::string t = trim(text);
  if (t.empty()) return false;
  char *end = nullptr;
  const gint64 n = g_ascii_strtoll(t.c_str(), &end, 10);
  if (!end || *end != '\0' || n < G_MININT || n > G_MAXINT) return false;
  *v = (int)n;
  return true;
}

/* "a;b;c" (a trailing ';' allowed, as GKeyFile writes lists). */
std::vector<std::string> split_list(const std::string &text) {
  std::vector<std::string> items;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ';')) items.push_back(item);
  if (!items.empty() && trim(items.back()).empty() && !text.empty() && text.back() == ';') items.pop_back();
  return items;
}

const std::set<std::string> kKeys = {"file",   "mask",        "threshold",   "max-matches",  "scales",
                                     "angles", "scale-range", "angle-range", "track-margin", "track-margin-templates",
                                     "color"};

/* Duplicate groups and keys, which GKeyFile merges silently: found in the text itself. */
std::string find_duplicates(const std::string &text, std::string *group, std::string *key) {
  std::set<std::string> groups, keys;
  std::string current;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    if (t[0] == '[' && t.back() == ']') {
      current = t.substr(1, t.size() - 2);
      if (!groups.insert(current).second) {
        *group = current;
        return "the group appears twice: labels must differ";
      }
      keys.clear();
      continue;
    }
    const size_t eq = t.find('=');
    if (eq == std::string::npos || current.empty()) continue; /* GKeyFile reports these */
    const std::string k = trim(t.substr(0, eq));
    if (!keys.insert(k).second) {
      *group = current;
      *key = k;
      return "the key appears twice in the group";
    }
  }
  return "";
}

/* Values of a list key (scales, angles): each once. */
std::string parse_values(const std::string &text, bool positive, std::vector<double> *out) {
  out->clear();
  const std::vector<std::string> items = split_list(text);
  if (items.empty()) return "an empty list";
  for (const std::string &item : items) {
    double v;
    if (!parse_double(item, &v)) return "'" + trim(item) + "' is not a number";
    if (positive && v <= 0) return number(v) + " is not above 0";
    if (std::find(out->begin(), out->end(), v) != out->end()) return number(v) + " is listed twice";
    out->push_back(v);
  }
  if ((int)out->size() > kMaxBankMembers)
    return std::to_string(out->size()) + " values; a bank holds at most " + std::to_string(kMaxBankMembers) +
           " members";
  return "";
}

/* min;max;step: min, min + step, ... up to max (within 1e-9 of a step), each rounded to 9 decimals. */
std::string parse_range(const std::string &text, bool positive, std::vector<double> *out) {
  out->clear();
  const std::vector<std::string> items = split_list(text);
  if (items.size() != 3) return "'" + text + "' is not min;max;step";
  double r[3];
  for (int i = 0; i < 3; i++)
    if (!parse_double(items[i], &r[i])) return "'" + trim(items[i]) + "' is not a number";
  const double lo = r[0], hi = r[1], step = r[2];
  if (positive && lo <= 0) return "the smallest value " + number(lo) + " is not above 0";
  if (hi < lo) return "the largest value " + number(hi) + " is below the smallest " + number(lo);
  if (step <= 0) return "the step " + number(step) + " is not above 0";
  const double count = std::floor((hi - lo) / step + 1e-9) + 1;
  if (count > kMaxBankMembers)
    return number(count) + " values; a bank holds at most " + std::to_string(kMaxBankMembers) + " members";
  for (int i = 0; i < (int)count; i++) out->push_back(std::round((lo + i * step) * 1e9) / 1e9);
  return "";
}

std::string file_label(const std::string &path) {
  gchar *base = g_path_get_basename(path.c_str());
  std::string label = base;
  g_free(base);
  const size_t dot = label.rfind('.');
  if (dot != std::string::npos && dot > 0) label.erase(dot);
  return label;
}

std::string resolve(const std::string &dir, const std::string &file) {
  if (g_path_is_absolute(file.c_str())) return file;
  gchar *p = g_build_filename(dir.c_str(), file.c_str(), NULL);
  std::string out = p;
  g_free(p);
  return out;
}

}  // namespace

std::string gst_cuda_prep_parse_bank_file(const std::string &path, std::vector<TemplateSpec> *out) {
  const std::string where = "bank file '" + path + "'";
  gchar *contents = nullptr;
  gsize length = 0;
  GError *err = nullptr;
  if (!g_file_get_contents(path.c_str(), &contents, &length, &err)) {
    std::string msg = where + ": " + err->message;
    g_error_free(err);
    return msg;
  }
  const std::string text(contents, length);
  g_free(contents);

  std::string dup_group, dup_key;
  std::string dup = find_duplicates(text, &dup_group, &dup_key);
  if (!dup.empty())
    return where + ", group [" + dup_group + "]" + (dup_key.empty() ? "" : ", key '" + dup_key + "'") + ": " + dup;

  GKeyFile *kf = g_key_file_new();
  if (!g_key_file_load_from_data(kf, text.data(), text.size(), G_KEY_FILE_NONE, &err)) {
    std::string msg = where + ": " + err->message;
    g_error_free(err);
    g_key_file_free(kf);
    return msg;
  }
  gchar *dir_c = g_path_get_dirname(path.c_str());
  const std::string dir = dir_c;
  g_free(dir_c);

  std::vector<TemplateSpec> specs;
  std::string error;
  gsize n_groups = 0;
  gchar **groups = g_key_file_get_groups(kf, &n_groups);
  if (n_groups == 0) error = where + ": no template (a template is a group: [label] with file=...)";
  if (error.empty() && n_groups > (gsize)kMaxBankTemplates)
    error = where + ": " + std::to_string(n_groups) + " templates; a bank holds at most " +
            std::to_string(kMaxBankTemplates);
  for (gsize g = 0; error.empty() && g < n_groups; g++) {
    const std::string group = groups[g];
    TemplateSpec spec;
    spec.label = group;
    spec.origin = where + ", group [" + group + "]";
    gsize n_keys = 0;
    gchar **keys = g_key_file_get_keys(kf, groups[g], &n_keys, nullptr);
    std::map<std::string, std::string> values;
    for (gsize k = 0; keys && k < n_keys; k++) {
      /* the string with GKeyFile's escapes (\s, \n, ...) read; raw where it is not UTF-8 */
      gchar *v = g_key_file_get_string(kf, groups[g], keys[k], nullptr);
      if (!v) v = g_key_file_get_value(kf, groups[g], keys[k], nullptr);
      values[keys[k]] = v ? v : "";
      g_free(v);
    }
    g_strfreev(keys);
    const std::string at = where + ", group [" + group + "]";
    auto fail = [&](const std::string &key, const std::string &what) {
      if (error.empty()) error = at + ", key '" + key + "': " + what;
    };
    for (const auto &kv : values)
      if (!kKeys.count(kv.first)) {
        std::string known;
        for (const std::string &k : kKeys) known += (known.empty() ? "" : ", ") + k;
        fail(kv.first, "unknown key (the keys are " + known + ")");
      }
    if (!values.count("file")) {
      if (error.empty()) error = at + ": no 'file' key (the template's image file)";
    }
    for (const char *key : {"file", "mask"}) {
      auto it = values.find(key);
      if (it == values.end()) continue;
      const std::string name = trim(it->second);
      if (name.empty()) {
        fail(key, "an empty file name");
        continue;
      }
      const std::string resolved = resolve(dir, name);
      if (!g_file_test(resolved.c_str(), G_FILE_TEST_EXISTS))
        fail(key, "'" + resolved + "' does not exist");
      else if (!g_file_test(resolved.c_str(), G_FILE_TEST_IS_REGULAR))
        fail(key, "'" + resolved + "' is not a regular file");
      (std::string(key) == "file" ? spec.file : spec.mask) = resolved;
    }
    if (values.count("threshold")) {
      double v;
      if (!parse_double(values["threshold"], &v))
        fail("threshold", "'" + values["threshold"] + "' is not a number");
      else if (v < -1 || v > 1)
        fail("threshold", number(v) + " is not in -1..1");
      else
        spec.threshold = v;
    }
    if (values.count("max-matches")) {
      int v;
      if (!parse_int(values["max-matches"], &v))
        fail("max-matches", "'" + values["max-matches"] + "' is not a whole number");
      else if (v < 1 || v > cudaprep::kMaxMatches)
        fail("max-matches", std::to_string(v) + " is not in 1.." + std::to_string(cudaprep::kMaxMatches));
      else
        spec.max_matches = v;
    }
    for (const char *kind : {"scale", "angle"}) {
      const bool positive = std::string(kind) == "scale";
      const std::string list_key = std::string(kind) + "s", range_key = std::string(kind) + "-range";
      std::optional<std::vector<double>> &dst = positive ? spec.scales : spec.angles;
      if (values.count(list_key) && values.count(range_key)) {
        fail(range_key, "give either '" + list_key + "' or '" + range_key + "', not both");
        continue;
      }
      std::vector<double> v;
      if (values.count(list_key)) {
        std::string e = parse_values(values[list_key], positive, &v);
        if (!e.empty())
          fail(list_key, e);
        else
          dst = v;
        (positive ? spec.scales_key : spec.angles_key) = list_key;
      } else if (values.count(range_key)) {
        std::string e = parse_range(values[range_key], positive, &v);
        if (!e.empty())
          fail(range_key, e);
        else
          dst = v;
        (positive ? spec.scales_key : spec.angles_key) = range_key;
      }
    }
    if (values.count("color")) {
      /* 0xRRGGBB or 0xAARRGGBB (alpha ignored), as the element's color property */
      const std::string text = trim(values["color"]);
      gchar *end = nullptr;
      const guint64 v = g_ascii_strtoull(text.c_str(), &end, 0);
      if (text.empty() || !end || *end || v > 0xffffffffull)
        fail("color", "'" + text + "' is not a colour (0xRRGGBB)");
      else
        spec.color = (uint32_t)v;
    }
    if (values.count("track-margin") && values.count("track-margin-templates")) {
      fail("track-margin-templates", "give either 'track-margin' or 'track-margin-templates', not both");
    } else {
      for (const char *key : {"track-margin", "track-margin-templates"}) {
        if (!values.count(key)) continue;
        double v;
        if (!parse_double(values[key], &v))
          fail(key, "'" + values[key] + "' is not a number");
        else if (v < 0)
          fail(key, number(v) + " is below 0");
        else
          spec.track_margin = TrackMargin{
              std::string(key) == "track-margin" ? TrackMargin::Unit::kPixels : TrackMargin::Unit::kTemplateSizes, v};
      }
    }
    specs.push_back(std::move(spec));
  }
  g_strfreev(groups);
  g_key_file_free(kf);
  if (!error.empty()) return error;
  *out = std::move(specs);
  return "";
}

std::string gst_cuda_prep_bank_specs_from_files(const std::vector<std::string> &files, std::vector<TemplateSpec> *out) {
  if (files.empty()) return "the list of templates is empty";
  if (files.size() > (size_t)kMaxBankTemplates)
    return std::to_string(files.size()) + " templates; a bank holds at most " + std::to_string(kMaxBankTemplates);
  std::vector<TemplateSpec> specs;
  std::map<std::string, std::string> seen; /* label -> file */
  for (const std::string &file : files) {
    if (file.empty()) return "the list of templates has an empty file name";
    TemplateSpec spec;
    spec.file = file;
    spec.label = file_label(file);
    if (spec.label.empty()) return "template file '" + file + "' has no name to label it with";
    auto it = seen.find(spec.label);
    if (it != seen.end())
      return "template files '" + it->second + "' and '" + file + "' have the same label \"" + spec.label +
             "\" (the file name without its extension): labels must differ";
    seen[spec.label] = file;
    specs.push_back(std::move(spec));
  }
  *out = std::move(specs);
  return "";
}

bool gst_cuda_prep_build_template_bank(const std::vector<TemplateSpec> &specs, const BankDefaults &defaults,
                                       cudaprep::TemplateBank *out, std::string *error) {
  if (specs.empty()) {
    *error = "the template bank is empty";
    return false;
  }
  if (specs.size() > (size_t)kMaxBankTemplates) {
    *error = std::to_string(specs.size()) + " templates; a bank holds at most " + std::to_string(kMaxBankTemplates);
    return false;
  }
  size_t members = 0;
  for (const TemplateSpec &s : specs)
    members += s.scales.value_or(defaults.scales).size() * s.angles.value_or(defaults.angles).size();
  if (members > (size_t)kMaxBankMembers) {
    *error = std::to_string(members) + " members (templates x scales x angles); a bank holds at most " +
             std::to_string(kMaxBankMembers);
    return false;
  }
  std::set<std::string> labels;
  for (const TemplateSpec &s : specs)
    if (!labels.insert(s.label).second) {
      *error = "two templates are labelled \"" + s.label + "\": labels must differ";
      return false;
    }

  cudaprep::TemplateBank bank;
  for (size_t t = 0; t < specs.size(); t++) {
    const TemplateSpec &s = specs[t];
    /* "template "logo"", or where a key file describes it, with the key at fault */
    const auto name = [&](const std::string &key) {
      if (s.origin.empty()) return "template \"" + s.label + "\" ('" + s.file + "')";
      return s.origin + (key.empty() ? "" : ", key '" + key + "'");
    };
    cudaprep::MaskedGray source;
    std::string e;
    if (s.image)
      source = *s.image;
    else
      e = gst_cuda_prep_load_masked_template(s.file, s.mask, cudaprep::kMaxTemplateSide, &source);
    if (!e.empty()) {
      *error = name(e.rfind("mask file", 0) == 0 ? "mask" : "file") + ": " + e;
      return false;
    }
    cudaprep::BankTemplate bt;
    bt.label = s.label;
    bt.threshold = s.threshold.value_or(defaults.threshold);
    bt.max_matches = s.max_matches.value_or(defaults.max_matches);
    bt.own_threshold = s.threshold.has_value();
    bt.own_max_matches = s.max_matches.has_value();
    if (s.color) {
      bt.own_color = true;
      bt.color = *s.color;
    }
    if (s.track_margin) {
      bt.own_track_margin = true;
      bt.track_margin_in_pixels = s.track_margin->unit == TrackMargin::Unit::kPixels;
      bt.track_margin = s.track_margin->value;
    }
    bank.templates.push_back(bt);
    for (double scale : s.scales.value_or(defaults.scales)) {
      cudaprep::MaskedGray scaled;
      cudaprep::Status st = cudaprep::scale_template(source, scale, &scaled);
      if (!st.ok()) {
        *error = name(s.scales_key) + ": " + st.message();
        return false;
      }
      for (double angle : s.angles.value_or(defaults.angles)) {
        cudaprep::BankMember m;
        st = cudaprep::rotate_template(scaled, angle, &m.image);
        if (!st.ok()) {
          *error = name(s.angles_key) + ": " + (scale != 1 ? "at scale " + number(scale) + ", " : "") + st.message();
          return false;
        }
        m.template_index = (int)t;
        m.scale = scale;
        m.angle = angle;
        bank.members.push_back(std::move(m));
      }
    }
  }
  cudaprep::Status st = cudaprep::check_bank(bank, nullptr);
  if (!st.ok()) {
    *error = st.message();
    return false;
  }
  *out = std::move(bank);
  return true;
}
