// Frame -> 8-bit gray on the GPU: the same fixed-point formula as to_gray_cpu (bit-identical).
#include <cuda_runtime.h>

#include "cuda_status.h"
#include "templatematch_internal.h"

namespace cudaprep {

namespace {

template <int BPP, int R, int G, int B>
__global__ void gray_kernel(const uint8_t* __restrict src, int64_t src_stride, uint8_t* __restrict dst,
                            int64_t dst_stride, int width, int height) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y;
  if (x >= width || y >= height) return;
  const uint8_t* p = src + y * src_stride + static_cast<int64_t>(x) * BPP;
  dst[y * dst_stride + x] = tm::gray_from_rgb(p[R], p[G], p[B]);
}

// Luma that is not a plane of bytes (YUY2, UYVY, P010): tm::luma8_at per pixel.
__global__ void luma_kernel(const uint8_t* __restrict src, int64_t src_stride, uint8_t* __restrict dst,
                            int64_t dst_stride, int width, int height, int luma_step, int y_byte, int sample_bytes) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y;
  if (x >= width || y >= height) return;
  dst[y * dst_stride + x] = tm::luma8_at(src + y * src_stride, x, luma_step, y_byte, sample_bytes);
}

template <int BPP, int R, int G, int B>
Status launch(const ImageView& s, uint8_t* dst, int64_t dst_stride, cudaStream_t st) {
  const dim3 block(256), grid((s.width + 255) / 256, s.height);
  gray_kernel<BPP, R, G, B>
      <<<grid, block, 0, st>>>(s.planes[0].data, s.planes[0].stride, dst, dst_stride, s.width, s.height);
  return cuda_status(cudaGetLastError(), "to_gray_cuda launch");
}

}  // namespace

Status to_gray_cuda(const ImageView& src, uint8_t* dst, int64_t dst_stride, void* stream) {
  if (src.width <= 0 || src.height <= 0) return Status::error("to_gray: invalid frame size");
  if (!dst || dst_stride < src.width) return Status::error("to_gray: invalid destination");
  if (!src.planes[0].data) return Status::error("to_gray: no source data");
  if (src.height > 65535) return Status::error("to_gray: frame too tall");
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  if (gray_is_first_plane(src.format)) {
    return cuda_status(cudaMemcpy2DAsync(dst, dst_stride, src.planes[0].data, src.planes[0].stride, src.width,
                                         src.height, cudaMemcpyDeviceToDevice, st),
                       "to_gray_cuda copy");
  }
  if (src.planes[0].stride < plane_row_bytes(src.format, 0, src.width))
    return Status::error("to_gray: source stride too small");
  if (is_yuv(src.format)) {
    const PixelFormatInfo& f = pixel_format_info(src.format);
    const dim3 block(256), grid((src.width + 255) / 256, src.height);
    luma_kernel<<<grid, block, 0, st>>>(src.planes[0].data, src.planes[0].stride, dst, dst_stride, src.width,
                                        src.height, f.luma_step, f.y_byte, f.sample_bytes);
    return cuda_status(cudaGetLastError(), "to_gray_cuda launch");
  }
  Status launched;
  const bool known = tm::with_rgb_layout(src.format, [&](auto layout) {
    using L = decltype(layout);
    launched = launch<L::bpp, L::r, L::g, L::b>(src, dst, dst_stride, st);
  });
  return known ? launched : Status::error("to_gray: unsupported format");
}

}  // namespace cudaprep
