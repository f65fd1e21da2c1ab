// GstHarness tests of cudatemplatematch on the CPU path: ROI metas, bus messages, drawing,
// template sources (file and rect, changed while playing) and every bad input.
#include <gst/app/gstappsrc.h>
#include <gst/video/gstvideometa.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "cuda_device.h"
#include "harness_util.h"
#include "image_files.h"
#include "templatematch.h"

using test::BusWatch;
using test::video_caps;

namespace {

// A smooth random texture (so every window has variance) in GRAY8, W x H.
std::vector<uint8_t> texture(int w, int h, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> g((size_t)w * h);
  for (auto& v : g) v = (uint8_t)(rng() % 256);
  return g;
}

// BGR frame whose three channels are equal, so the gray the element computes is `gray`.
GstBuffer* bgr_from_gray(const std::vector<uint8_t>& gray, int w, int h) {
  GstBuffer* b = gst_buffer_new_allocate(nullptr, (size_t)w * h * 3, nullptr);
  GstMapInfo m;
  gst_buffer_map(b, &m, GST_MAP_WRITE);
  for (size_t i = 0; i < gray.size(); i++) m.data[3 * i] = m.data[3 * i + 1] = m.data[3 * i + 2] = gray[i];
  gst_buffer_unmap(b, &m);
  return b;
}

GstBuffer* nv12_from_gray(const std::vector<uint8_t>& gray, int w, int h) {
  const size_t y = (size_t)w * h, uv = (size_t)((w + 1) / 2) * 2 * ((h + 1) / 2);
  GstBuffer* b = gst_buffer_new_allocate(nullptr, y + uv, nullptr);
  GstMapInfo m;
  gst_buffer_map(b, &m, GST_MAP_WRITE);
  memcpy(m.data, gray.data(), y);
  memset(m.data + y, 128, uv);
  gst_buffer_unmap(b, &m);
  return b;
}

std::vector<uint8_t> patch(const std::vector<uint8_t>& g, int w, int x, int y, int pw, int ph) {
  std::vector<uint8_t> p((size_t)pw * ph);
  for (int r = 0; r < ph; r++) memcpy(&p[(size_t)r * pw], &g[(size_t)(y + r) * w + x], pw);
  return p;
}

// Writes a gray image as a binary PGM (GStreamer decodes it with its own plugins).
std::string write_pgm(const std::vector<uint8_t>& g, int w, int h, const char* name) {
  std::string path = std::string(g_get_tmp_dir()) + "/cudaprep-test-" + std::to_string(getpid()) + "-" + name;
  std::ofstream f(path, std::ios::binary);
  f << "P5\n" << w << " " << h << "\n255\n";
  f.write(reinterpret_cast<const char*>(g.data()), (std::streamsize)g.size());
  return path;
}

// Writes a gray image as PNG through GStreamer's pngenc.
std::string write_png(const std::vector<uint8_t>& g, int w, int h, const char* name) {
  std::string path = std::string(g_get_tmp_dir()) + "/cudaprep-test-" + std::to_string(getpid()) + "-" + name;
  GstHarness* enc = gst_harness_new_parse("pngenc");
  gst_harness_set_src_caps_str(enc, video_caps("GRAY8", w, h).c_str());
  GstBuffer* in = gst_buffer_new_allocate(nullptr, g.size(), nullptr);
  gst_buffer_fill(in, 0, g.data(), g.size());
  // pngenc wants 4-byte aligned rows for GRAY8: describe them with a video meta
  GstBuffer* out = gst_harness_push_and_pull(enc, in);
  GstMapInfo m;
  gst_buffer_map(out, &m, GST_MAP_READ);
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(m.data), (std::streamsize)m.size);
  gst_buffer_unmap(out, &m);
  gst_buffer_unref(out);
  gst_harness_teardown(enc);
  return path;
}

struct RoiMatch {
  int x, y, w, h;
  double score, sub_x, sub_y;
};

std::vector<RoiMatch> rois(GstBuffer* b) {
  std::vector<RoiMatch> out;
  gpointer state = nullptr;
  while (GstMeta* meta = gst_buffer_iterate_meta_filtered(b, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) {
    auto* roi = reinterpret_cast<GstVideoRegionOfInterestMeta*>(meta);
    EXPECT_STREQ(g_quark_to_string(roi->roi_type), "template-match");
    GstStructure* p = gst_video_region_of_interest_meta_get_param(roi, "template-match");
    RoiMatch m{(int)roi->x, (int)roi->y, (int)roi->w, (int)roi->h, 0, 0, 0};
    EXPECT_NE(p, nullptr);
    if (p) {
      gst_structure_get_double(p, "score", &m.score);
      gst_structure_get_double(p, "x", &m.sub_x);
      gst_structure_get_double(p, "y", &m.sub_y);
    }
    out.push_back(m);
  }
  return out;
}

GstHarness* new_match(const std::string& props) {
  return gst_harness_new_parse(("cudatemplatematch backend=cpu " + props).c_str());
}

const int W = 160, H = 120;

}  // namespace

