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
  int format;  // PixelFormat
  int bpp;
  tm::BoxColour colour;
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
  const bool yuv = p.format == static_cast<int>(PixelFormat::NV12) || p.format == static_cast<int>(PixelFormat::I420);
  const int64_t count = static_cast<int64_t>(b.w) * b.h;
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x) {
    const int x = b.x + static_cast<int>(i % b.w), y = b.y + static_cast<int>(i / b.w);
    uint8_t* px = p.planes[0] + y * p.strides[0] + static_cast<int64_t>(x) * p.bpp;
    if (yuv) {
      px[0] = p.colour.y;
    } else {
      for (int c = 0; c < p.colour.write_bytes; ++c) px[c] = p.colour.c[c];
    }
  }
  if (!yuv) return;
  const int cx0 = b.x / 2, cx1 = (b.x + b.w - 1) / 2, cy0 = b.y / 2, cy1 = (b.y + b.h - 1) / 2;
  const int cw = cx1 - cx0 + 1;
  const int64_t ccount = static_cast<int64_t>(cw) * (cy1 - cy0 + 1);
  const bool nv12 = p.format == static_cast<int>(PixelFormat::NV12);
  for (int64_t i = threadIdx.x; i < ccount; i += blockDim.x) {
    const int cx = cx0 + static_cast<int>(i % cw), cy = cy0 + static_cast<int>(i / cw);
    if (nv12) {
      uint8_t* uv = p.planes[1] + cy * p.strides[1] + 2 * cx;
      uv[0] = p.colour.u;
      uv[1] = p.colour.v;
    } else {
      p.planes[1][cy * p.strides[1] + cx] = p.colour.u;
      p.planes[2][cy * p.strides[2] + cx] = p.colour.v;
    }
  }
}

}  // namespace

Status draw_boxes_cuda(const ImageView& frame, const Rect* boxes, int count, const BoxStyle& style, void* stream) {
  if (!boxes || count <= 0 || style.thickness <= 0) return Status();
  if (frame.width <= 0 || frame.height <= 0 || !frame.planes[0].data) return Status::error("draw_boxes: invalid frame");
  const bool yuv = is_yuv(frame.format);
  if (yuv && (!frame.planes[1].data || (frame.format == PixelFormat::I420 && !frame.planes[2].data)))
    return Status::error("draw_boxes: missing chroma plane");
  DrawParams p{};
  p.thickness = style.thickness;
  p.width = frame.width;
  p.height = frame.height;
  p.format = static_cast<int>(frame.format);
  p.bpp = yuv ? 1 : packed_bytes_per_pixel(frame.format);
  p.colour = tm::box_colour(frame.format, style);
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
