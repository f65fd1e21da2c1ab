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
bool same_dim(const dim3& a, const dim3& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
bool same_shape(const GraphCache::Shape& a, const GraphCache::Shape& b) {
  return a.kernel == b.kernel && same_dim(a.grid, b.grid) && same_dim(a.block, b.block) && a.smem == b.smem &&
         a.cluster_z == b.cluster_z;
}
// The graph's node if it is its only node and a kernel node, else null.
cudaGraphNode_t only_kernel_node(cudaGraph_t graph) {
  size_t count = 0;
  if (cudaGraphGetNodes(graph, nullptr, &count) != cudaSuccess || count != 1) return nullptr;
  cudaGraphNode_t node = nullptr;
  cudaGraphNodeType type{};
  if (cudaGraphGetNodes(graph, &node, &count) != cudaSuccess || cudaGraphNodeGetType(node, &type) != cudaSuccess ||
      type != cudaGraphNodeTypeKernel)
    return nullptr;
  return node;
}
}  // namespace

bool GraphCache::replay(const Key& key, cudaStream_t stream, Status* launched) {
  ++tick_;
  for (Entry& e : entries_) {
    if (same_key(e.key, key)) {
      e.last_use = tick_;
      ++stats_.replayed;
      *launched = cuda_status(cudaGraphLaunch(e.exec, stream), "cudaGraphLaunch");
      return true;
    }
  }
  return false;
}

bool GraphCache::update(const Key& key, const Shape& shape, void** args, cudaStream_t stream, Status* launched) {
  Entry* lru = nullptr;
  for (Entry& e : entries_)
    if (e.node && e.key.tex == key.tex && same_shape(e.shape, shape) && (!lru || e.last_use < lru->last_use)) lru = &e;
  if (!lru) return false;
  cudaKernelNodeParams params{};
  params.func = const_cast<void*>(shape.kernel);
  params.gridDim = shape.grid;
  params.blockDim = shape.block;
  params.sharedMemBytes = static_cast<unsigned>(shape.smem);
  params.kernelParams = args;
  if (cudaGraphExecKernelNodeSetParams(lru->exec, lru->node, &params) != cudaSuccess) {
    cudaGetLastError();
    lru->node = nullptr;  // this graph is replayed as it is, never updated
    return false;
  }
  ++tick_;
  lru->key = key;
  lru->last_use = tick_;
  ++stats_.updated;
  *launched = cuda_status(cudaGraphLaunch(lru->exec, stream), "cudaGraphLaunch");
  return true;
}

Status GraphCache::capture(const Key& key, const Shape& shape, cudaStream_t capture_on, cudaStream_t launch_on,
                           const std::function<Status()>& launch, bool* capture_failed) {
  *capture_failed = false;
  cudaGraph_t graph = nullptr;
  CUDAPREP_RETURN_IF_ERROR(
      cuda_status(cudaStreamBeginCapture(capture_on, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture"));
  Status s = launch();
  const cudaError_t end = cudaStreamEndCapture(capture_on, &graph);
  cudaGraphExec_t exec = nullptr;
  if (s.ok() && end == cudaSuccess) s = cuda_status(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  if (!s.ok() || end != cudaSuccess || !exec) {
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    *capture_failed = true;
    return Status();
  }
  if (static_cast<int>(entries_.size()) >= kGraphCacheSize) {
    auto lru = std::min_element(entries_.begin(), entries_.end(),
                                [](const Entry& a, const Entry& b) { return a.last_use < b.last_use; });
    destroy(*lru);
    entries_.erase(lru);
  }
  Entry e;
  e.key = key;
  e.shape = shape;
  e.graph = graph;
  e.node = only_kernel_node(graph);
  e.exec = exec;
  e.last_use = tick_;
  entries_.push_back(e);
  ++stats_.captured;
  return cuda_status(cudaGraphLaunch(exec, launch_on), "cudaGraphLaunch");
}

void GraphCache::drop_texture(cudaTextureObject_t tex) {
  for (size_t i = 0; i < entries_.size();) {
    if (entries_[i].key.tex == tex) {
      destroy(entries_[i]);
      entries_.erase(entries_.begin() + i);
    } else {
      ++i;
    }
  }
}

void GraphCache::clear() {
  for (Entry& e : entries_) destroy(e);
  entries_.clear();
}

TemplateMatcherCuda::LaunchGraphStats GraphCache::stats() const {
  TemplateMatcherCuda::LaunchGraphStats s = stats_;
  s.entries = static_cast<int>(entries_.size());
  return s;
}

void GraphCache::destroy(Entry& e) {
  cudaGraphExecDestroy(e.exec);
  cudaGraphDestroy(e.graph);
}

}  // namespace tm
}  // namespace cudaprep
