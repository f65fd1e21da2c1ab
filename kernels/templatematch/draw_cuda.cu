// Box outlines drawn into a device frame: one block per (box, band); the boxes travel in the
// kernel's parameters (no allocation, no copy). Same bands and colours as draw_boxes_cpu.
#include <cuda_runtime.h>

#include "cuda_status.h"
#include "templatematch_internal.h"

namespace cudaprep {

namespace {

struct DrawParams {
  Rect boxes[kMaxMatches];
  int count;
  int thickness;
  int width, height;
  int yuv;
  int bpp;
  tm::BoxColour colour;
  tm::YuvDrawLayout layout;
  uint8_t* planes[3];
  int64_t strides[3];
};

__global__ void draw_kernel(const DrawParams p) {
  const int box = blockIdx.x, band = blockIdx.y;
  if (box >= p.count) return;
  Rect bands[4];
  const int n = tm::outline_bands(p.boxes[box], p.thickness, p.width, p.height, bands);
  if (band >= n) return;
  const Rect b = bands[band];
  const int64_t count = static_cast<int64_t>(b.w) * b.h;
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x) {
    const int x = b.x + static_cast<int>(i % b.w), y = b.y + static_cast<int>(i / b.w);
    if (p.yuv) {
      tm::put_luma(p.planes, p.strides, p.layout, x, y, p.colour.y);
    } else {
      uint8_t* px = p.planes[0] + y * p.strides[0] + static_cast<int64_t>(x) * p.bpp;
      for (int c = 0; c < p.colour.write_bytes; ++c) px[c] = p.colour.c[c];
    }
  }
  if (!p.yuv) return;
  const Rect c = tm::chroma_cover(b, p.layout);
  const int64_t ccount = static_cast<int64_t>(c.w) * c.h;
  for (int64_t i = threadIdx.x; i < ccount; i += blockDim.x)
    tm::put_chroma(p.planes, p.strides, p.layout, c.x + static_cast<int>(i % c.w), c.y + static_cast<int>(i / c.w),
                   p.colour.u, p.colour.v);
}

}  // namespace

Status draw_boxes_cuda(const ImageView& frame, const Rect* boxes, int count, const BoxStyle& style, void* stream) {
  if (!boxes || count <= 0 || style.thickness <= 0) return Status();
  if (frame.width <= 0 || frame.height <= 0 || !frame.planes[0].data) return Status::error("draw_boxes: invalid frame");
  const bool yuv = is_yuv(frame.format);
  for (int i = 1; i < plane_count(frame.format); ++i)
    if (!frame.planes[i].data) return Status::error("draw_boxes: missing chroma plane");
  DrawParams p{};
  p.thickness = style.thickness;
  p.width = frame.width;
  p.height = frame.height;
  p.yuv = yuv;
  p.bpp = packed_bytes_per_pixel(frame.format);
  p.colour = tm::box_colour(frame.format, style);
  p.layout = tm::yuv_draw_layout(frame.format);
  for (int i = 0; i < 3; ++i) {
    p.planes[i] = const_cast<uint8_t*>(frame.planes[i].data);
    p.strides[i] = frame.planes[i].stride;
  }
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  for (int first = 0; first < count; first += kMaxMatches) {
    p.count = count - first < kMaxMatches ? count - first : kMaxMatches;
    for (int i = 0; i < p.count; ++i) p.boxes[i] = boxes[first + i];
    draw_kernel<<<dim3(p.count, 4), 256, 0, st>>>(p);
    CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaGetLastError(), "draw_boxes_cuda launch"));
  }
  return Status();
}

}  // namespace cudaprep
