// cudatemplatematch with a bank of templates, through GstHarness, on the CPU and (where there is
// a GPU) the CUDA path: several templates from a list, masks (a separate file and a PNG's alpha),
// labels in every meta and message, suppression across templates, tracking, banks changed while
// playing, and the errors at start that name the file.
#include <gst/app/gstappsink.h>
#include <gst/video/gstvideometa.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cuda_device.h"
#include "template_resample.h"
#include "harness_util.h"

using test::BusWatch;
using test::video_caps;

namespace {

const int W = 320, H = 240;

std::vector<uint8_t> texture(int w, int h, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> g((size_t)w * h);
  for (auto& v : g) v = (uint8_t)(rng() % 256);
  return g;
}

std::vector<uint8_t> patch(const std::vector<uint8_t>& g, int w, int x, int y, int pw, int ph) {
  std::vector<uint8_t> p((size_t)pw * ph);
  for (int r = 0; r < ph; r++) memcpy(&p[(size_t)r * pw], &g[(size_t)(y + r) * w + x], pw);
  return p;
}

void paste(std::vector<uint8_t>& g, int w, const std::vector<uint8_t>& p, int x, int y, int pw, int ph) {
  for (int r = 0; r < ph; r++) memcpy(&g[(size_t)(y + r) * w + x], &p[(size_t)r * pw], pw);
}

std::string tmp_path(const std::string& name) {
  return std::string(g_get_tmp_dir()) + "/cudaprep-bank-" + std::to_string(getpid()) + "-" + name;
}

std::string write_pgm(const std::vector<uint8_t>& g, int w, int h, const std::string& name) {
  std::string path = tmp_path(name);
  std::ofstream f(path, std::ios::binary);
  f << "P5\n" << w << " " << h << "\n255\n";
  f.write(reinterpret_cast<const char*>(g.data()), (std::streamsize)g.size());
  return path;
}

// A PNG with an alpha channel (RGBA through pngenc): gray in R = G = B, the alpha given.
std::string write_rgba_png(const std::vector<uint8_t>& g, const std::vector<uint8_t>& alpha, int w, int h,
                           const std::string& name) {
  std::string path = tmp_path(name);
  GstHarness* enc = gst_harness_new_parse("pngenc");
  gst_harness_set_src_caps_str(enc, video_caps("RGBA", w, h).c_str());
  GstBuffer* in = gst_buffer_new_allocate(nullptr, g.size() * 4, nullptr);
  GstMapInfo m;
  gst_buffer_map(in, &m, GST_MAP_WRITE);
  for (size_t i = 0; i < g.size(); i++) {
    m.data[4 * i] = m.data[4 * i + 1] = m.data[4 * i + 2] = g[i];
    m.data[4 * i + 3] = alpha[i];
  }
  gst_buffer_unmap(in, &m);
  GstBuffer* out = gst_harness_push_and_pull(enc, in);
  gst_buffer_map(out, &m, GST_MAP_READ);
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(m.data), (std::streamsize)m.size);
  gst_buffer_unmap(out, &m);
  gst_buffer_unref(out);
  gst_harness_teardown(enc);
  return path;
}

std::string label_of(const std::string& path) {
  std::string base = path.substr(path.rfind('/') + 1);
  return base.substr(0, base.rfind('.'));
}

struct Found {
  std::string label;
  int x, y, w, h;
  double score, scale, angle;
  gboolean full;
};

