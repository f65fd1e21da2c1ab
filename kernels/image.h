// Plain descriptions of images and rectangles, shared by host code and kernels.
// Nothing here knows about GStreamer: the elements translate GstVideoFrame into these.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define CUDAPREP_HD __host__ __device__ __forceinline__
#else
#define CUDAPREP_HD inline
#endif

namespace cudaprep {

enum class PixelFormat : int { NV12, I420, BGR, RGB, BGRx, RGBx, BGRA, RGBA, GRAY8 };

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
  Plane planes[3];
};

// 8-bit single-channel image (luma or gray).
struct GrayView {
  const uint8_t* data = nullptr;
  int64_t stride = 0;
  int width = 0, height = 0;
};

inline int plane_count(PixelFormat f) {
  switch (f) {
    case PixelFormat::NV12: return 2;
    case PixelFormat::I420: return 3;
    default: return 1;
  }
}

inline bool is_yuv(PixelFormat f) { return f == PixelFormat::NV12 || f == PixelFormat::I420; }

// Bytes per pixel of a packed format (0 for planar YUV).
inline int packed_bytes_per_pixel(PixelFormat f) {
  switch (f) {
    case PixelFormat::BGR: case PixelFormat::RGB: return 3;
    case PixelFormat::BGRx: case PixelFormat::RGBx: case PixelFormat::BGRA: case PixelFormat::RGBA: return 4;
    case PixelFormat::GRAY8: return 1;
    default: return 0;
  }
}

const char* pixel_format_name(PixelFormat f);

}  // namespace cudaprep
