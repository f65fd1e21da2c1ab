// Box outlines drawn into a host frame of any supported format.
#include "templatematch_internal.h"

namespace cudaprep {

void draw_boxes_cpu(const ImageView& frame, const Rect* boxes, int count, const BoxStyle& style) {
  if (!boxes || count <= 0 || frame.width <= 0 || frame.height <= 0 || !frame.planes[0].data) return;
  const tm::BoxColour col = tm::box_colour(frame.format, style);
  const bool yuv = is_yuv(frame.format);
  const int bpp = yuv ? 1 : packed_bytes_per_pixel(frame.format);
  for (int i = 0; i < count; ++i) {
    Rect bands[4];
    const int n = tm::outline_bands(boxes[i], style.thickness, frame.width, frame.height, bands);
    for (int k = 0; k < n; ++k) {
      const Rect& b = bands[k];
      // Luma or packed pixels.
      for (int y = b.y; y < b.y + b.h; ++y) {
        uint8_t* row = const_cast<uint8_t*>(frame.planes[0].data) + y * frame.planes[0].stride;
        for (int x = b.x; x < b.x + b.w; ++x) {
          uint8_t* p = row + static_cast<int64_t>(x) * bpp;
          if (yuv) {
            p[0] = col.y;
          } else {
            for (int c = 0; c < col.write_bytes; ++c) p[c] = col.c[c];
          }
        }
      }
      if (!yuv) continue;
      // Every chroma sample that covers a pixel of the band.
      const int cx0 = b.x / 2, cx1 = (b.x + b.w - 1) / 2, cy0 = b.y / 2, cy1 = (b.y + b.h - 1) / 2;
      for (int cy = cy0; cy <= cy1; ++cy) {
        if (frame.format == PixelFormat::NV12) {
          uint8_t* row = const_cast<uint8_t*>(frame.planes[1].data) + cy * frame.planes[1].stride;
          for (int cx = cx0; cx <= cx1; ++cx) {
            row[2 * cx] = col.u;
            row[2 * cx + 1] = col.v;
          }
        } else {
          uint8_t* urow = const_cast<uint8_t*>(frame.planes[1].data) + cy * frame.planes[1].stride;
          uint8_t* vrow = const_cast<uint8_t*>(frame.planes[2].data) + cy * frame.planes[2].stride;
          for (int cx = cx0; cx <= cx1; ++cx) {
            urow[cx] = col.u;
            vrow[cx] = col.v;
          }
        }
      }
    }
  }
}

}  // namespace cudaprep