TEST(TemplateMatchElement, FindsTemplateFromFileAndReportsEverywhere) {
  auto g = texture(W, H, 1);
  auto t = patch(g, W, 70, 40, 24, 20);
  std::string pgm = write_pgm(t, 24, 20, "t.pgm");
  GstHarness* h = new_match("template-location=" + pgm + " draw=true thickness=1 color=0xff0000ff");
  BusWatch bus(h);
  gst_harness_set_src_caps_str(h, video_caps("BGR", W, H).c_str());
  GstBuffer* in = bgr_from_gray(g, W, H);
  GST_BUFFER_PTS(in) = 5 * GST_SECOND;
  GstBuffer* out = gst_harness_push_and_pull(h, in);
  ASSERT_NE(out, nullptr);
  auto m = rois(out);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].x, 70);
  EXPECT_EQ(m[0].y, 40);
  EXPECT_EQ(m[0].w, 24);
  EXPECT_EQ(m[0].h, 20);
  EXPECT_NEAR(m[0].score, 1.0, 1e-9);
  EXPECT_NEAR(m[0].sub_x, 70.0, 0.5);
  EXPECT_NEAR(m[0].sub_y, 40.0, 0.5);

  // the outline (1 px, blue in BGR) is drawn on the box edge, the inside is untouched
  GstMapInfo map;
  gst_buffer_map(out, &map, GST_MAP_READ);
  const uint8_t* corner = map.data + (40 * W + 70) * 3;
  EXPECT_EQ(corner[0], 255);
  EXPECT_EQ(corner[1], 0);
  EXPECT_EQ(corner[2], 0);
  const uint8_t* inside = map.data + (45 * W + 75) * 3;
  EXPECT_EQ(inside[0], g[45 * W + 75]);
  gst_buffer_unmap(out, &map);

  // the element message
  GstMessage* msg = gst_bus_pop_filtered(bus.bus(), GST_MESSAGE_ELEMENT);
  ASSERT_NE(msg, nullptr);
  const GstStructure* s = gst_message_get_structure(msg);
  EXPECT_STREQ(gst_structure_get_name(s), "template-match");
  guint64 ts = 0;
  gst_structure_get_uint64(s, "timestamp", &ts);
  EXPECT_EQ(ts, 5 * GST_SECOND);
  const GValue* list = gst_structure_get_value(s, "matches");
  ASSERT_EQ(gst_value_list_get_size(list), 1u);
  const GstStructure* ms = gst_value_get_structure(gst_value_list_get_value(list, 0));
  int x = -1, y = -1, w = 0, hh = 0;
  double score = 0;
  gst_structure_get(ms, "x", G_TYPE_INT, &x, "y", G_TYPE_INT, &y, "width", G_TYPE_INT, &w, "height", G_TYPE_INT, &hh,
                    "score", G_TYPE_DOUBLE, &score, NULL);
  EXPECT_EQ(x, 70);
  EXPECT_EQ(y, 40);
  EXPECT_EQ(w, 24);
  EXPECT_EQ(hh, 20);
  EXPECT_NEAR(score, 1.0, 1e-9);
  gst_message_unref(msg);
  gst_buffer_unref(out);
  gst_harness_teardown(h);
  remove(pgm.c_str());
}

TEST(TemplateMatchElement, PngTemplateOnNv12AndDrawOff) {
  auto g = texture(W, H, 2);
  auto t = patch(g, W, 11, 77, 32, 32);
  std::string png = write_png(t, 32, 32, "t.png");
  GstHarness* h = new_match("template-location=" + png + " draw=false");
  gst_harness_set_src_caps_str(h, video_caps("NV12", W, H).c_str());
  GstBuffer* in = nv12_from_gray(g, W, H);
  std::vector<uint8_t> before(gst_buffer_get_size(in));
  gst_buffer_extract(in, 0, before.data(), before.size());
  GstBuffer* out = gst_harness_push_and_pull(h, in);
  ASSERT_NE(out, nullptr);
  auto m = rois(out);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].x, 11);
  EXPECT_EQ(m[0].y, 77);
  std::vector<uint8_t> after(gst_buffer_get_size(out));
  gst_buffer_extract(out, 0, after.data(), after.size());
  EXPECT_EQ(before, after) << "draw=false must leave the frame untouched";
  gst_buffer_unref(out);
  gst_harness_teardown(h);
  remove(png.c_str());
}

