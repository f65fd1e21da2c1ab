// Unit tests of cudaprep-regress's batched tensors (regress_slots.h), on synthetic frames: the
// batch the caps give, the JSON of the slots, the checks of a frame against its caps, and the
// comparison slot by slot (tests/regress/regress_batch.sh runs the tool on the clip).
#include <gst/gst.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "regress_compare.h"
#include "regress_slots.h"
#include "regress_store.h"

using namespace regress;

namespace {

constexpr size_t kSlotValues = 12;  // 3 x 2 x 2: a 2x2 RGB slot

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

// A frame of `tensors` tensors of batch 2: slot values i + 0.5 * slot, the last slot empty
// (pad value 0.25), regions numbered from 0.
struct Frame {
  TensorEntry entry;
  std::vector<float> values;
  const uint8_t* data() const { return (const uint8_t*)values.data(); }
  void digest() {
    entry.bytes = values.size() * 4;
    entry.sha256 = sha256_hex(data(), entry.bytes);
    digest_slots(data(), entry.bytes, &entry.slots);
  }
};

Frame batch_frame(uint32_t tensors) {
  Frame f;
  f.entry.pts = 1000;
  f.entry.tensors = tensors;
  const uint32_t n = tensors * 2;
  for (uint32_t i = 0; i < n; i++) {
    SlotEntry s;
    s.tensor = i / 2;
    s.slot = i % 2;
    s.empty = i == n - 1;
    s.region_index = s.empty ? -1 : (int)i;
    s.source_pts = 1000;
    s.source_rect[2] = s.empty ? 0 : 100;
    s.transform.present = true;
    s.transform.tensor_w = 2;
    f.entry.slots.push_back(s);
    for (size_t k = 0; k < kSlotValues; k++) f.values.push_back(s.empty ? 0.25f : (float)k + 0.5f * i);
  }
  f.digest();
  return f;
}

}  // namespace

// One pass gives the frame's digest and its slots' as the separate digests do, with bytes left
// over by the even split in the frame's digest only.
TEST(RegressSlots, DigestFrameInOnePass) {
  std::vector<uint8_t> bytes(3 * 200000 + 5);
  for (size_t i = 0; i < bytes.size(); i++) bytes[i] = (uint8_t)(i * 31 + i / 977);
  std::vector<SlotEntry> one(3), apart(3);
  EXPECT_EQ(digest_frame(bytes.data(), bytes.size(), &one), sha256_hex(bytes.data(), bytes.size()));
  digest_slots(bytes.data(), bytes.size(), &apart);
  for (size_t i = 0; i < 3; i++) {
    EXPECT_EQ(one[i].sha256, apart[i].sha256);
    EXPECT_EQ(one[i].sha256, sha256_hex(bytes.data() + i * 200001, 200001));
  }
  std::vector<SlotEntry> none;
  EXPECT_EQ(digest_frame(bytes.data(), bytes.size(), &none), sha256_hex(bytes.data(), bytes.size()));
}

TEST(RegressSlots, CapsBatch) {
  EXPECT_EQ(caps_batch("other/tensors, num_tensors=(int)1, types=(string)float32, dimensions=(string)64:64:3:8"), 8u);
  EXPECT_EQ(caps_batch("other/tensors, num_tensors=(int)1, types=(string)float16, dimensions=(string)3:64:64:2"), 2u);
  EXPECT_EQ(caps_batch("other/tensors, types=(string)float32, dimensions=(string)64:64:3"), 1u);
  EXPECT_EQ(caps_batch("other/tensors, num_tensors=(int)2, types=(string)\"float32,float32\", "
                       "dimensions=(string)\"4:4:3:2,4:4:3:2\""),
            0u);
  EXPECT_EQ(caps_batch("other/tensors, num_tensors=(int)1, types=(string)float32, dimensions=(string)64:64:3:0"), 0u);
  EXPECT_EQ(caps_batch("video/x-raw, width=(int)64"), 0u);
  EXPECT_EQ(caps_batch(""), 0u);
}

