#include "regress_sides.h"

#include <cmath>

namespace regress {

double tensor_badness(const SinkResult& r) {
  if (!r.data_compared || r.identical) return 0;
  return std::isnan(r.diff.max_abs) ? INFINITY : r.diff.max_abs;
}

bool RecordingSide::tensor_bytes(const std::string& sink, uint64_t frame, std::vector<uint8_t>* out,
                                 std::string* why) const {
  if (!rec_.full()) {
    *why = rec_.dir + " stores tensor digests only (--store digest)";
    return false;
  }
  if (frame >= rec_.frames.size() || !rec_.frames[frame].tensors.count(sink)) {
    *why = rec_.dir + " has no tensor of sink '" + sink + "' at frame " + std::to_string(frame);
    return false;
  }
  return rec_.read_tensor(rec_.frames[frame].tensors.at(sink), out, why);
}

const MatchesEntry* RecordingSide::matches(const std::string& sink, uint64_t frame) const {
  if (frame >= rec_.frames.size()) return nullptr;
  auto it = rec_.frames[frame].matches.find(sink);
  return it == rec_.frames[frame].matches.end() ? nullptr : &it->second;
}

const DetectionsEntry* RecordingSide::detections(const std::string& sink, uint64_t frame) const {
  if (frame >= rec_.frames.size()) return nullptr;
  auto it = rec_.frames[frame].detections.find(sink);
  return it == rec_.frames[frame].detections.end() ? nullptr : &it->second;
}

void RunKeeper::keep_tensor(const std::string& sink, uint64_t frame, const SinkResult& r, const uint8_t* data,
                            size_t bytes) {
  if (r.identical) return;  // the report takes the reference's bytes
  std::lock_guard<std::mutex> lock(mu_);
  SinkKept& k = tensors_[sink];
  auto keep = [&](Kept* into) {
    into->frame = frame;
    into->bytes.assign(data, data + bytes);
  };
  // a sink's frames arrive in order: the first one seen is the first of the clip
  if (!k.has_different) {
    k.has_different = true;
    keep(&k.different);
  }
  if (!r.pass && !k.has_failing) {
    k.has_failing = true;
    keep(&k.failing);
  }
  const double bad = tensor_badness(r);
  if (bad > k.worst_value || !k.has_worst) {
    k.has_worst = true;
    k.worst_value = bad;
    keep(&k.worst);
  }
}

void RunKeeper::keep_matches(const std::string& sink, uint64_t frame, const MatchesEntry& e) {
  std::lock_guard<std::mutex> lock(mu_);
  matches_[sink][frame] = e;
}

void RunKeeper::keep_detections(const std::string& sink, uint64_t frame, const DetectionsEntry& e) {
  std::lock_guard<std::mutex> lock(mu_);
  detections_[sink][frame] = e;
}

bool RunKeeper::tensor_bytes(const std::string& sink, uint64_t frame, std::vector<uint8_t>* out,
                             std::string* why) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tensors_.find(sink);
  if (it != tensors_.end()) {
    for (const Kept* k : {&it->second.failing, &it->second.different, &it->second.worst})
      if (k->frame == frame && !k->bytes.empty()) {
        *out = k->bytes;
        return true;
      }
  }
  *why = "this run's tensor of frame " + std::to_string(frame) +
         " was not kept (only a sink's first differing, "
         "first failing and worst frames are)";
  return false;
}

const MatchesEntry* RunKeeper::matches(const std::string& sink, uint64_t frame) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = matches_.find(sink);
  if (it == matches_.end()) return nullptr;
  auto f = it->second.find(frame);
  return f == it->second.end() ? nullptr : &f->second;
}

const DetectionsEntry* RunKeeper::detections(const std::string& sink, uint64_t frame) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = detections_.find(sink);
  if (it == detections_.end()) return nullptr;
  auto f = it->second.find(frame);
  return f == it->second.end() ? nullptr : &f->second;
}

}  // namespace regress
