// A bank of templates matched together: each member is one prepared template image (a user's
// template at one scale and one angle), with an optional binary mask.
//
// Masked score (OpenCV's matchTemplate with a mask, TM_CCOEFF_NORMED, for a binary mask M):
//   R = (n * sum(M T I) - sum(M T) * sum(M I)) / sqrt((n * sum(M T^2) - sum(M T)^2) *
//                                                      (n * sum(M I^2) - sum(M I)^2)),  n = sum M,
// all sums exact integers, the quotient in double as for an unmasked template. OpenCV binarises an
// 8-bit mask (any non-zero value counts), so a non-binary alpha counts wherever it is above 0.
// A window with no variance under the mask has no score: OpenCV divides by zero there (+-inf or
// NaN); the bank gives NaN in a score map, and such a window is never a match. An unmasked member
// keeps the unmasked definition (a flat window scores 0).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "image.h"
#include "status.h"

namespace cudaprep {

constexpr int kMinTemplateSide = 4;
constexpr int kMaxBankTemplates = 64;  // user templates (labels) in one bank
constexpr int kMaxBankMembers = 256;   // members: templates x scales x angles

// A gray template with its mask: mask empty = every pixel counts; else width * height bytes,
// non-zero = counts.
struct MaskedGray {
  std::vector<uint8_t> pixels;  // width * height, no padding
  std::vector<uint8_t> mask;
  int width = 0, height = 0;
  bool masked() const { return !mask.empty(); }
};

// One member of a bank, as the matchers take it.
struct BankMember {
  MaskedGray image;
  int template_index = 0;  // which user template it belongs to (its label, thresholds, suppression group)
  double scale = 1.0, angle = 0.0;
};

// Per user template: what a match of any of its members reports and how many are kept.
struct BankTemplate {
  std::string label;
  double threshold = 0.8;
  int max_matches = 1;
  // Set by the template's own description; else the element's threshold / max-matches apply.
  bool own_threshold = false, own_max_matches = false;
  // Tracking: the template's own margin around its last matches (own_track_margin), in pixels or
  // in template sizes; else the element's.
  bool own_track_margin = false, track_margin_in_pixels = false;
  double track_margin = 0;
  // Its boxes' colour (own_color), 0xRRGGBB; else the element's.
  bool own_color = false;
  uint32_t color = 0;
};

struct TemplateBank {
  std::vector<BankTemplate> templates;
  std::vector<BankMember> members;
};

// Exact statistics of a member (under its mask): n = sum M, st = sum M T, var_t = n sum M T^2 - st^2.
struct MemberStats {
  int64_t n = 0, st = 0, var_t = 0;
};

// Checks a bank (sizes 4..256 px, mask size, an all-zero mask, no variance under the mask, the
// member and template limits, member template indices) and computes every member's statistics.
// Errors name the template's label, and its scale and angle where they are not 1 and 0.
Status check_bank(const TemplateBank& bank, std::vector<MemberStats>* stats);

// "label" or "label (scale 0.5, angle 10)": how errors and logs name a member.
std::string member_name(const TemplateBank& bank, int member);

}  // namespace cudaprep
