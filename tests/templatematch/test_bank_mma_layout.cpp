// The tensor-core bank kernel's layout (bank_mma_layout.h) without a GPU: a model of what the
// kernel's warps compute (ldmatrix and m16n8k32 fragments as PTX defines them, fed through the
// kernel's own address and index functions and the host's staged template rows) against direct
// correlation sums, for every group the plan makes of banks of 1..8 members of 4..256 px, on
// GPUs with 227, 163 and 99 KB of shared memory a block, and for every G a group can take.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bank_mma_layout.h"

using namespace cudaprep;
using namespace cudaprep::bank_mma;

namespace {

struct Plane {
  int rows, pitch_w;
  std::vector<uint32_t> words;
  int byte(int r, int x) const { return (words[static_cast<size_t>(r) * pitch_w + x / 4] >> (8 * (x % 4))) & 255; }
};

uint32_t funnel_right(uint32_t lo, uint32_t hi, int shift) {
  return shift == 0 ? lo : (lo >> shift) | (hi << (32 - shift));
}

// What the warps of one block sum with staged rows `staged` (A) over `plane` (B), indexed as the
// kernel stores them (sum_index). Every address the model reads is checked against its buffer.
std::vector<uint32_t> model_block(const GroupDev& g, const std::vector<uint8_t>& staged, const Plane& plane) {
  const MmaShape sh = mma_shape(g);
  std::vector<uint32_t> sums(static_cast<size_t>(g.gp) * sh.rows * kMmaTileX, 0xdeadbeefu);
  for (int warp = 0; warp < kMmaWarps; ++warp) {
    WarpLayout w{g.gp, g.rs, g.mgroups, g.th, g.chunks, g.pitch_w, g.tp, (warp >> 1) * g.mgroups * g.rs, warp & 1};
    // acc[lane][gi][s][e]
    std::vector<uint32_t> acc(32 * kMaxMGroups * 16, 0);
    for (int r = w.warp_row; r < live_end(w, w.mgroups - 1); ++r)
      for (int c = 0; c < w.chunks; ++c)
        for (int gi = 0; gi < w.mgroups; ++gi) {
          if (r < live_first(w, gi) || r >= live_end(w, gi)) continue;
          // A[m][k]: register (m >= 8) + 2 (k >= 16) of lane (m % 8, (k % 16) / 4), which ldmatrix
          // fills from row m % 8 of matrix i, whose address lane 8 i + m % 8 gives.
          uint8_t a[16][32];
          for (int m = 0; m < 16; ++m)
            for (int k = 0; k < 32; ++k) {
              const int i = (m >= 8) + 2 * (k >= 16);
              const int at = a_row_offset(w, 8 * i + m % 8, gi, r) + 32 * c + (k % 16);
              EXPECT_TRUE(at >= 0 && at < static_cast<int>(staged.size())) << "A row " << at;
              if (at < 0 || at >= static_cast<int>(staged.size())) return sums;
              a[m][k] = staged[at];
            }
          for (int s = 0; s < 4; ++s) {
            // B[k][n]: b0 (k < 16) or b1 of lane (n, (k % 16) / 4), byte k % 4.
            uint8_t b[32][8];
            for (int n = 0; n < 8; ++n)
              for (int t = 0; t < 4; ++t) {
                const int lane = 4 * n + t;
                uint32_t word[6];
                for (int k : {0, 1, 4, 5}) {
                  const int at = b_word(w, lane, r, c, k);
                  EXPECT_TRUE(at >= 0 && at < static_cast<int>(plane.words.size())) << "B word " << at;
                  if (at < 0 || at >= static_cast<int>(plane.words.size())) return sums;
                  word[k] = plane.words[at];
                }
                const uint32_t b0 = funnel_right(word[0], word[1], 8 * s), b1 = funnel_right(word[4], word[5], 8 * s);
                for (int q = 0; q < 4; ++q) {
                  b[4 * t + q][n] = (b0 >> (8 * q)) & 255;
                  b[16 + 4 * t + q][n] = (b1 >> (8 * q)) & 255;
                }
              }
            for (int lane = 0; lane < 32; ++lane)
              for (int e = 0; e < 4; ++e) {
                const int m = (lane >> 2) + 8 * (e >> 1), n = 2 * (lane & 3) + (e & 1);
                uint32_t d = 0;
                for (int k = 0; k < 32; ++k) d += static_cast<uint32_t>(a[m][k]) * b[k][n];
                acc[((lane * kMaxMGroups + gi) * 4 + s) * 4 + e] += d;
              }
          }
        }
    for (int lane = 0; lane < 32; ++lane)
      for (int gi = 0; gi < w.mgroups; ++gi)
        for (int s = 0; s < 4; ++s)
          for (int e = 0; e < 4; ++e) {
            const int at = sum_index(w, sh.rows, lane, gi, s, e);
            EXPECT_EQ(sums[at], 0xdeadbeefu) << "two accumulators for sum " << at;
            sums[at] = acc[((lane * kMaxMGroups + gi) * 4 + s) * 4 + e];
          }
  }
  return sums;
}

TemplateBank random_bank(std::mt19937& rng, int count, int max_side) {
  TemplateBank bank;
  for (int k = 0; k < count; ++k) {
    bank.templates.push_back(BankTemplate{});
    bank.templates.back().label = "t" + std::to_string(k);
    BankMember m;
    m.template_index = k;
    m.image.width = 4 + static_cast<int>(rng() % (max_side - 3));
    m.image.height = 4 + static_cast<int>(rng() % (max_side - 3));
    for (int i = 0; i < m.image.width * m.image.height; ++i) m.image.pixels.push_back(rng() & 255);
    if (k % 3 == 1)
      for (int i = 0; i < m.image.width * m.image.height; ++i) m.image.mask.push_back(rng() % 4 ? 1 : 0);
    bank.members.push_back(std::move(m));
  }
  return bank;
}

// Every member of group g, every block row and position, against direct sums of M T (or M).
void expect_group_sums(const TemplateBank& bank, const GroupDev& g, bool mask_only, std::mt19937& rng,
                       const std::string& what) {
  SCOPED_TRACE(what + (mask_only ? ", masks" : ", templates") + ": gp " + std::to_string(g.gp) + ", G " +
               std::to_string(g.mgroups) + ", " + std::to_string(g.tw) + "x" + std::to_string(g.th));
  const MmaShape sh = mma_shape(g);
  std::vector<uint8_t> staged(sh.staged_bytes);
  stage_group(bank, g, mask_only, staged.data());
  Plane plane{sh.stage_rows, g.pitch_w, {}};
  for (int i = 0; i < plane.rows * plane.pitch_w; ++i) plane.words.push_back(rng());
  const std::vector<uint32_t> sums = model_block(g, staged, plane);
  ASSERT_EQ(static_cast<int>(sums.size()), g.gp * sh.rows * kMmaTileX);
  int differ = 0;
  for (int slot = 0; slot < g.count; ++slot) {
    const MaskedGray& t = bank.members[g.member[slot]].image;
    for (int y = 0; y < sh.rows; ++y)
      for (int x = 0; x < kMmaTileX; ++x) {
        uint32_t direct = 0;
        for (int j = 0; j < t.height; ++j)
          for (int i = 0; i < t.width; ++i) {
            const size_t at = static_cast<size_t>(j) * t.width + i;
            const bool in = !t.masked() || t.mask[at];
            direct += (in ? (mask_only ? 1u : t.pixels[at]) : 0u) * plane.byte(y + j, x + i);
          }
        differ += sums[sum_at(g.rs, sh.rows, slot, y, x)] != direct;
      }
  }
  EXPECT_EQ(differ, 0);
}

}  // namespace

