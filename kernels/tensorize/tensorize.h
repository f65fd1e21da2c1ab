// Fused frame -> tensor preprocessing: affine resize (letterbox / stretch / crop),
// colour conversion, normalisation and layout change, on the CPU or in one CUDA kernel.
//
// Semantics (the CPU path, the CUDA kernel and the tests' references all implement these):
//  * Coordinates are pixel indices; the centre of pixel i is at i (cv::warpAffine convention).
//    The source->tensor map is x_t = a*x_s + b with the pixel-centre convention of cv::resize,
//    i.e. (x_t + 0.5) = s * (x_s + 0.5 - roi.x) + offset.
//  * A tensor pixel whose centre falls inside the active rectangle samples the source;
//    others take pad-value. Samples are clamped to the ROI (replicated border, as cv::resize).
//  * Bilinear: the usual 2x2 interpolation at the mapped position. Nearest: the source pixel
//    whose centre is closest (cv::INTER_NEAREST_EXACT); ties go to the higher index.
//  * YUV: luma and chroma are each interpolated at the mapped position, then converted with the
//    matrix and range given, then clamped to [0, 255]. Along a subsampled axis, chroma sample c
//    sits at luma position 2c + 0.5 when centre-sited (JPEG, the default), chroma index =
//    (x_s + 0.5) / 2 - 0.5, and at 2c when co-sited (MPEG-2 horizontally), index = x_s / 2. RGB-like formats are read
//    directly; GRAY8 is replicated to three channels.
//  * out[c] = (pixel[c] * scale - mean[c]) / std[c], evaluated as pixel * mul[c] + add[c].
//  * channels = 1 (gray): pixel = BT.601 luma 0.299 R + 0.587 G + 0.114 B of RGB-like sources (as
//    cv::cvtColor's RGB2GRAY, before its rounding), the source's Y of YUV sources with its range
//    expanded ((Y - 16) * 255 / 219 for limited range, as the colour path does; clamped to
//    [0, 255]), the value of GRAY8; normalised with scale, mean[0], std[0]. channel_order is
//    ignored, and layouts NCHW and NHWC are the same bytes.
//  * Integer dtypes: the normalised value rounded to nearest, ties to even (as cv::saturate_cast
//    and __float2int_rn), then saturated: uint8 to [0, 255], int8 to [-128, 127]. With scale 1,
//    mean 0, std 1, uint8 is the resized pixels themselves.
#pragma once
#include <cstddef>
#include <cstdint>

#include "dtypes.h"
#include "image.h"
#include "status.h"

