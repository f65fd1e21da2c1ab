// GPU tests of tensorize batches: the one-launch CUDA batch equals the CPU batch bit for bit (and
// so each slot equals the single-frame output: tensorize_batch_test.cpp), over mixed formats and
// sizes, ROIs and empty slots, with a poisoned output and a guard past its end; batches of
// growing and shrinking size reuse one slot table, on both sides of the 64 slots up to which the
// slot arguments are kernel parameters (above: an uploaded table); a small batch captured into a
// CUDA graph. Exits 77 (skipped) without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "batch_case.h"
#include "cuda_device.h"
#include "tensorize_batch.h"
#include "test_images.h"

using namespace cudaprep;
using tztest::BatchCase;
using tztest::HostImage;

namespace {

constexpr size_t kGuard = 256;
constexpr uint8_t kPoison = 0xEE;

// What a slot's difference looks like (fp32 outputs): how many values differ, the largest
// difference, the first one, and the slot's source.
std::string describe_difference(const BatchCase& bc, int i, const uint8_t* cpu, const uint8_t* gpu, size_t bytes) {
  if (bc.output.dtype != DType::Float32) return "";
  const float* c = reinterpret_cast<const float*>(cpu);
  const float* g = reinterpret_cast<const float*>(gpu);
  size_t n = 0, first = bytes / 4;
  double worst = 0;
  for (size_t k = 0; k < bytes / 4; ++k) {
    if (c[k] == g[k]) continue;
    if (n++ == 0) first = k;
    worst = std::max(worst, double(std::fabs(c[k] - g[k])));
  }
  std::ostringstream o;
  o << n << " of " << bytes / 4 << " values differ, worst by " << worst;
  if (n)
    o << "; first at " << first << " (x " << first % bc.output.dst_width << ", y "
      << (first / bc.output.dst_width) % bc.output.dst_height << "): cpu " << c[first] << ", gpu " << g[first];
  if (!bc.empty[i]) {
    const Rect& r = bc.sources[i].roi;
    o << "; source " << bc.sources[i].src_width << "x" << bc.sources[i].src_height << " roi " << r.x << "," << r.y
      << "," << r.w << "," << r.h;
  }
  return o.str();
}

// Runs bc on the GPU (sources copied to the device with the same layout) and on the CPU; the
// results must be equal, and the guard bytes after the output untouched.
// Copies bc's (built) sources to the device with the same layout, enqueued on `stream`; `slots`
// are bc's slots pointing at those copies.
::testing::AssertionResult upload_sources(const BatchCase& bc, void* stream, std::vector<cuda::DeviceBuffer>* sources,
                                          std::vector<BatchSlot>* slots) {
  sources->clear();
  sources->resize(bc.count());
  *slots = bc.slots;
  for (int i = 0; i < bc.count(); ++i) {
    if (bc.empty[i]) continue;
    const HostImage& im = bc.images[i];
    Status st = (*sources)[i].allocate(im.buf.size());
    if (st.ok())
      st = cuda::copy_2d_async((*sources)[i].data(), im.buf.size(), im.buf.data(), im.buf.size(), im.buf.size(), 1,
                               cuda::CopyKind::HostToDevice, stream);
    if (!st.ok()) return ::testing::AssertionFailure() << "slot " << i << " upload: " << st.message();
    (*slots)[i].src = im.at((*sources)[i].data());
  }
  return ::testing::AssertionSuccess();
}

void expect_gpu_equals_cpu(BatchCase& bc, BatchSlotTable* table, void* stream) {
  ASSERT_TRUE(bc.build().ok());
  std::vector<cuda::DeviceBuffer> sources;
  std::vector<BatchSlot> slots;
  ASSERT_TRUE(upload_sources(bc, stream, &sources, &slots));
  TensorizeBatch b = bc.batch();
  b.slots = slots.data();
  const size_t bytes = bc.bytes();
  std::vector<uint8_t> host(bytes + kGuard, kPoison);
  cuda::DeviceBuffer out;
  ASSERT_TRUE(out.allocate(bytes + kGuard).ok());
  ASSERT_TRUE(cuda::copy_2d_async(out.data(), host.size(), host.data(), host.size(), host.size(), 1,
                                  cuda::CopyKind::HostToDevice, stream)
                  .ok());
  const Status st = tensorize_batch_cuda(b, out.data(), bytes, stream, table);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_TRUE(cuda::copy_2d_async(host.data(), host.size(), out.data(), host.size(), host.size(), 1,
                                  cuda::CopyKind::DeviceToHost, stream)
                  .ok());
  ASSERT_TRUE(cuda::stream_sync(stream).ok());
  std::vector<uint8_t> cpu(bytes, kPoison);
  ASSERT_TRUE(tensorize_batch_cpu(bc.batch(), cpu.data(), cpu.size()).ok());
  const size_t stride = slot_bytes(bc.output);
  for (int i = 0; i < bc.count(); ++i) {
    const size_t first = BatchCase::first_difference(cpu.data() + stride * i, host.data() + stride * i, stride);
    EXPECT_EQ(first, stride) << "slot " << i << " differs from the CPU batch at byte " << first << ": "
                             << describe_difference(bc, i, cpu.data() + stride * i, host.data() + stride * i, stride);
  }
  for (size_t k = bytes; k < host.size(); ++k) ASSERT_EQ(host[k], kPoison) << "written past the end at " << k;
}

class TensorizeBatchGpu : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(cuda::stream_create(&stream_).ok()); }
  void TearDown() override { cuda::stream_destroy(stream_); }
  void* stream_ = nullptr;
};

}  // namespace