TEST(BankMmaLayout, EveryPlannedGroupSumsLikeDirectCorrelation) {
  std::mt19937 rng(7);
  const int smem_limits[] = {227 << 10, 163 << 10, 99 << 10};
  const struct {
    int count, max_side;
  } banks[] = {{1, 20}, {2, 40}, {3, 70}, {5, 33}, {8, 64}, {8, 100}, {4, 130}, {1, 256}, {8, 20}};
  for (int limit : smem_limits)
    for (const auto& b : banks) {
      const TemplateBank bank = random_bank(rng, b.count, b.max_side);
      std::vector<MemberShape> shapes;
      for (const BankMember& m : bank.members)
        shapes.push_back(MemberShape{m.image.width, m.image.height, m.image.masked() ? 1 : 0});
      const std::vector<GroupPlan> plan = plan_groups(shapes, limit);
      std::vector<int> seen(bank.members.size(), 0);
      for (const GroupPlan& gp : plan) {
        for (int m : gp.members) ++seen[m];
        ASSERT_EQ(static_cast<int>(gp.members.size()), gp.dev.count);
        if (gp.dev.mgroups == 0) continue;  // does not fit: the bank runs on the CUDA cores
        EXPECT_LE(mma_smem(gp.dev).total, limit);
        const std::string what = "bank of " + std::to_string(b.count) + " up to " + std::to_string(b.max_side) +
                                 " px, limit " + std::to_string(limit);
        expect_group_sums(bank, gp.dev, false, rng, what);
        if (gp.dev.masked) expect_group_sums(bank, gp.dev, true, rng, what);
      }
      for (size_t m = 0; m < seen.size(); ++m) EXPECT_EQ(seen[m], 1) << "member " << m;
    }
}