std::vector<Found> found_in(GstBuffer* b) {
  std::vector<Found> out;
  gpointer state = nullptr;
  while (GstMeta* meta = gst_buffer_iterate_meta_filtered(b, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) {
    auto* roi = reinterpret_cast<GstVideoRegionOfInterestMeta*>(meta);
    GstStructure* p = gst_video_region_of_interest_meta_get_param(roi, "template-match");
    Found f{g_quark_to_string(roi->roi_type), (int)roi->x, (int)roi->y, (int)roi->w, (int)roi->h, 0, 0, 0, FALSE};
    EXPECT_NE(p, nullptr);
    if (p) {
      gst_structure_get_double(p, "score", &f.score);
      gst_structure_get_double(p, "scale", &f.scale);
      gst_structure_get_double(p, "angle", &f.angle);
      gst_structure_get_boolean(p, "full-search", &f.full);
      EXPECT_STREQ(gst_structure_get_string(p, "template"), f.label.c_str());
    }
    out.push_back(f);
  }
  return out;
}

GstBuffer* gray_buffer(const std::vector<uint8_t>& g) {
  GstBuffer* b = gst_buffer_new_allocate(nullptr, g.size(), nullptr);
  gst_buffer_fill(b, 0, g.data(), g.size());
  return b;
}

// The backend under test: cpu always, cuda where there is a GPU.
class Bank : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (std::string(GetParam()) == "cuda" && cudaprep::cuda::device_count() == 0) GTEST_SKIP() << "no GPU";
  }
  GstHarness* make(const std::string& props) {
    GstHarness* h = gst_harness_new_parse(
        ("cudatemplatematch backend=" + std::string(GetParam()) + " draw=false " + props).c_str());
    gst_harness_set_src_caps_str(h, video_caps("GRAY8", W, H).c_str());
    return h;
  }
  std::vector<Found> run(GstHarness* h, const std::vector<uint8_t>& frame) {
    GstBuffer* out = gst_harness_push_and_pull(h, gray_buffer(frame));
    EXPECT_NE(out, nullptr);
    if (!out) return {};
    auto f = found_in(out);
    gst_buffer_unref(out);
    return f;
  }
};

}  // namespace

TEST_P(Bank, TemplatesListEachEqualsItsOwnElement) {
  auto frame = texture(W, H, 1);
  struct P {
    int x, y, w, h;
  } ps[] = {{30, 40, 20, 20}, {200, 100, 33, 17}, {100, 180, 12, 25}, {250, 10, 64, 48}};
  std::string list;
  std::vector<std::string> files;
  for (int i = 0; i < 4; ++i) {
    files.push_back(write_pgm(patch(frame, W, ps[i].x, ps[i].y, ps[i].w, ps[i].h), ps[i].w, ps[i].h,
                              "t" + std::to_string(i) + ".pgm"));
    list += (i ? ";" : "") + files.back();
  }
  GstHarness* h = make("templates=\"" + list + "\" threshold=0.5 max-matches=2");
  BusWatch bus(h);
  auto all = run(h, frame);
  ASSERT_EQ(all.size(), 4u) << bus.first_error();
  for (int i = 0; i < 4; ++i) {
    SCOPED_TRACE(files[i]);
    const Found* f = nullptr;
    for (const Found& a : all)
      if (a.label == label_of(files[i])) f = &a;
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->x, ps[i].x);
    EXPECT_EQ(f->y, ps[i].y);
    EXPECT_EQ(f->w, ps[i].w);
    EXPECT_EQ(f->h, ps[i].h);
    EXPECT_EQ(f->scale, 1.0);
    EXPECT_EQ(f->angle, 0.0);
    EXPECT_TRUE(f->full);
    GstHarness* one = make("template-location=" + files[i] + " threshold=0.5 max-matches=2");
    auto single = run(one, frame);
    ASSERT_EQ(single.size(), 1u);
    EXPECT_EQ(single[0].label, "template-match");
    EXPECT_EQ(single[0].x, f->x);
    EXPECT_EQ(single[0].y, f->y);
    EXPECT_EQ(single[0].score, f->score);
    gst_harness_teardown(one);
  }
  // The bus message lists the same matches with their template, scale, angle and search.
  GstMessage* msg = gst_bus_pop_filtered(bus.bus(), GST_MESSAGE_ELEMENT);
  ASSERT_NE(msg, nullptr);
  const GValue* matches = gst_structure_get_value(gst_message_get_structure(msg), "matches");
  ASSERT_EQ(gst_value_list_get_size(matches), 4u);
  for (guint i = 0; i < 4; ++i) {
    const GstStructure* m = gst_value_get_structure(gst_value_list_get_value(matches, i));
    const char* label = gst_structure_get_string(m, "template");
    ASSERT_NE(label, nullptr);
    int x = -1;
    gst_structure_get_int(m, "x", &x);
    bool seen = false;
    for (const Found& a : all) seen |= a.label == label && a.x == x;
    EXPECT_TRUE(seen) << label;
    EXPECT_TRUE(gst_structure_has_field(m, "scale") && gst_structure_has_field(m, "angle") &&
                gst_structure_has_field(m, "full-search"));
  }
  gst_message_unref(msg);
  gst_harness_teardown(h);
  for (auto& f : files) remove(f.c_str());
}

