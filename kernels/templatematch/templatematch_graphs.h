// Internal to the CUDA template matcher: each frame's launch as a CUDA graph replayed on the
// caller's own stream (measured: 2 us less per frame than a plain launch), one per (texture,
// search region, threshold, max matches). A key with no graph takes over the least recently used
// graph of the same texture and launch shape, its kernel's parameters replaced (a tracking window
// that moves every frame: no capture, which costs 15-20 us of host time); a new texture or shape
// is captured, so a buffer pool's frames searched over one region keep a graph each. The least
// recently used graph is dropped beyond kGraphCacheSize. Host code over the CUDA runtime (built
// only with CUDA).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "image.h"
#include "status.h"
#include "templatematch.h"

namespace cudaprep {
namespace tm {

constexpr int kGraphCacheSize = 16;

class GraphCache {
 public:
  struct Key {
    cudaTextureObject_t tex = 0;
    Rect region;
    double threshold = 0;
    int max_matches = 0;
  };

  // What a graph's one kernel node launches, apart from the kernel's parameters.
  struct Shape {
    const void* kernel = nullptr;
    dim3 grid, block;
    size_t smem = 0;
    unsigned cluster_z = 1;
  };

  GraphCache() = default;
  ~GraphCache() { clear(); }
  GraphCache(const GraphCache&) = delete;
  GraphCache& operator=(const GraphCache&) = delete;

  // Replays the graph of `key` on `stream` (*launched: the launch's result); false where there is
  // none yet. The per-frame path: no allocation.
  bool replay(const Key& key, cudaStream_t stream, Status* launched);
  // Gives the least recently used graph of key.tex and `shape` to `key`, with `args` (the kernel's
  // argument pointers) as its kernel's parameters, and launches it on `stream`; false where there
  // is none.
  // Launches of that graph already enqueued keep their parameters.
  bool update(const Key& key, const Shape& shape, void** args, cudaStream_t stream, Status* launched);
  // Captures `launch` (which enqueues the frame of `key`, one kernel launch of `shape`, on
  // `capture_on`, a stream no other thread uses) into a graph, keeps it and launches it on
  // `launch_on`. *capture_failed: capture is not available here (nothing was enqueued and the
  // sticky error is cleared): the caller launches without graphs from now on.
  Status capture(const Key& key, const Shape& shape, cudaStream_t capture_on, cudaStream_t launch_on,
                 const std::function<Status()>& launch, bool* capture_failed);
  void drop_texture(cudaTextureObject_t tex);  // the graphs that read `tex`
  void clear();
  TemplateMatcherCuda::LaunchGraphStats stats() const;

 private:
  struct Entry {
    Key key;
    Shape shape;
    cudaGraph_t graph = nullptr;     // kept for its kernel node
    cudaGraphNode_t node = nullptr;  // the kernel node (null: the graph is not one kernel; never updated)
    cudaGraphExec_t exec = nullptr;
    uint64_t last_use = 0;
  };
  void destroy(Entry& e);
  std::vector<Entry> entries_;
  uint64_t tick_ = 0;
  TemplateMatcherCuda::LaunchGraphStats stats_;  // (entries: entries_.size())
};

}  // namespace tm
}  // namespace cudaprep