// post-messages: one "template-match" message a frame by default; switched off while playing, the
// next frames post none and still carry their matches as ROI metas.
TEST(TemplateMatchElement, PostMessagesOffKeepsTheMetas) {
  auto g = texture(W, H, 4);
  GstHarness* h = new_match("template-rect=\"<50,30,20,16>\" draw=false");
  BusWatch bus(h);
  gst_harness_set_src_caps_str(h, video_caps("BGR", W, H).c_str());
  auto push_frame = [&]() {
    GstBuffer* out = gst_harness_push_and_pull(h, bgr_from_gray(g, W, H));
    EXPECT_NE(out, nullptr);
    std::vector<RoiMatch> m = out ? rois(out) : std::vector<RoiMatch>{};
    if (out) gst_buffer_unref(out);
    return m;
  };
  for (int i = 0; i < 2; i++) ASSERT_EQ(push_frame().size(), 1u);
  EXPECT_EQ(bus.take(GST_MESSAGE_ELEMENT).size(), 2u) << "one message a frame by default";
  g_object_set(test::element_of(h, "cudatemplatematch"), "post-messages", FALSE, NULL);
  for (int i = 0; i < 3; i++) {
    auto m = push_frame();
    ASSERT_EQ(m.size(), 1u);
    EXPECT_EQ(m[0].x, 50);
    EXPECT_EQ(m[0].y, 30);
  }
  EXPECT_EQ(bus.take(GST_MESSAGE_ELEMENT).size(), 0u) << "post-messages=false posts none";
  g_object_set(test::element_of(h, "cudatemplatematch"), "post-messages", TRUE, NULL);
  ASSERT_EQ(push_frame().size(), 1u);
  EXPECT_EQ(bus.take(GST_MESSAGE_ELEMENT).size(), 1u);
  gst_harness_teardown(h);
}

// The formats cameras and decoders give (made from one BGR picture by GStreamer's videoconvert)
// find the match found on the BGR picture: the template cut from frame 1, found in frame 2
// shifted by (9, 6), at the same sub-pixel position with about the same score (luma against
// cvtColor's gray differs only by rounding and the limited range, to which the score is blind).
TEST(TemplateMatchElement, CameraFormatsFindTheMatchOfBgr) {
  const int dx = 9, dy = 6;
  std::vector<uint8_t> bgr_a((size_t)W * H * 3), bgr_b((size_t)W * H * 3);
  std::mt19937 rng(12);
  for (auto& v : bgr_a) v = (uint8_t)(rng() % 256);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      for (int c = 0; c < 3; c++)
        bgr_b[((size_t)y * W + x) * 3 + c] = bgr_a[((size_t)((y - dy + H) % H) * W + (x - dx + W) % W) * 3 + c];
  auto in_format = [&](const std::vector<uint8_t>& bgr, const char* format) {
    GstBuffer* b = gst_buffer_new_allocate(nullptr, bgr.size(), nullptr);
    gst_buffer_fill(b, 0, bgr.data(), bgr.size());
    if (strcmp(format, "BGR") == 0) return b;
    GstHarness* conv =
        gst_harness_new_parse((std::string("videoconvert ! capsfilter caps=video/x-raw,format=") + format).c_str());
    gst_harness_set_src_caps_str(conv, video_caps("BGR", W, H).c_str());
    GstBuffer* out = gst_harness_push_and_pull(conv, b);
    gst_harness_teardown(conv);
    return out;
  };
  auto match = [&](const char* format) {
    GstHarness* h = new_match("template-rect=<40,30,24,20> draw=false threshold=0.5");
    gst_harness_set_src_caps_str(h, video_caps(format, W, H).c_str());
    GstBuffer* first = gst_harness_push_and_pull(h, in_format(bgr_a, format));
    EXPECT_NE(first, nullptr);
    if (first) gst_buffer_unref(first);
    GstBuffer* out = gst_harness_push_and_pull(h, in_format(bgr_b, format));
    std::vector<RoiMatch> m = out ? rois(out) : std::vector<RoiMatch>();
    if (out) gst_buffer_unref(out);
    gst_harness_teardown(h);
    return m;
  };
  const std::vector<RoiMatch> bgr = match("BGR");
  ASSERT_EQ(bgr.size(), 1u);
  EXPECT_EQ(bgr[0].x, 40 + dx);
  EXPECT_EQ(bgr[0].y, 30 + dy);
  for (const char* format : {"YUY2", "UYVY", "NV21", "P010_10LE", "NV12", "I420"}) {
    SCOPED_TRACE(format);
    const std::vector<RoiMatch> m = match(format);
    ASSERT_EQ(m.size(), 1u);
    EXPECT_EQ(m[0].x, bgr[0].x);
    EXPECT_EQ(m[0].y, bgr[0].y);
    EXPECT_NEAR(m[0].sub_x, bgr[0].sub_x, 0.02);
    EXPECT_NEAR(m[0].sub_y, bgr[0].sub_y, 0.02);
    EXPECT_NEAR(m[0].score, bgr[0].score, 0.01);
  }
}

