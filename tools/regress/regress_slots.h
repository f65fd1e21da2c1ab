// cudaprep-regress: batched tensors slot by slot. A tensor of batch B (caps W:H:3:B for NCHW,
// 3:W:H:B for NHWC) holds B slots one after the other; a frame with more regions than
// batch-size gives several such tensors, recorded one after the other as one frame. Here: the
// slots' JSON, their consistency with the caps, and their comparison and report lines.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "regress_json.h"
#include "regress_math.h"
#include "regress_store.h"

namespace regress {

// Affine transforms (GstCudaPrepTransformMeta) are computed on the host in double precision;
// they may differ in the last bits between platforms (FMA contraction), not more than this.
constexpr double kTransformTolerance = 1e-9;
// The largest difference between two transforms' fields (inf where one is NaN).
double transform_delta(const Transform& a, const Transform& b);

// The fields of two slots' transforms (as frames.jsonl names them: source, tensor,
// src_to_tensor, tensor_to_src, active_rect) and source rectangles (source_rect) that differ by
// more than kTransformTolerance, ", "-joined ("" when none does); `delta` is the largest
// difference of any of them (inf where one is NaN).
std::string transform_fields_differing(const SlotEntry& a, const SlotEntry& b, double* delta);

// B of static tensor caps with one tensor: its fourth dimension (1 when it has three or fewer);
// 0 when the caps do not fix it (video, flexible or several tensors, unparsable).
uint64_t caps_batch(const std::string& caps);

Json slots_to_json(const std::vector<SlotEntry>& slots);
bool slots_from_json(const Json& j, std::vector<SlotEntry>* slots, std::string* error);

// Whether a frame agrees with its sink's caps: `bytes` is `tensors` times the caps' bytes of a
// tensor (`tensor_bytes`, 0: unknown) and, when batched, the slots are tensors x `batch` (0:
// unknown), numbered in order. False with the reason, naming the fields.
bool check_frame_tensors(const TensorEntry& t, uint64_t tensor_bytes, uint64_t batch, std::string* why);

// Whether `tensor` (one buffer, its slots numbered as tensor 0) is a further tensor of `frame`
// (the tensors gathered so far): cudatensorize gives a frame with more regions than batch-size,
// and cudatensorbatch a batch window with more regions than batch-size, as tensors with the
// same timestamps, each full but the last. Where the tensor's meta says which of them it is
// (`tensor_index`, its "tensor-index" field; -1: not said), it continues the frame when it is
// the next one (index = the frame's tensors so far) with the same PTS. Otherwise, from the
// regions in order: same PTS, the tensor before it full, and its first region a later one than
// that tensor's last (a next frame starts again from its first region; this cannot follow
// cudatensorbatch, whose regions start again from 0 at each pad).
bool continues_frame(const TensorEntry& frame, const TensorEntry& tensor, int tensor_index = -1);

// Sets each slot's sha256 from `data` (`bytes` split evenly over the slots).
void digest_slots(const uint8_t* data, uint64_t bytes, std::vector<SlotEntry>* slots);
// The SHA-256 of all of `data`, setting each slot's sha256 as digest_slots does, in one pass
// over the bytes: each piece is fed to the frame's digest and to its slot's while in cache.
std::string digest_frame(const uint8_t* data, uint64_t bytes, std::vector<SlotEntry>* slots);

// digest_frame over bytes fed in parts: update() with the frame's `bytes` in order, any split
// (each part is walked in pieces of kFramePiece), then finish(), which sets each slot's sha256
// (those not yet set) and gives the frame's.
class FrameDigest {
 public:
  FrameDigest(uint64_t bytes, std::vector<SlotEntry>* slots);
  void update(const uint8_t* data, size_t n);
  std::string finish();

 private:
  void update_piece(const uint8_t* data, size_t n);

