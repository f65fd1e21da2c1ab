// The tensor-core bank kernel's groups (bank_mma_layout.h): host code, no CUDA.
#include <algorithm>

#include "bank_mma_layout.h"

namespace cudaprep {
namespace bank_mma {
namespace {

constexpr int kMmaSmemPreferred = 113 << 10;  // two blocks an SM (228 KB, 1 KB a block reserved)
constexpr double kPerGroup = 1e-3;            // plan_groups: a tie goes to fewer groups

}  // namespace

GroupDev make_group(const std::vector<MemberShape>& members, const int* ids, int count, int smem_optin) {
  GroupDev g{};
  g.count = count;
  g.gp = 1;
  while (g.gp < count) g.gp *= 2;
  g.rs = 16 / g.gp;
  // Slots by height, then width: the scoring kernel's epilogue takes each box size once, each
  // size's column sums continuing the previous size's.
  std::copy(ids, ids + count, g.member);
  std::stable_sort(g.member, g.member + count, [&](int a, int b) {
    if (members[a].th != members[b].th) return members[a].th < members[b].th;
    return members[a].tw < members[b].tw;
  });
  for (int k = 0; k < count; ++k) {
    const MemberShape& md = members[g.member[k]];
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

double group_cost(const GroupDev& g) {
  if (g.mgroups == 0) return 1e12;  // no block holds it: the CUDA cores score it
  const MmaShape sh = mma_shape(g);
  // m16n8k32 products a position: 8 warps x G M-groups x (rs + th - 1) image rows x chunks x 4
  // shifts a block of 4 G rs rows x 64 positions; 4 passes for a masked group.
  const double products = static_cast<double>(g.chunks) * (g.rs + g.th - 1) / (8.0 * g.rs) * (g.masked ? 4 : 1);
  // With fewer M-groups a warp, each frame word feeds fewer products (measured on an H200: the
  // 32 x 16..128 px bank's G 2 groups about 1.1x the G 4 group's time a product).
  const double per_product = g.mgroups >= 4 ? 1.0 : g.mgroups == 2 ? 1.1 : 1.25;
  // Staging: about 0.85 products' time a staged word (8 x 64 px: 30 us of staging and tables
  // beside 187 us of products).
  const double staging = 0.85 * sh.stage_rows * g.pitch_w / (sh.rows * static_cast<double>(kMmaTileX));
  return products * per_product + staging;
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
  // The cheapest cut of the order into runs: best[j] for the first j members, from[j] where its
  // last run starts. A run of several shares the masked flag and fits two blocks an SM with G >= 2;
  // each run costs kPerGroup more than its estimate, so that equal estimates take fewer groups.
  std::vector<double> best(count + 1, 0.0);
  std::vector<int> from(count + 1, 0);
  std::vector<GroupDev> last(count + 1);
  for (int j = 1; j <= count; ++j) {
    best[j] = -1;
    for (int k = 1; k <= std::min(8, j); ++k) {
      const int i = j - k;
      if (members[order[i]].masked != members[order[j - 1]].masked) break;
      const GroupDev g = make_group(members, &order[i], k, smem_optin);
      if (k > 1 && (g.mgroups < 2 || mma_smem(g).total > kMmaSmemPreferred)) continue;
      const double c = best[i] + group_cost(g) + kPerGroup;
      if (best[j] < 0 || c < best[j]) {
        best[j] = c;
        from[j] = i;
        last[j] = g;
      }
    }
  }
  std::vector<GroupPlan> groups;
  for (int j = count; j > 0; j = from[j]) {
    GroupPlan gp;
    gp.dev = last[j];
    gp.members.assign(order.begin() + from[j], order.begin() + j);
    groups.push_back(std::move(gp));
  }
  std::reverse(groups.begin(), groups.end());
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
