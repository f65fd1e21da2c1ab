// Host code shared by the CPU and CUDA bank matchers: region checks and the suppression over the
// candidates of all members.
#include <algorithm>

#include "bank_match.h"
#include "templatematch_internal.h"

namespace cudaprep {

Status check_member_region(const TemplateBank& bank, int member, int frame_w, int frame_h, const Rect& region) {
  if (region.empty()) return Status();
  const MaskedGray& g = bank.members[member].image;
  Rect resolved;
  Status st = resolve_search_region(frame_w, frame_h, g.width, g.height, region, &resolved);
  if (!st.ok()) return Status::error("template " + member_name(bank, member) + ": " + st.message());
  return Status();
}

BankSearch BankSearch::over(const TemplateBank& bank, const Rect& region) {
  BankSearch s;
  s.regions.assign(bank.members.size(), region);
  for (const BankTemplate& t : bank.templates) {
    s.thresholds.push_back(t.threshold);
    s.max_matches.push_back(t.max_matches);
  }
  return s;
}

Status check_bank_search(const TemplateBank& bank, const BankSearch& search) {
  if (search.regions.size() != bank.members.size())
    return Status::error("the search names " + std::to_string(search.regions.size()) + " regions for " +
                         std::to_string(bank.members.size()) + " templates");
  if (search.thresholds.size() != bank.templates.size() || search.max_matches.size() != bank.templates.size())
    return Status::error("the search's thresholds and limits do not match the bank's templates");
  for (size_t t = 0; t < bank.templates.size(); ++t) {
    if (!(search.thresholds[t] >= -1.0 && search.thresholds[t] <= 1.0))
      return Status::error("template \"" + bank.templates[t].label + "\": threshold is not in -1..1");
    if (search.max_matches[t] < 1 || search.max_matches[t] > kMaxMatches)
      return Status::error("template \"" + bank.templates[t].label + "\": max-matches is not in 1.." +
                           std::to_string(kMaxMatches));
  }
  return Status();
}

void sort_bank_candidates(std::vector<BankCandidate>* candidates) {
  std::sort(candidates->begin(), candidates->end(), [](const BankCandidate& a, const BankCandidate& b) {
    if (a.member != b.member) return a.member < b.member;
    if (a.y != b.y) return a.y < b.y;
    return a.x < b.x;
  });
}

double bank_score(const MemberStats& s, bool masked, int64_t si, int64_t sii, int64_t sti) {
  return tm::bank_ccoeff_normed(s.n, s.st, s.var_t, si, sii, sti, masked);
}

void select_bank_matches(const TemplateBank& bank, const BankSearch& search, bool suppress_across_templates,
                         std::vector<BankCandidate>* candidates, std::vector<Match>* matches) {
  matches->clear();
  std::sort(candidates->begin(), candidates->end(), [](const BankCandidate& a, const BankCandidate& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.y != b.y) return a.y < b.y;
    if (a.x != b.x) return a.x < b.x;
    return a.member < b.member;
  });
  const int templates = static_cast<int>(bank.templates.size());
  int kept_per_template[kMaxBankTemplates] = {};
  int open = templates;  // templates that may still take a match
  for (const BankCandidate& c : *candidates) {
    if (open == 0) break;
    const BankMember& m = bank.members[c.member];
    const int t = m.template_index;
    if (kept_per_template[t] >= search.max_matches[t]) continue;
    const int w = m.image.width, h = m.image.height;
    bool overlaps = false;
    for (const Match& k : *matches) {
      if (!suppress_across_templates && bank.members[k.member].template_index != t) continue;
      if (c.x < k.x + k.width && k.x < c.x + w && c.y < k.y + k.height && k.y < c.y + h) {
        overlaps = true;
        break;
      }
    }
    if (overlaps) continue;
    Match out;
    out.x = c.x;
    out.y = c.y;
    out.width = w;
    out.height = h;
    out.sub_x = c.x + c.dx;
    out.sub_y = c.y + c.dy;
    out.score = c.score;
    out.member = c.member;
    matches->push_back(out);
    if (++kept_per_template[t] == search.max_matches[t]) --open;
  }
}

}  // namespace cudaprep
