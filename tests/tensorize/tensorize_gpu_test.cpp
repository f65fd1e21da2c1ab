// GPU tests of the tensorize kernel: the CUDA path must equal the CPU path bit for bit (fp32 and
// fp16) for every format and mode, on random images of odd sizes, with padded / pitched device
// inputs and odd plane offsets (source rows at every alignment), with aligned
// and misaligned outputs (vector and scalar stores). The output is poisoned before every run
// and every element is checked to have been written, and nothing past its end. Every row of the
// dtype table (kDTypes, walked rather than listed) goes through the single-frame and the batch
// kernel, compared byte for byte, so a new row is covered here without a new test.
// Exits 77 (skipped) without a GPU (gpu_test_main.cpp). No OpenCV, no GStreamer.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "batch_case.h"
#include "cuda_device.h"
#include "dtypes.h"
#include "tensorize.h"
#include "tensorize_batch.h"
#include "test_images.h"

using namespace cudaprep;
using tztest::HostImage;
using tztest::kAllFormats;

namespace {

constexpr size_t kGuard = 256;

class TensorizeGpu : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(cuda::stream_create(&stream_).ok()); }
  void TearDown() override { cuda::stream_destroy(stream_); }
  void* stream_ = nullptr;
};

// A device copy of a host image.
struct DeviceImage {
  std::vector<cuda::DeviceBuffer> bufs;
  ImageView view;
};

// Same bytes, same strides, same plane offsets as the host buffer.
::testing::AssertionResult upload_same_layout(const HostImage& im, void* stream, DeviceImage* d) {
  d->bufs.clear();
  d->bufs.emplace_back();
  Status s = d->bufs[0].allocate(im.buf.size());
  if (s.ok())
    s = cuda::copy_2d_async(d->bufs[0].data(), im.buf.size(), im.buf.data(), im.buf.size(), im.buf.size(), 1,
                            cuda::CopyKind::HostToDevice, stream);
  if (s.ok()) s = cuda::stream_sync(stream);
  if (!s.ok()) return ::testing::AssertionFailure() << s.message();
  d->view = im.at(d->bufs[0].data());
  return ::testing::AssertionSuccess();
}

// One cudaMallocPitch allocation per plane; the plane starts `offset` bytes into it.
::testing::AssertionResult upload_pitched(const HostImage& im, int offset, void* stream, DeviceImage* d) {
  // 16-bit formats (P010) need 2-byte aligned planes: the offset is rounded up to that.
  const int align = cudaprep::sample_bytes(im.view.format);
  offset = (offset + align - 1) / align * align;
  d->bufs.clear();
  d->view = im.view;
  const int n = plane_count(im.view.format);
  d->bufs.resize(n);
  for (int i = 0; i < n; ++i) {
    int rb, rows;
    tztest::plane_geometry(im.view.format, im.view.width, im.view.height, i, &rb, &rows);
    Status s = d->bufs[i].allocate_pitched(size_t(rb) + offset, rows);
    uint8_t* base = d->bufs[i].data() + offset;
    if (s.ok())
      s = cuda::copy_2d_async(base, d->bufs[i].pitch(), im.plane(i), size_t(im.stride(i)), rb, rows,
                              cuda::CopyKind::HostToDevice, stream);
    if (s.ok()) s = cuda::stream_sync(stream);
    if (!s.ok()) return ::testing::AssertionFailure() << s.message();
    d->view.planes[i].data = base;
    d->view.planes[i].stride = int64_t(d->bufs[i].pitch());
  }
  return ::testing::AssertionSuccess();
}

// CPU result (poisoned buffer, fully checked).
::testing::AssertionResult run_cpu(const TensorizePlan& plan, const ImageView& src, std::vector<uint8_t>* out) {
  const size_t bytes = tensor_bytes(plan);
  std::vector<uint8_t> buf(bytes + kGuard, 0xFF);
  const Status s = tensorize_cpu(plan, src, buf.data());
  if (!s.ok()) return ::testing::AssertionFailure() << "tensorize_cpu: " << s.message();
  for (size_t i = bytes; i < buf.size(); ++i)
    if (buf[i] != 0xFF) return ::testing::AssertionFailure() << "CPU wrote past the end";
  buf.resize(bytes);
  *out = std::move(buf);
  return ::testing::AssertionSuccess();
}

