// Plain descriptions of images and rectangles, shared by host code and kernels.
// Nothing here knows about GStreamer: the elements translate GstVideoFrame into these.
#pragma once
#include <cstdint>

#include "pixel_formats.h"

#if defined(__CUDACC__)
#define CUDAPREP_HD __host__ __device__ __forceinline__
#else
#define CUDAPREP_HD inline
#endif

namespace cudaprep {

struct Rect {
  int x = 0, y = 0, w = 0, h = 0;
  bool empty() const { return w <= 0 || h <= 0; }
};

struct Plane {
  const uint8_t* data = nullptr;  // first byte of the plane (offsets already applied)
  int64_t stride = 0;             // bytes between rows
};

// One video frame: host or device memory depending on the call it is passed to.
struct ImageView {
  PixelFormat format = PixelFormat::BGR;
  int width = 0, height = 0;
  Plane planes[kMaxPlanes];
};

// 8-bit single-channel image (luma or gray).
struct GrayView {
  const uint8_t* data = nullptr;
  int64_t stride = 0;
  int width = 0, height = 0;
};

}  // namespace cudaprep
