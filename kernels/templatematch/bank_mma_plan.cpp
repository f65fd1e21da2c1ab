// The tensor-core bank kernel's groups (bank_mma_layout.h): host code, no CUDA.
#include <algorithm>

#include "bank_mma_layout.h"

namespace cudaprep {
namespace bank_mma {
namespace {

constexpr int kMmaSmemPreferred = 113 << 10;  // two blocks an SM (228 KB, 1 KB a block reserved)

}  // namespace

GroupDev make_group(const std::vector<MemberShape>& members, const int* ids, int count, int smem_optin) {
  GroupDev g{};
  g.count = count;
  g.gp = 1;
  while (g.gp < count) g.gp *= 2;
  g.rs = 16 / g.gp;
  for (int k = 0; k < count; ++k) {
    const MemberShape& md = members[ids[k]];
    g.member[k] = ids[k];
    g.th = std::max(g.th, md.th);
    g.tw = std::max(g.tw, md.tw);
    g.masked |= md.masked;
  }
  g.chunks = (g.tw + 31) / 32;
  g.pitch_w = 8 * g.chunks + 17;  // B reads words up to 8 chunks + 15 of a row
  g.tp = 32 * g.chunks + 16;
  g.srows = g.th + 2 * (g.rs - 1);
  int fits = 0;
  for (int mg = kMaxMGroups; mg >= 1; mg /= 2) {
    g.mgroups = mg;
    const int need = mma_smem(g).total;
    if (need > smem_optin) continue;
    if (fits == 0) fits = mg;  // the largest G that fits at all
    if (need <= kMmaSmemPreferred) {
      fits = mg;  // the largest that fits two blocks an SM
      break;
    }
  }
  g.mgroups = fits;
  return g;
}

std::vector<GroupPlan> plan_groups(const std::vector<MemberShape>& members, int smem_optin) {
  const int count = static_cast<int>(members.size());
  std::vector<int> order(count);
  for (int m = 0; m < count; ++m) order[m] = m;
  auto chunks = [&](int m) { return (members[m].tw + 31) / 32; };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (members[a].masked != members[b].masked) return members[a].masked < members[b].masked;
    if (chunks(a) != chunks(b)) return chunks(a) < chunks(b);
    return members[a].th < members[b].th;
  });
  std::vector<GroupPlan> groups;
  for (int at = 0; at < count;) {
    int n = 0;
    while (at + n < count && n < 8 && members[order[at + n]].masked == members[order[at]].masked) ++n;
    GroupDev g = make_group(members, &order[at], n, smem_optin);
    for (int k = n; k > 1;) {  // halve while it misses two blocks an SM with G >= 2
      if (g.mgroups >= 2 && mma_smem(g).total <= kMmaSmemPreferred) break;
      k = (k + 1) / 2;
      const GroupDev smaller = make_group(members, &order[at], k, smem_optin);
      if (smaller.mgroups == 0) break;
      g = smaller;
      n = k;
    }
    GroupPlan gp;
    gp.dev = g;
    gp.members.assign(order.begin() + at, order.begin() + at + n);
    groups.push_back(std::move(gp));
    at += n;
  }
  return groups;
}

// A group's template rows as a block stages them: super-row j + rs - 1 holds row j of every slot
// (tp bytes each, zero beyond the member's width and height), rs - 1 zero super-rows on each side;
// of M T (mask_only false) or of M (1 where counted).
void stage_group(const TemplateBank& bank, const GroupDev& g, bool mask_only, uint8_t* out) {
  std::fill(out, out + static_cast<size_t>(mma_shape(g).staged_bytes), uint8_t{0});
  for (int slot = 0; slot < g.count; ++slot) {
    const MaskedGray& img = bank.members[g.member[slot]].image;
    for (int j = 0; j < img.height; ++j)
      for (int i = 0; i < img.width; ++i) {
        const size_t at = static_cast<size_t>(j) * img.width + i;
        const bool in = !img.masked() || img.mask[at];
        out[(static_cast<size_t>(j + g.rs - 1) * g.gp + slot) * g.tp + i] = !in ? 0 : mask_only ? 1 : img.pixels[at];
      }
  }
}

}  // namespace bank_mma
}  // namespace cudaprep
