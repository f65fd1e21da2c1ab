// CPU tests of tensorize batches (kernels/tensorize/tensorize_batch.h): every slot of a batch equals, bit for
// bit, the single-frame output for that source alone, over real photos and random images in mixed
// formats, odd sizes, strides, plane offsets and ROIs, with empty slots; and the batch's errors.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "batch_case.h"
#include "tensorize_batch.h"
#include "test_images.h"
#include "test_photos.h"

using namespace cudaprep;
using tztest::BatchCase;
using tztest::HostImage;

namespace {

std::vector<uint8_t> run_cpu(const BatchCase& bc) {
  std::vector<uint8_t> out(bc.bytes(), 0xEE);
  const Status st = tensorize_batch_cpu(bc.batch(), out.data(), out.size());
  EXPECT_TRUE(st.ok()) << st.message();
  return out;
}

// Output specs that differ in everything a batch shares.
std::vector<TensorOutputSpec> output_specs() {
  std::vector<TensorOutputSpec> specs(4);
  specs[1].dst_width = 224;
  specs[1].dst_height = 224;
  specs[1].mode = ResizeMode::Stretch;
  specs[1].layout = Layout::NHWC;
  specs[1].dtype = DType::Float16;
  specs[1].channel_order = ChannelOrder::BGR;
  specs[2].dst_width = 301;
  specs[2].dst_height = 157;
  specs[2].mode = ResizeMode::Crop;
  specs[2].align = Align::TopLeft;
  specs[2].interpolation = Interpolation::Nearest;
  specs[2].pad_value = 0;
  specs[3].mode = ResizeMode::Ultralytics;
  specs[3].scale = 1.0;
  for (int c = 0; c < 3; ++c) {
    specs[3].mean[c] = 100.0 + 10 * c;
    specs[3].std[c] = 50.0 + c;
  }
  return specs;
}

}  // namespace

TEST(TensorizeBatch, PhotosMixedFormatsAndSizesEqualSingleFrames) {
  std::mt19937 rng(10);
  const cv::Mat baboon = tztest::load_photo("baboon.jpg");
  const cv::Mat fruits = tztest::load_photo("fruits.jpg");
  const cv::Mat butterfly = tztest::load_photo("butterfly.jpg");
  ASSERT_FALSE(baboon.empty() || fruits.empty() || butterfly.empty());
  cv::Mat odd;  // odd width and height
  cv::resize(fruits, odd, cv::Size(333, 221), 0, 0, cv::INTER_AREA);
  for (const TensorOutputSpec& spec : output_specs()) {
    BatchCase bc;
    bc.spec = spec;
    const struct {
      const cv::Mat* photo;
      PixelFormat format;
      int row_pad, plane_gap;
    } inputs[] = {{&baboon, PixelFormat::NV12, 0, 0}, {&fruits, PixelFormat::BGR, 13, 5},
                  {&odd, PixelFormat::I420, 7, 3},    {&butterfly, PixelFormat::NV12, 64, 32},
                  {&odd, PixelFormat::BGRx, 1, 0},    {&baboon, PixelFormat::GRAY8, 3, 9}};
    for (const auto& in : inputs) {
      HostImage im = tztest::from_bgr(*in.photo, in.format, in.row_pad, in.plane_gap, rng);
      SlotSourceSpec s = tztest::source_of(im);
      if (in.format == PixelFormat::I420) {
        s.yuv_matrix = YuvMatrix::BT709;
        s.yuv_full_range = true;
      }
      bc.add(s, std::move(im));
    }
    bc.add_empty();
    ASSERT_TRUE(bc.build().ok());
    EXPECT_TRUE(bc.slots_equal_single_frames(run_cpu(bc))) << "tensor " << spec.dst_width << "x" << spec.dst_height;
  }
}