// The plan's groups are the cut of its order into runs whose group_cost adds up least, among
// every cut whose runs of several fit two blocks an SM with G >= 2 and share the masked flag
// (all cuts of banks of up to 10 members, against the sums of the plan's own groups).
TEST(BankMmaLayout, PlanCutsTheOrderWhereTheEstimatedCostIsLeast) {
  std::mt19937 rng(5);
  int cheaper_than_runs_of_8 = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int count = 1 + static_cast<int>(rng() % 10);
    std::vector<MemberShape> shapes;
    for (int k = 0; k < count; ++k)
      shapes.push_back(
          MemberShape{4 + static_cast<int>(rng() % 127), 4 + static_cast<int>(rng() % 127), rng() % 5 == 0 ? 1 : 0});
    const int limit = 227 << 10;
    const std::vector<GroupPlan> plan = plan_groups(shapes, limit);
    std::vector<int> order;
    double planned = 0;
    for (const GroupPlan& gp : plan) {
      order.insert(order.end(), gp.members.begin(), gp.members.end());
      planned += group_cost(gp.dev);
    }
    ASSERT_EQ(static_cast<int>(order.size()), count);
    double least = -1, runs_of_8 = -1;
    for (unsigned cuts = 0; cuts < (1u << (count - 1)); ++cuts) {  // bit i: a cut after member i
      double total = 0;
      bool allowed = true;
      for (int at = 0; at < count && allowed;) {
        int end = at + 1;
        while (end < count && !(cuts >> (end - 1) & 1u)) ++end;
        const int n = end - at;
        at = end;
        allowed &= n <= 8;  // (a group has 8 slots at most)
        if (!allowed) break;
        const GroupDev g = make_group(shapes, &order[end - n], n, limit);
        for (int k = end - n; k < end; ++k) allowed &= shapes[order[k]].masked == shapes[order[end - n]].masked;
        allowed &= n == 1 || (g.mgroups >= 2 && mma_smem(g).total <= (113 << 10));
        total += group_cost(g);
      }
      if (!allowed) continue;
      if (least < 0 || total < least) least = total;
      bool eights = true;  // runs of 8 from the start (each masked run on its own)
      for (int i = 1; i < count; ++i) {
        const bool boundary = shapes[order[i]].masked != shapes[order[i - 1]].masked;
        const bool cut = (cuts >> (i - 1) & 1u) != 0;
        eights &= cut == boundary;  // (runs of at most 8: only for banks of up to 8 members)
      }
      if (eights && count <= 8) runs_of_8 = total;
    }
    ASSERT_GE(least, 0);
    EXPECT_LE(planned, least + 1e-3 * count) << "bank of " << count;  // (ties go to fewer groups)
    if (runs_of_8 > 0 && planned < runs_of_8 * 0.999) ++cheaper_than_runs_of_8;
  }
  EXPECT_GT(cheaper_than_runs_of_8, 0);  // the search changes some plans, not only keeps runs of 8
}