// Runs the kernel into a poisoned device buffer at byte offset `dst_offset`; returns the tensor
// bytes and checks the guard bytes before and after it.
::testing::AssertionResult run_gpu(const TensorizePlan& plan, const ImageView& src, void* stream, size_t dst_offset,
                                   const TensorizeTuning& tuning, std::vector<uint8_t>* out, uint8_t poison = 0xFF,
                                   PaddingRows rows = PaddingRows::Write) {
  const size_t bytes = tensor_bytes(plan), total = dst_offset + bytes + kGuard;
  cuda::DeviceBuffer dev;
  Status s = dev.allocate(total);
  std::vector<uint8_t> host(total, poison);
  if (s.ok())
    s = cuda::copy_2d_async(dev.data(), total, host.data(), total, total, 1, cuda::CopyKind::HostToDevice, stream);
  if (s.ok()) s = cuda::stream_sync(stream);
  if (!s.ok()) return ::testing::AssertionFailure() << "setup: " << s.message();
  s = tensorize_cuda(plan, src, dev.data() + dst_offset, stream, tuning, rows);
  if (!s.ok()) return ::testing::AssertionFailure() << "tensorize_cuda: " << s.message();
  s = cuda::stream_sync(stream);
  if (!s.ok()) return ::testing::AssertionFailure() << "kernel: " << s.message();
  s = cuda::copy_2d_async(host.data(), total, dev.data(), total, total, 1, cuda::CopyKind::DeviceToHost, stream);
  if (s.ok()) s = cuda::stream_sync(stream);
  if (!s.ok()) return ::testing::AssertionFailure() << "readback: " << s.message();
  for (size_t i = 0; i < dst_offset; ++i)
    if (host[i] != poison) return ::testing::AssertionFailure() << "kernel wrote before the tensor";
  for (size_t i = dst_offset + bytes; i < total; ++i)
    if (host[i] != poison) return ::testing::AssertionFailure() << "kernel wrote past the tensor end";
  out->assign(host.begin() + dst_offset, host.begin() + dst_offset + bytes);
  return ::testing::AssertionSuccess();
}

std::string describe(const TensorizeConfig& c) {
  char buf[400];
  std::snprintf(buf, sizeof(buf),
                "%s %dx%d roi(%d,%d %dx%d) -> %dx%d %s align=%d interp=%d order=%d layout=%d dtype=%d channels=%d",
                pixel_format_name(c.format), c.src_width, c.src_height, c.roi.x, c.roi.y, c.roi.w, c.roi.h, c.dst_width,
                c.dst_height, resize_mode_name(c.mode), int(c.align), int(c.interpolation), int(c.channel_order),
                int(c.layout), int(c.dtype), c.channels);
  return buf;
}

