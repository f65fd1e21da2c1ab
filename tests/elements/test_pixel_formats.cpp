// The pixel-format table (kernels/common/pixel_formats.h) against GStreamer's own description of each
// format (GstVideoFormatInfo), an independent reference: planes, subsampling, pixel strides, byte
// offsets, row bytes and rows for odd sizes; and the GStreamer helpers of gst/pixel_format.h.
#include <gst/gst.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "pixel_format.h"
#include "tensorize.h"

using cudaprep::PixelFormat;
using cudaprep::PixelFormatInfo;

namespace {

const GstVideoFormatInfo* gst_info_of(const PixelFormatInfo& f) {
  const GstVideoFormat v = gst_video_format_from_string(f.name);
  EXPECT_NE(v, GST_VIDEO_FORMAT_UNKNOWN) << f.name << " is not a GStreamer format name";
  return gst_video_format_get_info(v);
}

// The components GStreamer stores in plane p.
std::vector<int> components_in_plane(const GstVideoFormatInfo* g, int p) {
  std::vector<int> comps;
  for (guint c = 0; c < GST_VIDEO_FORMAT_INFO_N_COMPONENTS(g); ++c)
    if (static_cast<int>(GST_VIDEO_FORMAT_INFO_PLANE(g, c)) == p) comps.push_back(static_cast<int>(c));
  return comps;
}

// A plane's sample group spans the most subsampled of its components (YUY2's plane 0: U and V,
// 2 x 1 pixels in 4 bytes).
TEST(PixelFormatTable, PlanesAndSubsamplingMatchGStreamer) {
  for (const PixelFormatInfo& f : cudaprep::kPixelFormats) {
    SCOPED_TRACE(f.name);
    const GstVideoFormatInfo* g = gst_info_of(f);
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(f.planes, static_cast<int>(GST_VIDEO_FORMAT_INFO_N_PLANES(g)));
    EXPECT_EQ(f.yuv, static_cast<bool>(GST_VIDEO_FORMAT_INFO_IS_YUV(g)));
    EXPECT_EQ(f.alpha >= 0, static_cast<bool>(GST_VIDEO_FORMAT_INFO_HAS_ALPHA(g)));
    EXPECT_EQ(static_cast<int>(GST_VIDEO_FORMAT_INFO_DEPTH(g, 0)), f.depth);
    for (int p = 0; p < f.planes; ++p) {
      SCOPED_TRACE("plane " + std::to_string(p));
      const std::vector<int> comps = components_in_plane(g, p);
      ASSERT_FALSE(comps.empty());
      int widest = comps.front();
      for (int c : comps)
        if (GST_VIDEO_FORMAT_INFO_W_SUB(g, c) > GST_VIDEO_FORMAT_INFO_W_SUB(g, widest)) widest = c;
      EXPECT_EQ(f.plane[p].x_sub, 1 << GST_VIDEO_FORMAT_INFO_W_SUB(g, widest));
      EXPECT_EQ(f.plane[p].y_sub, 1 << GST_VIDEO_FORMAT_INFO_H_SUB(g, widest));
      EXPECT_EQ(f.plane[p].group_bytes, GST_VIDEO_FORMAT_INFO_PSTRIDE(g, widest));
    }
    for (int p = f.planes; p < cudaprep::kMaxPlanes; ++p) EXPECT_EQ(f.plane[p].group_bytes, 0);
  }
}

// Where the YUV samples are: planes, pixel strides, byte offsets, bits (P010: 10 bits at the top
// of 16, GStreamer's shift 6).
TEST(PixelFormatTable, YuvSamplesMatchGStreamer) {
  for (const PixelFormatInfo& f : cudaprep::kPixelFormats) {
    if (!f.yuv) continue;
    SCOPED_TRACE(f.name);
    const GstVideoFormatInfo* g = gst_info_of(f);
    ASSERT_NE(g, nullptr);
    for (int c = 0; c < 3; ++c) {
      SCOPED_TRACE("component " + std::to_string(c));
      EXPECT_EQ(static_cast<int>(GST_VIDEO_FORMAT_INFO_DEPTH(g, c)), f.depth);
      EXPECT_EQ(static_cast<int>(GST_VIDEO_FORMAT_INFO_SHIFT(g, c)), 8 * f.sample_bytes - f.depth);
    }
    EXPECT_EQ(static_cast<int>(GST_VIDEO_FORMAT_INFO_PLANE(g, GST_VIDEO_COMP_Y)), 0);
    EXPECT_EQ(GST_VIDEO_FORMAT_INFO_PSTRIDE(g, GST_VIDEO_COMP_Y), f.luma_step);
    EXPECT_EQ(GST_VIDEO_FORMAT_INFO_POFFSET(g, GST_VIDEO_COMP_Y), f.y_byte);
    EXPECT_EQ(static_cast<int>(GST_VIDEO_FORMAT_INFO_PLANE(g, GST_VIDEO_COMP_U)), f.chroma_plane);
    EXPECT_EQ(static_cast<int>(GST_VIDEO_FORMAT_INFO_PLANE(g, GST_VIDEO_COMP_V)), cudaprep::v_plane(f.format));
    EXPECT_EQ(GST_VIDEO_FORMAT_INFO_PSTRIDE(g, GST_VIDEO_COMP_U), cudaprep::chroma_step(f.format));
    EXPECT_EQ(1 << GST_VIDEO_FORMAT_INFO_W_SUB(g, GST_VIDEO_COMP_U), cudaprep::chroma_x_sub(f.format));
    EXPECT_EQ(1 << GST_VIDEO_FORMAT_INFO_H_SUB(g, GST_VIDEO_COMP_U), cudaprep::chroma_y_sub(f.format));
    EXPECT_EQ(f.sample_bytes, GST_VIDEO_FORMAT_INFO_BITS(g) > 8 ? 2 : 1);
  }
}

// The byte offsets of Y, U and V against GStreamer's own unpacking of a frame whose samples are
// all different (GstVideoFormatInfo's poffset cannot be used: GStreamer 1.22 gives P010's V
// offset as 1, in 16-bit words, where its unpacker reads bytes 2 and 3).
TEST(PixelFormatTable, YuvOffsetsMatchGStreamerUnpacking) {
  for (const PixelFormatInfo& f : cudaprep::kPixelFormats) {
    if (!f.yuv) continue;
    SCOPED_TRACE(f.name);
    const int w = 4, h = 2;
    GstVideoInfo info;
    ASSERT_TRUE(gst_video_info_set_format(&info, gst_video_format_from_string(f.name), w, h));
    std::vector<uint8_t> frame(GST_VIDEO_INFO_SIZE(&info));
    for (size_t i = 0; i < frame.size(); ++i) frame[i] = uint8_t(i * 4 + 64);  // distinct, low 2 bits 0
    gpointer planes[GST_VIDEO_MAX_PLANES] = {};
    for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES(&info); ++p)
      planes[p] = frame.data() + GST_VIDEO_INFO_PLANE_OFFSET(&info, p);
    // Row 0 unpacked to AYUV (8-bit formats) or AYUV64 (others), exact (no range extension).
    const bool wide = f.sample_bytes == 2;
    std::vector<uint16_t> unpacked16(4 * w);
    std::vector<uint8_t> unpacked8(4 * w);
    info.finfo->unpack_func(info.finfo, GST_VIDEO_PACK_FLAG_TRUNCATE_RANGE,
                            wide ? static_cast<gpointer>(unpacked16.data()) : static_cast<gpointer>(unpacked8.data()),
                            planes, info.stride, 0, 0, w);
    auto unpacked = [&](int x, int comp) {
      return wide ? int(unpacked16[4 * x + comp]) : int(unpacked8[4 * x + comp]);
    };
    auto sample = [&](int plane, int64_t byte) {
      const uint8_t* q = frame.data() + GST_VIDEO_INFO_PLANE_OFFSET(&info, plane) + byte;
      return wide ? int(q[0] | (q[1] << 8)) : int(q[0]);
    };
    for (int x = 0; x < w; ++x) {
      SCOPED_TRACE("x " + std::to_string(x));
      const int cx = x / cudaprep::chroma_x_sub(f.format);
      EXPECT_EQ(sample(0, int64_t(x) * f.luma_step + f.y_byte), unpacked(x, 1));
      EXPECT_EQ(sample(f.chroma_plane, int64_t(cx) * cudaprep::chroma_step(f.format) + f.u_byte), unpacked(x, 2));
      EXPECT_EQ(sample(cudaprep::v_plane(f.format), int64_t(cx) * cudaprep::chroma_step(f.format) + f.v_byte),
                unpacked(x, 3));
    }
  }
}

