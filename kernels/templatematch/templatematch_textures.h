// Internal to the CUDA template matcher: texture objects over frame planes (pitch 2D, 16-byte
// texels, point filtering, clamped), cached per (pointer, pitch, size) so that a buffer pool's
// frames reuse theirs; the least recently used one is evicted beyond kTextureCacheSize.
// Host code over the CUDA runtime (built only with CUDA).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "status.h"
#include "templatematch.h"

namespace cudaprep {
namespace tm {

constexpr int kTextureCacheSize = 16;

class TextureCache {
 public:
  // `before_evict` is called with the texture that makes room for a new one, before it is
  // destroyed: the owner makes sure no kernel still reads it and forgets what refers to it.
  explicit TextureCache(std::function<void(cudaTextureObject_t)> before_evict)
      : before_evict_(std::move(before_evict)) {}
  ~TextureCache() { clear(); }
  TextureCache(const TextureCache&) = delete;
  TextureCache& operator=(const TextureCache&) = delete;

  // The texture over (ptr, pitch, width x height), cached or new (stats().hits tells which).
  Status get(const void* ptr, int64_t pitch, int width, int height, cudaTextureObject_t* out);
  void clear();  // destroys every texture (no kernel may still read them)
  const TemplateMatcherCuda::TextureCacheStats& stats() const { return stats_; }

 private:
  struct Entry {
    const void* ptr = nullptr;
    int64_t pitch = 0;
    int width = 0, height = 0;
    cudaTextureObject_t tex = 0;
    uint64_t last_use = 0;
  };
  std::function<void(cudaTextureObject_t)> before_evict_;
  std::vector<Entry> entries_;
  uint64_t tick_ = 0;
  TemplateMatcherCuda::TextureCacheStats stats_;
};

}  // namespace tm
}  // namespace cudaprep
