/* The bank of templates as users describe it, and the TemplateBank built from that description.
 *
 * Two descriptions (docs/template-bank.md):
 *  - a key file: one group per template, the group name is its label; keys `file` (required),
 *    `mask`, `threshold`, `max-matches`, `scales` or `scale-range`, `angles` or `angle-range`,
 *    `track-margin` or `track-margin-templates`. Files are relative to the key file's directory.
 *  - a list of template files: each file's name without its extension is its label.
 * A value a template does not set is the element's (BankDefaults).
 *
 * Members: each template at each of its scales and each of its angles, scaled first and then
 * rotated (template_resample.h), in the order template, scale, angle. The bank's template i is
 * specs[i].
 *
 * Everything here may run on any thread (each call has its own state; loading decodes with its
 * own GStreamer pipeline): the element runs it off the streaming thread. */
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "template_bank.h"

/* How far around its last match a tracked template is searched: either a number of pixels (the
 * same on every side) or a multiple of the member's own size (value x width to the left and to
 * the right, value x height above and below). */
struct TrackMargin {
  enum class Unit { kPixels, kTemplateSizes };
  Unit unit = Unit::kPixels;
  double value = 0; /* >= 0 */
  /* The margins in pixels for a member of @width x @height. */
  void pixels(int width, int height, double *x, double *y) const {
    *x = unit == Unit::kPixels ? value : value * width;
    *y = unit == Unit::kPixels ? value : value * height;
  }
};

/* One template as described; unset optionals take the element's value. */
struct TemplateSpec {
  std::string label;
  std::string file;                          /* as it is opened: a key file's relative paths are already resolved */
  std::optional<cudaprep::MaskedGray> image; /* given instead of a file (template-rect's cut) */
  std::string mask;                          /* empty: the file's alpha, if any */
  std::optional<double> threshold;
  std::optional<int> max_matches;
  std::optional<std::vector<double>> scales, angles; /* each value once, in the given order */
  std::optional<TrackMargin> track_margin;
  std::optional<uint32_t> color; /* boxes drawn in this 0xRRGGBB */
  /* Where it was described, for errors: "bank file 'f', group [label]" and the keys that gave the
   * scales and angles; empty for a list of files. */
  std::string origin, scales_key, angles_key;
};

/* The element's values for what a template does not set. */
struct BankDefaults {
  double threshold = 0.8;
  int max_matches = 1;
  std::vector<double> scales{1.0};
  std::vector<double> angles{0.0};
};

/* Parses a key file. Returns "" or one error naming the file, and the group and key at fault. */
std::string gst_cuda_prep_parse_bank_file(const std::string &path, std::vector<TemplateSpec> *out);

/* A list of template files (the `templates` property): labels from the file names. Returns "" or
 * an error (an empty list, an empty name, two files with one label). */
std::string gst_cuda_prep_bank_specs_from_files(const std::vector<std::string> &files, std::vector<TemplateSpec> *out);

/* Loads every template (and mask), makes its members and checks the bank (check_bank). A
 * template's threshold and max-matches are its description's (own_threshold / own_max_matches
 * set) or else @defaults'. FALSE with @error set on any error: more than kMaxBankTemplates
 * templates or kMaxBankMembers members (the message names the count), a file that cannot be
 * loaded, a member smaller than 4 or larger than 256 pixels on a side, a mask of another size, an
 * all-zero mask, a template with no variance under its mask, duplicate labels. @out is only
 * written on success. */
bool gst_cuda_prep_build_template_bank(const std::vector<TemplateSpec> &specs, const BankDefaults &defaults,
                                       cudaprep::TemplateBank *out, std::string *error);