TEST(PixelFormatTable, PackedOffsetsMatchGStreamer) {
  for (const PixelFormatInfo& f : cudaprep::kPixelFormats) {
    SCOPED_TRACE(f.name);
    const GstVideoFormatInfo* g = gst_info_of(f);
    ASSERT_NE(g, nullptr);
    if (f.yuv) {
      EXPECT_EQ(f.packed_bytes, 0);
      EXPECT_EQ(f.r, -1);
      continue;
    }
    ASSERT_EQ(f.planes, 1);
    EXPECT_EQ(f.packed_bytes, GST_VIDEO_FORMAT_INFO_PSTRIDE(g, 0));
    std::set<int> used;
    if (GST_VIDEO_FORMAT_INFO_IS_GRAY(g)) {
      EXPECT_EQ(GST_VIDEO_FORMAT_INFO_POFFSET(g, 0), 0);
      EXPECT_EQ(f.r, 0);
      EXPECT_EQ(f.g, 0);
      EXPECT_EQ(f.b, 0);
      used.insert(0);
    } else {
      ASSERT_TRUE(GST_VIDEO_FORMAT_INFO_IS_RGB(g));
      EXPECT_EQ(f.r, GST_VIDEO_FORMAT_INFO_POFFSET(g, GST_VIDEO_COMP_R));
      EXPECT_EQ(f.g, GST_VIDEO_FORMAT_INFO_POFFSET(g, GST_VIDEO_COMP_G));
      EXPECT_EQ(f.b, GST_VIDEO_FORMAT_INFO_POFFSET(g, GST_VIDEO_COMP_B));
      used = {f.r, f.g, f.b};
    }
    if (f.alpha >= 0) {
      EXPECT_EQ(f.alpha, GST_VIDEO_FORMAT_INFO_POFFSET(g, GST_VIDEO_COMP_A));
      used.insert(f.alpha);
    }
    // The padding byte is the one byte of the pixel that no component uses.
    std::set<int> unused;
    for (int byte = 0; byte < f.packed_bytes; ++byte)
      if (!used.count(byte)) unused.insert(byte);
    if (f.padding >= 0)
      EXPECT_EQ(unused, std::set<int>{f.padding});
    else
      EXPECT_TRUE(unused.empty());
  }
}