TEST(TemplateMatchElement, TemplateRectAndChangeWhilePlaying) {
  auto g = texture(W, H, 3);
  GstHarness* h = new_match("template-rect=<20,30,16,16> draw=false");
  gst_harness_set_src_caps_str(h, video_caps("GRAY8", W, H).c_str());
  auto push = [&](const std::vector<uint8_t>& img) {
    GstBuffer* b = gst_buffer_new_allocate(nullptr, img.size(), nullptr);
    gst_buffer_fill(b, 0, img.data(), img.size());
    GstBuffer* out = gst_harness_push_and_pull(h, b);
    auto r = out ? rois(out) : std::vector<RoiMatch>();
    if (out) gst_buffer_unref(out);
    return r;
  };
  auto m = push(g);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].x, 20);
  EXPECT_EQ(m[0].y, 30);
  // the scene shifts by (+5, +3): the template follows
  std::vector<uint8_t> shifted(g.size());
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) shifted[(size_t)y * W + x] = g[(size_t)((y + H - 3) % H) * W + (x + W - 5) % W];
  m = push(shifted);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].x, 25);
  EXPECT_EQ(m[0].y, 33);
  // a new rect takes effect at the next frame
  test::set_arg(h, "cudatemplatematch", "template-rect", "<100,60,20,24>");
  m = push(g);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].x, 100);
  EXPECT_EQ(m[0].y, 60);
  EXPECT_EQ(m[0].w, 20);
  EXPECT_EQ(m[0].h, 24);
  gst_harness_teardown(h);
}

TEST(TemplateMatchElement, SeveralCopiesNmsSearchRegionAndThreshold) {
  auto g = texture(W, H, 4);
  auto t = patch(g, W, 5, 5, 16, 16);
  const int pos[3][2] = {{60, 10}, {120, 90}, {30, 80}};
  for (auto& p : pos)
    for (int r = 0; r < 16; r++) memcpy(&g[(size_t)(p[1] + r) * W + p[0]], &t[(size_t)r * 16], 16);
  std::string pgm = write_pgm(t, 16, 16, "nms.pgm");
  GstHarness* h = new_match("template-location=" + pgm + " draw=false max-matches=10 threshold=0.9");
  gst_harness_set_src_caps_str(h, video_caps("GRAY8", W, H).c_str());
  GstBuffer* b = gst_buffer_new_allocate(nullptr, g.size(), nullptr);
  gst_buffer_fill(b, 0, g.data(), g.size());
  GstBuffer* out = gst_harness_push_and_pull(h, gst_buffer_ref(b));
  auto m = rois(out);
  gst_buffer_unref(out);
  ASSERT_EQ(m.size(), 4u) << "the original and three copies, one match each";
  for (auto& r : m) EXPECT_NEAR(r.score, 1.0, 1e-9);

  // restrict to a region holding one copy: positions stay in frame coordinates
  test::set_arg(h, "cudatemplatematch", "search-region", "<100,70,60,50>");
  out = gst_harness_push_and_pull(h, gst_buffer_ref(b));
  m = rois(out);
  gst_buffer_unref(out);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].x, 120);
  EXPECT_EQ(m[0].y, 90);

  // nothing reaches a threshold of 1 in a region without a copy
  test::set_arg(h, "cudatemplatematch", "search-region", "<80,0,40,40>");
  out = gst_harness_push_and_pull(h, gst_buffer_ref(b));
  EXPECT_TRUE(rois(out).empty());
  gst_buffer_unref(out);
  gst_buffer_unref(b);
  gst_harness_teardown(h);
  remove(pgm.c_str());
}