TEST_P(Bank, MasksFromAFileAndFromAlpha) {
  auto frame = texture(W, H, 2);
  const int x = 140, y = 90, s = 40;
  auto templ = patch(frame, W, x, y, s, s);
  // The template's corners are something else: only a disc of it is the object.
  std::vector<uint8_t> mask((size_t)s * s);
  for (int j = 0; j < s; ++j)
    for (int i = 0; i < s; ++i) {
      const double dx = i + 0.5 - s / 2.0, dy = j + 0.5 - s / 2.0;
      const bool in = dx * dx + dy * dy <= (s / 2.0) * (s / 2.0);
      mask[(size_t)j * s + i] = in ? 255 : 0;
      if (!in) templ[(size_t)j * s + i] = (uint8_t)(i * 7 + j * 3);
    }
  std::string t = write_pgm(templ, s, s, "disc.pgm"), m = write_pgm(mask, s, s, "disc-mask.pgm");
  std::string png = write_rgba_png(templ, mask, s, s, "disc-alpha.png");
  for (const std::string& props : {"template-location=" + t + " template-mask=" + m, "template-location=" + png}) {
    SCOPED_TRACE(props);
    GstHarness* h = make(props + " threshold=0.9");
    BusWatch bus(h);
    auto f = run(h, frame);
    ASSERT_EQ(f.size(), 1u) << bus.first_error();
    EXPECT_EQ(f[0].x, x);
    EXPECT_EQ(f[0].y, y);
    EXPECT_NEAR(f[0].score, 1.0, 1e-6);
    gst_harness_teardown(h);
  }
  GstHarness* unmasked = make("template-location=" + t + " threshold=0.9");
  EXPECT_TRUE(run(unmasked, frame).empty());  // the corners spoil the unmasked score
  gst_harness_teardown(unmasked);
  remove(t.c_str());
  remove(m.c_str());
  remove(png.c_str());
}

// A frame holding the template enlarged and, elsewhere, rotated: each match reports its member.
TEST_P(Bank, ScalesAndAnglesReportTheirMember) {
  auto frame = texture(W, H, 8);
  cudaprep::MaskedGray object;
  object.width = object.height = 24;
  object.pixels = texture(24, 24, 9);
  cudaprep::MaskedGray big, turned;
  ASSERT_TRUE(cudaprep::scale_template(object, 1.5, &big).ok());
  ASSERT_TRUE(cudaprep::rotate_template(object, 30, &turned).ok());
  ASSERT_TRUE(turned.masked());
  paste(frame, W, big.pixels, 50, 60, big.width, big.height);
  for (int j = 0; j < turned.height; ++j)  // only what the rotated template covers
    for (int i = 0; i < turned.width; ++i)
      if (turned.mask[(size_t)j * turned.width + i])
        frame[(size_t)(120 + j) * W + 200 + i] = turned.pixels[(size_t)j * turned.width + i];
  std::string t = write_pgm(object.pixels, 24, 24, "object-sa.pgm");
  GstHarness* h = make("template-location=" + t + " scales=\"<1,1.5>\" angles=\"<0,30>\" max-matches=2 threshold=0.95");
  BusWatch bus(h);
  auto f = run(h, frame);
  ASSERT_EQ(f.size(), 2u) << bus.first_error();
  std::sort(f.begin(), f.end(), [](const Found& a, const Found& b) { return a.x < b.x; });
  EXPECT_EQ(f[0].x, 50);
  EXPECT_EQ(f[0].y, 60);
  EXPECT_EQ(f[0].scale, 1.5);
  EXPECT_EQ(f[0].angle, 0.0);
  EXPECT_EQ(f[0].w, big.width);
  EXPECT_EQ(f[1].x, 200);
  EXPECT_EQ(f[1].y, 120);
  EXPECT_EQ(f[1].scale, 1.0);
  EXPECT_EQ(f[1].angle, 30.0);
  EXPECT_EQ(f[1].w, turned.width);
  for (const Found& x : f) EXPECT_NEAR(x.score, 1.0, 1e-6);
  gst_harness_teardown(h);
  remove(t.c_str());
}

