// CPU bank matcher: per member, the correlation with its masked template as rows of u8 x u8
// products (the single-template matcher's mac_row), and the window sums under the mask from row
// prefix sums over the mask's runs; exact integers, one double quotient per position.
#include <algorithm>
#include <cmath>
#include <limits>

#include "bank_match.h"
#include "templatematch_internal.h"
#include "worker_pool.h"

namespace cudaprep {

// A member as the CPU path reads it: the template with zeros outside the mask, and the mask's
// runs per row (an unmasked member: one run of the full width per row).
struct BankMatcherCpu::Prepared {
  std::vector<uint8_t> masked_pixels;
  std::vector<int> run_begin;  // per row j: runs [run_begin[j], run_begin[j + 1]) of runs
  std::vector<std::pair<int, int>> runs;
};

namespace {

struct MemberJob {
  const uint8_t* frame;  // first byte of the region
  int64_t stride;
  const uint32_t* prefix;  // per region row: r.w + 1 sums of I, then r.w + 1 sums of I^2
  int64_t prefix_pitch;    // 2 * (r.w + 1)
  int mw, mh, tw, th;
  const uint8_t* templ;
  const int* run_begin;
  const std::pair<int, int>* runs;
  MemberStats stats;
  bool masked;
  float* out;
  uint32_t* scratch;  // 3 * mw per worker
};

void member_rows(const MemberJob& job, int worker, int v0, int v1) {
  const int mw = job.mw;
  uint32_t* acc = job.scratch + static_cast<int64_t>(worker) * 3 * mw;
  uint32_t* s1 = acc + mw;
  uint32_t* s2 = s1 + mw;
  for (int v = v0; v < v1; ++v) {
    std::fill(acc, acc + 3 * mw, 0u);
    for (int j = 0; j < job.th; ++j) {
      const uint8_t* row = job.frame + (v + j) * job.stride;
      const uint8_t* trow = job.templ + static_cast<int64_t>(j) * job.tw;
      for (int i = 0; i < job.tw; ++i)
        if (trow[i]) tm::mac_row(acc, row + i, trow[i], mw);
      const uint32_t* p1 = job.prefix + (v + j) * job.prefix_pitch;
      const uint32_t* p2 = p1 + job.prefix_pitch / 2;
      for (int k = job.run_begin[j]; k < job.run_begin[j + 1]; ++k) {
        const int a = job.runs[k].first, b = job.runs[k].second;
        for (int u = 0; u < mw; ++u) {
          s1[u] += p1[u + b] - p1[u + a];  // modulo 2^32: exact, the window's sums fit
          s2[u] += p2[u + b] - p2[u + a];
        }
      }
    }
    float* out = job.out + static_cast<int64_t>(v) * mw;
    for (int u = 0; u < mw; ++u)
      out[u] = tm::bank_ccoeff_normed(job.stats.n, job.stats.st, job.stats.var_t, s1[u], s2[u], acc[u], job.masked);
  }
}

}  // namespace

BankMatcherCpu::BankMatcherCpu() = default;
BankMatcherCpu::~BankMatcherCpu() = default;

Status BankMatcherCpu::set_bank(const TemplateBank& bank) {
  std::vector<MemberStats> stats;
  CUDAPREP_RETURN_IF_ERROR(check_bank(bank, &stats));
  std::vector<Prepared> prepared(bank.members.size());
  for (size_t m = 0; m < bank.members.size(); ++m) {
    const MaskedGray& g = bank.members[m].image;
    Prepared& p = prepared[m];
    p.masked_pixels = g.pixels;
    p.run_begin.push_back(0);
    for (int j = 0; j < g.height; ++j) {
      int i = 0;
      while (i < g.width) {
        const size_t at = static_cast<size_t>(j) * g.width;
        if (g.masked() && !g.mask[at + i]) {
          p.masked_pixels[at + i] = 0;
          ++i;
          continue;
        }
        int e = i;
        while (e < g.width && (!g.masked() || g.mask[at + e])) ++e;
        p.runs.emplace_back(i, e);
        i = e;
      }
      p.run_begin.push_back(static_cast<int>(p.runs.size()));
    }
  }
  bank_ = bank;
  stats_ = std::move(stats);
  prepared_ = std::move(prepared);
  return Status();
}

Status BankMatcherCpu::score_map(const GrayView& frame, int member, const Rect& region, std::vector<float>* scores,
                                 int* map_w, int* map_h) {
  if (!has_bank()) return Status::error("no template bank set");
  if (member < 0 || member >= static_cast<int>(bank_.members.size()))
    return Status::error("no member " + std::to_string(member) + " in the bank");
  CUDAPREP_RETURN_IF_ERROR(tm::check_gray(frame, "frame"));
  const MaskedGray& g = bank_.members[member].image;
  Rect r;
  Status st = resolve_search_region(frame.width, frame.height, g.width, g.height, region, &r);
  if (!st.ok()) return Status::error("template " + member_name(bank_, member) + ": " + st.message());
  const int mw = r.w - g.width + 1, mh = r.h - g.height + 1;

  // Row prefix sums of I and I^2 over the region (grown only).
  const int64_t pitch = 2 * static_cast<int64_t>(r.w + 1);
  const size_t workers_max = static_cast<size_t>(WorkerPool::shared().max_threads());
  const size_t need = static_cast<size_t>(pitch) * r.h + workers_max * 3 * mw;
  if (scratch_.size() < need) scratch_.resize(need);
  uint32_t* prefix = scratch_.data();
  for (int y = 0; y < r.h; ++y) {
    const uint8_t* row = frame.data + (r.y + y) * frame.stride + r.x;
    uint32_t* p1 = prefix + y * pitch;
    uint32_t* p2 = p1 + r.w + 1;
    p1[0] = p2[0] = 0;
    for (int x = 0; x < r.w; ++x) {
      p1[x + 1] = p1[x] + row[x];
      p2[x + 1] = p2[x] + static_cast<uint32_t>(row[x]) * row[x];
    }
  }
  scores->resize(static_cast<size_t>(mw) * mh);
  const Prepared& p = prepared_[member];
  MemberJob job{frame.data + r.y * frame.stride + r.x,
                frame.stride,
                prefix,
                pitch,
                mw,
                mh,
                g.width,
                g.height,
                p.masked_pixels.data(),
                p.run_begin.data(),
                p.runs.data(),
                stats_[member],
                g.masked(),
                scores->data(),
                prefix + pitch * r.h};
  // Below ~8M multiply-adds a thread costs more than it saves.
  const int64_t work = static_cast<int64_t>(mw) * mh * g.width * g.height;
  const int workers =
      static_cast<int>(std::min<int64_t>({static_cast<int64_t>(workers_max), work / (8ll << 20) + 1, mh}));
  WorkerPool::shared().parallel_for(workers, [&job, mh, workers](int w) {
    member_rows(job, w, static_cast<int>(static_cast<int64_t>(mh) * w / workers),
                static_cast<int>(static_cast<int64_t>(mh) * (w + 1) / workers));
  });
  *map_w = mw;
  *map_h = mh;
  return Status();
}

Status BankMatcherCpu::match(const GrayView& frame, const BankSearch& search, bool suppress_across_templates,
                             std::vector<Match>* matches) {
  matches->clear();
  candidates_.clear();
  if (!has_bank()) return Status::error("no template bank set");
  CUDAPREP_RETURN_IF_ERROR(check_bank_search(bank_, search));
  for (size_t m = 0; m < bank_.members.size(); ++m) {
    const Rect& region = search.regions[m];
    if (region.empty()) continue;
    int mw = 0, mh = 0;
    CUDAPREP_RETURN_IF_ERROR(score_map(frame, static_cast<int>(m), region, &map_, &mw, &mh));
    const MaskedGray& g = bank_.members[m].image;
    const double threshold = search.thresholds[bank_.members[m].template_index];
    const int cw = tm::cell_side(g.width), ch = tm::cell_side(g.height);
    for (int v0 = 0; v0 < mh; v0 += ch) {
      const int v1 = std::min(mh, v0 + ch);
      for (int u0 = 0; u0 < mw; u0 += cw) {
        const int u1 = std::min(mw, u0 + cw);
        // Row-major scan with a strict comparison: ties keep the lowest y, then x; NaN never wins.
        float best = -std::numeric_limits<float>::infinity();
        int bu = -1, bv = -1;
        for (int v = v0; v < v1; ++v) {
          const float* row = map_.data() + static_cast<int64_t>(v) * mw;
          for (int u = u0; u < u1; ++u)
            if (row[u] > best) {
              best = row[u];
              bu = u;
              bv = v;
            }
        }
        if (bu < 0 || !(static_cast<double>(best) >= threshold)) continue;
        BankCandidate c;
        c.x = region.x + bu;
        c.y = region.y + bv;
        c.score = best;
        c.member = static_cast<int>(m);
        tm::subpixel_at(map_.data(), mw, mw, mh, bu, bv, &c.dx, &c.dy);
        candidates_.push_back(c);
      }
    }
  }
  sort_bank_candidates(&candidates_);
  selected_ = candidates_;
  select_bank_matches(bank_, search, suppress_across_templates, &selected_, matches);
  return Status();
}

}  // namespace cudaprep