TEST(TemplateMatchElement, NoTemplatePassesFramesThrough) {
  GstHarness* h = new_match("");
  gst_harness_set_src_caps_str(h, video_caps("GRAY8", W, H).c_str());
  GstBuffer* out = gst_harness_push_and_pull(h, gst_buffer_new_allocate(nullptr, W * H, nullptr));
  ASSERT_NE(out, nullptr);
  EXPECT_TRUE(rois(out).empty());
  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

// ---- bad input ------------------------------------------------------------------------------

struct BadTemplate {
  const char* name;
  std::string props;
  const char* expected;
};

static std::string expect_error(const std::string& props, const char* caps_format = "GRAY8") {
  GstHarness* h = new_match(props);
  BusWatch bus(h);
  gst_harness_set_src_caps_str(h, video_caps(caps_format, W, H).c_str());
  auto g = texture(W, H, 9);
  GstBuffer* b = gst_buffer_new_allocate(nullptr, g.size(), nullptr);
  gst_buffer_fill(b, 0, g.data(), g.size());
  GstFlowReturn ret = gst_harness_push(h, b);
  EXPECT_EQ(ret, GST_FLOW_ERROR);
  std::string err = bus.first_error();
  gst_harness_teardown(h);
  return err;
}

// A template file is loaded at start: a bad one fails the state change with one error.
static std::string expect_start_error(const std::string& props) {
  GstElement* e = gst_parse_launch(("cudatemplatematch backend=cpu " + props).c_str(), NULL);
  const std::string err = test::start_error(e);
  gst_object_unref(e);
  return err;
}

TEST(TemplateMatchElementErrors, MissingFile) {
  EXPECT_NE(expect_start_error("template-location=/nonexistent/t.png").find("does not exist"), std::string::npos);
}

TEST(TemplateMatchElementErrors, CorruptFile) {
  std::string path = std::string(g_get_tmp_dir()) + "/cudaprep-corrupt-" + std::to_string(getpid()) + ".png";
  std::ofstream(path) << "\x89PNG\r\n\x1a\n this is not a png";
  std::string err = expect_start_error("template-location=" + path);
  EXPECT_NE(err.find("template file '" + path + "' is not a valid PNG file"), std::string::npos) << err;
  remove(path.c_str());
}

TEST(TemplateMatchElementErrors, TemplateLargerThanFrame) {
  auto t = texture(W + 1, 10, 5);
  std::string pgm = write_pgm(t, W + 1, 10, "big.pgm");
  std::string err = expect_error("template-location=" + pgm);
  EXPECT_NE(err.find("Cannot use the template"), std::string::npos) << err;
  EXPECT_NE(err.find("larger"), std::string::npos) << err;
  remove(pgm.c_str());
}

TEST(TemplateMatchElementErrors, TemplateLargerThanSearchRegion) {
  std::string err = expect_error("template-rect=<0,0,32,32> search-region=<0,0,20,50>");
  EXPECT_NE(err.find("larger"), std::string::npos) << err;
}

TEST(TemplateMatchElementErrors, SearchRegionOutsideFrame) {
  std::string err = expect_error("template-rect=<0,0,8,8> search-region=<150,100,40,40>");
  EXPECT_NE(err.find("outside"), std::string::npos) << err;
}

TEST(TemplateMatchElementErrors, FlatTemplate) {
  std::vector<uint8_t> flat(20 * 20, 77);
  std::string pgm = write_pgm(flat, 20, 20, "flat.pgm");
  std::string err = expect_start_error("template-location=" + pgm);
  EXPECT_NE(err.find("variance"), std::string::npos) << err;
  remove(pgm.c_str());
}

TEST(TemplateMatchElementErrors, TemplateRectOutsideFrame) {
  std::string err = expect_error("template-rect=<150,100,20,20>");
  EXPECT_NE(err.find("is not inside the 160x120 frame"), std::string::npos) << err;
}

TEST(TemplateMatchElementErrors, ChangeToLargerTemplateMidStream) {
  GstHarness* h = new_match("template-rect=<0,0,16,16>");
  BusWatch bus(h);
  gst_harness_set_src_caps_str(h, video_caps("GRAY8", W, H).c_str());
  auto g = texture(W, H, 6);
  GstBuffer* b = gst_buffer_new_allocate(nullptr, g.size(), nullptr);
  gst_buffer_fill(b, 0, g.data(), g.size());
  EXPECT_EQ(gst_harness_push(h, gst_buffer_ref(b)), GST_FLOW_OK);
  auto big = texture(W, H + 8, 7);
  std::string pgm = write_pgm(big, W, H + 8, "taller.pgm");
  g_object_set(test::element_of(h, "cudatemplatematch"), "template-location", pgm.c_str(), NULL);
  EXPECT_EQ(gst_harness_push(h, b), GST_FLOW_ERROR);
  std::string err = bus.first_error();
  EXPECT_NE(err.find("larger"), std::string::npos) << err;
  gst_harness_teardown(h);
  remove(pgm.c_str());
}

TEST(TemplateMatchElementErrors, CudaCapsWithoutGpu) {
  if (cudaprep::cuda::device_count() > 0) GTEST_SKIP() << "a GPU is present";
  GstHarness* h = gst_harness_new_parse("cudatemplatematch");
  BusWatch bus(h);
  gst_harness_set_src_caps_str(h, "video/x-raw(memory:CUDAMemory),format=NV12,width=64,height=48,framerate=30/1");
  EXPECT_EQ(gst_harness_push(h, gst_buffer_new_allocate(nullptr, 64 * 48 * 3 / 2, nullptr)), GST_FLOW_NOT_NEGOTIATED);
  EXPECT_NE(bus.first_error().find("CUDA memory but no CUDA device is usable"), std::string::npos);
  gst_harness_teardown(h);
}

// ---- found from outside (each failed before its fix) ------------------------------------------

GstBuffer* gray_buffer(const std::vector<uint8_t>& g) {
  GstBuffer* b = gst_buffer_new_allocate(nullptr, g.size(), nullptr);
  gst_buffer_fill(b, 0, g.data(), g.size());
  return b;
}

// Changing search-region used to re-cut a template-rect template from the current frame.
TEST(TemplateMatchFound, SearchRegionChangeKeepsTheTemplate) {
  auto a = texture(W, H, 10);
  auto b = texture(W, H, 11);
  auto object = patch(a, W, 10, 10, 16, 16);
  for (int r = 0; r < 16; r++) memcpy(&b[(size_t)(80 + r) * W + 100], &object[(size_t)r * 16], 16);
  GstHarness* h = new_match("template-rect=<10,10,16,16> draw=false");
  gst_harness_set_src_caps_str(h, video_caps("GRAY8", W, H).c_str());
  auto match_of = [&](const std::vector<uint8_t>& img) {
    GstBuffer* out = gst_harness_push_and_pull(h, gray_buffer(img));
    auto m = out ? rois(out) : std::vector<RoiMatch>();
    if (out) gst_buffer_unref(out);
    return m;
  };
  auto m = match_of(a);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].x, 10);
  m = match_of(b);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].x, 100);
  EXPECT_EQ(m[0].y, 80);
  test::set_arg(h, "cudatemplatematch", "search-region", "<0,0,160,120>");
  m = match_of(b);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].x, 100) << "the template was cut again from the current frame";
  EXPECT_EQ(m[0].y, 80);
  // a region that no longer holds the template is refused, and the template survives that too
  BusWatch bus(h);
  test::set_arg(h, "cudatemplatematch", "search-region", "<0,0,8,8>");
  EXPECT_EQ(gst_harness_push(h, gray_buffer(b)), GST_FLOW_ERROR);
  std::string err = bus.first_error();
  EXPECT_NE(err.find("Invalid search-region"), std::string::npos) << err;
  EXPECT_NE(err.find("larger"), std::string::npos) << err;
  gst_harness_teardown(h);
}

