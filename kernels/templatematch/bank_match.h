// Matching a bank of templates (template_bank.h) in one pass over the frame: the CPU path and
// the CUDA path compute the same exact integer sums for every member, so their scores are
// identical.
//
// Each member is searched in its own region of the frame (the whole search region, or a
// tracking window). Peaks: per member, the score map is split into cells no larger than the
// member (cells of at most 32 x 32, aligned to the member's region); each cell contributes its
// best position (ties: lowest y, then lowest x; windows with no score skipped) if it reaches
// its template's threshold, with parabolic sub-pixel offsets as for one template.
// Suppression (select_bank_matches): candidates are taken best first (score, then y, x, member);
// one is kept unless its box overlaps (intersects) a kept match of the same template (of any
// template, with suppress_across_templates) or its template already has max_matches.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "image.h"
#include "status.h"
#include "template_bank.h"
#include "templatematch.h"

namespace cudaprep {

// A peak of one member's score map, in frame coordinates.
struct BankCandidate {
  int x = 0, y = 0;
  float score = 0;
  int member = 0;
  double dx = 0, dy = 0;  // sub-pixel offsets
};
static_assert(sizeof(BankCandidate) == 32, "BankCandidate layout is shared with the device");

// The search of one frame: per member, its region (empty: the member is not searched); per
// template, the threshold and the most matches kept.
struct BankSearch {
  std::vector<Rect> regions;
  std::vector<double> thresholds;
  std::vector<int> max_matches;
  // Every member over `region`, with the bank's own thresholds and limits.
  static BankSearch over(const TemplateBank& bank, const Rect& region);
};

// Checks the search's sizes against the bank, and its thresholds and limits.
Status check_bank_search(const TemplateBank& bank, const BankSearch& search);

// Orders candidates by member, then y, then x (how both paths list them).
void sort_bank_candidates(std::vector<BankCandidate>* candidates);

// Checks one member's region against the frame and the member's size.
Status check_member_region(const TemplateBank& bank, int member, int frame_w, int frame_h, const Rect& region);

// Suppression and limits over the candidates of all members (reorders `candidates`).
void select_bank_matches(const TemplateBank& bank, const BankSearch& search, bool suppress_across_templates,
                         std::vector<BankCandidate>* candidates, std::vector<Match>* matches);

// The score at (u, v) of a member's map from the exact sums (NaN: no score).
double bank_score(const MemberStats& s, bool masked, int64_t si, int64_t sii, int64_t sti);

class BankMatcherCpu {
 public:
  BankMatcherCpu();
  ~BankMatcherCpu();
  BankMatcherCpu(const BankMatcherCpu&) = delete;
  BankMatcherCpu& operator=(const BankMatcherCpu&) = delete;

  Status set_bank(const TemplateBank& bank);
  const TemplateBank& bank() const { return bank_; }
  bool has_bank() const { return !bank_.members.empty(); }

  Status match(const GrayView& frame, const BankSearch& search, bool suppress_across_templates,
               std::vector<Match>* matches);
  // One member's scores over `region` (row-major, (w - tw + 1) x (h - th + 1)).
  Status score_map(const GrayView& frame, int member, const Rect& region, std::vector<float>* scores, int* map_w,
                   int* map_h);
  // The candidates of the last match() (for tests).
  const std::vector<BankCandidate>& last_candidates() const { return candidates_; }

 private:
  struct Prepared;
  TemplateBank bank_;
  std::vector<MemberStats> stats_;
  std::vector<Prepared> prepared_;
  std::vector<float> map_;
  std::vector<uint32_t> scratch_;
  std::vector<BankCandidate> candidates_, selected_;
};

// CUDA path: configure() once per frame size, set_bank() per bank (uploads it; allocates the
// per-member cell keys and the pinned candidate list), match() per frame: one launch scores all
// members in their regions (on the tensor cores from sm_80: each frame tile is staged in shared
// memory once for a group of up to 8 members and multiplied with all of them at once; each
// member's best position per cell kept with atomics, the cells that reach their threshold listed),
// a second launch turns the listed cells into candidates with sub-pixel offsets (written into
// pinned host memory) and clears them; then one wait and the host's suppression. Where many cells
// reach their thresholds, the second launch suppresses them (the host's rule and order) and only
// the kept matches get offsets and cross to the host.
class BankMatcherCuda {
 public:
  BankMatcherCuda();
  ~BankMatcherCuda();
  BankMatcherCuda(const BankMatcherCuda&) = delete;
  BankMatcherCuda& operator=(const BankMatcherCuda&) = delete;

  // wait: how match() waits for the frame's candidates (the element's gpu-wait).
  Status configure(int frame_width, int frame_height, void* stream, GpuWait wait = GpuWait::Blocking);
  Status set_bank(const TemplateBank& bank);
  const TemplateBank& bank() const;
  bool has_bank() const;
  // frame: device memory.
  Status match(const GrayView& device_frame, const BankSearch& search, bool suppress_across_templates,
               std::vector<Match>* matches);
  Status score_map(const GrayView& device_frame, int member, const Rect& region, std::vector<float>* scores, int* map_w,
                   int* map_h);
  const std::vector<BankCandidate>& last_candidates() const;
  // True when more cells reached their thresholds than the host suppresses (256 by default): the
  // device suppressed them, and last_candidates() holds the kept matches only.
  bool last_candidates_suppressed() const;
  // Suppression on the device from this many listed cells on (tests: 0 always, ~0u never).
  void suppress_on_device_above(unsigned cells);
  void release();
  // The pre-Ampere kernel (dp4a on the CUDA cores) even where tensor cores exist, from the next
  // set_bank() on (tests).
  void use_cuda_cores_only(bool on);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace cudaprep
