// Box outlines drawn into a host frame of any supported format.
#include "templatematch_internal.h"

namespace cudaprep {

void draw_boxes_cpu(const ImageView& frame, const Rect* boxes, int count, const BoxStyle& style) {
  if (!boxes || count <= 0 || frame.width <= 0 || frame.height <= 0 || !frame.planes[0].data) return;
  const tm::BoxColour col = tm::box_colour(frame.format, style);
  const bool yuv = is_yuv(frame.format);
  const int bpp = packed_bytes_per_pixel(frame.format);
  const tm::YuvDrawLayout layout = tm::yuv_draw_layout(frame.format);
  uint8_t* planes[3];
  int64_t strides[3];
  for (int i = 0; i < 3; ++i) {
    planes[i] = const_cast<uint8_t*>(frame.planes[i].data);
    strides[i] = frame.planes[i].stride;
  }
  for (int i = 0; i < count; ++i) {
    Rect bands[4];
    const int n = tm::outline_bands(boxes[i], style.thickness, frame.width, frame.height, bands);
    for (int k = 0; k < n; ++k) {
      const Rect& b = bands[k];
      // Luma or packed pixels.
      for (int y = b.y; y < b.y + b.h; ++y) {
        for (int x = b.x; x < b.x + b.w; ++x) {
          if (yuv) {
            tm::put_luma(planes, strides, layout, x, y, col.y);
          } else {
            uint8_t* p = planes[0] + y * strides[0] + static_cast<int64_t>(x) * bpp;
            for (int c = 0; c < col.write_bytes; ++c) p[c] = col.c[c];
          }
        }
      }
      if (!yuv) continue;
      const Rect c = tm::chroma_cover(b, layout);
      for (int cy = c.y; cy < c.y + c.h; ++cy)
        for (int cx = c.x; cx < c.x + c.w; ++cx) tm::put_chroma(planes, strides, layout, cx, cy, col.u, col.v);
    }
  }
}

}  // namespace cudaprep
