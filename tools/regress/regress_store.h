// cudaprep-regress: what a recording holds, and its layout on disk.
//
//   DIR/manifest.json   how it was recorded (pipeline, caps, element properties, versions, device)
//   DIR/frames.jsonl    one line per frame: {"frame":N,"<sink>":{...},...}, sinks in name order
//   DIR/tensors/<sink>-<frame %05d>.<ext>   raw little-endian tensor bytes (store "full" only)
//
// tools/regress/README.md documents every field.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "regress_detect.h"
#include "regress_json.h"
#include "regress_math.h"

namespace regress {

constexpr int kLayoutVersion = 1;

struct SinkInfo {
  std::string name;
  std::string kind;     // "tensor", "matches" or "detections"
  std::string caps;     // negotiated caps of the first sample, without caps features
  std::string memory;   // "system" or the caps feature ("memory:CUDAMemory")
  std::string dtype;    // tensor sinks: element type name ("float32", ...)
  uint64_t frames = 0;  // frames received (a frame may give several tensors: see TensorEntry)
  uint64_t batch = 0;   // tensor sinks: slots per tensor (B of W:H:3:B) as the caps give it; 0: unknown
};

struct ElementInfo {
  std::string name;  // canonical: auto names renumbered by creation order (cudatensorize0)
  std::string factory;
  std::string plugin, plugin_version;
  std::string device;                                           // cudaprep elements: "cuda" or "cpu"; empty otherwise
  std::vector<std::pair<std::string, std::string>> properties;  // serialized, in name order
};

struct DeviceInfo {
  std::string kind = "cpu";  // "cuda" when a cudaprep element ran on the GPU
  std::string name;          // GPU name, or the host CPU model for "cpu"
  std::string driver;        // CUDA driver version ("13.0"), "" for cpu
  std::string runtime;       // CUDA runtime version of the tool's build, "" for cpu
  std::string arch;          // host architecture (x86_64, aarch64)
};

struct Manifest {
  int layout = kLayoutVersion;
  std::string tool_version;
  std::string date;            // ISO 8601, UTC
  std::string pipeline;        // with "{clip}" for the clip path
  std::string clip;            // the clip's file name (no directory)
  std::string store = "full";  // "full" or "digest"
  std::string gstreamer_version;
  DeviceInfo device;
  std::vector<SinkInfo> sinks;        // in name order
  std::vector<ElementInfo> elements;  // in name order
  uint64_t frames = 0;                // frames.jsonl lines (the largest sink count)

  const SinkInfo* sink(const std::string& name) const;
  const ElementInfo* element(const std::string& name) const;
};

struct Transform {
  bool present = false;
  int source_w = 0, source_h = 0, tensor_w = 0, tensor_h = 0;
  double src_to_tensor[6] = {0}, tensor_to_src[6] = {0}, active_rect[4] = {0};
};

// One slot of a batched tensor (cudatensorize batch-size / rois / roi-meta, cudatensorbatch):
// what the GstCudaPrepTransformMeta's "slots" say about it, and the digest of its bytes.
struct SlotEntry {
  uint32_t tensor = 0;  // which of the frame's tensors (more regions than batch-size: several)
  uint32_t slot = 0;    // its index inside that tensor
  bool empty = false;   // no source: the slot holds the pad value
  int region_index = -1, region_id = -1;
  int64_t source_pts = -1;  // ns; -1 = none
  std::string source_pad;   // cudatensorbatch's sink pad; empty otherwise
  double source_rect[4] = {0};
  std::string sha256;  // of the slot's bytes
  Transform transform;
};

// A frame of a tensor sink: its tensors' bytes one after the other (one tensor, unless the
// frame gave several: more regions than batch-size), and their slots when batched.
struct TensorEntry {
  int64_t pts = -1, duration = -1;  // ns; -1 = none
  uint64_t bytes = 0;               // all the frame's tensors
  std::string sha256;
  TensorStats stats;
  std::string file;              // relative to the recording's directory; empty for digest-only
  Transform transform;           // the first tensor's (slot 0's)
  uint32_t tensors = 1;          // tensors the frame gave, all of the sink's caps
  std::vector<SlotEntry> slots;  // tensors x batch, in order; empty for an unbatched tensor
};

struct MatchesEntry {
  int64_t pts = -1, duration = -1;
  std::vector<MatchRec> items;
};

struct FrameEntry {
  uint64_t index = 0;
  std::map<std::string, TensorEntry> tensors;         // by sink name
  std::map<std::string, MatchesEntry> matches;        // by sink name
  std::map<std::string, DetectionsEntry> detections;  // by sink name
};

Json manifest_to_json(const Manifest& m);
bool manifest_from_json(const Json& j, Manifest* m, std::string* error);
Json frame_to_json(const FrameEntry& f);
bool frame_from_json(const Json& j, FrameEntry* f, std::string* error);
// The "transform" object of frames.jsonl (also a slot's).
Json transform_to_json(const Transform& t);
bool transform_from_json(const Json& j, Transform* t);

// A recording on disk.
struct Recording {
  std::string dir;
  Manifest manifest;
  std::vector<FrameEntry> frames;  // frames[i].index == i

  // Reads manifest.json and frames.jsonl and checks that they agree with each other and with
  // the tensor files: every sink's dtype with its caps, every frame's size with the caps,
  // every tensor file inside the directory, with the dtype's extension and the recorded size.
  // Errors name the file (and line) and the field at fault.
  bool load(const std::string& dir, std::string* error);
  // Reads a tensor file and checks it against its recorded size and SHA-256.
  bool read_tensor(const TensorEntry& e, std::vector<uint8_t>* data, std::string* error) const;
  bool full() const { return manifest.store == "full"; }
};

std::string tensor_file_name(const std::string& sink, uint64_t frame, DType t);

// The element type `record` stores for a tensor sink with these caps (text, without caps
// features): NNStreamer's "types" (or "type") when all tensors share one known type, else
// "uint8" (video frames, mixed types: bytes).
std::string caps_dtype(const std::string& caps);
// The bytes of one buffer of static tensor caps (other/tensors with format static, or
// other/tensor): the sum over the tensors of the product of their dimensions times their
// element size. 0 when the caps do not fix it (flexible tensors, video, unparsable).
uint64_t caps_frame_bytes(const std::string& caps);
// The fields of static tensor caps (other/tensors with format static or none, or other/tensor),
// each split at its commas. False for other caps (video, flexible tensors, unparsable).
struct TensorCapsText {
  std::vector<std::string> types, dimensions;
  int num_tensors = 0;  // as the caps say (other/tensor: the count of types)
};
bool static_tensor_caps(const std::string& caps, TensorCapsText* out);
// Whether `rel`, a path from a recording's frames.jsonl, stays inside the recording's directory
// `dir`: relative, without ".." components, and (where it exists) not resolving through a
// symlink to somewhere outside. Otherwise false with the reason.
bool path_inside(const std::string& dir, const std::string& rel, std::string* why);

// Filesystem helpers.
bool read_file(const std::string& path, std::string* out, std::string* error);
bool write_file(const std::string& path, const void* data, size_t size, std::string* error);
bool remove_tree(const std::string& path);

}  // namespace regress