// A key-file bank: labels from its groups, a mask file, a template's own threshold and limit.
TEST_P(Bank, KeyFileBank) {
  auto frame = texture(W, H, 10);
  auto a_pixels = patch(frame, W, 40, 50, 30, 20);
  for (int i : {17, 230, 411}) a_pixels[i] = (uint8_t)(a_pixels[i] + 100);  // scores about 0.995
  const std::string a = write_pgm(a_pixels, 30, 20, "kf-a.pgm");
  auto b_pixels = patch(frame, W, 150, 100, 28, 28);
  std::vector<uint8_t> mask(28 * 28, 255);
  for (int i = 0; i < 28 * 5; i++) {
    mask[i] = 0;      // the top rows are not part of it...
    b_pixels[i] = 0;  // ...and differ from the frame there
  }
  const std::string b = write_pgm(b_pixels, 28, 28, "kf-b.pgm");
  const std::string bm = write_pgm(mask, 28, 28, "kf-b-mask.pgm");
  const std::string ini = tmp_path("bank.ini");
  std::ofstream(ini) << "[plain one]\nfile = " << a << "\nthreshold = 0.99\n\n[masked one]\nfile = " << b
                     << "\nmask = " << bm << "\nmax-matches = 2\n";
  GstHarness* h = make("template-bank=" + ini + " threshold=0.999");
  BusWatch bus(h);
  auto f = run(h, frame);
  ASSERT_EQ(f.size(), 2u) << bus.first_error();
  std::sort(f.begin(), f.end(), [](const Found& x, const Found& y) { return x.x < y.x; });
  EXPECT_EQ(f[0].label, "plain one");  // found through its own threshold, under the element's
  EXPECT_EQ(f[0].x, 40);
  EXPECT_GT(f[0].score, 0.99);
  EXPECT_LT(f[0].score, 0.999);
  EXPECT_EQ(f[1].label, "masked one");
  EXPECT_EQ(f[1].x, 150);
  EXPECT_NEAR(f[1].score, 1.0, 1e-6);
  gst_harness_teardown(h);
  for (const std::string& p : {a, b, bm, ini}) remove(p.c_str());
}

// Boxes in each template's colour (a bank file's color), the others in the element's.
TEST_P(Bank, BoxesInEachTemplatesColour) {
  auto frame = texture(W, H, 11);
  const std::string a = write_pgm(patch(frame, W, 20, 20, 24, 24), 24, 24, "col-a.pgm");
  const std::string b = write_pgm(patch(frame, W, 200, 150, 24, 24), 24, 24, "col-b.pgm");
  const std::string ini = tmp_path("colours.ini");
  std::ofstream(ini) << "[red one]\nfile = " << a << "\ncolor = 0xff0000\n\n[default one]\nfile = " << b << "\n";
  GstHarness* h = gst_harness_new_parse(("cudatemplatematch backend=" + std::string(GetParam()) +
                                         " draw=true thickness=1 color=0xff0000ff template-bank=" + ini)
                                            .c_str());
  gst_harness_set_src_caps_str(h, video_caps("BGR", W, H).c_str());
  GstBuffer* in = gst_buffer_new_allocate(nullptr, (size_t)W * H * 3, nullptr);
  GstMapInfo m;
  gst_buffer_map(in, &m, GST_MAP_WRITE);
  for (size_t i = 0; i < frame.size(); i++) m.data[3 * i] = m.data[3 * i + 1] = m.data[3 * i + 2] = frame[i];
  gst_buffer_unmap(in, &m);
  GstBuffer* out = gst_harness_push_and_pull(h, in);
  ASSERT_NE(out, nullptr);
  gst_buffer_map(out, &m, GST_MAP_READ);
  auto bgr_at = [&](int x, int y) {
    const uint8_t* p = m.data + ((size_t)y * W + x) * 3;
    return std::vector<int>{p[0], p[1], p[2]};
  };
  EXPECT_EQ(bgr_at(20, 20), (std::vector<int>{0, 0, 255}));    // red: the template's own
  EXPECT_EQ(bgr_at(200, 150), (std::vector<int>{255, 0, 0}));  // blue: the element's
  gst_buffer_unmap(out, &m);
  gst_buffer_unref(out);
  gst_harness_teardown(h);
  for (const std::string& p : {a, b, ini}) remove(p.c_str());
}

