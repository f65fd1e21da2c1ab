// Checks a bank of templates and computes each member's statistics under its mask.
#include "template_bank.h"

#include <set>
#include <sstream>

#include "templatematch.h"

namespace cudaprep {

namespace {
std::string dims(int w, int h) { return std::to_string(w) + "x" + std::to_string(h); }

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}
}  // namespace

std::string member_name(const TemplateBank& bank, int member) {
  const BankMember& m = bank.members[member];
  const bool known = m.template_index >= 0 && m.template_index < static_cast<int>(bank.templates.size());
  std::string name = known ? "\"" + bank.templates[m.template_index].label + "\"" : "member " + std::to_string(member);
  if (m.scale != 1.0 || m.angle != 0.0) name += " (scale " + number(m.scale) + ", angle " + number(m.angle) + ")";
  return name;
}

Status check_bank(const TemplateBank& bank, std::vector<MemberStats>* stats) {
  const int templates = static_cast<int>(bank.templates.size());
  const int members = static_cast<int>(bank.members.size());
  if (templates == 0 || members == 0) return Status::error("the template bank is empty");
  if (templates > kMaxBankTemplates)
    return Status::error(std::to_string(templates) + " templates: a bank holds at most " +
                         std::to_string(kMaxBankTemplates));
  if (members > kMaxBankMembers)
    return Status::error(std::to_string(members) + " templates at all their scales and angles: a bank holds at most " +
                         std::to_string(kMaxBankMembers));
  std::set<std::string> labels;
  for (const BankTemplate& t : bank.templates) {
    if (t.label.empty()) return Status::error("a template has an empty label");
    if (!labels.insert(t.label).second) return Status::error("two templates are labelled \"" + t.label + "\"");
    if (!(t.threshold >= -1.0 && t.threshold <= 1.0))
      return Status::error("template \"" + t.label + "\": threshold " + number(t.threshold) + " is not in -1..1");
    if (t.max_matches < 1 || t.max_matches > kMaxMatches)
      return Status::error("template \"" + t.label + "\": max-matches " + std::to_string(t.max_matches) +
                           " is not in 1.." + std::to_string(kMaxMatches));
  }
  std::vector<MemberStats> out(members);
  for (int i = 0; i < members; ++i) {
    const BankMember& m = bank.members[i];
    if (m.template_index < 0 || m.template_index >= templates)
      return Status::error("member " + std::to_string(i) + " names template " + std::to_string(m.template_index) +
                           " of " + std::to_string(templates));
    const MaskedGray& g = m.image;
    const std::string name = "template " + member_name(bank, i);
    if (g.width < kMinTemplateSide || g.height < kMinTemplateSide || g.width > kMaxTemplateSide ||
        g.height > kMaxTemplateSide)
      return Status::error(name + " is " + dims(g.width, g.height) + ": a template is " +
                           std::to_string(kMinTemplateSide) + " to " + std::to_string(kMaxTemplateSide) +
                           " pixels on a side");
    const size_t px = static_cast<size_t>(g.width) * g.height;
    if (g.pixels.size() != px)
      return Status::error(name + ": " + std::to_string(g.pixels.size()) + " pixels for " + dims(g.width, g.height));
    if (g.masked() && g.mask.size() != px)
      return Status::error(name + ": its mask has " + std::to_string(g.mask.size()) + " values, the template " +
                           dims(g.width, g.height) + " has " + std::to_string(px) + " pixels");
    int64_t n = 0, st = 0, stt = 0;
    for (size_t p = 0; p < px; ++p) {
      if (g.masked() && !g.mask[p]) continue;
      ++n;
      st += g.pixels[p];
      stt += static_cast<int64_t>(g.pixels[p]) * g.pixels[p];
    }
    if (n == 0) return Status::error(name + ": its mask is empty (all zero)");
    const int64_t var_t = n * stt - st * st;
    if (var_t <= 0)
      return Status::error(name + (g.masked() ? ": no variance under its mask" : ": no variance (flat)") +
                           ": TM_CCOEFF_NORMED is undefined for it");
    out[i] = MemberStats{n, st, var_t};
  }
  if (stats) *stats = std::move(out);
  return Status();
}

}  // namespace cudaprep