TEST(TensorizeBatch, RegionsOfOnePhotoEqualSingleFrameRois) {
  std::mt19937 rng(11);
  const cv::Mat photo = tztest::load_photo("building.jpg");
  ASSERT_FALSE(photo.empty());
  const HostImage frame = tztest::from_bgr(photo, PixelFormat::NV12, 0, 0, rng);
  BatchCase bc;
  bc.spec.dst_width = 224;
  bc.spec.dst_height = 224;
  std::uniform_int_distribution<int> any(0, 1 << 30);
  for (int i = 0; i < 17; ++i) {
    SlotSourceSpec s = tztest::source_of(frame);
    s.roi.w = 1 + any(rng) % 400;
    s.roi.h = 1 + any(rng) % 300;
    s.roi.w = std::min(s.roi.w, s.src_width);
    s.roi.h = std::min(s.roi.h, s.src_height);
    s.roi.x = any(rng) % (s.src_width - s.roi.w + 1);
    s.roi.y = any(rng) % (s.src_height - s.roi.h + 1);
    bc.add(s, frame);  // a copy: each slot owns its image (same pixels)
  }
  ASSERT_TRUE(bc.build().ok());
  EXPECT_TRUE(bc.slots_equal_single_frames(run_cpu(bc)));
}

TEST(TensorizeBatch, RandomImagesEveryCombination) {
  std::mt19937 rng(12);
  std::uniform_int_distribution<int> side(1, 97);
  const int n = tztest::for_each_combination([&](TensorizeConfig c, int k) {
    if (k % 5 != 0) return;  // a fifth of the grid: each batch mixes formats anyway
    tztest::set_sizes(c, 8, 8, side(rng), side(rng));
    tztest::randomize_settings(c, rng);
    BatchCase bc;
    bc.spec = c;
    for (int i = 0; i < 5; ++i) {
      tztest::add_random_slot(bc, c, k + i, 97, rng);
      if (i == 2) bc.add_empty();
    }
    ASSERT_TRUE(bc.build().ok());
    EXPECT_TRUE(bc.slots_equal_single_frames(run_cpu(bc))) << "combination " << k;
  });
  EXPECT_GT(n, 0);
}

TEST(TensorizeBatch, EmptySlotsAreThePadValue) {
  BatchCase bc;
  bc.spec.dst_width = 33;
  bc.spec.dst_height = 17;
  bc.spec.pad_value = 77;
  bc.spec.layout = Layout::NHWC;
  bc.spec.dtype = DType::Float16;
  for (int i = 0; i < 3; ++i) bc.add_empty();
  ASSERT_TRUE(bc.build().ok());
  const std::vector<uint8_t> out = run_cpu(bc);
  EXPECT_TRUE(bc.slots_equal_single_frames(out));
  uint16_t h;
  std::memcpy(&h, out.data() + out.size() - 2, 2);
  EXPECT_EQ(h, float_to_half_bits(bc.output.pad_out[2]));
  EXPECT_NEAR(bc.output.pad_out[2], 77.0 / 255.0, 1e-6);
}

TEST(TensorizeBatch, SplitPlansEqualTheSingleFramePlan) {
  TensorizeConfig c = tztest::base_config(PixelFormat::I420, 1919, 1081, 640, 384);
  c.roi = Rect{3, 5, 700, 401};
  c.yuv_matrix = YuvMatrix::BT2020;
  c.mode = ResizeMode::Ultralytics;
  TensorizePlan single;
  ASSERT_TRUE(make_tensorize_plan(c, &single).ok());
  TensorOutputPlan o;
  SlotPlan s;
  ASSERT_TRUE(make_output_plan(c, &o).ok());
  ASSERT_TRUE(make_slot_plan(c, c, &s).ok());
  const TensorizePlan joined = combine_plan(o, s);
  EXPECT_EQ(std::memcmp(joined.transform.dst_to_src, single.transform.dst_to_src, sizeof(single.transform.dst_to_src)),
            0);
  EXPECT_EQ(std::memcmp(joined.inv, single.inv, sizeof(single.inv)), 0);
  EXPECT_EQ(std::memcmp(joined.pad_out, single.pad_out, sizeof(single.pad_out)), 0);
  EXPECT_EQ(joined.active_x1, single.active_x1);
  EXPECT_EQ(joined.active_y1, single.active_y1);
  EXPECT_EQ(joined.gv, single.gv);
}