// GPU vs CPU: every element written (no poison left), then bit equality; on a mismatch reports
// the largest difference (the documented tolerance is 1e-5 for fp32, but bits are expected).
::testing::AssertionResult same_as_cpu(const TensorizePlan& plan, const std::vector<uint8_t>& cpu,
                                       const std::vector<uint8_t>& gpu) {
  const size_t n = tensor_elements(plan);
  size_t unwritten = 0, differ = 0, first = n;
  double worst = 0;
  for (size_t i = 0; i < n; ++i) {
    float a, b;
    if (plan.dtype == DType::UInt8 || plan.dtype == DType::Int8) {  // check() ran two poisons for these
      a = plan.dtype == DType::UInt8 ? float(cpu[i]) : float(int8_t(cpu[i]));
      b = plan.dtype == DType::UInt8 ? float(gpu[i]) : float(int8_t(gpu[i]));
    } else if (plan.dtype == DType::Float32) {
      std::memcpy(&a, &cpu[4 * i], 4);
      std::memcpy(&b, &gpu[4 * i], 4);
    } else {
      uint16_t ha, hb;
      std::memcpy(&ha, &cpu[2 * i], 2);
      std::memcpy(&hb, &gpu[2 * i], 2);
      a = half_bits_to_float(ha);
      b = half_bits_to_float(hb);
    }
    if (std::isnan(b)) {
      ++unwritten;
      continue;
    }
    const size_t w = size_t(dtype_bytes(plan.dtype));
    if (std::memcmp(&cpu[w * i], &gpu[w * i], w) != 0) {
      if (differ++ == 0) first = i;
      worst = std::max(worst, double(std::fabs(a - b)));
    }
  }
  if (unwritten) return ::testing::AssertionFailure() << unwritten << " of " << n << " elements not written";
  if (differ)
    return ::testing::AssertionFailure() << differ << " of " << n << " elements differ from the CPU path (first "
                                         << first << ", largest difference " << worst << ")";
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult check(const TensorizeConfig& cfg, const HostImage& im, void* stream, int mode,
                                 size_t dst_offset = 0, const TensorizeTuning& tuning = TensorizeTuning()) {
  TensorizePlan plan;
  const Status s = make_tensorize_plan(cfg, &plan);
  if (!s.ok()) return ::testing::AssertionFailure() << "plan: " << s.message();
  std::vector<uint8_t> cpu, gpu;
  auto r = run_cpu(plan, im.view, &cpu);
  if (!r) return r << " " << describe(cfg);
  DeviceImage d;
  r = mode == 0 ? upload_same_layout(im, stream, &d) : upload_pitched(im, mode == 1 ? 0 : mode, stream, &d);
  if (!r) return r;
  r = run_gpu(plan, d.view, stream, dst_offset, tuning, &gpu);
  if (!r) return r << " " << describe(cfg);
  r = same_as_cpu(plan, cpu, gpu);
  if (r && dtype_bytes(plan.dtype) == 1) {
    // Every byte value is a valid integer, so no poison shows an unwritten element: a second run
    // over another poison must give the same bytes.
    r = run_gpu(plan, d.view, stream, dst_offset, tuning, &gpu, 0x00);
    if (!r) return r << " " << describe(cfg);
    r = same_as_cpu(plan, cpu, gpu);
  }
  if (!r)
    return r << "\n"
             << describe(cfg) << " input layout " << mode << " dst offset " << dst_offset << " warps per block "
             << tuning.warps_per_block << " plane routing " << tuning.plane_routing;
  return r;
}

using tztest::base_config;

// ---- every row of the dtype table (kernels/common/dtypes.h), for any type it may hold ----------------

// Whether each element must be written: the GPU output is read back over two poisons (0xFF, then
// 0x00) and must equal the CPU bytes both times; an element left unwritten keeps a poison, which
// differs from the CPU's byte under one of the two, whatever the type's encoding.
::testing::AssertionResult equal_over_two_poisons(const std::vector<uint8_t>& cpu, const std::vector<uint8_t>* gpu_ff,
                                                  const std::vector<uint8_t>* gpu_00) {
  const std::vector<uint8_t>* runs[2] = {gpu_ff, gpu_00};
  for (int r = 0; r < 2; ++r) {
    const std::vector<uint8_t>& g = *runs[r];
    if (g.size() != cpu.size())
      return ::testing::AssertionFailure() << "GPU output of " << g.size() << " bytes, CPU " << cpu.size();
    size_t differ = 0, first = 0;
    for (size_t i = 0; i < cpu.size(); ++i)
      if (cpu[i] != g[i] && differ++ == 0) first = i;
    if (differ)
      return ::testing::AssertionFailure()
             << differ << " of " << cpu.size() << " bytes differ from the CPU path over poison 0x"
             << (r == 0 ? "ff" : "00") << " (first: byte " << first << ", cpu " << int(cpu[first]) << ", gpu "
             << int(g[first]) << ")";
  }
  return ::testing::AssertionSuccess();
}

// The single-frame kernel against the CPU path, bytes only (any dtype): input uploaded with the
// same layout (mode 0), pitched (1) or pitched at an odd offset (mode > 1), output at dst_offset.
::testing::AssertionResult check_any_dtype(const TensorizeConfig& cfg, const HostImage& im, void* stream, int mode,
                                           size_t dst_offset) {
  TensorizePlan plan;
  const Status s = make_tensorize_plan(cfg, &plan);
  if (!s.ok()) return ::testing::AssertionFailure() << "plan: " << s.message() << " " << describe(cfg);
  std::vector<uint8_t> cpu, gpu_ff, gpu_00;
  auto r = run_cpu(plan, im.view, &cpu);
  DeviceImage d;
  if (r) r = mode == 0 ? upload_same_layout(im, stream, &d) : upload_pitched(im, mode == 1 ? 0 : mode, stream, &d);
  if (r) r = run_gpu(plan, d.view, stream, dst_offset, TensorizeTuning(), &gpu_ff, 0xFF);
  if (r) r = run_gpu(plan, d.view, stream, dst_offset, TensorizeTuning(), &gpu_00, 0x00);
  if (r) r = equal_over_two_poisons(cpu, &gpu_ff, &gpu_00);
  if (!r)
    return r << "\n"
             << describe(cfg) << " (" << dtype_name(cfg.dtype) << ") input layout " << mode << " dst offset "
             << dst_offset;
  return r;
}

// The row's default normalisation, or explicit values that put halves and values past the ends
// of the integer types into the tensor.
void set_normalisation(TensorOutputSpec& c, bool explicit_norm) {
  const Normalisation d = default_normalisation(c.dtype);
  const double mean[3] = {10, 20, 30}, stdv[3] = {2, 1, 0.5};
  c.scale = explicit_norm ? 0.5 : d.scale;
  for (int k = 0; k < 3; ++k) {
    c.mean[k] = explicit_norm ? mean[k] : d.mean[k];
    c.std[k] = explicit_norm ? stdv[k] : d.std[k];
  }
}

struct OutputShape {
  Layout layout;
  int channels;
};
const OutputShape kOutputShapes[] = {{Layout::NCHW, 3}, {Layout::NHWC, 3}, {Layout::NCHW, 1}};

// Every row of kDTypes (walked, not listed), NCHW / NHWC / gray, default and explicit
// normalisation, on random frames of odd sizes uploaded three ways and written at an aligned and
// a one-element-off output (vector and scalar stores), plus full HD -> 640x640: the CUDA
// single-frame kernel writes the CPU path's bytes.
TEST_F(TensorizeGpu, EveryDTypeRowSingleFrameMatchesCpu) {
  std::mt19937 rng(27);
  const PixelFormat formats[] = {PixelFormat::NV12, PixelFormat::BGR,   PixelFormat::I420,     PixelFormat::YUY2,
                                 PixelFormat::BGRx, PixelFormat::GRAY8, PixelFormat::P010_10LE};
  for (const DTypeInfo& row : kDTypes) {
    SCOPED_TRACE(std::string("dtype ") + row.name);
    int k = 0;
    for (PixelFormat f : formats)
      for (const OutputShape& shape : kOutputShapes) {
        const int w = 33 + 2 * (k % 7) * 17, h = 21 + 2 * (k % 5) * 13;  // odd
        HostImage im = tztest::make_image(f, w, h, 1 + k % 7, 1 + k % 11);
        tztest::fill_random(im, rng);
        TensorizeConfig c = base_config(f, w, h, 29 + 2 * (k % 4) * 11, 31 + 2 * (k % 3) * 7);
        c.mode = k % 2 ? ResizeMode::Letterbox : ResizeMode::Stretch;
        c.interpolation = k % 3 == 2 ? Interpolation::Nearest : Interpolation::Bilinear;
        c.dtype = row.dtype;
        c.layout = shape.layout;
        c.channels = shape.channels;
        set_normalisation(c, k % 2 == 1);
        for (int mode : {0, 1, 3}) EXPECT_TRUE(check_any_dtype(c, im, stream_, mode, 0));
        EXPECT_TRUE(check_any_dtype(c, im, stream_, 1, size_t(row.bytes)));  // one element off alignment
        ++k;
      }
    HostImage hd = tztest::make_image(PixelFormat::NV12, 1920, 1080, 0, 0);
    tztest::fill_random(hd, rng);
    for (const OutputShape& shape : kOutputShapes) {
      TensorizeConfig c = base_config(PixelFormat::NV12, 1920, 1080, 640, 640);
      c.dtype = row.dtype;
      c.layout = shape.layout;
      c.channels = shape.channels;
      set_normalisation(c, false);
      EXPECT_TRUE(check_any_dtype(c, hd, stream_, 0, 0));
      EXPECT_TRUE(check_any_dtype(c, hd, stream_, 1, size_t(row.bytes)));
    }
  }
}

// Every row of kDTypes through the batch kernel: batches of random formats and odd sizes, each
// slot pitched at an odd offset, an empty slot among them, 5 slots (kernel parameters) and 67
// (uploaded slot table), NCHW / NHWC / gray: the CUDA batch writes the CPU batch's bytes.
TEST_F(TensorizeGpu, EveryDTypeRowBatchMatchesCpu) {
  std::mt19937 rng(28);
  BatchSlotTable table;
  for (const DTypeInfo& row : kDTypes) {
    SCOPED_TRACE(std::string("dtype ") + row.name);
    int k = 0;
    for (const OutputShape& shape : kOutputShapes)
      for (int n : {5, 67}) {
        SCOPED_TRACE("batch of " + std::to_string(n) + ", layout " + std::to_string(int(shape.layout)) + ", " +
                     std::to_string(shape.channels) + " channels");
        tztest::BatchCase bc;
        TensorizeConfig c;
        tztest::set_sizes(c, 8, 8, 97, 65);
        c.dtype = row.dtype;
        c.layout = shape.layout;
        c.channels = shape.channels;
        set_normalisation(c, k++ % 2 == 1);
        bc.spec = c;
        for (int i = 0; i < n; ++i) {
          if (i == 2)
            bc.add_empty();
          else
            tztest::add_random_slot(bc, c, k + i, 131, rng);
        }
        ASSERT_TRUE(bc.build().ok());
        // Each slot's source in its own pitched allocation, 3 bytes in.
        std::vector<DeviceImage> sources(bc.count());
        std::vector<BatchSlot> slots = bc.slots;
        for (int i = 0; i < bc.count(); ++i) {
          if (bc.empty[i]) continue;
          ASSERT_TRUE(upload_pitched(bc.images[i], 3, stream_, &sources[i])) << "slot " << i;
          slots[i].src = sources[i].view;
        }
        TensorizeBatch b = bc.batch();
        b.slots = slots.data();
        const size_t bytes = bc.bytes();
        std::vector<uint8_t> cpu(bytes);
        ASSERT_TRUE(tensorize_batch_cpu(bc.batch(), cpu.data(), cpu.size()).ok());
        ASSERT_TRUE(table.reserve(n).ok());
        std::vector<uint8_t> gpu[2];
        const uint8_t poisons[2] = {0xFF, 0x00};
        for (int p = 0; p < 2; ++p) {
          std::vector<uint8_t> host(bytes + kGuard, poisons[p]);
          cuda::DeviceBuffer out;
          ASSERT_TRUE(out.allocate(host.size()).ok());
          ASSERT_TRUE(cuda::copy_2d_async(out.data(), host.size(), host.data(), host.size(), host.size(), 1,
                                          cuda::CopyKind::HostToDevice, stream_)
                          .ok());
          const Status st = tensorize_batch_cuda(b, out.data(), bytes, stream_, &table);
          ASSERT_TRUE(st.ok()) << st.message();
          ASSERT_TRUE(cuda::copy_2d_async(host.data(), host.size(), out.data(), host.size(), host.size(), 1,
                                          cuda::CopyKind::DeviceToHost, stream_)
                          .ok());
          ASSERT_TRUE(cuda::stream_sync(stream_).ok());
          for (size_t i = bytes; i < host.size(); ++i)
            ASSERT_EQ(host[i], poisons[p]) << "written past the end at " << i;
          host.resize(bytes);
          gpu[p] = std::move(host);
        }
        EXPECT_TRUE(equal_over_two_poisons(cpu, &gpu[0], &gpu[1]));
      }
  }
}

// Every format x mode x align x interpolation x dtype x layout on random images.
TEST_F(TensorizeGpu, EveryCombinationMatchesCpu) {
  std::mt19937 rng(21);
  std::uniform_int_distribution<int> any(0, 1 << 30);
  const int sizes[][2] = {{333, 201}, {1, 1}, {2, 3}, {64, 48}, {641, 479}, {37, 23}, {3, 97}, {160, 90}};
  const int tensors[][2] = {{64, 64}, {29, 31}, {40, 24}, {1, 1}, {7, 33}, {96, 50}, {17, 8}};
  const int n = tztest::for_each_combination([&](TensorizeConfig c, int i) {
    const auto& sz = sizes[i % 8];
    const auto& ts = tensors[(i / 8) % 7];
    const int mode = i % 3;  // same layout / pitched / pitched at an odd offset
    HostImage im = tztest::make_image(c.format, sz[0], sz[1], any(rng) % 9, 1 + any(rng) % 11);
    tztest::fill_random(im, rng);
    tztest::set_sizes(c, sz[0], sz[1], ts[0], ts[1]);
    tztest::randomize_settings(c, rng);
    EXPECT_TRUE(check(c, im, stream_, mode == 2 ? 1 + any(rng) % 7 : mode));
  });
  std::printf("%d configurations compared\n", n);
}

// The production shapes: 1080p NV12 / BGR / BGRx / I420 and the camera / decoder formats (YUY2,
// UYVY, NV21, P010) -> 640x640, every layout and dtype, with aligned outputs (vector stores) and
// misaligned ones (scalar stores).
TEST_F(TensorizeGpu, FullHdToSquareMatchesCpu) {
  std::mt19937 rng(22);
  for (PixelFormat f : {PixelFormat::NV12, PixelFormat::I420, PixelFormat::BGR, PixelFormat::BGRx, PixelFormat::GRAY8,
                        PixelFormat::YUY2, PixelFormat::UYVY, PixelFormat::NV21, PixelFormat::P010_10LE}) {
    HostImage im = tztest::make_image(f, 1920, 1080, 0, 0);
    tztest::fill_random(im, rng);
    for (ResizeMode m : {ResizeMode::Letterbox, ResizeMode::Ultralytics, ResizeMode::Crop})
      for (DType d : {DType::Float32, DType::Float16})
        for (Layout l : {Layout::NCHW, Layout::NHWC}) {
          TensorizeConfig c = base_config(f, 1920, 1080, 640, 640);
          c.mode = m;
          c.dtype = d;
          c.layout = l;
          EXPECT_TRUE(check(c, im, stream_, 0));
          if (m == ResizeMode::Letterbox) {
            EXPECT_TRUE(check(c, im, stream_, 1, d == DType::Float32 ? 4 : 2));
          }
        }
    // The integer dtypes and gray output, letterboxed, at aligned and odd output offsets.
    for (DType d : {DType::Float32, DType::Float16, DType::UInt8, DType::Int8})
      for (int channels : {3, 1})
        for (Layout l : {Layout::NCHW, Layout::NHWC}) {
          if (channels == 3 && dtype_bytes(d) > 1) continue;  // above
          if (channels == 1 && l == Layout::NHWC) continue;   // the same bytes as NCHW
          TensorizeConfig c = base_config(f, 1920, 1080, 640, 640);
          c.dtype = d;
          c.layout = l;
          c.channels = channels;
          const Normalisation norm = default_normalisation(d);
          c.scale = norm.scale;
          for (int k = 0; k < 3; ++k) c.mean[k] = norm.mean[k];
          EXPECT_TRUE(check(c, im, stream_, 0));
          EXPECT_TRUE(check(c, im, stream_, 1, size_t(dtype_bytes(d))));  // one element off alignment
        }
  }
}

// Chroma siting (co-sited or centred on each axis) on every YUV format, bilinear and nearest.
TEST_F(TensorizeGpu, ChromaSitingMatchesCpu) {
  std::mt19937 rng(24);
  for (PixelFormat f : kAllFormats) {
    if (!is_yuv(f)) continue;
    for (const auto& sz : {std::array<int, 4>{1920, 1080, 640, 640}, std::array<int, 4>{333, 201, 97, 65}}) {
      HostImage im = tztest::make_image(f, sz[0], sz[1], 3, 5);
      tztest::fill_random(im, rng);
      for (int site = 0; site < 4; ++site)
        for (Interpolation ip : {Interpolation::Bilinear, Interpolation::Nearest}) {
          TensorizeConfig c = base_config(f, sz[0], sz[1], sz[2], sz[3]);
          c.interpolation = ip;
          c.chroma_h_cosited = site & 1;
          c.chroma_v_cosited = site & 2;
          EXPECT_TRUE(check(c, im, stream_, 0)) << "siting " << site;
        }
    }
  }
}

// Odd sizes, extreme scales, ROIs at the frame edges, odd plane offsets.
TEST_F(TensorizeGpu, OddShapesAndOffsetsMatchCpu) {
  std::mt19937 rng(23);
  struct Case {
    int w, h, tw, th;
    Rect roi;
  } cases[] = {{1, 1, 640, 640, {}},
               {4096, 2160, 16, 16, {}},
               {333, 201, 641, 479, {}},
               {641, 479, 333, 201, {}},
               {1921, 1081, 640, 384, {1, 1, 1920, 1080}},
               {999, 7, 13, 640, {}},
               {7, 999, 640, 13, {}},
               {640, 480, 640, 480, {637, 477, 3, 3}},
               {1280, 720, 1023, 1023, {0, 0, 1, 720}}};
  int k = 0;
  for (const Case& cs : cases)
    for (PixelFormat f : kAllFormats) {
      HostImage im = tztest::make_image(f, cs.w, cs.h, 3, 5);
      tztest::fill_random(im, rng);
      TensorizeConfig c = base_config(f, cs.w, cs.h, cs.tw, cs.th);
      c.roi = cs.roi;
      c.interpolation = k++ % 3 == 2 ? Interpolation::Nearest : Interpolation::Bilinear;
      c.dtype = static_cast<DType>(k % kDTypeCount);
      c.layout = k % 5 == 3 ? Layout::NHWC : Layout::NCHW;
      c.channels = k % 7 == 4 ? 1 : 3;
      for (int mode : {0, 3}) EXPECT_TRUE(check(c, im, stream_, mode));
    }
}

// Every launch shape TensorizeTuning allows computes the same bits as the CPU path.
TEST_F(TensorizeGpu, EveryTuningMatchesCpu) {
  std::mt19937 rng(25);
  int k = 0;
  for (int warps = 0; warps <= 4; ++warps)  // 0: the default (2 warps)
    for (bool routing : {true, false})
      for (PixelFormat f : kAllFormats) {
        HostImage im = tztest::make_image(f, 333, 201, 3, 5);
        tztest::fill_random(im, rng);
        TensorizeConfig c = base_config(f, 333, 201, 96, 50);
        c.channel_order = k % 2 == 1 ? ChannelOrder::BGR : ChannelOrder::RGB;
        c.interpolation = k % 3 == 2 ? Interpolation::Nearest : Interpolation::Bilinear;
        c.layout = k % 4 == 3 ? Layout::NHWC : Layout::NCHW;
        ++k;
        TensorizeTuning tuning;
        tuning.warps_per_block = warps;
        tuning.plane_routing = routing;
        EXPECT_TRUE(check(c, im, stream_, 0, 0, tuning));
      }
}

TEST_F(TensorizeGpu, InvalidInputsLaunchNothing) {
  HostImage im = tztest::make_image(PixelFormat::NV12, 64, 48);
  DeviceImage d;
  ASSERT_TRUE(upload_same_layout(im, stream_, &d));
  TensorizeConfig c = base_config(PixelFormat::NV12, 64, 48, 32, 32);
  TensorizePlan plan;
  ASSERT_TRUE(make_tensorize_plan(c, &plan).ok());
  const size_t bytes = tensor_bytes(plan);
  cuda::DeviceBuffer out;
  ASSERT_TRUE(out.allocate(bytes).ok());
  std::vector<uint8_t> poison(bytes, 0xFF), back(bytes);
  auto expect_untouched = [&](const char* what) {
    ASSERT_TRUE(cuda::stream_sync(stream_).ok()) << what;
    ASSERT_TRUE(
        cuda::copy_2d_async(back.data(), bytes, out.data(), bytes, bytes, 1, cuda::CopyKind::DeviceToHost, stream_)
            .ok());
    ASSERT_TRUE(cuda::stream_sync(stream_).ok());
    EXPECT_EQ(back, poison) << what << ": the kernel ran";
  };
  ASSERT_TRUE(
      cuda::copy_2d_async(out.data(), bytes, poison.data(), bytes, bytes, 1, cuda::CopyKind::HostToDevice, stream_)
          .ok());

  TensorizePlan zero{};
  Status s = tensorize_cuda(zero, d.view, out.data(), stream_);
  EXPECT_FALSE(s.ok());
  expect_untouched("zero plan");

  ImageView v = d.view;
  v.format = PixelFormat::BGR;
  s = tensorize_cuda(plan, v, out.data(), stream_);
  EXPECT_EQ(s.message(), "source format BGR does not match the plan's NV12");
  expect_untouched("wrong format");

  v = d.view;
  v.height = 47;
  s = tensorize_cuda(plan, v, out.data(), stream_);
  EXPECT_EQ(s.message(), "source size 64x47 does not match the plan's 64x48");
  expect_untouched("wrong size");

  v = d.view;
  v.planes[1].data = nullptr;
  s = tensorize_cuda(plan, v, out.data(), stream_);
  EXPECT_EQ(s.message(), "source plane 1 is null");
  expect_untouched("null plane");

  v = d.view;
  v.planes[0].stride = 63;
  s = tensorize_cuda(plan, v, out.data(), stream_);
  EXPECT_EQ(s.message(), "source plane 0 stride 63 is smaller than its row (64 bytes)");
  expect_untouched("short stride");

  s = tensorize_cuda(plan, d.view, nullptr, stream_);
  EXPECT_FALSE(s.ok());
  expect_untouched("null output");

  for (int warps : {-1, 5}) {
    TensorizeTuning tuning;
    tuning.warps_per_block = warps;
    s = tensorize_cuda(plan, d.view, out.data(), stream_, tuning);
    EXPECT_EQ(s.message(),
              "tensorize: warps_per_block " + std::to_string(warps) + " is out of range (1..4, or 0: the default)");
    expect_untouched("bad tuning");
  }

  TensorizePlan broken = plan;
  broken.active_x1 = plan.dst_width + 1;
  s = tensorize_cuda(broken, d.view, out.data(), stream_);
  EXPECT_FALSE(s.ok());
  expect_untouched("broken plan");

  // And the valid call does run.
  ASSERT_TRUE(tensorize_cuda(plan, d.view, out.data(), stream_).ok());
  ASSERT_TRUE(cuda::stream_sync(stream_).ok());
  ASSERT_TRUE(
      cuda::copy_2d_async(back.data(), bytes, out.data(), bytes, bytes, 1, cuda::CopyKind::DeviceToHost, stream_).ok());
  ASSERT_TRUE(cuda::stream_sync(stream_).ok());
  EXPECT_NE(back, poison);
}

// PaddingRows::Keep: every row outside [active_y0, active_y1) keeps the bytes the buffer held
// (a poison here), every other row is written as the CPU path writes it. Letterboxes with bands
// of rows, portrait inputs (bands of columns: no padding row), crops (none either), a tensor with
// nearly every row padding, one with none sampled (nothing launched), every layout and dtype.
TEST_F(TensorizeGpu, KeptPaddingRowsAreLeftAsTheBufferHeldThem) {
  std::mt19937 rng(26);
  struct Case {
    PixelFormat f;
    int w, h, tw, th;
    ResizeMode m;
    DType d;
    Layout l;
    int channels;
  } cases[] = {
      {PixelFormat::NV12, 1920, 1080, 640, 640, ResizeMode::Letterbox, DType::Float32, Layout::NCHW, 3},
      {PixelFormat::P010_10LE, 1920, 1080, 640, 640, ResizeMode::Letterbox, DType::Float32, Layout::NCHW, 3},
      {PixelFormat::BGR, 1280, 720, 641, 479, ResizeMode::Letterbox, DType::Float16, Layout::NHWC, 3},
      {PixelFormat::YUY2, 333, 201, 97, 65, ResizeMode::Ultralytics, DType::UInt8, Layout::NCHW, 3},
      {PixelFormat::GRAY8, 999, 7, 13, 640, ResizeMode::Letterbox, DType::Int8, Layout::NCHW, 1},
      {PixelFormat::I420, 720, 1280, 640, 640, ResizeMode::Letterbox, DType::Float32, Layout::NCHW, 3},
      {PixelFormat::NV12, 1920, 1080, 640, 640, ResizeMode::Crop, DType::Float32, Layout::NCHW, 3},
      {PixelFormat::BGRx, 4096, 1, 64, 64, ResizeMode::Letterbox, DType::Float32, Layout::NHWC, 3},
  };
  int with_padding_rows = 0, with_none_sampled = 0;
  for (const Case& cs : cases) {
    HostImage im = tztest::make_image(cs.f, cs.w, cs.h, 0, 0);
    tztest::fill_random(im, rng);
    TensorizeConfig c = base_config(cs.f, cs.w, cs.h, cs.tw, cs.th);
    c.mode = cs.m;
    c.dtype = cs.d;
    c.layout = cs.l;
    c.channels = cs.channels;
    TensorizePlan plan;
    ASSERT_TRUE(make_tensorize_plan(c, &plan).ok()) << describe(c);
    std::vector<uint8_t> cpu, kept;
    ASSERT_TRUE(run_cpu(plan, im.view, &cpu));
    DeviceImage d;
    ASSERT_TRUE(upload_same_layout(im, stream_, &d));
    constexpr uint8_t kHeld = 0x5A;
    ASSERT_TRUE(run_gpu(plan, d.view, stream_, 0, TensorizeTuning(), &kept, kHeld, PaddingRows::Keep)) << describe(c);
    // Row y of every plane (NCHW) or the one interleaved row (NHWC): [offset, offset + bytes).
    const size_t px = size_t(dtype_bytes(plan.dtype)), W = size_t(plan.dst_width), H = size_t(plan.dst_height);
    const size_t planes = plan.layout == Layout::NCHW ? size_t(plan.channels) : 1;
    const size_t row_bytes = W * px * (plan.layout == Layout::NHWC ? size_t(plan.channels) : 1);
    const int a0 = plan.active_y0, a1 = std::max(plan.active_y0, plan.active_y1);
    with_padding_rows += a0 > 0 || a1 < int(H);
    with_none_sampled += a0 == a1;
    for (size_t y = 0; y < H; ++y) {
      const bool padding = int(y) < a0 || int(y) >= a1;
      for (size_t k = 0; k < planes; ++k) {
        const size_t at = (k * H + y) * row_bytes;
        if (padding) {
          const auto held = std::count(kept.begin() + at, kept.begin() + at + row_bytes, kHeld);
          ASSERT_EQ(size_t(held), row_bytes)
              << describe(c) << ": padding row " << y << " of plane " << k << " was written";
        } else {
          ASSERT_TRUE(std::equal(cpu.begin() + at, cpu.begin() + at + row_bytes, kept.begin() + at))
              << describe(c) << ": row " << y << " of plane " << k << " differs from the CPU path";
        }
      }
    }
  }
  EXPECT_GE(with_padding_rows, 4) << "the cases no longer have rows of padding";
  EXPECT_GE(with_none_sampled, 1) << "no case left every row padding";
}

// Back-to-back frames on one stream, no synchronisation in between: each output matches.
TEST_F(TensorizeGpu, ManyFramesOnOneStream) {
  std::mt19937 rng(24);
  TensorizeConfig c = base_config(PixelFormat::NV12, 320, 240, 160, 160);
  TensorizePlan plan;
  ASSERT_TRUE(make_tensorize_plan(c, &plan).ok());
  const size_t bytes = tensor_bytes(plan);
  const int frames = 8;
  std::vector<HostImage> ims;
  std::vector<DeviceImage> devs(frames);
  cuda::DeviceBuffer out;
  ASSERT_TRUE(out.allocate(bytes * frames).ok());
  for (int i = 0; i < frames; ++i) {
    ims.push_back(tztest::make_image(PixelFormat::NV12, 320, 240, 0, 0));
    tztest::fill_random(ims.back(), rng);
    ASSERT_TRUE(upload_same_layout(ims.back(), stream_, &devs[i]));
  }
  for (int i = 0; i < frames; ++i)
    ASSERT_TRUE(tensorize_cuda(plan, devs[i].view, out.data() + i * bytes, stream_).ok());
  std::vector<uint8_t> all(bytes * frames);
  ASSERT_TRUE(cuda::copy_2d_async(all.data(), all.size(), out.data(), all.size(), all.size(), 1,
                                  cuda::CopyKind::DeviceToHost, stream_)
                  .ok());
  ASSERT_TRUE(cuda::stream_sync(stream_).ok());
  for (int i = 0; i < frames; ++i) {
    std::vector<uint8_t> cpu;
    ASSERT_TRUE(run_cpu(plan, ims[i].view, &cpu));
    EXPECT_TRUE(std::equal(cpu.begin(), cpu.end(), all.begin() + i * bytes)) << "frame " << i;
  }
}

}  // namespace