TEST_P(Bank, SuppressionAcrossTemplates) {
  auto frame = texture(W, H, 3);
  std::string a = write_pgm(patch(frame, W, 60, 60, 30, 30), 30, 30, "over-a.pgm");
  std::string b = write_pgm(patch(frame, W, 70, 70, 30, 30), 30, 30, "over-b.pgm");
  for (bool across : {false, true}) {
    GstHarness* h = make("templates=\"" + a + ";" + b + "\" suppress-across-templates=" + (across ? "true" : "false"));
    auto f = run(h, frame);
    EXPECT_EQ(f.size(), across ? 1u : 2u);
    gst_harness_teardown(h);
  }
  remove(a.c_str());
  remove(b.c_str());
}

TEST_P(Bank, TrackingFollowsLosesAndReacquires) {
  auto background = texture(W, H, 4);
  auto object = texture(24, 24, 5);
  std::string t = write_pgm(object, 24, 24, "object.pgm");
  GstHarness* tracked = make("template-location=" + t + " track=true track-margin=1 full-search-interval=5");
  GstHarness* full = make("template-location=" + t);
  int fulls = 0, tracked_frames = 0;
  for (int n = 0; n < 40; ++n) {
    SCOPED_TRACE("frame " + std::to_string(n));
    auto frame = background;
    const bool present = n < 15 || n >= 20;  // leaves for 5 frames, then comes back elsewhere
    const int ox = n < 15 ? 20 + 4 * n : 250 - 3 * (n - 20), oy = n < 15 ? 30 + 2 * n : 150 + (n - 20);
    if (present) paste(frame, W, object, ox, oy, 24, 24);
    auto a = run(tracked, frame), b = run(full, frame);
    ASSERT_EQ(a.size(), b.size());
    ASSERT_EQ(a.size(), present ? 1u : 0u);
    if (present) {
      EXPECT_EQ(a[0].x, ox);
      EXPECT_EQ(a[0].y, oy);
      EXPECT_EQ(a[0].score, b[0].score);
      EXPECT_TRUE(b[0].full);
      // Full searches: the first frame, every 5th since the last full one, and after a loss.
      const bool expect_full = n == 0 || n == 5 || n == 10 || n == 20 || n == 25 || n == 30 || n == 35;
      EXPECT_EQ(a[0].full, expect_full);
      (a[0].full ? fulls : tracked_frames)++;
    }
  }
  EXPECT_GT(tracked_frames, 20);
  gst_harness_teardown(tracked);
  gst_harness_teardown(full);
  remove(t.c_str());
}