TEST(RegressSlots, FrameJsonRoundTrip) {
  Frame f = batch_frame(2);
  f.entry.slots[1].source_pad = "sink_1";
  f.entry.slots[2].region_id = 7;
  FrameEntry fe;
  fe.index = 3;
  fe.tensors["tensor"] = f.entry;
  const Json j = frame_to_json(fe);
  Json back;
  std::string err;
  ASSERT_TRUE(Json::parse(j.dump(false), &back, &err)) << err;
  FrameEntry g;
  ASSERT_TRUE(frame_from_json(back, &g, &err)) << err;
  EXPECT_EQ(frame_to_json(g).dump(false), j.dump(false));
  const TensorEntry& t = g.tensors["tensor"];
  EXPECT_EQ(t.tensors, 2u);
  ASSERT_EQ(t.slots.size(), 4u);
  EXPECT_TRUE(t.slots[3].empty);
  EXPECT_EQ(t.slots[1].source_pad, "sink_1");
  EXPECT_EQ(t.slots[2].region_id, 7);
  EXPECT_EQ(t.slots[2].tensor, 1u);
  EXPECT_EQ(t.slots[0].sha256, f.entry.slots[0].sha256);
  // an unbatched tensor is written as before: no "tensors", no "slots"
  fe.tensors["tensor"] = TensorEntry();
  fe.tensors["tensor"].sha256 = std::string(64, 'a');
  const std::string plain = frame_to_json(fe).dump(false);
  EXPECT_FALSE(contains(plain, "slots")) << plain;
  EXPECT_FALSE(contains(plain, "tensors")) << plain;
  // malformed slots are refused, naming the field
  ASSERT_TRUE(Json::parse("{\"frame\":0,\"tensor\":{\"pts\":0,\"bytes\":4,\"sha256\":\"" + std::string(64, 'a') +
                              "\",\"min\":0,\"max\":0,\"mean\":0,\"l2\":0,\"slots\":[{\"tensor\":0}]}}",
                          &back, &err));
  EXPECT_FALSE(frame_from_json(back, &g, &err));
  EXPECT_TRUE(contains(err, "slots[0] is malformed")) << err;
}

TEST(RegressSlots, FrameAgainstItsCaps) {
  const uint64_t tensor_bytes = 2 * kSlotValues * 4;
  std::string why;
  Frame f = batch_frame(2);
  EXPECT_TRUE(check_frame_tensors(f.entry, tensor_bytes, 2, &why)) << why;
  EXPECT_TRUE(check_frame_tensors(f.entry, 0, 0, &why)) << why;  // caps that fix nothing
  // caps of batch 3: the bytes are not two such tensors
  EXPECT_FALSE(check_frame_tensors(f.entry, 3 * kSlotValues * 4, 3, &why));
  EXPECT_TRUE(contains(why, "makes 144 bytes a tensor, and the frame has 2 tensors")) << why;
  // a slot missing
  Frame g = batch_frame(2);
  g.entry.slots.pop_back();
  EXPECT_FALSE(check_frame_tensors(g.entry, tensor_bytes, 2, &why));
  EXPECT_TRUE(contains(why, "has 3 slots but the frame has 2 tensors of batch 2")) << why;
  // slots out of order
  g = batch_frame(2);
  std::swap(g.entry.slots[1], g.entry.slots[2]);
  EXPECT_FALSE(check_frame_tensors(g.entry, tensor_bytes, 2, &why));
  EXPECT_TRUE(contains(why, "slots[1] says tensor 1 slot 0, expected tensor 0 slot 1")) << why;
  // several tensors without slots, and no tensor at all
  g = batch_frame(2);
  g.entry.slots.clear();
  EXPECT_FALSE(check_frame_tensors(g.entry, tensor_bytes, 2, &why));
  EXPECT_TRUE(contains(why, "no \"slots\"")) << why;
  g.entry.tensors = 0;
  EXPECT_FALSE(check_frame_tensors(g.entry, tensor_bytes, 2, &why));
  // one unbatched tensor: bytes against the caps alone
  TensorEntry plain;
  plain.bytes = 48;
  EXPECT_TRUE(check_frame_tensors(plain, 48, 1, &why)) << why;
  plain.bytes = 96;
  EXPECT_FALSE(check_frame_tensors(plain, 48, 1, &why));
  EXPECT_TRUE(contains(why, "makes 48 bytes a frame")) << why;
}

// One buffer of batch 2 at `pts`: regions `first` and `second` (-1: empty), as tensor 0.
TensorEntry tensor_of(int64_t pts, int first, int second) {
  TensorEntry t;
  t.pts = pts;
  for (int region : {first, second}) {
    SlotEntry s;
    s.slot = (uint32_t)t.slots.size();
    s.empty = region < 0;
    s.region_index = region;
    t.slots.push_back(s);
  }
  return t;
}