TEST(PixelFormatTable, RowBytesAndRowsMatchGStreamerForOddSizes) {
  for (const PixelFormatInfo& f : cudaprep::kPixelFormats) {
    SCOPED_TRACE(f.name);
    const GstVideoFormatInfo* g = gst_info_of(f);
    ASSERT_NE(g, nullptr);
    for (int size : {1, 2, 3, 5, 17, 641, 1081, 1921}) {
      for (int p = 0; p < f.planes; ++p) {
        SCOPED_TRACE("size " + std::to_string(size) + " plane " + std::to_string(p));
        int64_t gst_row_bytes = 0;
        for (int c : components_in_plane(g, p))  // the widest component row of the plane
          gst_row_bytes = std::max<int64_t>(gst_row_bytes, int64_t(GST_VIDEO_FORMAT_INFO_SCALE_WIDTH(g, c, size)) *
                                                               GST_VIDEO_FORMAT_INFO_PSTRIDE(g, c));
        EXPECT_EQ(cudaprep::plane_row_bytes(f.format, p, size), gst_row_bytes);
        const int c = components_in_plane(g, p).front();
        EXPECT_EQ(cudaprep::plane_rows(f.format, p, size), GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT(g, c, size));
      }
      EXPECT_EQ(cudaprep::plane_row_bytes(f.format, f.planes, size), 0);
    }
  }
}

// The GstVideoInfo helpers the elements copy planes with: the row fits in GStreamer's stride and
// equals GStreamer's component width times pixel stride.
TEST(PixelFormatTable, VideoInfoHelpersMatchGStreamer) {
  for (const PixelFormatInfo& f : cudaprep::kPixelFormats) {
    SCOPED_TRACE(f.name);
    const GstVideoFormat v = gst_video_format_from_string(f.name);
    for (int w : {1, 3, 640, 1921})
      for (int h : {1, 5, 1081}) {
        GstVideoInfo info;
        ASSERT_TRUE(gst_video_info_set_format(&info, v, w, h));
        for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES(&info); ++p) {
          SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + " plane " + std::to_string(p));
          const int c = components_in_plane(info.finfo, static_cast<int>(p)).front();
          gsize row = 0, rows = 0, widest = 0;  // the widest component row of the plane
          for (int k : components_in_plane(info.finfo, static_cast<int>(p)))
            widest =
                std::max(widest, gsize(GST_VIDEO_INFO_COMP_WIDTH(&info, k)) * GST_VIDEO_INFO_COMP_PSTRIDE(&info, k));
          ASSERT_TRUE(gst_cuda_prep_plane_size(&info, p, &row, &rows));
          EXPECT_EQ(row, widest);
          EXPECT_LE(row, gsize(GST_VIDEO_INFO_PLANE_STRIDE(&info, p)));
          EXPECT_EQ(rows, gsize(GST_VIDEO_INFO_COMP_HEIGHT(&info, c)));
        }
      }
  }
  GstVideoInfo other;
  ASSERT_TRUE(gst_video_info_set_format(&other, GST_VIDEO_FORMAT_AYUV, 64, 48));
  gsize row = 1, rows = 1;
  EXPECT_FALSE(gst_cuda_prep_plane_size(&other, 0, &row, &rows));
  EXPECT_EQ(row, 0u);
  EXPECT_EQ(rows, 0u);
}

