// Frame -> 8-bit gray on the CPU, with cv::cvtColor's fixed-point BGR2GRAY rounding.
#include <cstring>

#include "templatematch_internal.h"

namespace cudaprep {

namespace {

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
  if (gray_is_first_plane(src.format)) {
    for (int y = 0; y < src.height; ++y)
      std::memcpy(dst + y * dst_stride, src.planes[0].data + y * src.planes[0].stride, src.width);
    return Status();
  }
  if (src.planes[0].stride < plane_row_bytes(src.format, 0, src.width))
    return Status::error("to_gray: source stride too small");
  if (is_yuv(src.format)) {  // luma interleaved with chroma, or 16-bit
    const PixelFormatInfo& f = pixel_format_info(src.format);
    for (int y = 0; y < src.height; ++y) {
      const uint8_t* s = src.planes[0].data + y * src.planes[0].stride;
      uint8_t* d = dst + y * dst_stride;
      for (int x = 0; x < src.width; ++x) d[x] = tm::luma8_at(s, x, f.luma_step, f.y_byte, f.sample_bytes);
    }
    return Status();
  }
  const bool known = tm::with_rgb_layout(src.format, [&](auto layout) {
    using L = decltype(layout);
    convert_rows<L::bpp, L::r, L::g, L::b>(src, dst, dst_stride);
  });
  return known ? Status() : Status::error("to_gray: unsupported format");
}

}  // namespace cudaprep