// A template path with non-ASCII characters was never found (the loader octal-escaped it).
TEST(TemplateMatchFound, NonAsciiTemplatePath) {
  auto g = texture(W, H, 12);
  auto t = patch(g, W, 33, 44, 20, 20);
  std::string pgm = write_pgm(t, 20, 20, "tmpl_\xc3\xa9\xe2\x82\xac.pgm");
  GstHarness* h = new_match("draw=false");
  g_object_set(test::element_of(h, "cudatemplatematch"), "template-location", pgm.c_str(), NULL);
  BusWatch bus(h);
  gst_harness_set_src_caps_str(h, video_caps("GRAY8", W, H).c_str());
  GstBuffer* out = gst_harness_push_and_pull(h, gray_buffer(g));
  ASSERT_NE(out, nullptr) << bus.first_error();
  auto m = rois(out);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].x, 33);
  EXPECT_EQ(m[0].y, 44);
  gst_buffer_unref(out);
  gst_harness_teardown(h);
  remove(pgm.c_str());
}

// A template file larger than the limit is refused from its header, with its size in the message.
TEST(TemplateMatchFound, OversizeTemplateFileNamesItsSize) {
  auto t = texture(300, 20, 13);
  std::string png = write_png(t, 300, 20, "wide.png");
  std::string err = expect_start_error("template-location=" + png);
  EXPECT_NE(err.find("300x20"), std::string::npos) << err;
  EXPECT_NE(err.find("256x256"), std::string::npos) << err;
  remove(png.c_str());
}