// The shipped clip: a template cut where the first frames move most is tracked; every tracked
// frame whose full-search match lies inside its window gives the full search's result.
TEST_P(Bank, TrackingOnTheShippedClipEqualsFullSearchInsideTheWindow) {
  if (!gst_registry_check_feature_version(gst_registry_get(), "avdec_h264", 1, 0, 0))
    GTEST_SKIP() << "avdec_h264 missing";
  const int cw = 320, ch = 240, frames_wanted = 31;  // the whole clip
  GstElement* decode =
      gst_parse_launch("filesrc location=" TEST_SOURCE_DIR
                       "/data/vtest-h264.mp4 ! qtdemux ! h264parse ! avdec_h264 ! videoconvert ! "
                       "videoscale ! video/x-raw,format=GRAY8,width=320,height=240 ! appsink name=s sync=false",
                       NULL);
  ASSERT_NE(decode, nullptr);
  GstElement* sink = gst_bin_get_by_name(GST_BIN(decode), "s");
  gst_element_set_state(decode, GST_STATE_PLAYING);
  std::vector<std::vector<uint8_t>> frames;
  while ((int)frames.size() < frames_wanted) {
    GstSample* sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 10 * GST_SECOND);
    if (!sample) break;
    GstVideoInfo info;
    gst_video_info_from_caps(&info, gst_sample_get_caps(sample));
    GstVideoFrame vf;
    gst_video_frame_map(&vf, &info, gst_sample_get_buffer(sample), GST_MAP_READ);
    std::vector<uint8_t> g((size_t)cw * ch);
    for (int y = 0; y < ch; y++)
      memcpy(&g[(size_t)y * cw],
             (const uint8_t*)GST_VIDEO_FRAME_PLANE_DATA(&vf, 0) + y * GST_VIDEO_FRAME_PLANE_STRIDE(&vf, 0), cw);
    gst_video_frame_unmap(&vf);
    gst_sample_unref(sample);
    frames.push_back(std::move(g));
  }
  gst_element_set_state(decode, GST_STATE_NULL);
  gst_object_unref(sink);
  gst_object_unref(decode);
  ASSERT_EQ((int)frames.size(), frames_wanted);
  // The 24x32 block that changes most between frames 0 and 10: someone walking.
  const int tw = 24, th = 32;
  long best = -1;
  int bx = 0, by = 0;
  for (int y = 0; y + th <= ch; y += 4)
    for (int x = 0; x + tw <= cw; x += 4) {
      long d = 0;
      for (int j = 0; j < th; j++)
        for (int i = 0; i < tw; i++)
          d += std::abs(frames[0][(size_t)(y + j) * cw + x + i] - frames[10][(size_t)(y + j) * cw + x + i]);
      if (d > best) best = d, bx = x, by = y;
    }
  std::string t = write_pgm(patch(frames[0], cw, bx, by, tw, th), tw, th, "walker.pgm");
  const std::string common = "template-location=" + t + " threshold=0.5";
  GstHarness* tracked =
      gst_harness_new_parse(("cudatemplatematch backend=" + std::string(GetParam()) +
                             " draw=false track=true track-margin=1 full-search-interval=15 " + common)
                                .c_str());
  GstHarness* full =
      gst_harness_new_parse(("cudatemplatematch backend=" + std::string(GetParam()) + " draw=false " + common).c_str());
  for (GstHarness* h : {tracked, full}) gst_harness_set_src_caps_str(h, video_caps("GRAY8", cw, ch).c_str());
  int compared = 0, tracked_frames = 0;
  Found prev{};
  bool have_prev = false;
  for (int n = 0; n < frames_wanted; n++) {
    SCOPED_TRACE("frame " + std::to_string(n));
    auto pull = [&](GstHarness* h) {
      GstBuffer* out = gst_harness_push_and_pull(h, gray_buffer(frames[n]));
      auto f = out ? found_in(out) : std::vector<Found>();
      if (out) gst_buffer_unref(out);
      return f;
    };
    auto a = pull(tracked), b = pull(full);
    if (!a.empty() && !a[0].full) tracked_frames++;
    // The window of this frame's tracked search: last frame's box, one template size around it.
    const bool inside = !b.empty() && have_prev && b[0].x >= prev.x - tw && b[0].y >= prev.y - th &&
                        b[0].x + tw <= prev.x + 2 * tw && b[0].y + th <= prev.y + 2 * th;
    if ((!a.empty() && a[0].full) || inside) {
      ASSERT_EQ(a.size(), b.size());
      if (!a.empty()) {
        EXPECT_EQ(a[0].x, b[0].x);
        EXPECT_EQ(a[0].y, b[0].y);
        EXPECT_EQ(a[0].score, b[0].score);
      }
      compared++;
    }
    have_prev = !a.empty();
    if (have_prev) prev = a[0];
  }
  EXPECT_GT(tracked_frames, 12);
  EXPECT_GT(compared, 20);
  gst_harness_teardown(tracked);
  gst_harness_teardown(full);
  remove(t.c_str());
}