TEST(TensorizeBatch, BadBatchesHaveExactMessages) {
  std::mt19937 rng(13);
  BatchCase bc;
  bc.spec.dst_width = 64;
  bc.spec.dst_height = 48;
  for (PixelFormat f : {PixelFormat::NV12, PixelFormat::BGR, PixelFormat::I420}) {
    HostImage im = tztest::make_image(f, 40, 30);
    tztest::fill_random(im, rng);
    bc.add(tztest::source_of(im), std::move(im));
  }
  ASSERT_TRUE(bc.build().ok());
  std::vector<uint8_t> out(bc.bytes());
  auto message = [&](const TensorizeBatch& b, size_t bytes) {
    const Status st = tensorize_batch_cpu(b, out.data(), bytes);
    return st.ok() ? std::string("ok") : st.message();
  };
  EXPECT_EQ(message(bc.batch(), out.size()), "ok");

  TensorizeBatch b = bc.batch();
  b.count = 0;
  EXPECT_EQ(message(b, out.size()), "batch of 0 slots is out of range (1..1024)");
  b.count = kMaxBatchSlots + 1;
  EXPECT_EQ(message(b, out.size()), "batch of 1025 slots is out of range (1..1024)");
  b = bc.batch();
  b.slots = nullptr;
  EXPECT_EQ(message(b, out.size()), "batch of 3 slots has no slot array");
  EXPECT_EQ(tensorize_batch_cpu(bc.batch(), nullptr, out.size()).message(), "tensorize batch: null output");

  // A float32 batch into a buffer sized for float16 (a dtype mismatch between plan and buffer).
  EXPECT_EQ(message(bc.batch(), out.size() / 2),
            "output of 55296 bytes is smaller than the batch's 110592 bytes (3 slots of 3x48x64 float32)");

  std::vector<BatchSlot> slots = bc.slots;
  b = bc.batch();
  b.slots = slots.data();
  slots[2].src.planes[1].data = nullptr;
  EXPECT_EQ(message(b, out.size()), "batch slot 2: source plane 1 is null");
  slots[2] = bc.slots[2];
  slots[1].src.format = PixelFormat::RGB;
  EXPECT_EQ(message(b, out.size()), "batch slot 1: source format RGB does not match the plan's BGR");
  slots[1] = bc.slots[1];
  slots[0].src.width = 41;
  EXPECT_EQ(message(b, out.size()), "batch slot 0: source size 41x30 does not match the plan's 40x30");
  slots[0] = bc.slots[0];
  // A slot plan made for another tensor size.
  TensorOutputSpec other = bc.spec;
  other.dst_width = 32;
  ASSERT_TRUE(make_slot_plan(other, bc.sources[1], &slots[1].plan).ok());
  EXPECT_EQ(message(b, out.size()), "batch slot 1: its plan was made for a 32x48 tensor, the batch's is 64x48");
  // An empty slot needs neither plan nor source.
  slots[1] = BatchSlot();
  slots[1].empty = true;
  EXPECT_EQ(message(b, out.size()), "ok");
}

TEST(TensorizeBatch, SlotPlanErrorsAreThoseOfTheSingleFramePlan) {
  TensorOutputSpec spec;
  SlotSourceSpec s;
  s.format = PixelFormat::NV12;
  s.src_width = 100;
  s.src_height = 50;
  s.roi = Rect{90, 0, 20, 10};
  SlotPlan p;
  EXPECT_EQ(make_slot_plan(spec, s, &p).message(), "roi 20x10 at (90,0) is outside the 100x50 frame");
  s.roi = Rect();
  spec.dst_width = 0;
  EXPECT_EQ(make_slot_plan(spec, s, &p).message(), "tensor width 0 is out of range (1..16384)");
  TensorOutputPlan o;
  EXPECT_EQ(make_output_plan(spec, &o).message(), "tensor width 0 is out of range (1..16384)");
  spec.dst_width = 10;
  spec.std[1] = 0;
  EXPECT_EQ(make_output_plan(spec, &o).message(), "std[1] is zero");
}