TEST(RegressSlots, WhichTensorsMakeOneFrame) {
  const TensorEntry first = tensor_of(40, 0, 1);
  EXPECT_TRUE(continues_frame(first, tensor_of(40, 2, -1)));   // regions 0, 1 then 2
  EXPECT_FALSE(continues_frame(first, tensor_of(80, 2, -1)));  // another frame's
  EXPECT_FALSE(continues_frame(first, tensor_of(40, 0, 1)));   // starts again: a next frame
  // the tensor before has an empty slot: the frame had no more regions
  EXPECT_FALSE(continues_frame(tensor_of(40, 2, -1), tensor_of(40, 3, -1)));
  // region 0 skipped (outside the frame): each frame starts at region 1; frames without a PTS
  // must still not merge
  EXPECT_FALSE(continues_frame(tensor_of(-1, 1, 2), tensor_of(-1, 1, 2)));
  EXPECT_TRUE(continues_frame(tensor_of(-1, 1, 2), tensor_of(-1, 3, -1)));
  // whole frames and the aggregator's slots come from no region
  EXPECT_FALSE(continues_frame(tensor_of(40, -1, -1), tensor_of(40, -1, -1)));
  TensorEntry plain;
  plain.pts = 40;
  EXPECT_FALSE(continues_frame(plain, plain));
  // where the meta says which tensor of its frame / batch window a tensor is, that decides:
  // cudatensorbatch's regions start again from 0 at each pad (sink_0's regions 0, 1, then
  // sink_1's region 0), which the regions alone take for a next frame
  EXPECT_FALSE(continues_frame(first, tensor_of(40, 0, -1)));
  EXPECT_TRUE(continues_frame(first, tensor_of(40, 0, -1), 1));
  EXPECT_FALSE(continues_frame(first, tensor_of(40, 2, -1), 0));  // the first of a next window
  EXPECT_FALSE(continues_frame(first, tensor_of(40, 0, -1), 2));  // not the next one: 1 gathered
  EXPECT_FALSE(continues_frame(first, tensor_of(80, 0, -1), 1));  // another PTS
  TensorEntry two = first;
  two.tensors = 2;
  EXPECT_TRUE(continues_frame(two, tensor_of(40, 0, -1), 2));
}

TEST(RegressSlots, EachSlotIsComparedAndNamed) {
  const Frame a = batch_frame(2);
  // identical
  SinkResult r = compare_tensor("tensor", a.entry, a.data(), a.entry, a.data(), DType::F32, CompareOptions(), "golden",
                                "this run");
  EXPECT_TRUE(r.pass) << r.problem;
  ASSERT_EQ(r.slots.size(), 4u);
  for (const SlotResult& s : r.slots) EXPECT_TRUE(s.identical && s.pass) << s.name;
  EXPECT_EQ(r.slots[2].name, "tensor 1 slot 0 (region 2)");
  EXPECT_EQ(r.slots[3].name, "tensor 1 slot 1 (empty)");
  // one value of slot 2 changed: that slot fails with its own figures, the others pass
  Frame b = batch_frame(2);
  b.values[2 * kSlotValues + 5] += 0.25f;
  b.digest();
  r = compare_tensor("tensor", a.entry, a.data(), b.entry, b.data(), DType::F32, CompareOptions(), "golden",
                     "this run");
  EXPECT_FALSE(r.pass);
  EXPECT_TRUE(contains(r.problem, "tensor 1 slot 0 (region 2): tensor differs (max abs diff 0.25")) << r.problem;
  EXPECT_EQ(r.slots[2].diff.worst_index, 5u);
  EXPECT_EQ(r.slots[2].diff.max_abs, 0.25);
  EXPECT_EQ(r.slots[2].diff.count, kSlotValues);
  EXPECT_TRUE(r.slots[0].pass && r.slots[1].pass && r.slots[3].pass);
  // within a tolerance the slot passes
  CompareOptions loose;
  loose.tensor_tol.kind = TensorTolerance::MaxAbs;
  loose.tensor_tol.value = 0.25;
  EXPECT_TRUE(compare_tensor("tensor", a.entry, a.data(), b.entry, b.data(), DType::F32, loose, "g", "r").pass);
  // digest-only: the slot digests name the slot
  r = compare_tensor("tensor", a.entry, nullptr, b.entry, nullptr, DType::F32, CompareOptions(), "golden", "this run");
  EXPECT_FALSE(r.pass);
  EXPECT_TRUE(contains(r.problem, "tensor 1 slot 0 (region 2): SHA-256 differs")) << r.problem;
  EXPECT_TRUE(r.slots[0].pass && r.slots[3].pass);
}

