// CUDA graphs of the template matcher's frame launches (see templatematch_graphs.h).
#include "templatematch_graphs.h"

#include <algorithm>

#include "cuda_status.h"

namespace cudaprep {
namespace tm {

namespace {
bool same_key(const GraphCache::Key& a, const GraphCache::Key& b) {
  return a.tex == b.tex && a.region.x == b.region.x && a.region.y == b.region.y && a.region.w == b.region.w &&
         a.region.h == b.region.h && a.threshold == b.threshold && a.max_matches == b.max_matches;
}
}  // namespace

bool GraphCache::replay(const Key& key, cudaStream_t stream, Status* launched) {
  ++tick_;
  for (Entry& e : entries_) {
    if (same_key(e.key, key)) {
      e.last_use = tick_;
      *launched = cuda_status(cudaGraphLaunch(e.exec, stream), "cudaGraphLaunch");
      return true;
    }
  }
  return false;
}

Status GraphCache::capture(const Key& key, cudaStream_t capture_on, cudaStream_t launch_on,
                           const std::function<Status()>& launch, bool* capture_failed) {
  *capture_failed = false;
  cudaGraph_t graph = nullptr;
  CUDAPREP_RETURN_IF_ERROR(
      cuda_status(cudaStreamBeginCapture(capture_on, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture"));
  Status s = launch();
  const cudaError_t end = cudaStreamEndCapture(capture_on, &graph);
  cudaGraphExec_t exec = nullptr;
  if (s.ok() && end == cudaSuccess) s = cuda_status(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  if (graph) cudaGraphDestroy(graph);
  if (!s.ok() || end != cudaSuccess || !exec) {
    cudaGetLastError();
    *capture_failed = true;
    return Status();
  }
  if (static_cast<int>(entries_.size()) >= kGraphCacheSize) {
    auto lru = std::min_element(entries_.begin(), entries_.end(),
                                [](const Entry& a, const Entry& b) { return a.last_use < b.last_use; });
    cudaGraphExecDestroy(lru->exec);
    entries_.erase(lru);
  }
  Entry e;
  e.key = key;
  e.exec = exec;
  e.last_use = tick_;
  entries_.push_back(e);
  return cuda_status(cudaGraphLaunch(exec, launch_on), "cudaGraphLaunch");
}

void GraphCache::drop_texture(cudaTextureObject_t tex) {
  for (size_t i = 0; i < entries_.size();) {
    if (entries_[i].key.tex == tex) {
      cudaGraphExecDestroy(entries_[i].exec);
      entries_.erase(entries_.begin() + i);
    } else {
      ++i;
    }
  }
}

void GraphCache::clear() {
  for (Entry& e : entries_) cudaGraphExecDestroy(e.exec);
  entries_.clear();
}

}  // namespace tm
}  // namespace cudaprep