  std::vector<SlotEntry>* slots_;
  uint64_t each_ = 0;     // bytes a slot (the even split)
  uint64_t covered_ = 0;  // bytes in slots; the rest is in none
  uint64_t offset_ = 0;   // bytes fed so far
  size_t slot_ = 0;       // the slot being fed
  Sha256 frame_, slot_digest_;
};

// The size of the pieces a frame is walked in: small enough to stay in the L2 cache between
// the copy, the digests and the stats.
constexpr size_t kFramePiece = 64 * 1024;

// One pass over a frame given in parts (the buffers of a window's tensors, one after the
// other): each part is copied to `out` in pieces of kFramePiece, and each piece, while in cache,
// feeds the frame's and its slot's digests (as digest_frame) and the stats of its whole elements
// (as tensor_stats over the frame's first `bytes - bytes % dtype_size(t)` bytes; an element split
// between parts or pieces is taken once its last byte is copied).
class FramePass {
 public:
  // `out` holds `bytes`, the sum of the parts' sizes.
  FramePass(uint8_t* out, uint64_t bytes, DType t, std::vector<SlotEntry>* slots);
  void add(const uint8_t* data, size_t n);
  // The frame's SHA-256 (each slot's set); `stats` gets the stats. Call once every byte is added.
  std::string finish(TensorStats* stats);

 private:
  uint8_t* out_;
  uint64_t written_ = 0;
  uint64_t stats_end_, stats_done_ = 0;
  size_t element_;
  FrameDigest digest_;
  StatsAccumulator stats_;
};

// A frame given in parts (the mapped buffers of its tensors, in order): `e` gets its size,
// digests (the slots' too) and stats, `out` its bytes (FramePass: one pass). Where `expected` is
// given (the entry a digest-only comparison holds the frame to) and the frame has its size, its
// slots and its digest, the bytes are neither copied nor summed: the stats are `expected`'s, as
// the bytes are the same, and false is returned (`out` left empty). About half a frame's CPU
// time, at the cost of a second reading of the bytes for a frame that differs.
using FramePart = std::pair<const uint8_t*, size_t>;
bool pass_frame(const std::vector<FramePart>& parts, DType t, const TensorEntry* expected, TensorEntry* e,
                std::vector<uint8_t>* out);

// "slot 1" (one tensor a frame) or "tensor 1 slot 0", with the region or "empty":
// "tensor 1 slot 0 (region 2)".
std::string slot_name(const SlotEntry& s, bool several_tensors);

struct SlotResult {
  std::string name;  // slot_name() of the reference's slot (else the other's)
  bool ref_present = false, run_present = false;
  bool ref_empty = false, run_empty = false;
  bool pass = true;
  std::string problem;         // every reason, "; "-joined
  bool data_compared = false;  // element-wise figures (both sides have the bytes)
  bool identical = false;      // bitwise
  TensorDiff diff;
  double transform_delta = 0;
};

// Compares two frames' slots by position (tensor, slot): emptiness flag, camera (source pad),
// region index and id, source PTS, transform and source rectangle, and the slot's values (its
// padding too, when empty) within `tol`, from the bytes where both sides have them, else by
// SHA-256. Each difference is named in the slot's problem: "camera (source pad) 'sink_0' in
// golden, 'sink_2' in this run", "region id ...", "slot transform differs by 3 (tensor_to_src,
// source_rect)", "tensor differs (...)" / "SHA-256 differs" (the bytes).
std::vector<SlotResult> compare_slots(const TensorEntry& ref, const uint8_t* ref_data, const TensorEntry& run,
                                      const uint8_t* run_data, DType type, const TensorTolerance& tol,
                                      const std::string& ref_label, const std::string& run_label);

// A report line for one slot, indented under its frame's line.
std::string slot_line(const SlotResult& s, const std::string& ref_label, const std::string& run_label);
// A sink's per-slot summary lines: for each slot position, frames compared, failing, empty,
// the largest max abs diff (and its frame) and the PSNR over the frames. `frames` pairs each
// frame's index with its slot results.
void slot_summary_to(std::ostringstream& o,
                     const std::vector<std::pair<uint64_t, const std::vector<SlotResult>*>>& frames);

}  // namespace regress
