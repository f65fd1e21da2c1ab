// cudaprep-regress: frame-by-frame comparison of a run (or a second recording) with a reference
// recording, the settings check, and the report a person reads.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "regress_math.h"
#include "regress_slots.h"
#include "regress_store.h"

namespace regress {

struct CompareOptions {
  TensorTolerance tensor_tol;
  double pos_tol = 0;                  // match position, pixels (Euclidean distance of the sub-pixel positions)
  double score_tol = 0;                // match score
  bool allow_setting_changes = false;  // differing caps / properties: warn and compare anyway
  DetOptions det;                      // detections sinks
};

struct SinkResult {
  std::string sink, kind;  // kind: "tensor", "matches" or "detections"
  bool ref_present = false, run_present = false;
  bool pass = true;
  std::string problem;  // why it fails (first reason)
  std::string notes;    // further reasons
  int64_t pts_ref = -1, pts_run = -1;
  // tensor
  uint64_t ref_bytes = 0, run_bytes = 0;
  bool data_compared = false;  // element-wise figures available (both sides have the bytes)
  bool identical = false;      // bitwise (SHA-256)
  TensorDiff diff;
  TensorStats ref_stats, run_stats;
  double transform_delta = 0;
  uint32_t ref_tensors = 1, run_tensors = 1;  // tensors the frame gave (more regions than batch-size)
  std::vector<SlotResult> slots;              // batched tensors: each slot (the frame fails if one does)
  // matches
  MatchDiff match;
  // detections
  DetDiff det;
};

struct FrameResult {
  uint64_t index = 0;
  std::map<std::string, SinkResult> sinks;
  bool pass() const;
  int64_t pts() const;
};

SinkResult compare_tensor(const std::string& sink, const TensorEntry& ref, const uint8_t* ref_data,
                          const TensorEntry& run, const uint8_t* run_data, DType type, const CompareOptions& opt,
                          const std::string& ref_label, const std::string& run_label);
SinkResult compare_matches(const std::string& sink, const MatchesEntry& ref, const MatchesEntry& run,
                           const CompareOptions& opt, const std::string& ref_label, const std::string& run_label);
// Pairs and judges a frame's detections (diff_detections); the frame fails with the first of
// its reasons, the others as notes.
SinkResult compare_detections(const std::string& sink, const DetectionsEntry& ref, const DetectionsEntry& run,
                              const CompareOptions& opt, const std::string& ref_label, const std::string& run_label);

// One template of a matches sink over the frames both sides have.
struct TemplateSummary {
  std::string label;
  uint64_t n_ref = 0, n_run = 0;                        // matches over the frames
  uint64_t frames_ref = 0, frames_run = 0;              // frames with a match of it
  uint64_t count_frames = 0;                            // frames whose counts of it differ
  uint64_t member_changes = 0, full_changes = 0;        // pairs at another scale / angle, or search
  double max_dpos = 0, max_dscore = 0;                  // over its pairs
  uint64_t worst_pos_frame = 0, worst_score_frame = 0;  // where they occur (when > 0)
  uint64_t failing_frames = 0;                          // frames it makes fail (count, member, search, tolerance)
  uint64_t first_failing = UINT64_MAX;
};
// The templates of a matches sink's results (frame index, result), in label order.
std::vector<TemplateSummary> summarize_templates(const std::vector<std::pair<uint64_t, const SinkResult*>>& results,
                                                 const CompareOptions& opt);
// Whether the summaries are of the single, unlabelled template alone (nothing per template to say).
bool single_template(const std::vector<TemplateSummary>& templates);

// One class (source and label) of a detections sink over the frames both sides have.
struct DetClassSummary {
  std::string key;  // det_class_key
  uint64_t n_ref = 0, n_run = 0, missed = 0, extra = 0;
  uint64_t count_frames = 0;  // frames whose counts of it differ
};
std::vector<DetClassSummary> summarize_detection_classes(
    const std::vector<std::pair<uint64_t, const SinkResult*>>& results);

class Comparison {
 public:
  // labels: how the two sides are named in messages ("golden" / "this run", "A" / "B")
  Comparison(std::string command, std::string ref_label, std::string run_label, CompareOptions opt);

  const CompareOptions& options() const { return opt_; }
  const std::string& command() const { return command_; }
  const std::string& ref_label() const { return ref_label_; }
  const std::string& run_label() const { return run_label_; }

  // Header lines ("clip", "golden", ...), printed in order.
  void header(const std::string& key, const std::string& value);
  void error(const std::string& message);  // setup error: exit 2
  void note(const std::string& message);
  void hint(const std::string& message);  // printed after the setup errors
  bool has_errors() const;
  const std::vector<std::string>& errors() const { return errors_; }
  const std::vector<std::string>& notes() const { return notes_; }
  const std::vector<std::string>& hints() const { return hints_; }
  const std::vector<std::pair<std::string, std::string>>& headers() const { return header_; }

  // Caps of the sinks, element properties, pipeline, versions. Differences that make the
  // comparison meaningless are errors (or notes with allow_setting_changes).
  void compare_manifests(const Manifest& ref, const Manifest& run);
  // Frame counts per sink (errors; the common frames are still compared).
  void compare_frame_counts(const Manifest& ref, const Manifest& run);
  // The digest-only note, when a tolerance was asked for and a side has no tensor bytes.
  // True when it applies (the caller also warns on stderr).
  bool note_digest_only(const Manifest& ref, const Manifest& run, const std::string& ref_dir,
                        const std::string& run_dir);

  void add(uint64_t frame, const SinkResult& r);  // thread-safe
  uint64_t failing_frames() const;                // thread-safe

  // 0 pass, 1 regression, 2 setup error.
  int exit_code() const;
  // The report: header, notes, errors, per-frame lines (all, or failing ones up to
  // max_frame_lines), per-sink summary, first failing frame, RESULT line.
  std::string render(bool all_frames, size_t max_frame_lines) const;
  // The report's closing lines alone: per-sink summary, tolerances, first failing frame, RESULT.
  std::string render_summary() const;
  // A copy of the per-frame results so far (thread-safe).
  std::vector<FrameResult> frame_results() const;

 private:
  std::string frame_line(const FrameResult& f, const SinkResult& r) const;
  // A batched tensor's slot rows under its frame line: every slot, or the failing ones.
  std::string slot_lines(const SinkResult& r, bool all_slots) const;
  void summary_to(std::ostringstream& o) const;  // mu_ held
  // "  sink 'detections' (detections): ..." and a line per class
  void detection_summary_to(std::ostringstream& o, const std::string& name, const std::vector<const SinkResult*>& list,
                            const std::vector<uint64_t>& idx, uint64_t both, uint64_t failing,
                            const std::string& only) const;
  // "    template 'a': matches golden 31, this run 31; ..." (a matches sink's summary, per template)
  std::string template_summary_line(const TemplateSummary& t) const;

  std::string command_, ref_label_, run_label_;
  CompareOptions opt_;
  std::vector<std::pair<std::string, std::string>> header_;
  std::vector<std::string> errors_, notes_, hints_;
  mutable std::mutex mu_;
  std::vector<FrameResult> frames_;
  uint64_t failing_ = 0;
};

// Compares two recordings frame by frame (reads the tensor files of full recordings); corrupt
// files become setup errors. The manifests are compared separately (compare_manifests).
void compare_recordings(const Recording& a, const Recording& b, Comparison* cmp);

}  // namespace regress
