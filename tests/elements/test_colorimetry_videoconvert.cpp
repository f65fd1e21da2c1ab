// YUV colour conversion of cudatensorize (CPU path: NV12, I420, NV21, YUY2, UYVY, P010) against
// GStreamer's videoconvert,
// an independent implementation, for every colorimetry the element maps (BT.601, BT.709,
// BT.2020; limited and full range). Frames are made of flat 16x16 blocks of many YUV colours, so
// chroma interpolation does not matter in block interiors and only the matrix and range do.
// videoconvert is asked for 16-bit RGB so it takes its more precise path; it still expands 8-bit
// codes as x*257 while its offsets scale by 256, a gain error of up to ~2 grey levels at the
// top of the range. Results must agree within 2.5 grey levels; a wrong matrix or range is off
// by more than 10 (checked below), so the comparison tells them apart.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "harness_util.h"

using test::video_caps;

namespace {

const int kBlock = 16, kBlocksX = 12, kBlocksY = 10;
const int W = kBlock * kBlocksX, H = kBlock * kBlocksY;

// Y, U, V of block b: spread over the legal (and, for full range, the whole) code range.
void block_yuv(int b, bool full, uint8_t* y, uint8_t* u, uint8_t* v) {
  const int lo = full ? 0 : 16, y_hi = full ? 255 : 235, c_hi = full ? 255 : 240;
  *y = (uint8_t)(lo + (b * 37) % (y_hi - lo + 1));
  *u = (uint8_t)(lo + (b * 53 + 11) % (c_hi - lo + 1));
  *v = (uint8_t)(lo + (b * 29 + 71) % (c_hi - lo + 1));
}

// The blocks in `format`: drawn in AYUV, then repacked by videoconvert (same colorimetry: no
// colour arithmetic, only subsampling and packing; P010 gets the codes scaled to 10 bits).
GstBuffer* blocks_frame(const char* format, const char* colorimetry, bool full) {
  GstBuffer* ayuv = gst_buffer_new_allocate(nullptr, (size_t)W * H * 4, nullptr);
  GstMapInfo m;
  gst_buffer_map(ayuv, &m, GST_MAP_WRITE);
  for (int yy = 0; yy < H; yy++)
    for (int xx = 0; xx < W; xx++) {
      uint8_t* px = m.data + ((size_t)yy * W + xx) * 4;
      px[0] = 255;
      block_yuv((yy / kBlock) * kBlocksX + xx / kBlock, full, &px[1], &px[2], &px[3]);
    }
  gst_buffer_unmap(ayuv, &m);
  GstHarness* pack = gst_harness_new_parse("videoconvert dither=none chroma-resampler=nearest");
  const std::string extra = std::string(",colorimetry=") + colorimetry;
  gst_harness_set_src_caps_str(pack, video_caps("AYUV", W, H, extra.c_str()).c_str());
  gst_harness_set_sink_caps_str(pack, video_caps(format, W, H, extra.c_str()).c_str());
  GstBuffer* out = gst_harness_push_and_pull(pack, ayuv);
  gst_harness_teardown(pack);
  return out;
}

struct Case {
  const char* format;
  const char* colorimetry;
  bool full;
};

class ColorimetryVsVideoconvert : public ::testing::TestWithParam<Case> {};

TEST_P(ColorimetryVsVideoconvert, FlatColoursAgree) {
  const Case& c = GetParam();
  std::string caps = video_caps(c.format, W, H, (std::string(",colorimetry=") + c.colorimetry).c_str());

  GstHarness* vc = gst_harness_new_parse("videoconvert dither=none chroma-resampler=nearest");
  gst_harness_set_src_caps_str(vc, caps.c_str());
  gst_harness_set_sink_caps_str(vc, video_caps("ARGB64", W, H).c_str());
  GstBuffer* rgb = gst_harness_push_and_pull(vc, blocks_frame(c.format, c.colorimetry, c.full));
  ASSERT_NE(rgb, nullptr);

  std::string props = "cudatensorize backend=cpu resize-mode=stretch scale=1 layout=nhwc width=" + std::to_string(W) +
                      " height=" + std::to_string(H);
  GstHarness* tz = gst_harness_new_parse(props.c_str());
  gst_harness_set_src_caps_str(tz, caps.c_str());
  GstBuffer* tensor = gst_harness_push_and_pull(tz, blocks_frame(c.format, c.colorimetry, c.full));
  ASSERT_NE(tensor, nullptr);

  GstVideoInfo info;
  gst_video_info_set_format(&info, GST_VIDEO_FORMAT_ARGB64, W, H);
  GstVideoFrame frame;
  ASSERT_TRUE(gst_video_frame_map(&frame, &info, rgb, GST_MAP_READ));
  GstMapInfo tm;
  ASSERT_TRUE(gst_buffer_map(tensor, &tm, GST_MAP_READ));
  const float* t = reinterpret_cast<const float*>(tm.data);
  // 16 bits per channel (A, R, G, B): videoconvert then uses its 16-bit matrix path; 8-bit
  // output goes through a coarse fixed-point path that is off by up to ~6 levels.
  const uint8_t* px8 = static_cast<const uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, 0));
  const int stride = GST_VIDEO_FRAME_PLANE_STRIDE(&frame, 0);
  double worst = 0;
  int compared = 0;
  for (int yy = 0; yy < H; yy++)
    for (int xx = 0; xx < W; xx++) {
      const int bx = xx % kBlock, by = yy % kBlock;
      if (bx < 2 || by < 2 || bx >= kBlock - 2 || by >= kBlock - 2) continue;  // block interiors only
      for (int ch = 0; ch < 3; ch++) {
        const uint16_t* p16 = reinterpret_cast<const uint16_t*>(px8 + (size_t)yy * stride) + xx * 4;
        const double ref = p16[1 + ch] / 257.0;
        double d = std::fabs(t[((size_t)yy * W + xx) * 3 + ch] - ref);
        if (d > worst && getenv("DEBUG_CM")) {
          uint8_t y, u, v;
          block_yuv((yy / kBlock) * kBlocksX + xx / kBlock, c.full, &y, &u, &v);
          printf("yuv %d %d %d ch %d ours %.3f vc %.3f\n", y, u, v, ch, t[((size_t)yy * W + xx) * 3 + ch], ref);
        }
        worst = std::max(worst, d);
        compared++;
      }
    }
  EXPECT_GT(compared, 10000);
  EXPECT_LE(worst, 2.5) << c.format << " " << c.colorimetry;
  gst_buffer_unmap(tensor, &tm);
  gst_video_frame_unmap(&frame);
  gst_buffer_unref(rgb);
  gst_buffer_unref(tensor);
  gst_harness_teardown(vc);
  gst_harness_teardown(tz);
}