TEST(RegressSlots, EmptySlotsRegionsAndTensorCounts) {
  const Frame a = batch_frame(2);
  // the empty slot's padding is compared like any value
  Frame b = batch_frame(2);
  b.values[3 * kSlotValues] = 0.5f;
  b.digest();
  SinkResult r = compare_tensor("t", a.entry, a.data(), b.entry, b.data(), DType::F32, CompareOptions(), "A", "B");
  EXPECT_TRUE(contains(r.problem, "tensor 1 slot 1 (empty): tensor differs")) << r.problem;
  // the emptiness flag, the region and the transform
  b = batch_frame(2);
  b.entry.slots[3].empty = false;
  b.entry.slots[1].region_id = 4;
  b.entry.slots[0].transform.tensor_to_src[2] = 1e-6;
  r = compare_tensor("t", a.entry, a.data(), b.entry, b.data(), DType::F32, CompareOptions(), "A", "B");
  EXPECT_TRUE(contains(r.slots[3].problem, "empty in A, filled in B")) << r.slots[3].problem;
  EXPECT_TRUE(contains(r.slots[1].problem, "region id -1 in A, 4 in B")) << r.slots[1].problem;
  EXPECT_FALSE(contains(r.slots[1].problem, "region index")) << r.slots[1].problem;
  EXPECT_TRUE(contains(r.slots[0].problem, "slot transform differs by 1e-06 (tensor_to_src)")) << r.slots[0].problem;
  EXPECT_TRUE(r.slots[2].pass);
  // the camera, the region index and the source rectangle, each named
  b = batch_frame(2);
  b.entry.slots[0].source_pad = "sink_1";
  b.entry.slots[1].region_index = 3;
  b.entry.slots[2].source_rect[2] += 2;
  b.entry.slots[2].transform.src_to_tensor[0] += 0.5;
  r = compare_tensor("t", a.entry, a.data(), b.entry, b.data(), DType::F32, CompareOptions(), "A", "B");
  EXPECT_TRUE(contains(r.slots[0].problem, "camera (source pad) '' in A, 'sink_1' in B")) << r.slots[0].problem;
  EXPECT_TRUE(contains(r.slots[1].problem, "region index 1 in A, 3 in B")) << r.slots[1].problem;
  EXPECT_TRUE(contains(r.slots[2].problem, "slot transform differs by 2 (src_to_tensor, source_rect)"))
      << r.slots[2].problem;
  // the frame's problem: its first failing slot, named
  EXPECT_TRUE(contains(r.problem, "tensor 0 slot 0 (region 0): camera (source pad) '' in A, 'sink_1' in B"))
      << r.problem;
  EXPECT_TRUE(r.slots[3].pass);
  // another number of tensors for the frame: a failure, each slot accounted for
  const Frame c = batch_frame(1);
  r = compare_tensor("t", a.entry, a.data(), c.entry, c.data(), DType::F32, CompareOptions(), "A", "B");
  EXPECT_FALSE(r.pass);
  EXPECT_TRUE(contains(r.problem, "the frame gave 2 tensors in A, 1 in B")) << r.problem;
  ASSERT_EQ(r.slots.size(), 4u);
  EXPECT_TRUE(contains(r.slots[2].problem, "slot only in A")) << r.slots[2].problem;
}

TEST(RegressSlots, ReportHasARowPerSlotAndASummaryPerSlot) {
  const Frame a = batch_frame(2);
  Frame b = batch_frame(2);
  b.values[2 * kSlotValues] += 0.5f;
  b.digest();
  Comparison cmp("compare", "A", "B", CompareOptions());
  for (uint64_t i = 0; i < 3; i++) {
    const Frame& other = i == 1 ? b : a;
    cmp.add(i,
            compare_tensor("t", a.entry, a.data(), other.entry, other.data(), DType::F32, CompareOptions(), "A", "B"));
  }
  const std::string all = cmp.render(true, 0), failing = cmp.render(false, 20);
  EXPECT_TRUE(contains(all, "tensor 0 slot 0 (region 0)   ok    identical")) << all;
  EXPECT_TRUE(contains(all, "tensor 1 slot 0 (region 2)   FAIL  max-abs 0.5 (element 0)")) << all;
  EXPECT_TRUE(contains(all, "tensor 1 slot 0: 3 frames compared, 1 failing, 0 empty; max abs diff 0.5 (frame 1)"))
      << all;
  EXPECT_TRUE(contains(all, "tensor 1 slot 1: 3 frames compared, 0 failing, 3 empty; max abs diff 0, PSNR inf dB"))
      << all;
  EXPECT_TRUE(contains(all, "first failing frame: 1")) << all;
  // stdout's failing lines: the failing slot only
  EXPECT_TRUE(contains(failing, "tensor 1 slot 0 (region 2)   FAIL")) << failing;
  EXPECT_FALSE(contains(failing, "tensor 0 slot 0 (region 0)   ok")) << failing;
}

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