// Each G (M-groups a warp) and slot count, whatever the plan would choose.
TEST(BankMmaLayout, EveryShapeOfWarp) {
  std::mt19937 rng(11);
  for (int count : {1, 2, 3, 4, 7, 8})
    for (int mgroups : {1, 2, 4}) {
      const TemplateBank bank = random_bank(rng, count, 45);
      std::vector<MemberShape> shapes;
      std::vector<int> ids;
      for (const BankMember& m : bank.members) {
        shapes.push_back(MemberShape{m.image.width, m.image.height, 0});
        ids.push_back(static_cast<int>(ids.size()));
      }
      GroupDev g = make_group(shapes, ids.data(), count, 227 << 10);
      ASSERT_GT(g.mgroups, 0);
      g.mgroups = mgroups;
      expect_group_sums(bank, g, false, rng, std::to_string(count) + " members");
    }
}

// Each accumulator store of a warp (one gi, s, e for all 32 lanes) writes 32 distinct words in
// 32 distinct banks, whatever the slots and G: the sums' rotation spreads the 8 slots or rows
// that would otherwise share a bank.
TEST(BankMmaLayout, AccumulatorStoresAreFreeOfBankConflicts) {
  for (int gp : {1, 2, 4, 8})
    for (int mgroups : {1, 2, 4}) {
      const int rs = 16 / gp, rows = (kMmaWarps / 2) * mgroups * rs;
      for (int warp = 0; warp < kMmaWarps; ++warp) {
        const WarpLayout w{gp, rs, mgroups, 8, 1, 20, 48, (warp >> 1) * mgroups * rs, warp & 1};
        for (int gi = 0; gi < mgroups; ++gi)
          for (int s = 0; s < 4; ++s)
            for (int e = 0; e < 4; ++e) {
              unsigned banks = 0;
              for (int lane = 0; lane < 32; ++lane) {
                const int at = sum_index(w, rows, lane, gi, s, e);
                ASSERT_GE(at, 0);
                ASSERT_LT(at, gp * rows * kMmaTileX);
                banks |= 1u << (at % 32);
              }
              EXPECT_EQ(banks, 0xffffffffu)
                  << "gp " << gp << " G " << mgroups << " warp " << warp << " gi " << gi << " s " << s << " e " << e;
            }
      }
    }
}

// The plan of the case the benchmarks time: eight 64 px templates in one group, G 4, two blocks
// an SM on a 227 KB GPU. A 256 px member alone fits that GPU, masked too (three sums beside its
// staged rows); masked, it does not fit 163 KB, and is scored on the CUDA cores there.
TEST(BankMmaLayout, PlanOfEightTemplatesOf64PixelsAndOfTheLargestMembers) {
  std::vector<MemberShape> eight(8, MemberShape{64, 64, 0});
  const std::vector<GroupPlan> plan = plan_groups(eight, 227 << 10);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].dev.gp, 8);
  EXPECT_EQ(plan[0].dev.mgroups, 4);
  EXPECT_LE(2 * (mma_smem(plan[0].dev).total + 1024), 228 << 10);
  const std::vector<GroupPlan> big = plan_groups({MemberShape{256, 256, 0}}, 227 << 10);
  ASSERT_EQ(big.size(), 1u);
  EXPECT_GT(big[0].dev.mgroups, 0);
  EXPECT_LE(mma_smem(big[0].dev).total, 227 << 10);
  for (int limit : {227 << 10, 163 << 10}) {
    const std::vector<GroupPlan> masked = plan_groups({MemberShape{256, 256, 1}}, limit);
    ASSERT_EQ(masked.size(), 1u);
    EXPECT_EQ(masked[0].dev.mgroups > 0, limit == 227 << 10);
  }
}
