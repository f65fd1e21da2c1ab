// Frame -> 8-bit gray on the CPU, with cv::cvtColor's fixed-point BGR2GRAY rounding.
#include <cstring>

#include "templatematch_internal.h"

namespace cudaprep {

namespace {

// Channel offsets of R, G, B in a packed pixel.
bool rgb_offsets(PixelFormat f, int* r, int* g, int* b) {
  switch (f) {
    case PixelFormat::BGR: case PixelFormat::BGRx: case PixelFormat::BGRA: *b = 0; *g = 1; *r = 2; return true;
    case PixelFormat::RGB: case PixelFormat::RGBx: case PixelFormat::RGBA: *r = 0; *g = 1; *b = 2; return true;
    default: return false;
  }
}

template <int BPP, int R, int G, int B>
void convert_rows(const ImageView& src, uint8_t* dst, int64_t dst_stride) {
  for (int y = 0; y < src.height; ++y) {
    const uint8_t* s = src.planes[0].data + y * src.planes[0].stride;
    uint8_t* d = dst + y * dst_stride;
    for (int x = 0; x < src.width; ++x, s += BPP) d[x] = tm::gray_from_rgb(s[R], s[G], s[B]);
  }
}

}  // namespace

Status to_gray_cpu(const ImageView& src, uint8_t* dst, int64_t dst_stride) {
  if (src.width <= 0 || src.height <= 0) return Status::error("to_gray: invalid frame size");
  if (!dst || dst_stride < src.width) return Status::error("to_gray: invalid destination");
  if (!src.planes[0].data) return Status::error("to_gray: no source data");
  const int bpp = packed_bytes_per_pixel(src.format);
  if (is_yuv(src.format) || src.format == PixelFormat::GRAY8) {
    for (int y = 0; y < src.height; ++y)
      std::memcpy(dst + y * dst_stride, src.planes[0].data + y * src.planes[0].stride, src.width);
    return Status();
  }
  if (src.planes[0].stride < static_cast<int64_t>(src.width) * bpp) return Status::error("to_gray: source stride too small");
  int r, g, b;
  if (!rgb_offsets(src.format, &r, &g, &b)) return Status::error("to_gray: unsupported format");
  const bool bgr = b == 0;
  if (bpp == 3) {
    if (bgr) convert_rows<3, 2, 1, 0>(src, dst, dst_stride);
    else convert_rows<3, 0, 1, 2>(src, dst, dst_stride);
  } else {
    if (bgr) convert_rows<4, 2, 1, 0>(src, dst, dst_stride);
    else convert_rows<4, 0, 1, 2>(src, dst, dst_stride);
  }
  return Status();
}

}  // namespace cudaprep
