// cudaprep-regress: where the HTML report finds the data of one side of a comparison for the
// frames it shows: a recording on disk, or (check) what this run kept while it played.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "regress_compare.h"
#include "regress_store.h"

namespace regress {

class SideData {
 public:
  virtual ~SideData() = default;
  // The tensor bytes of a frame; false with the reason when they are not at hand.
  virtual bool tensor_bytes(const std::string& sink, uint64_t frame, std::vector<uint8_t>* out,
                            std::string* why) const = 0;
  // The matches of a frame, or nullptr.
  virtual const MatchesEntry* matches(const std::string& sink, uint64_t frame) const = 0;
  // The detections of a frame, or nullptr.
  virtual const DetectionsEntry* detections(const std::string& sink, uint64_t frame) const = 0;
};

class RecordingSide : public SideData {
 public:
  explicit RecordingSide(const Recording& r) : rec_(r) {}
  bool tensor_bytes(const std::string& sink, uint64_t frame, std::vector<uint8_t>* out,
                    std::string* why) const override;
  const MatchesEntry* matches(const std::string& sink, uint64_t frame) const override;
  const DetectionsEntry* detections(const std::string& sink, uint64_t frame) const override;

 private:
  const Recording& rec_;
};

// Keeps, while `check` plays the clip, what the report may show of this run: every frame's
// matches (small), and per tensor sink only the bytes of its first failing frame, its first
// differing frame and its worst frame (largest max abs diff), not the whole clip.
class RunKeeper : public SideData {
 public:
  void keep_tensor(const std::string& sink, uint64_t frame, const SinkResult& r, const uint8_t* data, size_t bytes);
  void keep_matches(const std::string& sink, uint64_t frame, const MatchesEntry& e);
  void keep_detections(const std::string& sink, uint64_t frame, const DetectionsEntry& e);
  bool tensor_bytes(const std::string& sink, uint64_t frame, std::vector<uint8_t>* out,
                    std::string* why) const override;
  const MatchesEntry* matches(const std::string& sink, uint64_t frame) const override;
  const DetectionsEntry* detections(const std::string& sink, uint64_t frame) const override;

 private:
  struct Kept {
    uint64_t frame = 0;
    std::vector<uint8_t> bytes;
  };
  struct SinkKept {
    bool has_failing = false, has_different = false, has_worst = false;
    Kept failing, different, worst;
    double worst_value = 0;
  };
  mutable std::mutex mu_;
  std::map<std::string, SinkKept> tensors_;
  std::map<std::string, std::map<uint64_t, MatchesEntry>> matches_;
  std::map<std::string, std::map<uint64_t, DetectionsEntry>> detections_;
};

// How bad a tensor result is, for picking the worst frame: NaN counts as infinitely far.
double tensor_badness(const SinkResult& r);

}  // namespace regress