// An 8000x8000 PNG of 96 MB took 10.5 s to be refused as "could not decode template file",
// without its size (a small file of that size was refused with it): it is refused from its header
// at once, naming the file and its size. Here 64 MB of noise, stored uncompressed.
TEST(TemplateMatchFound, HugePngIsRefusedFromItsHeader) {
  const std::string png = test::temp_path("huge.png");
  uint32_t state = 12345;
  test::write_png_rows(
      png, 8000, 8000, 0,
      [&](int, uint8_t* row) {
        for (int x = 0; x < 8000; x++) {
          state ^= state << 13, state ^= state >> 17, state ^= state << 5;
          row[x] = (uint8_t)state;
        }
      },
      0);
  const auto start = std::chrono::steady_clock::now();
  std::string err = expect_start_error("template-location=" + png);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(err.find("8000x8000"), std::string::npos) << err;
  EXPECT_NE(err.find(png), std::string::npos) << err;
  EXPECT_NE(err.find("256x256"), std::string::npos) << err;
  EXPECT_LT(seconds, 2.0) << err;
  remove(png.c_str());
}

// A zero or negative-size search-region used to search the whole frame silently.
TEST(TemplateMatchFound, EmptySearchRegionIsRefused) {
  for (const char* region : {"<0,0,0,0>", "<10,10,-5,20>", "<1,2,3>"}) {
    std::string err = expect_error(std::string("template-rect=<0,0,8,8> search-region=") + region);
    EXPECT_NE(err.find("Invalid search-region"), std::string::npos) << region << ": " << err;
    EXPECT_NE(err.find("search-region="), std::string::npos) << region << ": " << err;
  }
}

// No template: frames pass, and the bus says why, once.
TEST(TemplateMatchFound, NoTemplateWarnsOnTheBusOnce) {
  GstHarness* h = new_match("");
  BusWatch bus(h);
  gst_harness_set_src_caps_str(h, video_caps("GRAY8", W, H).c_str());
  for (int i = 0; i < 3; i++) {
    GstBuffer* out = gst_harness_push_and_pull(h, gst_buffer_new_allocate(nullptr, W * H, nullptr));
    ASSERT_NE(out, nullptr);
    gst_buffer_unref(out);
  }
  auto warnings = bus.take(GST_MESSAGE_WARNING);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("No template"), std::string::npos) << warnings[0];
  gst_harness_teardown(h);
}

// gpu-wait picks how the matcher waits for the GPU; like backend it takes effect at start, so a
// change while playing is refused (and read back unchanged).
TEST(TemplateMatchElement, GpuWaitIsAStartSetting) {
  GstHarness* h = new_match("gpu-wait=stream-sync");
  GstElement* e = test::element_of(h, "cudatemplatematch");
  gint wait = -1;
  g_object_get(e, "gpu-wait", &wait, NULL);
  EXPECT_EQ(wait, 1);
  BusWatch bus(h);
  gst_harness_set_src_caps_str(h, video_caps("GRAY8", W, H).c_str());
  GstBuffer* out = gst_harness_push_and_pull(h, gst_buffer_new_allocate(nullptr, W * H, nullptr));
  ASSERT_NE(out, nullptr);
  gst_buffer_unref(out);
  gst_util_set_object_arg(G_OBJECT(e), "gpu-wait", "spin");
  g_object_get(e, "gpu-wait", &wait, NULL);
  EXPECT_EQ(wait, 1) << "gpu-wait changed while playing";
  auto warnings = bus.take(GST_MESSAGE_WARNING);
  bool said = false;
  for (auto& w : warnings) said |= w.find("gpu-wait can only be changed") != std::string::npos;
  EXPECT_TRUE(said);
  gst_harness_teardown(h);
}