TEST_P(Bank, BankChangedWhilePlayingNeverMixes) {
  auto frame = texture(W, H, 6);
  std::string a = write_pgm(patch(frame, W, 10, 10, 20, 20), 20, 20, "first.pgm");
  std::string b = write_pgm(patch(frame, W, 200, 150, 20, 20), 20, 20, "second.pgm");
  std::string c = write_pgm(patch(frame, W, 100, 100, 16, 16), 16, 16, "third.pgm");
  GstHarness* h = make("templates=\"" + a + "\"");
  GstElement* e = test::element_of(h, "cudatemplatematch");
  const std::vector<std::string> banks = {a, b + ";" + c, c, a + ";" + b};
  for (int n = 0; n < 12; ++n) {
    const std::string& bank = banks[n % banks.size()];
    if (n) g_object_set(e, "templates", bank.c_str(), NULL);
    auto f = run(h, frame);
    std::map<std::string, int> labels;
    for (const Found& x : f) labels[x.label]++;
    std::map<std::string, int> expected;
    size_t at = 0;
    while (at <= bank.size()) {
      size_t end = bank.find(';', at);
      if (end == std::string::npos) end = bank.size();
      expected[label_of(bank.substr(at, end - at))] = 1;
      at = end + 1;
    }
    EXPECT_EQ(labels, expected) << "frame " << n;
  }
  gst_harness_teardown(h);
  for (auto& p : {a, b, c}) remove(p.c_str());
}

TEST_P(Bank, BadFilesAreOneErrorAtStartNamingTheFile) {
  auto frame = texture(W, H, 7);
  std::string a = write_pgm(patch(frame, W, 10, 10, 20, 20), 20, 20, "dup.pgm");
  g_mkdir_with_parents(tmp_path("sub").c_str(), 0700);
  std::string a2 = tmp_path("sub/cudaprep-bank-" + std::to_string(getpid()) + "-dup.pgm");
  {
    std::ifstream in(a, std::ios::binary);
    std::ofstream out(a2, std::ios::binary);
    out << in.rdbuf();
  }
  struct Case {
    std::string props, message;
  } cases[] = {
      {"templates=\"" + a + ";/nonexistent/x.png\"", "template file '/nonexistent/x.png' does not exist"},
      {"templates=\"" + a + ";;" + a + "\"", "an empty file name between ';'"},
      {"templates=\"" + a + ";" + a2 + "\"", "have the same label \"" + label_of(a) + "\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.props);
    GstElement* pipeline = gst_parse_launch(
        ("fakesrc ! cudatemplatematch backend=" + std::string(GetParam()) + " " + c.props + " ! fakesink").c_str(),
        NULL);
    ASSERT_NE(pipeline, nullptr);
    EXPECT_EQ(gst_element_set_state(pipeline, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
    GstBus* bus = gst_element_get_bus(pipeline);
    GstMessage* msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    ASSERT_NE(msg, nullptr);
    GError* err = nullptr;
    gst_message_parse_error(msg, &err, nullptr);
    EXPECT_NE(std::string(err->message).find(c.message), std::string::npos) << err->message;
    g_error_free(err);
    gst_message_unref(msg);
    EXPECT_EQ(gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR), nullptr);
    gst_object_unref(bus);
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(pipeline);
  }
  remove(a.c_str());
  remove(a2.c_str());
}

INSTANTIATE_TEST_SUITE_P(Backends, Bank, ::testing::Values("cpu", "cuda"));

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new test::GstEnv);
  return RUN_ALL_TESTS();
}
