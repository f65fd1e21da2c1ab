// cudaprep-regress: a full recording's digests checked against its stored bytes.
#include "regress_verify.h"

#include <vector>

#include "regress_math.h"
#include "regress_slots.h"

namespace regress {

bool verify_stored_digests(const Recording& r, std::string* error) {
  if (!r.full()) return true;
  std::vector<uint8_t> data;
  for (const FrameEntry& f : r.frames) {
    for (const auto& [sink, t] : f.tensors) {
      const std::string where = r.dir + "/frames.jsonl line " + std::to_string(f.index + 1) + ": corrupt: sink \"" +
                                sink + "\" frame " + std::to_string(f.index);
      // size and frame SHA-256 against the file
      if (!r.read_tensor(t, &data, error)) return false;
      if (t.slots.empty()) continue;
      std::vector<SlotEntry> stored = t.slots;
      digest_slots(data.data(), data.size(), &stored);
      for (size_t i = 0; i < stored.size(); i++) {
        if (stored[i].sha256 != t.slots[i].sha256) {
          *error = where + " " + slot_name(t.slots[i], t.tensors > 1) + ": field \"sha256\" " + t.slots[i].sha256 +
                   " is not the SHA-256 of its bytes in " + t.file + " (" + stored[i].sha256 +
                   "): the recording contradicts itself";
          return false;
        }
      }
    }
  }
  return true;
}

}  // namespace regress