// A frame another branch also holds (behind a tee) is copied only when a box is actually drawn
// into it: with draw=true and no match the frame keeps its memory (writing would copy it per
// frame); with a match the drawing goes into a copy and the other branch's frame is untouched.
TEST(TemplateMatchElement, SharedFrameIsCopiedOnlyToDraw) {
  auto g = texture(W, H, 5);
  const std::string present = write_pgm(patch(g, W, 30, 20, 24, 20), 24, 20, "present.pgm");
  const std::string absent = write_pgm(patch(texture(W, H, 6), W, 30, 20, 24, 20), 24, 20, "absent.pgm");
  for (const std::string& pgm : {absent, present}) {
    SCOPED_TRACE(pgm);
    const bool drawn = pgm == present;
    GstHarness* h = new_match("template-location=" + pgm + " draw=true threshold=0.9");
    gst_harness_set_src_caps_str(h, video_caps("BGR", W, H).c_str());
    GstBuffer* in = bgr_from_gray(g, W, H);
    GstBuffer* other_branch = gst_buffer_ref(in);
    GstMemory* mem = gst_buffer_peek_memory(in, 0);
    GstMapInfo before;
    ASSERT_TRUE(gst_memory_map(mem, &before, GST_MAP_READ));
    std::vector<uint8_t> original(before.data, before.data + before.size);
    gst_memory_unmap(mem, &before);
    GstBuffer* out = gst_harness_push_and_pull(h, in);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(rois(out).size(), drawn ? 1u : 0u);
    EXPECT_EQ(gst_buffer_peek_memory(out, 0) == mem, !drawn)
        << (drawn ? "drawn into the shared memory" : "memory copied without a box to draw");
    GstMapInfo after;
    ASSERT_TRUE(gst_buffer_map(other_branch, &after, GST_MAP_READ));
    EXPECT_TRUE(after.size == original.size() && std::memcmp(after.data, original.data(), after.size) == 0)
        << "the other branch's frame changed";
    gst_buffer_unmap(other_branch, &after);
    gst_buffer_unref(other_branch);
    gst_buffer_unref(out);
    gst_harness_teardown(h);
  }
  remove(present.c_str());
  remove(absent.c_str());
}

// The default wait must not keep a CPU core spinning for the whole kernel time: blocking, with
// poll, spin and stream-sync still there to choose.
TEST(TemplateMatchElement, GpuWaitDefaultsToBlocking) {
  GstElement* e = gst_element_factory_make("cudatemplatematch", NULL);
  ASSERT_NE(e, nullptr);
  GParamSpec* spec = g_object_class_find_property(G_OBJECT_GET_CLASS(e), "gpu-wait");
  ASSERT_NE(spec, nullptr);
  GEnumValue* def = g_enum_get_value(G_PARAM_SPEC_ENUM(spec)->enum_class, G_PARAM_SPEC_ENUM(spec)->default_value);
  ASSERT_NE(def, nullptr);
  EXPECT_STREQ(def->value_nick, "blocking");
  for (const char* nick : {"spin", "stream-sync", "blocking", "poll"})
    EXPECT_NE(g_enum_get_value_by_nick(G_PARAM_SPEC_ENUM(spec)->enum_class, nick), nullptr) << nick;
  gst_object_unref(e);
}

// In place, the frames go on downstream: a pool downstream proposes is passed up as it is; with
// none, the element proposes its own (on the GPU path a CUDA pool on its stream), so that
// upstream writes frames where the element reads them without a wait.
TEST(TemplateMatchElement, ProposesAPoolOnlyWhenDownstreamHasNone) {
  for (bool downstream_pool : {false, true}) {
    GstHarness* h = new_match("template-rect=<10,10,8,8>");
    GstBufferPool* theirs = gst_buffer_pool_new();
    if (downstream_pool) {
      // The harness's sink pad stands in for downstream: its answer gets the pool.
      gst_pad_set_query_function(h->sinkpad, [](GstPad* pad, GstObject* parent, GstQuery* query) -> gboolean {
        if (GST_QUERY_TYPE(query) == GST_QUERY_ALLOCATION) {
          gst_query_add_allocation_pool(query, GST_BUFFER_POOL(g_object_get_data(G_OBJECT(pad), "pool")), 4096, 3, 0);
          return TRUE;
        }
        return gst_pad_query_default(pad, parent, query);
      });
      g_object_set_data(G_OBJECT(h->sinkpad), "pool", theirs);
    }
    gst_harness_set_src_caps_str(h, test::video_caps("BGR", W, H).c_str());
    GstCaps* caps = gst_caps_from_string(test::video_caps("BGR", W, H).c_str());
    GstQuery* query = gst_query_new_allocation(caps, TRUE);
    EXPECT_TRUE(gst_pad_peer_query(h->srcpad, query));
    ASSERT_EQ(gst_query_get_n_allocation_pools(query), 1u) << downstream_pool;
    GstBufferPool* pool = nullptr;
    guint size = 0, min = 0;
    gst_query_parse_nth_allocation_pool(query, 0, &pool, &size, &min, nullptr);
    ASSERT_NE(pool, nullptr);
    if (downstream_pool) {
      EXPECT_EQ(pool, theirs);
      EXPECT_EQ(min, 3u);
    } else {
      EXPECT_NE(pool, theirs);
      EXPECT_GE(size, (guint)(W * 3 * H));
    }
    gst_object_unref(pool);
    gst_query_unref(query);
    gst_caps_unref(caps);
    gst_harness_teardown(h);
    gst_object_unref(theirs);
  }
}

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new test::GstEnv);
  return RUN_ALL_TESTS();
}