TEST_F(TensorizeBatchGpu, EveryCombinationMixedFormatsEqualsCpu) {
  std::mt19937 rng(20);
  std::uniform_int_distribution<int> side(1, 131);
  BatchSlotTable table;  // grows and shrinks with the batches below: allocated only when outgrown
  tztest::for_each_combination([&](TensorizeConfig c, int k) {
    tztest::set_sizes(c, 8, 8, side(rng), side(rng));
    tztest::randomize_settings(c, rng);
    BatchCase bc;
    bc.spec = c;
    const int n = 1 + k % 9;
    for (int i = 0; i < n; ++i) {
      if (i % 4 == 3)
        bc.add_empty();
      else
        tztest::add_random_slot(bc, c, k + i, 131, rng);
    }
    expect_gpu_equals_cpu(bc, &table, stream_);
  });
}

TEST_F(TensorizeBatchGpu, EightFullHdNv12AndRegionsEqualCpu) {
  std::mt19937 rng(21);
  BatchSlotTable table;
  BatchCase cams;
  for (int i = 0; i < 8; ++i) {
    HostImage im = tztest::make_image(i % 2 ? PixelFormat::NV12 : PixelFormat::BGR, 1920 - 2 * i, 1080 + i, 64, 0);
    tztest::fill_random(im, rng);
    cams.add(tztest::source_of(im), std::move(im));
  }
  expect_gpu_equals_cpu(cams, &table, stream_);

  HostImage frame = tztest::make_image(PixelFormat::NV12, 1920, 1080);
  tztest::fill_random(frame, rng);
  BatchCase regions;
  regions.spec.dst_width = regions.spec.dst_height = 224;
  std::uniform_int_distribution<int> size(32, 400);
  for (int i = 0; i < 64; ++i) {
    SlotSourceSpec s = tztest::source_of(frame);
    s.roi.w = size(rng);
    s.roi.h = size(rng);
    s.roi.x = int(rng() % (1920 - s.roi.w));
    s.roi.y = int(rng() % (1080 - s.roi.h));
    regions.add(s, frame);
  }
  expect_gpu_equals_cpu(regions, &table, stream_);
}

namespace {

// n regions of 16-200 px of one random 641x479 NV12 frame (odd sizes), 96x64 tensors; every 17th
// slot empty. (Each slot holds its own copy of the frame.)
BatchCase regions_of_one_frame(int n, std::mt19937& rng) {
  HostImage frame = tztest::make_image(PixelFormat::NV12, 641, 479);
  tztest::fill_random(frame, rng);
  BatchCase bc;
  bc.spec.dst_width = 96;
  bc.spec.dst_height = 64;
  std::uniform_int_distribution<int> size(16, 200);
  for (int i = 0; i < n; ++i) {
    if (i % 17 == 5) {
      bc.add_empty();
      continue;
    }
    SlotSourceSpec s = tztest::source_of(frame);
    s.roi.w = size(rng);
    s.roi.h = size(rng);
    s.roi.x = int(rng() % (641 - s.roi.w));
    s.roi.y = int(rng() % (479 - s.roi.h));
    bc.add(s, frame);
  }
  return bc;
}

}  // namespace

// 64 slots travel as kernel parameters, 65 and more through the uploaded table: both equal the
// CPU batch, with one table reused across the boundary in both directions.
TEST_F(TensorizeBatchGpu, BatchesAcrossTheParameterLimitEqualCpu) {
  std::mt19937 rng(22);
  BatchSlotTable table;
  for (int n : {64, 65, 3, 130, 64, 1}) {
    SCOPED_TRACE("batch of " + std::to_string(n));
    BatchCase bc = regions_of_one_frame(n, rng);
    expect_gpu_equals_cpu(bc, &table, stream_);
    EXPECT_GE(table.capacity(), n);
  }
}

// Up to 64 slots the call neither uploads nor waits: it can be captured into a CUDA graph, and the
// replayed graph writes the batch (the output is poisoned between capture and replay).
TEST_F(TensorizeBatchGpu, SmallBatchCapturedIntoAGraphEqualsCpu) {
  std::mt19937 rng(23);
  BatchCase bc = regions_of_one_frame(5, rng);
  ASSERT_TRUE(bc.build().ok());
  std::vector<cuda::DeviceBuffer> sources;
  std::vector<BatchSlot> slots;
  ASSERT_TRUE(upload_sources(bc, stream_, &sources, &slots));
  ASSERT_TRUE(cuda::stream_sync(stream_).ok());  // the uploads are not part of the captured graph
  TensorizeBatch b = bc.batch();
  b.slots = slots.data();
  const size_t bytes = bc.bytes();
  cuda::DeviceBuffer out;
  ASSERT_TRUE(out.allocate(bytes).ok());
  BatchSlotTable table;
  ASSERT_TRUE(table.reserve(bc.count()).ok());
  cudaStream_t s = static_cast<cudaStream_t>(stream_);
  ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  const Status st = tensorize_batch_cuda(b, out.data(), bytes, stream_, &table);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(s, &graph), cudaSuccess);
  ASSERT_TRUE(st.ok()) << st.message();
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaMemset(out.data(), 0xEE, bytes), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
  std::vector<uint8_t> host(bytes);
  ASSERT_EQ(cudaMemcpyAsync(host.data(), out.data(), bytes, cudaMemcpyDeviceToHost, s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  std::vector<uint8_t> cpu(bytes);
  ASSERT_TRUE(tensorize_batch_cpu(bc.batch(), cpu.data(), cpu.size()).ok());
  EXPECT_EQ(BatchCase::first_difference(cpu.data(), host.data(), bytes), bytes);
}
