// Unit tests of cudaprep-regress's comparison maths, storage and reports, on synthetic data
// (no pipeline runs here; tests/regress/*.sh run the tool end to end).
#include <glib.h>
#include <glib/gstdio.h>
#include <gst/gst.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "regress_compare.h"
#include "regress_frame_queue.h"
#include "regress_json.h"
#include "regress_math.h"
#include "regress_pipeline.h"
#include "regress_slots.h"
#include "regress_store.h"

using namespace regress;

namespace {

std::vector<uint8_t> floats_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  memcpy(b.data(), v.data(), b.size());
  return b;
}

// values k/64 in 0..1 (+ offset): sums with small dyadic deltas are exact in float
std::vector<float> ramp(size_t n, float offset = 0) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; i++) v[i] = (float)(i % 65) / 64.0f + offset;
  return v;
}

class TempDir {
 public:
  TempDir() {
    gchar* d = g_dir_make_tmp("regress-unit-XXXXXX", nullptr);
    path_ = d;
    g_free(d);
  }
  ~TempDir() { remove_tree(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A recording with one tensor sink (float32, n values per frame) and one matches sink.
struct Synth {
  Manifest manifest;
  std::vector<FrameEntry> frames;
  std::vector<std::vector<float>> tensors;
  std::vector<std::vector<MatchRec>> matches;
};

Synth make_synth(int nframes, size_t n) {
  Synth s;
  s.manifest.tool_version = "test";
  s.manifest.date = "2000-01-01T00:00:00Z";
  s.manifest.pipeline = "filesrc location={clip} ! fake";
  s.manifest.clip = "clip.mp4";
  s.manifest.gstreamer_version = "GStreamer 1.22.0";
  SinkInfo m{"matches", "matches", "video/x-raw, format=(string)I420, width=(int)64, height=(int)48",
             "system",  "",        (uint64_t)nframes};
  SinkInfo t{
      "tensor", "tensor",  "other/tensors, types=(string)float32, dimensions=(string)" + std::to_string(n) + ":1:1:1",
      "system", "float32", (uint64_t)nframes};
  s.manifest.sinks = {m, t};
  ElementInfo e;
  e.name = "cudatensorize0";
  e.factory = "cudatensorize";
  e.plugin = "cudaprep";
  e.plugin_version = "0.1.0";
  e.device = "cpu";
  e.properties = {{"backend", "cpu"}, {"mean", "< (double)0 >"}, {"width", "64"}};
  s.manifest.elements = {e};
  s.manifest.frames = nframes;
  for (int f = 0; f < nframes; f++) {
    s.tensors.push_back(ramp(n, f / 64.0f));
    MatchRec r;
    r.x = 10 + f;
    r.y = 20;
    r.w = 8;
    r.h = 8;
    r.sub_x = r.x + 0.25;
    r.sub_y = r.y - 0.125;
    r.score = 0.9 - 0.01 * f;
    s.matches.push_back({r});
  }
  return s;
}

// Writes the synthetic recording as `record` would (full or digest).
void write_synth(Synth& s, const std::string& dir, bool full) {
  s.manifest.store = full ? "full" : "digest";
  g_mkdir_with_parents((dir + "/tensors").c_str(), 0755);
  std::string lines, err;
  s.frames.clear();
  for (size_t f = 0; f < s.tensors.size(); f++) {
    FrameEntry fe;
    fe.index = f;
    auto bytes = floats_bytes(s.tensors[f]);
    TensorEntry t;
    t.pts = (int64_t)f * 100000000;
    t.duration = 100000000;
    t.bytes = bytes.size();
    t.sha256 = sha256_hex(bytes.data(), bytes.size());
    t.stats = tensor_stats(bytes.data(), bytes.size(), DType::F32);
    if (full) {
      t.file = tensor_file_name("tensor", f, DType::F32);
      ASSERT_TRUE(write_file(dir + "/" + t.file, bytes.data(), bytes.size(), &err)) << err;
    }
    fe.tensors["tensor"] = t;
    MatchesEntry m;
    m.pts = t.pts;
    m.duration = t.duration;
    m.items = s.matches[f];
    fe.matches["matches"] = m;
    lines += frame_to_json(fe).dump(false) + "\n";
    s.frames.push_back(fe);
  }
  const std::string manifest = manifest_to_json(s.manifest).dump(true) + "\n";
  ASSERT_TRUE(write_file(dir + "/frames.jsonl", lines.data(), lines.size(), &err)) << err;
  ASSERT_TRUE(write_file(dir + "/manifest.json", manifest.data(), manifest.size(), &err)) << err;
}

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

}  // namespace

/* ---- maths ------------------------------------------------------------------------------ */

TEST(RegressMath, HalfToFloat) {
  EXPECT_EQ(half_to_float(0x3c00), 1.0f);
  EXPECT_EQ(half_to_float(0xc000), -2.0f);
  EXPECT_EQ(half_to_float(0x3555), 0.333251953125f);
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(half_to_float(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_TRUE(std::isinf(half_to_float(0x7c00)));
  EXPECT_TRUE(std::isnan(half_to_float(0x7e00)));
  EXPECT_TRUE(std::signbit(half_to_float(0x8000)));
}

TEST(RegressMath, StatsAndDigest) {
  auto b = floats_bytes({1, 2, 3, -4});
  TensorStats s = tensor_stats(b.data(), b.size(), DType::F32);
  EXPECT_EQ(s.count, 4u);
  EXPECT_EQ(s.nonfinite, 0u);
  EXPECT_EQ(s.min, -4);
  EXPECT_EQ(s.max, 3);
  EXPECT_DOUBLE_EQ(s.mean, 0.5);
  EXPECT_DOUBLE_EQ(s.l2, std::sqrt(30.0));
  auto c = floats_bytes({1, NAN, INFINITY, 3});
  s = tensor_stats(c.data(), c.size(), DType::F32);
  EXPECT_EQ(s.nonfinite, 2u);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 3);
  EXPECT_DOUBLE_EQ(s.mean, 2);
  const uint8_t abc[] = {'a', 'b', 'c'};
  EXPECT_EQ(sha256_hex(abc, 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  uint8_t u8[] = {0, 255, 7};
  s = tensor_stats(u8, 3, DType::U8);
  EXPECT_EQ(s.max, 255);
  int16_t i16[] = {-3, 5};
  EXPECT_EQ(tensor_stats((uint8_t*)i16, 4, DType::I16).min, -3);
}

// FIPS 180-2's examples, the empty message, and a long message fed in uneven pieces.
TEST(RegressMath, Sha256KnownVectors) {
  EXPECT_EQ(sha256_hex(nullptr, 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  const std::string abc = "abc";
  EXPECT_EQ(sha256_hex((const uint8_t*)abc.data(), abc.size()),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  EXPECT_EQ(sha256_hex((const uint8_t*)two.data(), two.size()),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const std::vector<uint8_t> million(1000000, 'a');
  EXPECT_EQ(sha256_hex(million.data(), million.size()),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  Sha256 h;
  size_t off = 0;
  for (size_t piece = 1; off < million.size(); piece = piece * 3 + 1) {
    const size_t n = std::min(piece, million.size() - off);
    h.update(million.data() + off, n);
    off += n;
  }
  EXPECT_EQ(h.hex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  h.update((const uint8_t*)abc.data(), abc.size());  // hex() started it over
  EXPECT_EQ(h.hex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// Two stats equal bit for bit (the goldens compare them so).
void expect_same_stats(const TensorStats& got, const TensorStats& want) {
  EXPECT_EQ(got.count, want.count);
  EXPECT_EQ(got.nonfinite, want.nonfinite);
  for (auto pair : {std::make_pair(got.min, want.min), std::make_pair(got.max, want.max),
                    std::make_pair(got.mean, want.mean), std::make_pair(got.l2, want.l2)})
    EXPECT_EQ(memcmp(&pair.first, &pair.second, sizeof(double)), 0) << pair.first << " vs " << pair.second;
}

// tensor_stats against the plain definition (element_value, one element after the other),
// bit for bit, for every type, with NaNs and infinities among float values.
TEST(RegressMath, StatsMatchElementByElement) {
  std::mt19937 rng(7);
  std::vector<uint8_t> bytes(8 * 4099);
  for (auto& b : bytes) b = (uint8_t)rng();
  for (DType t : {DType::F32, DType::F16, DType::F64, DType::U8, DType::I8, DType::U16, DType::I16, DType::I32,
                  DType::U32, DType::I64, DType::U64}) {
    const size_t n = bytes.size() / dtype_size(t);
    TensorStats want;
    double sum = 0, sum_sq = 0;
    bool first = true;
    for (size_t i = 0; i < n; i++) {
      const double v = element_value(bytes.data(), t, i);
      want.count++;
      if (!std::isfinite(v)) {
        want.nonfinite++;
        continue;
      }
      want.min = first ? v : std::min(want.min, v);
      want.max = first ? v : std::max(want.max, v);
      first = false;
      sum += v;
      sum_sq += v * v;
    }
    want.mean = want.count > want.nonfinite ? sum / (double)(want.count - want.nonfinite) : 0.0;
    want.l2 = std::sqrt(sum_sq);
    const TensorStats got = tensor_stats(bytes.data(), bytes.size(), t);
    SCOPED_TRACE(dtype_name(t));
    expect_same_stats(got, want);
    if (t == DType::F32 || t == DType::F16) {
      EXPECT_GT(got.nonfinite, 0u);  // random bits: some NaNs
    }
  }
  const TensorStats none = tensor_stats(bytes.data(), 0, DType::F32);
  EXPECT_EQ(none.count, 0u);
  EXPECT_EQ(none.mean, 0.0);
}

// The one pass over a frame's buffers (copy, digests, stats in pieces) against the separate
// computations: the bytes concatenated, the frame's and each slot's SHA-256 of their bytes, and
// tensor_stats over the whole elements, bit for bit. Every type; buffers of odd sizes that split
// elements and pieces; frames not a multiple of the element size nor of the piece size.
TEST(RegressMath, FramePassMatchesSeparateComputations) {
  std::mt19937 rng(11);
  const size_t piece = kFramePiece;
  const std::vector<std::vector<size_t>> layouts = {
      {0},
      {1},
      {7},
      {piece},
      {piece + 3},
      {3 * piece - 5},
      {piece - 1, 2, piece + 1},
      {5, 0, 3, 2 * piece + 7, 1},
      {100003, 99991, 100019},
  };
  for (DType t : {DType::F32, DType::F16, DType::F64, DType::U8, DType::I8, DType::U16, DType::I16, DType::I32,
                  DType::U32, DType::I64, DType::U64}) {
    for (const auto& layout : layouts) {
      for (size_t n_slots : {0, 1, 3, 8}) {
        std::vector<std::vector<uint8_t>> parts;
        std::vector<uint8_t> all;
        for (size_t size : layout) {
          std::vector<uint8_t> p(size);
          for (auto& b : p) b = (uint8_t)rng();
          all.insert(all.end(), p.begin(), p.end());
          parts.push_back(std::move(p));
        }
        SCOPED_TRACE(std::string(dtype_name(t)) + ", " + std::to_string(all.size()) + " bytes in " +
                     std::to_string(parts.size()) + " parts, " + std::to_string(n_slots) + " slots");
        std::vector<SlotEntry> slots(n_slots);
        std::vector<uint8_t> out(all.size());
        FramePass pass(out.data(), all.size(), t, &slots);
        for (const auto& p : parts) pass.add(p.data(), p.size());
        TensorStats got;
        const std::string sha = pass.finish(&got);

        EXPECT_TRUE(out == all);
        EXPECT_EQ(sha, sha256_hex(all.data(), all.size()));
        const size_t each = n_slots ? all.size() / n_slots : 0;
        for (size_t i = 0; i < n_slots; i++) EXPECT_EQ(slots[i].sha256, sha256_hex(all.data() + i * each, each));
        std::vector<SlotEntry> again(n_slots);
        EXPECT_EQ(digest_frame(all.data(), all.size(), &again), sha);
        for (size_t i = 0; i < n_slots; i++) EXPECT_EQ(again[i].sha256, slots[i].sha256);

        const size_t whole = all.size() - all.size() % dtype_size(t);
        const TensorStats want = tensor_stats(all.data(), whole, t);
        expect_same_stats(got, want);
      }
    }
  }
}

// pass_frame: a frame equal to its expected entry (a digest-only golden's) is neither copied nor
// summed, and takes that entry's stats; any other frame (a byte changed, another size, other
// slots, no expected entry) gets its own bytes, digests and stats, as FramePass gives them.
TEST(RegressMath, PassFrameSkipsTheCopyOnlyForTheExpectedBytes) {
  std::mt19937 rng(5);
  std::vector<uint8_t> a(3 * kFramePiece + 17), b(kFramePiece - 3);
  for (auto& x : a) x = (uint8_t)rng();
  for (auto& x : b) x = (uint8_t)rng();
  std::vector<uint8_t> all(a);
  all.insert(all.end(), b.begin(), b.end());
  const DType t = DType::F32;
  for (size_t n_slots : {0, 4}) {
    SCOPED_TRACE(std::to_string(n_slots) + " slots");
    // What a recording stores for these bytes.
    TensorEntry golden;
    golden.slots.resize(n_slots);
    std::vector<uint8_t> kept;
    EXPECT_TRUE(pass_frame({{a.data(), a.size()}, {b.data(), b.size()}}, t, nullptr, &golden, &kept));
    EXPECT_TRUE(kept == all);
    EXPECT_EQ(golden.bytes, all.size());
    EXPECT_EQ(golden.sha256, sha256_hex(all.data(), all.size()));
    expect_same_stats(golden.stats, tensor_stats(all.data(), all.size() - all.size() % 4, t));

    // The same bytes: no copy, the golden's stats and digests.
    TensorEntry same;
    same.slots.resize(n_slots);
    std::vector<uint8_t> out(5, 1);
    EXPECT_FALSE(pass_frame({{a.data(), a.size()}, {b.data(), b.size()}}, t, &golden, &same, &out));
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(same.sha256, golden.sha256);
    EXPECT_EQ(same.bytes, golden.bytes);
    expect_same_stats(same.stats, golden.stats);
    for (size_t i = 0; i < n_slots; i++) EXPECT_EQ(same.slots[i].sha256, golden.slots[i].sha256);

    // One byte changed: its own digests and stats, and the bytes.
    std::vector<uint8_t> b2(b);
    b2[b2.size() / 2] ^= 0x40;
    std::vector<uint8_t> all2(a);
    all2.insert(all2.end(), b2.begin(), b2.end());
    TensorEntry changed;
    changed.slots.resize(n_slots);
    EXPECT_TRUE(pass_frame({{a.data(), a.size()}, {b2.data(), b2.size()}}, t, &golden, &changed, &out));
    EXPECT_TRUE(out == all2);
    EXPECT_EQ(changed.sha256, sha256_hex(all2.data(), all2.size()));
    EXPECT_NE(changed.sha256, golden.sha256);
    expect_same_stats(changed.stats, tensor_stats(all2.data(), all2.size() - all2.size() % 4, t));
    if (n_slots) {
      const size_t each = all2.size() / n_slots;
      for (size_t i = 0; i < n_slots; i++)
        EXPECT_EQ(changed.slots[i].sha256, sha256_hex(all2.data() + i * each, each)) << "slot " << i;
    }

    // Other slots than the expected entry's: a full pass.
    TensorEntry other_slots;
    other_slots.slots.resize(n_slots + 1);
    EXPECT_TRUE(pass_frame({{a.data(), a.size()}, {b.data(), b.size()}}, t, &golden, &other_slots, &out));
    EXPECT_TRUE(out == all);
  }
}

// The stats accumulator fed element runs of any length equals tensor_stats at once, bit for bit,
// also when the first elements are not finite (min and max start at the first finite one).
TEST(RegressMath, StatsAccumulatorMatchesOnePass) {
  std::mt19937 rng(5);
  std::vector<uint8_t> bytes(8 * 1000);
  for (auto& b : bytes) b = (uint8_t)rng();
  const float nan = std::nanf("");
  memcpy(bytes.data(), &nan, 4);  // F32: a NaN first
  memcpy(bytes.data() + 4, &nan, 4);
  for (DType t : {DType::F32, DType::F16, DType::F64, DType::U8, DType::I16, DType::U64}) {
    SCOPED_TRACE(dtype_name(t));
    const size_t n = bytes.size() / dtype_size(t);
    const TensorStats want = tensor_stats(bytes.data(), bytes.size(), t);
    for (size_t step : {1, 2, 3, 7, 64, 999}) {
      StatsAccumulator acc(t);
      for (size_t i = 0; i < n; i += step) acc.add(bytes.data() + i * dtype_size(t), std::min(step, n - i));
      const TensorStats got = acc.finish();
      expect_same_stats(got, want);
    }
  }
}

// The capture's worker queue: frames digested at uneven speeds on several threads come out
// complete, in submission order, each with its own bytes, and the byte buffers are reused.
TEST(RegressFrameQueue, DeliversEveryFrameInOrder) {
  const int frames = 300;
  std::vector<uint64_t> delivered;
  std::set<const uint8_t*> buffers;
  int wrong = 0;
  {
    FrameQueue q(
        3, 4,
        [](QueuedFrame& f) {
          // later frames often finish first
          std::this_thread::sleep_for(std::chrono::microseconds((f.index * 7919) % 13 * 40));
          f.entry.sha256 = sha256_hex(f.bytes.data(), f.bytes.size());
        },
        [&](QueuedFrame& f) {
          delivered.push_back(f.index);
          buffers.insert(f.bytes.data());
          const std::vector<uint8_t> want(1000, (uint8_t)f.index);
          if (f.bytes != want || f.entry.sha256 != sha256_hex(want.data(), want.size())) wrong++;
        });
    std::vector<uint8_t> gather;
    for (int i = 0; i < frames; i++) {
      gather.assign(1000, (uint8_t)i);  // the same size: capacity once reached is kept
      QueuedFrame* f = q.acquire();
      f->index = (uint64_t)i;
      f->bytes.swap(gather);
      q.submit(f);
      if (i == frames / 2) {
        q.drain();
        EXPECT_EQ(delivered.size(), (size_t)i + 1);
      }
    }
  }  // the destructor delivers the rest
  ASSERT_EQ(delivered.size(), (size_t)frames);
  for (int i = 0; i < frames; i++) EXPECT_EQ(delivered[i], (uint64_t)i);
  EXPECT_EQ(wrong, 0);
  EXPECT_LE(buffers.size(), 5u);  // the queue's 4 and the gathering one
}

TEST(RegressMath, DiffIdenticalAndPerturbed) {
  auto a = ramp(1000);
  auto ba = floats_bytes(a);
  TensorDiff d = diff_tensors(ba.data(), ba.size(), ba.data(), ba.size(), DType::F32);
  EXPECT_TRUE(d.identical);
  EXPECT_EQ(d.max_abs, 0);
  EXPECT_TRUE(std::isinf(d.psnr) && d.psnr > 0);

  auto b = a;
  b[123] += 0.25f;
  b[500] -= 0.125f;
  auto bb = floats_bytes(b);
  d = diff_tensors(ba.data(), ba.size(), bb.data(), bb.size(), DType::F32);
  EXPECT_FALSE(d.identical);
  EXPECT_EQ(d.differing, 2u);
  EXPECT_EQ(d.worst_index, 123u);
  EXPECT_NEAR(d.max_abs, 0.25, 1e-7);
  const double sum_sq = std::pow((double)b[123] - a[123], 2) + std::pow((double)b[500] - a[500], 2);
  EXPECT_DOUBLE_EQ(d.sum_sq, sum_sq);
  EXPECT_DOUBLE_EQ(d.peak, 1.0);  // ramp covers 0..1
  EXPECT_DOUBLE_EQ(d.psnr, 10 * std::log10(1.0 / (sum_sq / 1000)));

  TensorTolerance t;
  EXPECT_FALSE(tensor_diff_passes(d, t));  // exact
  t.kind = TensorTolerance::MaxAbs;
  t.value = 0.3;
  EXPECT_TRUE(tensor_diff_passes(d, t));
  t.value = 0.2;
  EXPECT_FALSE(tensor_diff_passes(d, t));
  t.kind = TensorTolerance::Psnr;
  t.value = d.psnr - 0.01;
  EXPECT_TRUE(tensor_diff_passes(d, t));
  t.value = d.psnr + 0.01;
  EXPECT_FALSE(tensor_diff_passes(d, t));
}

TEST(RegressMath, DiffSpecialValues) {
  // NaN against NaN (other payload) counts as equal in value but not bitwise
  uint32_t q1 = 0x7fc00000, q2 = 0x7fc00001;
  float n1, n2;
  memcpy(&n1, &q1, 4);
  memcpy(&n2, &q2, 4);
  auto a = floats_bytes({1, n1, INFINITY});
  auto b = floats_bytes({1, n2, INFINITY});
  TensorDiff d = diff_tensors(a.data(), a.size(), b.data(), b.size(), DType::F32);
  EXPECT_FALSE(d.identical);
  EXPECT_EQ(d.max_abs, 0);
  EXPECT_EQ(d.differing, 0u);
  // NaN against a number: infinitely far
  auto c = floats_bytes({1, 2, INFINITY});
  d = diff_tensors(a.data(), a.size(), c.data(), c.size(), DType::F32);
  EXPECT_TRUE(std::isinf(d.max_abs));
  TensorTolerance t{TensorTolerance::MaxAbs, 1e9};
  EXPECT_FALSE(tensor_diff_passes(d, t));
  // sizes differ
  d = diff_tensors(a.data(), a.size(), a.data(), 8, DType::F32);
  EXPECT_FALSE(d.same_size);
  EXPECT_FALSE(tensor_diff_passes(d, t));
  // fp16
  uint16_t h1[] = {0x3c00, 0x4000}, h2[] = {0x3c00, 0x4001};
  d = diff_tensors((uint8_t*)h1, 4, (uint8_t*)h2, 4, DType::F16);
  EXPECT_DOUBLE_EQ(d.max_abs, 0.001953125);
}

TEST(RegressMath, ParseTolerance) {
  TensorTolerance t;
  std::string err;
  EXPECT_TRUE(parse_tensor_tolerance("exact", &t, &err));
  EXPECT_EQ(t.kind, TensorTolerance::Exact);
  EXPECT_TRUE(parse_tensor_tolerance("max-abs=1e-5", &t, &err));
  EXPECT_EQ(t.kind, TensorTolerance::MaxAbs);
  EXPECT_DOUBLE_EQ(t.value, 1e-5);
  EXPECT_TRUE(parse_tensor_tolerance("psnr=60", &t, &err));
  EXPECT_EQ(t.kind, TensorTolerance::Psnr);
  EXPECT_EQ(t.text(), "psnr=60");
  for (const char* bad : {"", "max-abs=", "max-abs=-1", "max-abs=abc", "psnr=", "psnr=inf", "close", "max-abs=1x",
                          // a PSNR tolerance is > 0; numbers are plain decimals
                          "psnr=0", "psnr=-5", "psnr=-0", "psnr=0.0", "max-abs=-0", "max-abs=0x1p-3", "max-abs=0x10",
                          "psnr=0x10", "max-abs=nan", "max-abs=1e999", "max-abs= 1", "max-abs=1 "}) {
    err.clear();
    EXPECT_FALSE(parse_tensor_tolerance(bad, &t, &err)) << bad;
    EXPECT_TRUE(contains(err, std::string("--tensor-tol ") + bad)) << err;
  }
  EXPECT_TRUE(parse_tensor_tolerance("psnr=0.5", &t, &err));
  EXPECT_DOUBLE_EQ(t.value, 0.5);
  EXPECT_TRUE(parse_tensor_tolerance("max-abs=0", &t, &err));
  EXPECT_EQ(t.value, 0);
}

TEST(RegressMath, ParseDecimal) {
  double v = -1;
  for (const auto& [text, want] : std::vector<std::pair<const char*, double>>{{"0", 0},
                                                                              {"60", 60},
                                                                              {"0.5", 0.5},
                                                                              {".5", 0.5},
                                                                              {"5.", 5},
                                                                              {"+2", 2},
                                                                              {"-1.5", -1.5},
                                                                              {"1e-5", 1e-5},
                                                                              {"1E+3", 1000},
                                                                              {"007", 7}}) {
    EXPECT_TRUE(parse_decimal(text, &v)) << text;
    EXPECT_DOUBLE_EQ(v, want) << text;
  }
  for (const char* bad :
       {"",     " ",   "+",        "-",     ".",  "e5", ".e5", "1e",    "1e+",   "0x10", "0x1p-3", "0X1P3",   "inf",
        "-inf", "nan", "infinity", "1e999", " 1", "1 ", "1,5", "1.2.3", "1_000", "0b1",  "1f",     "\xd9\xa3"}) {
    EXPECT_FALSE(parse_decimal(bad, &v)) << bad;
  }
}

TEST(RegressMath, MatchPairing) {
  MatchRec a{10, 10, 8, 8, 0.9, 10.25, 10.0}, b{50, 50, 8, 8, 0.8, 50.0, 50.5};
  // the run lists them in the other order (close scores swapped), slightly moved
  MatchRec a2 = a, b2 = b;
  a2.sub_x += 0.3;
  a2.sub_y += 0.4;  // 0.5 px away
  a2.score = 0.85;
  b2.score = 0.86;
  MatchDiff d = diff_matches({a, b}, {b2, a2});
  ASSERT_EQ(d.pairs.size(), 2u);
  EXPECT_EQ(d.pairs[0].ref, 0);
  EXPECT_EQ(d.pairs[0].run, 1);
  EXPECT_NEAR(d.pairs[0].dpos, 0.5, 1e-12);
  EXPECT_NEAR(d.max_dpos, 0.5, 1e-12);
  EXPECT_NEAR(d.max_dscore, 0.06, 1e-12);
  EXPECT_TRUE(match_diff_passes(d, 0.5 + 1e-12, 0.06 + 1e-12));
  EXPECT_FALSE(match_diff_passes(d, 0.49, 1));
  EXPECT_FALSE(match_diff_passes(d, 1, 0.05));
  // a missing match
  d = diff_matches({a, b}, {a});
  EXPECT_EQ(d.n_ref, 2u);
  EXPECT_EQ(d.n_run, 1u);
  EXPECT_EQ(d.max_dpos, 0);
  EXPECT_FALSE(match_diff_passes(d, 100, 100));
  EXPECT_TRUE(match_diff_passes(diff_matches({}, {}), 0, 0));
}

namespace {

MatchRec bank_match(const char* label, double x, double y, double score, double scale = 1, double angle = 0) {
  MatchRec m;
  m.x = (int)x;
  m.y = (int)y;
  m.w = m.h = 16;
  m.sub_x = x;
  m.sub_y = y;
  m.score = score;
  m.label = label;
  m.scale = scale;
  m.angle = angle;
  return m;
}

}  // namespace

TEST(RegressMath, BankMatchesPairOnlyWithinTheirTemplate) {
  // a and b overlap: in the run a moved 1 px onto where b was and b onto where a was; by
  // position alone each would pair with the other template's match (0 px away)
  const MatchRec a = bank_match("a", 100, 100, 0.9), b = bank_match("b", 101, 100, 0.8);
  const MatchRec a2 = bank_match("a", 101, 100, 0.9), b2 = bank_match("b", 100, 100, 0.8);
  MatchDiff d = diff_matches({a, b}, {b2, a2});
  ASSERT_EQ(d.pairs.size(), 2u);
  EXPECT_EQ(d.pairs[0].ref, 0);
  EXPECT_EQ(d.pairs[0].run, 1);
  EXPECT_EQ(d.pairs[0].dpos, 1);
  EXPECT_EQ(d.pairs[1].ref, 1);
  EXPECT_EQ(d.pairs[1].run, 0);
  EXPECT_EQ(d.pairs[1].dpos, 1);
  ASSERT_EQ(d.templates.size(), 2u);
  EXPECT_EQ(d.templates[0].label, "a");
  EXPECT_EQ(d.templates[0].max_dpos, 1);
  EXPECT_EQ(d.templates[1].label, "b");
  EXPECT_EQ(d.templates[1].max_dpos, 1);
  EXPECT_FALSE(d.single_template());
  EXPECT_TRUE(match_diff_passes(d, 1, 0));
  EXPECT_FALSE(match_diff_passes(d, 0.99, 0));
  // a match that changed template: the totals agree, each template's count does not
  d = diff_matches({a, b}, {a, bank_match("a", 101, 100, 0.8)});
  EXPECT_EQ(d.n_ref, d.n_run);
  ASSERT_EQ(d.templates.size(), 2u);
  EXPECT_EQ(d.templates[0].n_ref, 1u);
  EXPECT_EQ(d.templates[0].n_run, 2u);
  EXPECT_EQ(d.templates[1].n_run, 0u);
  EXPECT_FALSE(match_diff_passes(d, 100, 100));
  // the same place at another scale or angle of the template, or found by tracking
  d = diff_matches({a}, {bank_match("a", 100, 100, 0.9, 1.25)});
  ASSERT_EQ(d.pairs.size(), 1u);
  EXPECT_TRUE(d.pairs[0].member_changed);
  EXPECT_EQ(d.templates[0].member_changes, 1u);
  EXPECT_FALSE(match_diff_passes(d, 100, 100));
  d = diff_matches({a}, {bank_match("a", 100, 100, 0.9, 1, -10)});
  EXPECT_TRUE(d.pairs[0].member_changed);
  MatchRec tracked = a;
  tracked.full_search = false;
  d = diff_matches({a}, {tracked});
  EXPECT_FALSE(d.pairs[0].member_changed);
  EXPECT_TRUE(d.pairs[0].full_changed);
  EXPECT_FALSE(match_diff_passes(d, 100, 100));
  // the single template of a recording without labels
  MatchRec plain;
  EXPECT_EQ(plain.label, "template-match");
  EXPECT_TRUE(diff_matches({plain}, {plain}).single_template());
  EXPECT_TRUE(diff_matches({}, {}).single_template());
}

TEST(RegressCompare, BankReasonsNameTheTemplate) {
  const MatchRec a = bank_match("a", 100, 100, 0.9), b = bank_match("b", 300, 50, 0.8);
  MatchesEntry ref, run;
  ref.items = {a, b};
  run.items = {a, bank_match("b", 310, 50, 0.7)};
  SinkResult r = compare_matches("matches", ref, run, CompareOptions(), "golden", "this run");
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.problem, "template 'b': match position delta 10 px > tolerance 0");
  EXPECT_TRUE(contains(r.notes, "template 'b': match score delta 0.1 > tolerance 0")) << r.notes;
  EXPECT_FALSE(contains(r.problem + r.notes, "template 'a'"));
  // a template on one side only
  run.items = {a, bank_match("c", 300, 50, 0.8)};
  r = compare_matches("matches", ref, run, CompareOptions(), "golden", "this run");
  EXPECT_EQ(r.problem, "template 'b' only in golden (1 match)");
  EXPECT_TRUE(contains(r.notes, "template 'c' only in this run (1 match)")) << r.notes;
  // another member, another search
  MatchRec b2 = bank_match("b", 300, 50, 0.8, 0.8, 5);
  b2.full_search = false;
  run.items = {a, b2};
  r = compare_matches("matches", ref, run, CompareOptions(), "golden", "this run");
  EXPECT_EQ(r.problem, "template 'b': scale 1 angle 0 in golden, scale 0.8 angle 5 in this run (match at 300, 50)");
  EXPECT_TRUE(contains(r.notes, "template 'b': full-search true in golden, false in this run")) << r.notes;
  // the single template's reasons read as they always did
  MatchesEntry one, two;
  one.items = {MatchRec{10, 10, 8, 8, 0.9, 10, 10}};
  two.items = {MatchRec{10, 10, 8, 8, 0.9, 10.5, 10}, MatchRec{50, 50, 8, 8, 0.6, 50, 50}};
  r = compare_matches("matches", one, two, CompareOptions(), "golden", "this run");
  EXPECT_EQ(r.problem, "1 matches in golden, 2 in this run");
  EXPECT_EQ(r.notes, "match position delta 0.5 px > tolerance 0");
}

TEST(RegressCompare, SummaryHasALinePerTemplate) {
  Comparison cmp("check", "golden", "this run", CompareOptions());
  const MatchRec a = bank_match("a", 100, 100, 0.9), b = bank_match("b", 300, 50, 0.8);
  for (uint64_t i = 0; i < 4; i++) {
    MatchesEntry ref, run;
    ref.pts = run.pts = (int64_t)i * 100;
    ref.items = {a, b};
    run.items = {a};
    if (i < 2) run.items.push_back(bank_match("b", 300, 50.25, 0.8));
    cmp.add(i, compare_matches("matches", ref, run, cmp.options(), "golden", "this run"));
  }
  const std::string text = cmp.render(true, 20);
  EXPECT_TRUE(contains(text,
                       "    template 'a': matches golden 4, this run 4; max position delta 0 px, max score "
                       "delta 0; 0 failing\n"))
      << text;
  EXPECT_TRUE(contains(text,
                       "    template 'b': matches golden 4, this run 2 (2 frames with a different count); max "
                       "position delta 0.25 px (frame 0), max score delta 0; 4 failing, first frame 0\n"))
      << text;
  EXPECT_TRUE(contains(text, "2 vs 1 matches, max dpos 0 px, max dscore 0 (a 1 vs 1, b 1 vs 0)")) << text;
  EXPECT_TRUE(contains(text, "template 'b' only in golden (1 match)")) << text;
  const std::vector<FrameResult> frames = cmp.frame_results();
  std::vector<std::pair<uint64_t, const SinkResult*>> results;
  for (const auto& f : frames) results.emplace_back(f.index, &f.sinks.at("matches"));
  const std::vector<TemplateSummary> t = summarize_templates(results, cmp.options());
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[1].failing_frames, 4u);
  EXPECT_EQ(t[1].count_frames, 2u);
  EXPECT_EQ(t[0].failing_frames, 0u);
  // a template the run lacks in every frame
  Comparison gone("check", "golden", "this run", CompareOptions());
  MatchesEntry ref, run;
  ref.items = {a, b};
  run.items = {a};
  gone.add(0, compare_matches("matches", ref, run, gone.options(), "golden", "this run"));
  EXPECT_TRUE(contains(gone.render(false, 20),
                       "    template 'b': only in golden (1 matches in 1 frames, none in this run); 1 failing"))
      << gone.render(false, 20);
}

TEST(RegressMath, Formatting) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; i++) {
    uint64_t bits = rng();
    double v;
    memcpy(&v, &bits, 8);
    if (!std::isfinite(v)) continue;
    const std::string s = format_double(v);
    EXPECT_EQ(g_ascii_strtod(s.c_str(), nullptr), v) << s;
  }
  EXPECT_EQ(format_double(0.1), "0.1");
  EXPECT_EQ(format_double(3), "3");
  EXPECT_EQ(format_double(INFINITY), "inf");
  EXPECT_EQ(format_time(1500000000), "0:00:01.500000000");
  EXPECT_EQ(format_time(-1), "none");
}

/* ---- JSON and storage ------------------------------------------------------------------- */

TEST(RegressJson, RoundTripKeepsOrderAndValues) {
  Json o = Json::object();
  o.set("zeta", Json::integer(-3));
  o.set("alpha", Json::number(0.1));
  o.set("text", Json::string("a \"quoted\"\npath\\"));
  o.set("inf", Json::number(INFINITY));
  Json arr = Json::array();
  arr.push(Json::boolean(true)).push(Json::null()).push(Json::number(1e-300));
  o.set("list", arr);
  const std::string compact = o.dump(false);
  EXPECT_EQ(compact.substr(0, 21), "{\"zeta\":-3,\"alpha\":0.");
  Json back;
  std::string err;
  ASSERT_TRUE(Json::parse(compact, &back, &err)) << err;
  EXPECT_EQ(back.dump(false), compact);
  ASSERT_TRUE(Json::parse(o.dump(true), &back, &err)) << err;
  EXPECT_EQ(back.dump(false), compact);
  double v;
  EXPECT_TRUE(back["inf"].get_double(&v));
  EXPECT_TRUE(std::isinf(v));
  std::string s;
  EXPECT_TRUE(back["text"].get_string(&s));
  EXPECT_EQ(s, "a \"quoted\"\npath\\");
  EXPECT_FALSE(Json::parse("{\"a\": ", &back, &err));
}

TEST(RegressJson, NestingIsBoundedBeforeParsing) {
  auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  EXPECT_EQ(json_nesting_depth("{}"), 1);
  EXPECT_EQ(json_nesting_depth("{\"a\":[1,{\"b\":[]}]}"), 4);
  EXPECT_EQ(json_nesting_depth("{\"a\":\"[[[[{{{{\\\"[[[\"}"), 1);  // brackets in strings do not count
  EXPECT_EQ(json_nesting_depth(nested(300)), 300);
  Json j;
  std::string err;
  EXPECT_TRUE(Json::parse(nested(Json::kMaxDepth), &j, &err)) << err;
  EXPECT_FALSE(Json::parse(nested(Json::kMaxDepth + 1), &j, &err));
  EXPECT_TRUE(contains(err, "nested more than 64 levels")) << err;
  // deep enough to overflow json-glib's recursion: refused, no crash
  EXPECT_FALSE(Json::parse("{\"a\":" + nested(1000000) + "}", &j, &err));
  EXPECT_FALSE(Json::parse(std::string(1000000, '{'), &j, &err));
}

TEST(RegressJson, TextThatIsNotUtf8IsWrittenValid) {
  Json o = Json::object();
  o.set("clip", Json::string("clip_\xe9.mp4"));
  const std::string text = o.dump(true);
  EXPECT_TRUE(g_utf8_validate(text.data(), (gssize)text.size(), nullptr));
  Json back;
  std::string err, clip;
  ASSERT_TRUE(Json::parse(text, &back, &err)) << err;
  ASSERT_TRUE(back["clip"].get_string(&clip));
  EXPECT_EQ(clip, "clip_\xef\xbf\xbd.mp4");                  // U+FFFD
  EXPECT_EQ(json_escape("caf\xc3\xa9"), "\"caf\xc3\xa9\"");  // valid UTF-8 as it is
}

TEST(RegressStore, FrameRoundTrip) {
  FrameEntry f;
  f.index = 7;
  TensorEntry t;
  t.pts = 700;
  t.duration = -1;
  t.bytes = 16;
  t.sha256 = std::string(64, 'a');
  t.stats.min = -0.5;
  t.stats.max = 1.0 / 3;
  t.stats.mean = 0.1;
  t.stats.l2 = 2;
  t.file = "tensors/tensor-00007.f32";
  t.transform.present = true;
  t.transform.source_w = 768;
  t.transform.src_to_tensor[0] = 1.0 / 12;
  f.tensors["tensor"] = t;
  MatchesEntry m;
  m.pts = 700;
  m.items.push_back(MatchRec{1, 2, 3, 4, 0.123456789012345, 1.0625, 2.5});
  f.matches["matches"] = m;
  Json j = frame_to_json(f);
  Json back;
  std::string err;
  ASSERT_TRUE(Json::parse(j.dump(false), &back, &err));
  FrameEntry g;
  ASSERT_TRUE(frame_from_json(back, &g, &err)) << err;
  EXPECT_EQ(frame_to_json(g).dump(false), j.dump(false));
  EXPECT_EQ(g.tensors["tensor"].duration, -1);
  EXPECT_EQ(g.tensors["tensor"].transform.src_to_tensor[0], 1.0 / 12);
  EXPECT_EQ(g.matches["matches"].items[0].score, 0.123456789012345);
  EXPECT_EQ(g.matches["matches"].items[0].label, "template-match");
  // stable key order: frame first, then sinks by name
  EXPECT_EQ(j.dump(false).rfind("{\"frame\":7,\"matches\":", 0), 0u);
}

TEST(RegressStore, MatchesKeepTheirTemplateAndReadOldRecordings) {
  FrameEntry f;
  f.index = 3;
  MatchesEntry m;
  MatchRec r{1, 2, 16, 16, 0.75, 1.25, 2.5};
  r.label = "logo";
  r.scale = 0.8;
  r.angle = -10;
  r.full_search = false;
  m.items.push_back(r);
  f.matches["matches"] = m;
  const std::string text = frame_to_json(f).dump(false);
  EXPECT_TRUE(contains(text,
                       "{\"template\":\"logo\",\"score\":0.75,\"x\":1.25,\"y\":2.5,\"box\":[1,2,16,16],"
                       "\"scale\":0.8,\"angle\":-10,\"full_search\":false}"))
      << text;
  Json j;
  std::string err;
  ASSERT_TRUE(Json::parse(text, &j, &err));
  FrameEntry g;
  ASSERT_TRUE(frame_from_json(j, &g, &err)) << err;
  const MatchRec& back = g.matches["matches"].items[0];
  EXPECT_EQ(back.label, "logo");
  EXPECT_EQ(back.scale, 0.8);
  EXPECT_EQ(back.angle, -10);
  EXPECT_FALSE(back.full_search);
  // a match recorded before matches had a template: the single template, at scale 1, angle 0,
  // found by a full search
  ASSERT_TRUE(
      Json::parse("{\"frame\":0,\"matches\":{\"pts\":0,\"duration\":1,\"matches\":[{\"score\":1,\"x\":2,"
                  "\"y\":3,\"box\":[2,3,4,5]}]}}",
                  &j, &err));
  ASSERT_TRUE(frame_from_json(j, &g, &err)) << err;
  const MatchRec& old = g.matches["matches"].items[0];
  EXPECT_EQ(old.label, "template-match");
  EXPECT_EQ(old.scale, 1);
  EXPECT_EQ(old.angle, 0);
  EXPECT_TRUE(old.full_search);
  // malformed fields are named
  for (const char* bad : {"\"template\":\"\"", "\"template\":3", "\"scale\":0", "\"scale\":\"nan\"",
                          "\"angle\":\"inf\"", "\"full_search\":1"}) {
    const std::string t = std::string(
                              "{\"frame\":0,\"m\":{\"pts\":0,\"matches\":[{\"score\":1,\"x\":2,\"y\":3,"
                              "\"box\":[2,3,4,5],") +
                          bad + "}]}}";
    ASSERT_TRUE(Json::parse(t, &j, &err)) << t;
    err.clear();
    EXPECT_FALSE(frame_from_json(j, &g, &err)) << bad;
    EXPECT_TRUE(contains(err, "m: match 0: field")) << err;
  }
}

TEST(RegressStore, LoadAndCorruption) {
  TempDir tmp;
  Synth s = make_synth(4, 100);
  const std::string dir = tmp.path() + "/rec";
  write_synth(s, dir, true);
  Recording r;
  std::string err;
  ASSERT_TRUE(r.load(dir, &err)) << err;
  EXPECT_EQ(r.frames.size(), 4u);
  std::vector<uint8_t> data;
  ASSERT_TRUE(r.read_tensor(r.frames[2].tensors["tensor"], &data, &err)) << err;
  EXPECT_EQ(data, floats_bytes(s.tensors[2]));

  // a tensor file modified in place: same size, other digest
  const std::string f2 = dir + "/" + r.frames[2].tensors["tensor"].file;
  std::vector<uint8_t> bad = data;
  bad[5] ^= 1;
  ASSERT_TRUE(write_file(f2, bad.data(), bad.size(), &err));
  EXPECT_FALSE(r.read_tensor(r.frames[2].tensors["tensor"], &data, &err));
  EXPECT_TRUE(contains(err, "corrupt")) << err;
  EXPECT_TRUE(contains(err, "SHA-256")) << err;
  // truncated
  ASSERT_TRUE(write_file(f2, bad.data(), 10, &err));
  EXPECT_FALSE(r.load(dir, &err));
  EXPECT_TRUE(contains(err, "tensor-00002.f32: corrupt: 10 bytes")) << err;
  // missing
  g_remove(f2.c_str());
  EXPECT_FALSE(r.load(dir, &err));
  EXPECT_TRUE(contains(err, "tensor-00002.f32: missing")) << err;
  // frames.jsonl damaged
  write_synth(s, dir, true);
  std::string lines;
  ASSERT_TRUE(read_file(dir + "/frames.jsonl", &lines, &err));
  lines.replace(lines.find("\"sha256\""), 8, "\"sha2~6\"");
  ASSERT_TRUE(write_file(dir + "/frames.jsonl", lines.data(), lines.size(), &err));
  EXPECT_FALSE(r.load(dir, &err));
  EXPECT_TRUE(contains(err, "frames.jsonl line 1: corrupt")) << err;
  // manifest damaged / missing
  write_synth(s, dir, true);
  ASSERT_TRUE(write_file(dir + "/manifest.json", "{ nope", 6, &err));
  EXPECT_FALSE(r.load(dir, &err));
  EXPECT_TRUE(contains(err, "manifest.json: corrupt")) << err;
  g_remove((dir + "/manifest.json").c_str());
  EXPECT_FALSE(r.load(dir, &err));
  EXPECT_TRUE(contains(err, "manifest.json: missing")) << err;
  EXPECT_FALSE(r.load(tmp.path() + "/nothing", &err));
}

TEST(RegressStore, CapsDtypeAndFrameBytes) {
  const std::string golden =
      "other/tensors, format=(string)static, num_tensors=(int)1, types=(string)float32, "
      "dimensions=(string)64:64:3:1, framerate=(fraction)25/3";
  EXPECT_EQ(caps_dtype(golden), "float32");
  EXPECT_EQ(caps_frame_bytes(golden), 64u * 64 * 3 * 4);
  EXPECT_EQ(caps_dtype("other/tensors, types=(string)float16, dimensions=(string)3:8:8:1"), "float16");
  EXPECT_EQ(caps_frame_bytes("other/tensors, types=(string)float16, dimensions=(string)3:8:8:1"), 3u * 8 * 8 * 2);
  EXPECT_EQ(caps_frame_bytes("other/tensors, num_tensors=(int)2, types=(string)\"float32,uint8\", "
                             "dimensions=(string)\"4:1,3:2\""),
            16u + 6);
  EXPECT_EQ(caps_dtype("other/tensors, num_tensors=(int)2, types=(string)\"float32,uint8\", "
                       "dimensions=(string)\"4:1,3:2\""),
            "uint8");  // mixed: bytes
  EXPECT_EQ(caps_frame_bytes("other/tensor, type=(string)int16, dimension=(string)5:1:0:0"), 10u);
  EXPECT_EQ(caps_dtype("video/x-raw, format=(string)I420, width=(int)64, height=(int)48"), "uint8");
  EXPECT_EQ(caps_frame_bytes("video/x-raw, format=(string)I420, width=(int)64, height=(int)48"), 0u);
  EXPECT_EQ(caps_frame_bytes("other/tensors, format=(string)flexible, types=(string)float32, "
                             "dimensions=(string)4:4"),
            0u);
  EXPECT_EQ(caps_frame_bytes("other/tensors, types=(string)float32, dimensions=(string)4:x"), 0u);
  EXPECT_EQ(caps_frame_bytes("other/tensors, num_tensors=(int)2, types=(string)float32, dimensions=(string)4:4"), 0u);
  EXPECT_EQ(caps_dtype(""), "uint8");
  EXPECT_EQ(caps_frame_bytes("not caps ((("), 0u);
}

TEST(RegressStore, ARecordingThatContradictsItselfIsRefused) {
  TempDir tmp;
  const std::string dir = tmp.path() + "/rec";
  Recording r;
  std::string err;
  // dtype edited: the caps (and the .f32 files) say float32
  {
    Synth s = make_synth(3, 100);
    s.manifest.sinks[1].dtype = "float64";
    write_synth(s, dir, true);
    EXPECT_FALSE(r.load(dir, &err));
    EXPECT_TRUE(contains(err, "manifest.json: corrupt: sinks[1] ('tensor'): field \"dtype\" is \"float64\"")) << err;
  }
  // dtype and caps edited together: the frame size and the files say otherwise
  {
    Synth s = make_synth(3, 100);
    s.manifest.sinks[1].dtype = "float64";
    s.manifest.sinks[1].caps = "other/tensors, types=(string)float64, dimensions=(string)100:1:1:1";
    write_synth(s, dir, true);
    EXPECT_FALSE(r.load(dir, &err));
    EXPECT_TRUE(contains(err,
                         "frames.jsonl line 1: corrupt: sink \"tensor\" field \"bytes\" is 400 but the "
                         "manifest's field \"caps\""))
        << err;
    EXPECT_TRUE(contains(err, "makes 800 bytes a frame")) << err;
  }
  // caps without a fixed size (flexible): the dtype still names the files' type
  {
    Synth s = make_synth(3, 100);
    s.manifest.sinks[1].caps = "other/tensors, format=(string)flexible, types=(string)float64";
    s.manifest.sinks[1].dtype = "float64";
    write_synth(s, dir, true);
    EXPECT_FALSE(r.load(dir, &err));
    EXPECT_TRUE(contains(err, "field \"file\" \"tensors/tensor-00000.f32\" is not a float64 file (.f64)")) << err;
  }
  // a size that is no whole number of elements
  {
    Synth s = make_synth(3, 100);
    s.manifest.sinks[1].caps = "other/tensors, format=(string)flexible, types=(string)float64";
    s.manifest.sinks[1].dtype = "float64";
    s.tensors[1].push_back(0.5f);  // 404 bytes
    write_synth(s, dir, false);
    EXPECT_FALSE(r.load(dir, &err));
    EXPECT_TRUE(contains(err,
                         "line 2: corrupt: sink \"tensor\" field \"bytes\" is 404, not a whole number of "
                         "float64 elements"))
        << err;
  }
  // the synthetic recording as written is consistent
  Synth s = make_synth(3, 100);
  write_synth(s, dir, true);
  EXPECT_TRUE(r.load(dir, &err)) << err;
}

TEST(RegressStore, TensorFilesMustStayInsideTheRecording) {
  TempDir tmp;
  const std::string dir = tmp.path() + "/rec";
  Synth s = make_synth(2, 10);
  write_synth(s, dir, true);
  std::string err, why;
  // the right bytes, outside
  const std::string outside = tmp.path() + "/outside.f32";
  auto bytes = floats_bytes(s.tensors[0]);
  ASSERT_TRUE(write_file(outside, bytes.data(), bytes.size(), &err));
  auto with_file = [&](const std::string& file) {
    std::string lines;
    EXPECT_TRUE(read_file(dir + "/frames.jsonl", &lines, &err));
    const size_t at = lines.find("tensors/tensor-00000.f32");
    if (at != std::string::npos) lines.replace(at, strlen("tensors/tensor-00000.f32"), file);
    EXPECT_TRUE(write_file(dir + "/frames.jsonl", lines.data(), lines.size(), &err));
    Recording r;
    const bool ok = r.load(dir, &err);
    write_synth(s, dir, true);  // restore
    return ok;
  };
  EXPECT_FALSE(with_file("../outside.f32"));
  EXPECT_TRUE(contains(err, "field \"file\" \"../outside.f32\" has a '..' component")) << err;
  EXPECT_FALSE(with_file("tensors/../../outside.f32"));
  EXPECT_TRUE(contains(err, "'..' component")) << err;
  EXPECT_FALSE(with_file(outside));
  EXPECT_TRUE(contains(err, "is an absolute path")) << err;
  EXPECT_FALSE(with_file("../../../../../../../../../etc/passwd"));
  // a symlink to outside
  const std::string f0 = dir + "/tensors/tensor-00000.f32";
  g_remove(f0.c_str());
  ASSERT_EQ(symlink(outside.c_str(), f0.c_str()), 0);
  Recording r;
  EXPECT_FALSE(r.load(dir, &err));
  EXPECT_TRUE(contains(err, "resolves (through a symlink) to")) << err;
  EXPECT_FALSE(path_inside(dir, "tensors/tensor-00000.f32", &why));
  // a symlink inside
  g_remove(f0.c_str());
  write_synth(s, dir, true);
  g_mkdir_with_parents((dir + "/store").c_str(), 0755);
  ASSERT_EQ(g_rename(f0.c_str(), (dir + "/store/t0.f32").c_str()), 0);
  ASSERT_EQ(symlink("../store/t0.f32", f0.c_str()), 0);
  EXPECT_TRUE(r.load(dir, &err)) << err;
  std::vector<uint8_t> data;
  EXPECT_TRUE(r.read_tensor(r.frames[0].tensors["tensor"], &data, &err)) << err;
  EXPECT_TRUE(path_inside(dir, "tensors/tensor-00000.f32", &why));
  EXPECT_TRUE(path_inside(dir, "not/there/yet.f32", &why));  // missing files are reported elsewhere
  EXPECT_FALSE(path_inside(dir, "", &why));
}

/* ---- comparison of recordings ----------------------------------------------------------- */

// Writes two synthetic sets to tmp/a (full tensors) and tmp/b (full or digests only) and loads
// them back. Call through ASSERT_NO_FATAL_FAILURE.
void write_and_load_pair(const TempDir& tmp, Synth& a, Synth& b, bool b_full, Recording* ra, Recording* rb) {
  write_synth(a, tmp.path() + "/a", true);
  write_synth(b, tmp.path() + "/b", b_full);
  std::string err;
  ASSERT_TRUE(ra->load(tmp.path() + "/a", &err)) << err;
  ASSERT_TRUE(rb->load(tmp.path() + "/b", &err)) << err;
}

TEST(RegressCompare, IdenticalSetsPass) {
  TempDir tmp;
  Synth a = make_synth(5, 300), b = make_synth(5, 300);
  Recording ra, rb;
  ASSERT_NO_FATAL_FAILURE(write_and_load_pair(tmp, a, b, true, &ra, &rb));
  Comparison cmp("compare", "A", "B", CompareOptions());
  cmp.compare_manifests(ra.manifest, rb.manifest);
  cmp.compare_frame_counts(ra.manifest, rb.manifest);
  compare_recordings(ra, rb, &cmp);
  EXPECT_EQ(cmp.exit_code(), 0) << cmp.render(true, 0);
  EXPECT_TRUE(contains(cmp.render(false, 20), "RESULT: PASS")) << cmp.render(false, 20);
}

TEST(RegressCompare, PerturbedSetReportsMaxAbsDiffAndFirstFrame) {
  TempDir tmp;
  Synth a = make_synth(6, 300), b = make_synth(6, 300);
  b.tensors[3][17] += 0.25f;
  b.tensors[4][40] -= 0.0625f;
  b.matches[4][0].sub_x += 0.75;
  b.matches[4][0].score += 0.002;
  Recording ra, rb;
  ASSERT_NO_FATAL_FAILURE(write_and_load_pair(tmp, a, b, true, &ra, &rb));

  Comparison exact("compare", "A", "B", CompareOptions());
  compare_recordings(ra, rb, &exact);
  const std::string rep = exact.render(false, 20);
  EXPECT_EQ(exact.exit_code(), 1) << rep;
  EXPECT_EQ(exact.failing_frames(), 2u);
  EXPECT_TRUE(contains(rep, "max abs diff 0.25 (frame 3)")) << rep;
  EXPECT_TRUE(contains(rep, "first failing frame: 3")) << rep;
  EXPECT_TRUE(contains(rep, "max position delta 0.75 px (frame 4)")) << rep;
  EXPECT_TRUE(contains(rep, "REGRESSION: 2 of 6 frames fail")) << rep;

  CompareOptions loose;
  loose.tensor_tol = TensorTolerance{TensorTolerance::MaxAbs, 0.25};
  loose.pos_tol = 0.75;
  loose.score_tol = 0.0021;
  Comparison ok("compare", "A", "B", loose);
  compare_recordings(ra, rb, &ok);
  EXPECT_EQ(ok.exit_code(), 0) << ok.render(true, 0);

  loose.pos_tol = 0.7;
  Comparison pos("compare", "A", "B", loose);
  compare_recordings(ra, rb, &pos);
  EXPECT_EQ(pos.exit_code(), 1);
  EXPECT_TRUE(contains(pos.render(false, 20), "first failing frame: 4")) << pos.render(false, 20);
}

TEST(RegressCompare, DigestOnlyComparesExactlyAndSaysSo) {
  TempDir tmp;
  Synth a = make_synth(3, 50), b = make_synth(3, 50);
  b.tensors[1][0] += 1e-6f;
  Recording ra, rb;
  ASSERT_NO_FATAL_FAILURE(write_and_load_pair(tmp, a, b, false, &ra, &rb));
  CompareOptions opt;
  opt.tensor_tol = TensorTolerance{TensorTolerance::MaxAbs, 1.0};
  Comparison cmp("compare", "A", "B", opt);
  EXPECT_TRUE(cmp.note_digest_only(ra.manifest, rb.manifest, ra.dir, rb.dir));
  compare_recordings(ra, rb, &cmp);
  const std::string rep = cmp.render(false, 20);
  EXPECT_EQ(cmp.exit_code(), 1) << rep;
  EXPECT_TRUE(contains(rep, "TOLERANCE NOT APPLIED")) << rep;
  EXPECT_TRUE(contains(rep, "SHA-256 differs")) << rep;
  EXPECT_TRUE(contains(rep, "first failing frame: 1")) << rep;
}

TEST(RegressCompare, FrameCountMismatchIsASetupErrorAndCommonFramesAreReported) {
  TempDir tmp;
  Synth a = make_synth(5, 20), b = make_synth(3, 20);
  Recording ra, rb;
  ASSERT_NO_FATAL_FAILURE(write_and_load_pair(tmp, a, b, true, &ra, &rb));
  Comparison cmp("compare", "A", "B", CompareOptions());
  cmp.compare_frame_counts(ra.manifest, rb.manifest);
  compare_recordings(ra, rb, &cmp);
  const std::string rep = cmp.render(false, 20);
  EXPECT_EQ(cmp.exit_code(), 2) << rep;
  EXPECT_TRUE(contains(rep, "frame count differs for sink 'tensor': A has 5 frames, B has 3")) << rep;
  EXPECT_TRUE(contains(rep, "frames 3..4: only in A")) << rep;
  EXPECT_TRUE(contains(rep, "sink 'tensor' (tensor): 3 frames compared, 3 identical, 0 failing, 2 only in A")) << rep;
}

TEST(RegressCompare, SettingsAndCapsDifferencesAreNamed) {
  Synth a = make_synth(1, 8), b = make_synth(1, 8);
  // where it runs is not what it computes
  b.manifest.elements[0].properties[0].second = "cuda";
  b.manifest.sinks[1].memory = "memory:CUDAMemory";
  {
    Comparison cmp("check", "golden", "this run", CompareOptions());
    cmp.compare_manifests(a.manifest, b.manifest);
    EXPECT_FALSE(cmp.has_errors()) << cmp.render(true, 0);
  }
  b.manifest.elements[0].properties[1].second = "< (double)0.1 >";
  b.manifest.sinks[1].caps = "other/tensors, types=(string)float32, dimensions=(string)4:2:1:1";
  b.manifest.sinks[0].caps = "video/x-raw, format=(string)NV12, width=(int)64, height=(int)48";  // same luma
  Comparison cmp("check", "golden", "this run", CompareOptions());
  cmp.compare_manifests(a.manifest, b.manifest);
  const std::string rep = cmp.render(false, 20);
  EXPECT_EQ(cmp.exit_code(), 2) << rep;
  EXPECT_TRUE(contains(rep,
                       "element cudatensorize0 (cudatensorize) property 'mean': golden '< (double)0 >', "
                       "this run '< (double)0.1 >'"))
      << rep;
  EXPECT_TRUE(contains(rep, "sink 'tensor' caps field 'dimensions': golden '8:1:1:1', this run '4:2:1:1'")) << rep;
  EXPECT_FALSE(contains(rep, "caps field 'format'")) << rep;
  EXPECT_EQ(cmp.errors().size(), 2u) << rep;

  CompareOptions allow;
  allow.allow_setting_changes = true;
  Comparison allowed("check", "golden", "this run", allow);
  allowed.compare_manifests(a.manifest, b.manifest);
  EXPECT_FALSE(allowed.has_errors());
  EXPECT_TRUE(contains(allowed.render(false, 20), "allowed setting change")) << allowed.render(false, 20);

  // a missing sink is an error even when changes are allowed
  b.manifest.sinks.pop_back();
  Comparison missing("check", "golden", "this run", allow);
  missing.compare_manifests(a.manifest, b.manifest);
  EXPECT_TRUE(contains(missing.render(false, 20), "sink 'tensor' is in golden but not in this run"));
  EXPECT_EQ(missing.exit_code(), 2);
}

TEST(RegressPipeline, ClipSubstitution) {
  EXPECT_EQ(substitute_clip("filesrc location={clip} ! x", "TOKEN"), "filesrc location=TOKEN ! x");
  EXPECT_EQ(substitute_clip("filesrc location=\"{clip}\" ! y uri=file://{clip}", "T"),
            "filesrc location=\"T\" ! y uri=file://T");
  EXPECT_EQ(normalize_description("  a !\n   b  "), "a ! b");
}

TEST(RegressPipeline, ClipPathIsSetAsAPropertyByteForByte) {
  for (const std::string clip : {"/tmp/clip_\xc3\xa9.mp4", "/tmp/clip_\xe9.mp4", "/a \"b\" c\\d 'e' ! f=g.mp4"}) {
    for (const char* desc : {"filesrc location={clip} ! fakesink", "filesrc location=\"{clip}\" ! fakesink"}) {
      const std::string token = "cudaprep-regress-clip-test";
      GError* err = nullptr;
      GstElement* p = gst_parse_launch(substitute_clip(desc, token).c_str(), &err);
      ASSERT_TRUE(p) << (err ? err->message : "?");
      std::string error;
      EXPECT_EQ(apply_clip(p, token, clip, &error), 1) << desc;
      EXPECT_TRUE(error.empty()) << error;
      GstElement* src = nullptr;
      GstIterator* it = gst_bin_iterate_sources(GST_BIN(p));
      GValue v = G_VALUE_INIT;
      ASSERT_EQ(gst_iterator_next(it, &v), GST_ITERATOR_OK);
      src = GST_ELEMENT(g_value_get_object(&v));
      gchar* location = nullptr;
      g_object_get(src, "location", &location, NULL);
      EXPECT_EQ(std::string(location ? location : ""), clip) << desc;
      g_free(location);
      g_value_unset(&v);
      gst_iterator_free(it);
      gst_object_unref(p);
    }
  }
}

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

namespace {

DetRec det(const char* label, double x, double y, double w, double h, double conf = -1, const char* source = "roi") {
  DetRec d;
  d.source = source;
  d.label = label;
  d.x = x;
  d.y = y;
  d.w = w;
  d.h = h;
  if (conf >= 0) {
    d.has_confidence = true;
    d.confidence = conf;
  }
  return d;
}

DetectionsEntry dets(std::vector<DetRec> items) {
  DetectionsEntry e;
  e.items = std::move(items);
  return e;
}

bool has_reason(const DetDiff& d, const std::string& text) {
  for (const auto& f : d.failures)
    if (f.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(RegressDetections, IouAndCornerShift) {
  EXPECT_DOUBLE_EQ(box_iou(det("a", 0, 0, 10, 10), det("a", 0, 0, 10, 10)), 1.0);
  EXPECT_DOUBLE_EQ(box_iou(det("a", 0, 0, 10, 10), det("a", 5, 0, 10, 10)), 50.0 / 150.0);
  EXPECT_DOUBLE_EQ(box_iou(det("a", 0, 0, 10, 10), det("a", 20, 0, 10, 10)), 0.0);
  EXPECT_DOUBLE_EQ(corner_shift(det("a", 0, 0, 10, 10), det("a", 3, 4, 10, 10)), 5.0);
  // the bottom-right corner moves further when the box grows
  EXPECT_DOUBLE_EQ(corner_shift(det("a", 0, 0, 10, 10), det("a", 0, 0, 16, 18)), 10.0);
}

TEST(RegressDetections, PairsBestIouFirstOneToOneWithinAClass) {
  // run box 0 overlaps both reference boxes; it goes to the one it overlaps most
  const DetectionsEntry ref = dets({det("p", 0, 0, 10, 10), det("p", 4, 0, 10, 10)});
  const DetectionsEntry run = dets({det("p", 5, 0, 10, 10), det("p", 0, 0, 10, 10)});
  DetOptions opt;
  opt.iou = 0.3;
  opt.pos_tol = 1;
  const DetDiff d = diff_detections(ref, run, opt, "golden", "this run");
  ASSERT_EQ(d.pairs.size(), 2u);
  EXPECT_EQ(d.pairs[0].ref, 0u);
  EXPECT_EQ(d.pairs[0].run, 1u);
  EXPECT_EQ(d.pairs[1].ref, 1u);
  EXPECT_EQ(d.pairs[1].run, 0u);
  EXPECT_DOUBLE_EQ(d.max_shift, 1.0);
  EXPECT_TRUE(d.failures.empty()) << d.failures[0];
  // another class never pairs, however well it overlaps; a ROI meta never pairs with an ODMtd
  const DetDiff c =
      diff_detections(dets({det("p", 0, 0, 10, 10)}), dets({det("q", 0, 0, 10, 10), det("p", 0, 0, 10, 10, -1, "od")}),
                      opt, "golden", "this run");
  EXPECT_TRUE(c.pairs.empty());
  EXPECT_EQ(c.missed.size(), 1u);
  EXPECT_EQ(c.extra.size(), 2u);
  EXPECT_TRUE(has_reason(c, "missed detection p [0,0,10,10]"));
  EXPECT_TRUE(has_reason(c, "extra detection q [0,0,10,10]"));
  EXPECT_TRUE(has_reason(c, "extra detection p [0,0,10,10] (ODMtd)"));
  EXPECT_EQ(c.classes.at("od:p").n_run, 1u);
}

TEST(RegressDetections, TolerancesBoundShiftConfidenceAndCounts) {
  const DetectionsEntry ref = dets({det("p", 10, 10, 50, 50, 0.9), det("c", 100, 100, 20, 20, 0.5)});
  const DetectionsEntry run = dets({det("p", 13, 10, 50, 50, 0.8)});
  DetOptions opt;
  DetDiff d = diff_detections(ref, run, opt, "golden", "this run");
  EXPECT_TRUE(has_reason(d, "box p [10,10,50,50] moved 3 px to [13,10,50,50] (tolerance 0)"));
  EXPECT_TRUE(has_reason(d, "p [10,10,50,50] confidence 0.9 -> 0.8 (tolerance 0)"));
  EXPECT_TRUE(has_reason(d, "missed detection c [100,100,20,20]"));
  opt.pos_tol = 3;
  opt.conf_tol = 0.11;
  opt.missed = 1;
  d = diff_detections(ref, run, opt, "golden", "this run");
  EXPECT_TRUE(d.failures.empty()) << d.failures[0];
  // a confidence on one side only
  d = diff_detections(dets({det("p", 0, 0, 5, 5, 0.5)}), dets({det("p", 0, 0, 5, 5)}), opt, "golden", "this run");
  EXPECT_TRUE(has_reason(d, "p [0,0,5,5] confidence 0.5 in golden, none in this run"));
}

TEST(RegressDetections, ClassesOfPairsAndOfTheBuffer) {
  DetRec a = det("p", 0, 0, 10, 10, 0.9, "od"), b = a;
  a.classes = {{"adult", 0.7}, {"child", 0.3}};
  b.classes = {{"adult", 0.5}, {"child", 0.3}};
  DetectionsEntry ref = dets({a}), run = dets({b});
  ref.classifications = {{1, {{"outdoor", 0.95}}}};
  DetOptions opt;
  DetDiff d = diff_detections(ref, run, opt, "golden", "this run");
  EXPECT_TRUE(has_reason(d, "p [0,0,10,10] (ODMtd): class adult confidence 0.7 -> 0.5 (tolerance 0)"));
  EXPECT_TRUE(has_reason(d, "classification 0: only in golden (outdoor 0.95)"));
  b.classes = {{"senior", 0.7}, {"child", 0.3}};
  d = diff_detections(dets({a}), dets({b}), opt, "golden", "this run");
  EXPECT_TRUE(has_reason(d, "classes adult 0.7, child 0.3 in golden, senior 0.7, child 0.3 in this run"));
}

TEST(RegressDetections, JsonRoundTripAndMalformedEntries) {
  DetectionsEntry e = dets({det("person", 1, 2, 3, 4, 0.25), det("car", 5, 6, 7, 8, 0.5, "od")});
  e.items[0].params = {"detection, confidence=(double)0.25;"};
  e.items[1].classes = {{"sedan", 0.6}};
  e.classifications = {{3, {{"outdoor", 0.95}}}};
  FrameEntry f;
  f.detections["detections"] = e;
  Json parsed;
  std::string err;
  ASSERT_TRUE(Json::parse(frame_to_json(f).dump(false), &parsed, &err)) << err;
  FrameEntry back;
  ASSERT_TRUE(frame_from_json(parsed, &back, &err)) << err;
  EXPECT_EQ(frame_to_json(back).dump(false), frame_to_json(f).dump(false));
  const DetectionsEntry& b = back.detections.at("detections");
  ASSERT_EQ(b.items.size(), 2u);
  EXPECT_EQ(b.items[1].source, "od");
  EXPECT_EQ(b.items[0].params[0], "detection, confidence=(double)0.25;");
  for (
      const char* bad :
      {R"({"frame":0,"d":{"pts":0,"duration":1,"detections":[{"source":"x","class":"a","box":[0,0,1,1]}]}})",
       R"({"frame":0,"d":{"pts":0,"duration":1,"detections":[{"source":"roi","class":"a","box":[0,0,1]}]}})",
       R"({"frame":0,"d":{"pts":0,"duration":1,"detections":[{"source":"roi","class":"a","box":[0,0,1,1],"confidence":"hi"}]}})",
       R"({"frame":0,"d":{"pts":0,"duration":1,"detections":{}}})"}) {
    ASSERT_TRUE(Json::parse(bad, &parsed, &err)) << bad;
    FrameEntry x;
    err.clear();
    EXPECT_FALSE(frame_from_json(parsed, &x, &err)) << bad;
    EXPECT_NE(err.find("d: "), std::string::npos) << err;
  }
}

TEST(RegressDetections, TensorMetaTensorsByIdWithinTheTensorTolerance) {
  auto tensor = [](const char* id, std::vector<float> v) {
    MetaTensorRec t;
    t.id = id;
    t.dtype = "float32";
    t.dims = {1, v.size()};
    t.data = floats_bytes(v);
    t.bytes = t.data.size();
    t.sha256 = sha256_hex(t.data.data(), t.data.size());
    t.stats = tensor_stats(t.data.data(), t.data.size(), DType::F32);
    return t;
  };
  DetectionsEntry a, b;
  a.tensors = {tensor("scores", {0.5f, 0.25f})};
  b.tensors = {tensor("scores", {0.5f, 0.5f})};
  DetOptions opt;
  DetDiff d = diff_detections(a, b, opt, "golden", "this run");
  EXPECT_TRUE(has_reason(d, "tensor meta 'scores': tensor differs (max abs diff 0.25, tolerance exact)"));
  opt.tensor_tol.kind = TensorTolerance::MaxAbs;
  opt.tensor_tol.value = 0.25;
  EXPECT_TRUE(diff_detections(a, b, opt, "golden", "this run").failures.empty());
  b.tensors = {tensor("scores", {0.5f, 0.25f, 0.0f})};
  EXPECT_TRUE(has_reason(diff_detections(a, b, opt, "golden", "this run"),
                         "tensor meta 'scores': float32 1x2 in golden, float32 1x3 in this run"));
  b.tensors = {tensor("boxes", {0.5f, 0.25f})};
  d = diff_detections(a, b, opt, "golden", "this run");
  EXPECT_TRUE(has_reason(d, "tensor meta 'boxes': only in this run"));
  EXPECT_TRUE(has_reason(d, "tensor meta 'scores': only in golden"));
  // stored with its bytes, read back; bytes that contradict the digest are refused
  FrameEntry f;
  f.detections["detections"] = a;
  Json parsed;
  std::string err;
  ASSERT_TRUE(Json::parse(frame_to_json(f).dump(false), &parsed, &err)) << err;
  FrameEntry back;
  ASSERT_TRUE(frame_from_json(parsed, &back, &err)) << err;
  EXPECT_EQ(back.detections.at("detections").tensors.at(0).data, a.tensors[0].data);
  a.tensors[0].sha256 = std::string(64, '0');
  f.detections["detections"] = a;
  ASSERT_TRUE(Json::parse(frame_to_json(f).dump(false), &parsed, &err)) << err;
  EXPECT_FALSE(frame_from_json(parsed, &back, &err));
  EXPECT_NE(err.find("contradicts"), std::string::npos) << err;
}