namespace cudaprep {

enum class ResizeMode : int { Letterbox, Stretch, Crop, Ultralytics };
enum class Align : int { Center, TopLeft };
enum class Interpolation : int { Bilinear, Nearest };
enum class ChannelOrder : int { RGB, BGR };
enum class Layout : int { NCHW, NHWC };
enum class YuvMatrix : int { BT601, BT709, BT2020 };

constexpr int kMaxTensorSide = 16384;
constexpr int kMaxSourceSide = 32768;
constexpr uint64_t kMaxTensorBytes = uint64_t(1) << 31;  // one GstBuffer / pool allocation

// Whether `count` tensors (a batch) of width x height x channels elements of `dtype` fit the
// kMaxTensorBytes of one buffer; the error names the sizes. The one check of that limit.
Status check_buffer_bytes(int width, int height, int channels, DType dtype, int count);

// Output-wide settings: everything that every slot of a batch shares (the tensor's size, how a
// source is fitted into it, normalisation, layout, dtype).
struct TensorOutputSpec {
  int dst_width = 640, dst_height = 640;
  ResizeMode mode = ResizeMode::Letterbox;
  Align align = Align::Center;
  Interpolation interpolation = Interpolation::Bilinear;
  int pad_value = 114;  // 0..255, pixel space
  ChannelOrder channel_order = ChannelOrder::RGB;
  double scale = 1.0 / 255.0;
  double mean[3] = {0, 0, 0};
  double std[3] = {1, 1, 1};
  Layout layout = Layout::NCHW;
  DType dtype = DType::Float32;
  int channels = 3;  // 3: colour in channel_order; 1: gray (see the top of the file)
};

// The normalisation an element uses where the user sets none, by dtype (kDTypes' defaults):
// floats take pixel / 255; uint8 the pixel itself; int8 pixel - 128.
struct Normalisation {
  double scale;
  double mean[3];
  double std[3];
};
Normalisation default_normalisation(DType dtype);

// One source of a slot: what differs from slot to slot (format, size, region, colorimetry).
struct SlotSourceSpec {
  PixelFormat format = PixelFormat::BGR;
  int src_width = 0, src_height = 0;
  Rect roi;  // empty = whole frame
  YuvMatrix yuv_matrix = YuvMatrix::BT601;
  bool yuv_full_range = false;
  // Chroma siting (YUV): co-sited with the even luma columns / rows, else centred between them.
  bool chroma_h_cosited = false, chroma_v_cosited = false;
};

// What the user asked for, for one frame: the output spec and one source. Validated by
// make_tensorize_plan().
struct TensorizeConfig : TensorOutputSpec, SlotSourceSpec {};

// The geometry a consumer needs to map detections back to the frame.
struct TensorTransform {
  int src_width = 0, src_height = 0;
  int dst_width = 0, dst_height = 0;
  double src_to_dst[6] = {1, 0, 0, 0, 1, 0};  // row-major 2x3, pixel-index coordinates
  double dst_to_src[6] = {1, 0, 0, 0, 1, 0};
  double active[4] = {0, 0, 0, 0};  // x, y, w, h of the unpadded image in the tensor
};

// The output spec resolved once: what the per-pixel code needs of it. Plain data.
struct TensorOutputPlan {
  int dst_width, dst_height;
  Interpolation interpolation;
  Layout layout;
  DType dtype;
  int channels;               // 3 or 1 (gray)
  int out_channel_source[3];  // output channel c takes colour component (0=R, 1=G, 2=B)
  float mul[3], add[3];       // per output channel: value = pixel * mul + add
  float pad_out[3];           // normalised pad value per output channel
};

// One source's geometry and colour resolved against an output spec. Plain data.
struct SlotPlan {
  PixelFormat format;
  int src_width, src_height;
  Rect roi;
  float inv[6];              // tensor pixel -> source pixel (index coordinates)
  int active_x0, active_y0;  // tensor pixels [x0, x1) x [y0, y1) sample the source
  int active_x1, active_y1;
  int src_bytes_per_pixel;    // packed formats
  int src_channel_offset[3];  // byte offset of R, G, B inside a packed pixel
  // YUV -> RGB: y' = (Y - y_offset) * y_gain, u' = (U - 128) * c_gain, v' likewise;
  // R = y' + rv*v', G = y' + gu*u' + gv*v', B = y' + bu*u'
  float y_offset, y_gain, c_gain, rv, gu, gv, bu;
  // Chroma index = (luma + k) * 0.5 - k per axis: k = 0.5 centre-sited, 0 co-sited.
  float chroma_site_x, chroma_site_y;
  TensorTransform transform;  // its dst size names the output spec the slot was made for
};

// Everything the per-pixel code needs for one frame, resolved once per caps: the batch-of-one
// case of tensorize_batch.h (an output plan and one slot plan).
struct TensorizePlan : TensorOutputPlan, SlotPlan {};

// Validates cfg and resolves it into a plan. Every invalid setting gets its own message.
Status make_tensorize_plan(const TensorizeConfig& cfg, TensorizePlan* plan);

// Bytes of one output tensor (contiguous, no row padding).
size_t tensor_bytes(const TensorizePlan& plan);
inline size_t tensor_elements(const TensorizePlan& p) { return size_t(p.dst_width) * p.dst_height * p.channels; }

// Checks that an image matches the plan (format, size, non-null planes, strides).
Status check_source(const TensorizePlan& plan, const ImageView& src);

// CPU path: host memory in, host memory out.
Status tensorize_cpu(const TensorizePlan& plan, const ImageView& src, void* dst);

// Launch shape of the CUDA kernel. The defaults are the fastest shape measured
// (dev/perf/tensorize.md); other values are for benchmarks and tests that compare shapes.
// No setting changes the result.
struct TensorizeTuning {
  // Warps per block, 1..kMaxWarpsPerBlock; 0: the launch's own, the
  // fastest measured for it (kSingleFrameWarpsPerBlock, kBatchWarpsPerBlock).
  int warps_per_block = 0;
  bool plane_routing = true;  // NCHW bilinear: values reach their output plane through per-slot pointers
};
// The single-frame kernel puts its padding rows first: with 2-warp blocks it is fastest for every
// source family; the batch kernel is fastest with 4 (dev/perf/tensorize.md).
constexpr int kMaxWarpsPerBlock = 4;  // the kernels' launch bound: 128 threads
constexpr int kSingleFrameWarpsPerBlock = 2;
constexpr int kBatchWarpsPerBlock = 4;
// The warps per block a launch with `tuning` uses (its own `launch_default` where the tuning
// says 0); an error naming the value outside 0..4.
Status warps_per_block_of(const TensorizeTuning& tuning, int launch_default, int* warps);

// Whether a launch writes the tensor rows that are padding from edge to edge (rows outside
// [active_y0, active_y1): a letterbox's bands). Keep: `dst` already holds exactly those rows of
// this plan, written by an earlier launch; they are left as they are and only the rows that
// sample the source are written. A system-memory tensor written across the bus then sends only
// the image's rows (for 1080p letterboxed into 640x640: 360 of 640). The caller answers for
// what the buffer holds (gst/core/pinned_pool.h tracks it for the elements). The CPU path and the
// batch kernel write every row either way: Keep allows the skip, it does not promise it.
enum class PaddingRows : int { Write, Keep };

// CUDA path: device memory in and out; enqueues at most one kernel on `stream` (a cudaStream_t;
// none when `rows` is Keep and no row samples the source) and returns without synchronising.
// Needs the CUDA context current on the calling thread.
Status tensorize_cuda(const TensorizePlan& plan, const ImageView& src, void* dst, void* stream,
                      const TensorizeTuning& tuning = TensorizeTuning(), PaddingRows rows = PaddingRows::Write);

// Boxes map back to the frame with gst_cuda_prep_transform_box_to_frame (gst/gstcudaprepmeta.h,
// header-only, for applications): the one implementation of that mapping.

// IEEE binary16 conversion with round-to-nearest-even, as __float2half_rn does.
uint16_t float_to_half_bits(float f);
float half_bits_to_float(uint16_t h);

const char* resize_mode_name(ResizeMode m);

}  // namespace cudaprep
