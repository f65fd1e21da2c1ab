// Texture objects of the CUDA template matcher (see templatematch_textures.h).
#include "templatematch_textures.h"

#include <algorithm>

#include "cuda_status.h"

namespace cudaprep {
namespace tm {

Status TextureCache::get(const void* ptr, int64_t pitch, int width, int height, cudaTextureObject_t* out) {
  ++tick_;
  for (Entry& e : entries_) {
    if (e.ptr == ptr && e.pitch == pitch && e.width == width && e.height == height) {
      e.last_use = tick_;
      ++stats_.hits;
      *out = e.tex;
      return Status();
    }
  }
  cudaResourceDesc res{};
  res.resType = cudaResourceTypePitch2D;
  res.res.pitch2D.devPtr = const_cast<void*>(ptr);
  res.res.pitch2D.desc = cudaCreateChannelDesc<uint4>();
  res.res.pitch2D.width = (width + 15) / 16;
  res.res.pitch2D.height = height;
  res.res.pitch2D.pitchInBytes = pitch;
  cudaTextureDesc td{};
  td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
  td.filterMode = cudaFilterModePoint;
  td.readMode = cudaReadModeElementType;
  td.normalizedCoords = 0;
  Entry e;
  CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaCreateTextureObject(&e.tex, &res, &td, nullptr), "cudaCreateTextureObject"));
  if (static_cast<int>(entries_.size()) >= kTextureCacheSize) {
    auto lru = std::min_element(entries_.begin(), entries_.end(),
                                [](const Entry& a, const Entry& b) { return a.last_use < b.last_use; });
    before_evict_(lru->tex);
    cudaDestroyTextureObject(lru->tex);
    entries_.erase(lru);
  }
  e.ptr = ptr;
  e.pitch = pitch;
  e.width = width;
  e.height = height;
  e.last_use = tick_;
  entries_.push_back(e);
  ++stats_.created;
  stats_.entries = static_cast<int>(entries_.size());
  *out = e.tex;
  return Status();
}

void TextureCache::clear() {
  for (Entry& e : entries_) cudaDestroyTextureObject(e.tex);
  entries_.clear();
  stats_.entries = 0;
}

}  // namespace tm
}  // namespace cudaprep