INSTANTIATE_TEST_SUITE_P(
    All, ColorimetryVsVideoconvert,
    ::testing::Values(Case{"NV12", "bt601", false}, Case{"NV12", "bt709", false}, Case{"NV12", "bt2020", false},
                      Case{"NV12", "1:4:0:0", true} /* BT.601 full range */,
                      Case{"NV12", "1:3:0:0", true} /* BT.709 full range */, Case{"I420", "bt709", false},
                      Case{"I420", "bt601", false}, Case{"YUY2", "bt601", false}, Case{"UYVY", "bt709", false},
                      Case{"NV21", "bt709", false}, Case{"YUY2", "1:4:0:0", true}, Case{"P010_10LE", "bt2020", false},
                      Case{"P010_10LE", "bt709", false}, Case{"P010_10LE", "1:3:0:0", true}),
    [](const auto& i) {
      std::string n = std::string(i.param.format) + "_" + i.param.colorimetry + (i.param.full ? "_full" : "");
      for (auto& ch : n)
        if (!isalnum((unsigned char)ch)) ch = '_';
      return n;
    });

// A wrong matrix must fail this comparison: BT.601 frames read as BT.709 differ by far more
// than a grey level somewhere, so the test above can tell matrices apart.
TEST(ColorimetryVsVideoconvertSanity, MatricesAreDistinguishable) {
  std::string caps601 = video_caps("NV12", W, H, ",colorimetry=bt601");
  std::string caps709 = video_caps("NV12", W, H, ",colorimetry=bt709");
  std::string props = "cudatensorize backend=cpu resize-mode=stretch scale=1 width=" + std::to_string(W) +
                      " height=" + std::to_string(H);
  GstHarness* a = gst_harness_new_parse(props.c_str());
  GstHarness* b = gst_harness_new_parse(props.c_str());
  gst_harness_set_src_caps_str(a, caps601.c_str());
  gst_harness_set_src_caps_str(b, caps709.c_str());
  GstBuffer* ta = gst_harness_push_and_pull(a, blocks_frame("NV12", "bt601", false));
  GstBuffer* tb = gst_harness_push_and_pull(b, blocks_frame("NV12", "bt601", false));
  GstMapInfo ma, mb;
  gst_buffer_map(ta, &ma, GST_MAP_READ);
  gst_buffer_map(tb, &mb, GST_MAP_READ);
  double worst = 0;
  for (size_t i = 0; i < ma.size / 4; i++)
    worst = std::max(worst, (double)std::fabs(((float*)ma.data)[i] - ((float*)mb.data)[i]));
  EXPECT_GT(worst, 10.0);
  gst_buffer_unmap(ta, &ma);
  gst_buffer_unmap(tb, &mb);
  gst_buffer_unref(ta);
  gst_buffer_unref(tb);
  gst_harness_teardown(a);
  gst_harness_teardown(b);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new test::GstEnv);
  return RUN_ALL_TESTS();
}