// Exactly the table's formats map, each to its own entry.
TEST(PixelFormatTable, EveryGStreamerFormatMapsByName) {
  guint n = 0;
  const GstVideoFormat* all = gst_video_formats_raw(&n);
  ASSERT_GT(n, 0u);
  int mapped = 0;
  for (guint i = 0; i < n; ++i) {
    PixelFormat f = PixelFormat::GRAY8;
    const bool ok = gst_cuda_prep_pixel_format_from_video(all[i], &f);
    const char* name = gst_video_format_to_string(all[i]);
    PixelFormat by_name = PixelFormat::GRAY8;
    EXPECT_EQ(ok, cudaprep::pixel_format_from_name(name, &by_name)) << name;
    if (!ok) continue;
    ++mapped;
    EXPECT_STREQ(cudaprep::pixel_format_name(f), name);
    EXPECT_EQ(f, by_name);
  }
  EXPECT_EQ(mapped, cudaprep::kPixelFormatCount);
  PixelFormat f;
  EXPECT_FALSE(gst_cuda_prep_pixel_format_from_video(GST_VIDEO_FORMAT_UNKNOWN, &f));
  EXPECT_FALSE(gst_cuda_prep_pixel_format_from_video(GST_VIDEO_FORMAT_ENCODED, &f));
}

// The caps built from the table: every format, CUDA memory first, sizes up to the source limit.
TEST(PixelFormatTable, CapsHelpersListTheTable) {
  const char* common =
      ", format=(string){ NV12, I420, BGR, RGB, BGRx, RGBx, BGRA, RGBA, GRAY8, YUY2, UYVY, NV21, P010_10LE }, "
      "width=(int)[ 1, 32768 ], height=(int)[ 1, 32768 ], framerate=(fraction)[ 0/1, 2147483647/1 ]";
  GstCaps* expected =
      gst_caps_from_string((std::string("video/x-raw(memory:CUDAMemory)") + common + "; video/x-raw" + common).c_str());
  GstCaps* built = gst_cuda_prep_video_template_caps();
  EXPECT_TRUE(gst_caps_is_strictly_equal(expected, built)) << gst_caps_to_string(built);
  gst_caps_unref(expected);
  gst_caps_unref(built);

  GValue list = G_VALUE_INIT;
  gst_cuda_prep_video_formats_value(&list);
  ASSERT_EQ(gst_value_list_get_size(&list), guint(cudaprep::kPixelFormatCount));
  for (int i = 0; i < cudaprep::kPixelFormatCount; ++i)
    EXPECT_STREQ(g_value_get_string(gst_value_list_get_value(&list, i)), cudaprep::kPixelFormats[i].name);
  g_value_unset(&list);
}

TEST(PixelFormatTable, InvalidFormatHasNoPlanes) {
  const PixelFormat bad = static_cast<PixelFormat>(cudaprep::kPixelFormatCount);
  EXPECT_FALSE(cudaprep::is_valid_pixel_format(bad));
  EXPECT_EQ(cudaprep::plane_count(bad), 0);
  EXPECT_EQ(cudaprep::plane_row_bytes(bad, 0, 64), 0);
  EXPECT_STREQ(cudaprep::pixel_format_name(bad), "unknown");
  cudaprep::TensorizeConfig c;
  c.format = bad;
  c.src_width = c.src_height = 8;
  cudaprep::TensorizePlan plan;
  EXPECT_EQ(cudaprep::make_tensorize_plan(c, &plan).message(),
            "unknown pixel format (" + std::to_string(cudaprep::kPixelFormatCount) + ")");
}

}  // namespace

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
