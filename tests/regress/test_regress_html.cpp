// Unit tests of the pieces of cudaprep-regress's HTML report and --progress line, on synthetic
// data: the progress arithmetic, the plot's axis and points, tensors drawn back into pictures,
// the difference heat map, PNG encoding, what check keeps of its run, and which frames are
// pictured (tests/regress/regress_html.sh runs the whole report over the shipped clip).
#include <gst/gst.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "regress_html_parts.h"
#include "regress_image.h"
#include "regress_plot.h"
#include "regress_progress.h"
#include "regress_render.h"
#include "regress_sides.h"

using namespace regress;

namespace {

// The float32 tensor's bytes, little-endian as recorded (the supported platforms are).
std::vector<uint8_t> tensor_bytes_of(const std::vector<float>& v) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(v.data());
  return std::vector<uint8_t>(p, p + v.size() * sizeof(float));
}

// A manifest with one cudatensorize making w x h float32 tensors into sink "tensor".
Manifest tensor_manifest(int w, int h, const std::string& layout, const std::string& order, const std::string& mean,
                         const std::string& std_, const std::string& scale) {
  Manifest m;
  const std::string dims = layout == "nhwc" ? "3:" + std::to_string(w) + ":" + std::to_string(h) + ":1"
                                            : std::to_string(w) + ":" + std::to_string(h) + ":3:1";
  m.sinks.push_back({"tensor", "tensor",
                     "other/tensors, format=(string)static, types=(string)float32, dimensions=(string)" + dims,
                     "system", "float32", 1});
  ElementInfo e;
  e.name = "cudatensorize0";
  e.factory = "cudatensorize";
  e.plugin = "cudaprep";
  e.properties = {
      {"channel-order", order}, {"dtype", "float32"}, {"height", std::to_string(h)}, {"layout", layout}, {"mean", mean},
      {"scale", scale},         {"std", std_},        {"width", std::to_string(w)}};
  m.elements.push_back(e);
  return m;
}

SinkResult tensor_result(double max_abs, bool pass) {
  SinkResult r;
  r.sink = "tensor";
  r.kind = "tensor";
  r.ref_present = r.run_present = true;
  r.identical = max_abs == 0;
  r.data_compared = true;
  r.diff.max_abs = max_abs;
  r.pass = pass;
  return r;
}

}  // namespace

// The line for `frames` done after `elapsed_s`, of `expected` frames or `fraction` of the clip.
std::string line(const char* label, uint64_t frames, uint64_t expected, double fraction, double elapsed_s,
                 const char* note = "") {
  return progress_line(ProgressSnapshot{label, frames, expected, fraction, elapsed_s, note});
}

TEST(RegressProgress, TimeLeftFromTheExpectedFrames) {
  // 12 fps, 880 frames to go: 73.3 s
  EXPECT_EQ(line("check", 120, 1000, -1, 10, "2 failing"), "check: frame 120/1000 (12%), 12 fps, 1:13 left, 2 failing");
  EXPECT_EQ(line("check", 1000, 1000, -1, 50), "check: frame 1000/1000 (100%), 20 fps, 0 s left");
}

TEST(RegressProgress, TimeLeftFromTheStreamPosition) {
  EXPECT_EQ(line("record", 50, 0, 0.25, 10), "record: frame 50 (25%), 5 fps, 30 s left");
  EXPECT_EQ(line("record", 50, 0, -1, 10), "record: frame 50, 5 fps");  // unknown duration: no estimate
  EXPECT_EQ(line("record", 0, 0, -1, 0), "record: frame 0");
}

TEST(RegressProgress, Durations) {
  EXPECT_EQ(format_duration(0.4), "0 s");
  EXPECT_EQ(format_duration(59.4), "59 s");
  EXPECT_EQ(format_duration(125), "2:05");
  EXPECT_EQ(format_duration(3723), "1:02:03");
  EXPECT_EQ(format_duration(NAN), "?");
}

TEST(RegressPlot, NiceTicks) {
  EXPECT_EQ(nice_ticks(0, 0.47), (std::vector<double>{0, 0.1, 0.2, 0.30000000000000004, 0.4}));
  EXPECT_EQ(nice_ticks(0, 30), (std::vector<double>{0, 10, 20, 30}));
  const std::vector<double> t = nice_ticks(44, 52);
  EXPECT_EQ(t.front(), 44);
  EXPECT_EQ(t.back(), 52);
}

TEST(RegressPlot, PointsCarryTheirValuesAndTheToleranceIsDrawn) {
  Plot p;
  p.id = "plot-tensor-psnr";
  p.y_label = "PSNR <dB>";
  p.frames = 3;
  p.points = {{0, INFINITY, false}, {1, 46.9154, true}, {2, 61.25, false}};
  p.has_tolerance = true;
  p.tolerance = 50;
  p.tolerance_label = "tolerance psnr=50";
  p.nonfinite_label = "inf: identical";
  const std::string svg = plot_svg(p);
  EXPECT_NE(svg.find("data-series=\"plot-tensor-psnr\""), std::string::npos);
  EXPECT_NE(svg.find("class=\"pt nonfinite\""), std::string::npos);
  EXPECT_NE(svg.find("data-frame=\"0\" data-value=\"inf\""), std::string::npos);
  EXPECT_NE(svg.find("class=\"pt fail\""), std::string::npos);
  EXPECT_NE(svg.find("data-frame=\"1\" data-value=\"46.9154\""), std::string::npos);
  EXPECT_NE(svg.find("data-frame=\"2\" data-value=\"61.25\""), std::string::npos);
  EXPECT_NE(svg.find("class=\"tolerance\""), std::string::npos);
  EXPECT_NE(svg.find(">tolerance psnr=50<"), std::string::npos);
  EXPECT_NE(svg.find("PSNR &lt;dB&gt;"), std::string::npos);  // escaped
  EXPECT_EQ(svg.find("PSNR <dB>"), std::string::npos);
  // the line joins the finite values only
  EXPECT_EQ(std::count(svg.begin(), svg.end(), 'M'), 1);
}

TEST(RegressPlot, OneBandPerRunOfFailingFrames) {
  Plot p;
  p.id = "plot-x";
  p.frames = 6;
  for (uint64_t f = 0; f < 6; f++) p.points.push_back({f, (double)f, f == 1 || f == 2 || f == 4});
  const std::string svg = plot_svg(p);
  size_t bands = 0;
  for (size_t at = svg.find("class=\"failband\""); at != std::string::npos; at = svg.find("class=\"failband\"", at + 1))
    bands++;
  EXPECT_EQ(bands, 2u);  // frames 1-2, frame 4
}

TEST(RegressRender, NchwDenormalisedWithMeanStdScale) {
  Manifest m = tensor_manifest(2, 1, "nchw", "rgb", "< (double)0.5, (double)0.25, (double)0 >", "< (double)2 >",
                               "0.0039215686274509803");
  TensorPicture p;
  std::string why;
  ASSERT_TRUE(tensor_picture(m, m.sinks[0], &p, &why)) << why;
  EXPECT_EQ(p.width, 2);
  EXPECT_EQ(p.std[1], 2);  // one value for all channels
  // value = (pixel / 255 - mean) / std; channel planes R, G, B of 2 pixels
  auto v = [](double px, double mean) { return (float)((px / 255.0 - mean) / 2.0); };
  const auto bytes = tensor_bytes_of({v(10, 0.5), v(200, 0.5), v(20, 0.25), v(255, 0.25), v(30, 0), v(0, 0)});
  const RgbImage img = tensor_to_image(bytes.data(), bytes.size(), p);
  EXPECT_EQ(std::vector<uint8_t>(img.at(0, 0), img.at(0, 0) + 3), (std::vector<uint8_t>{10, 20, 30}));
  EXPECT_EQ(std::vector<uint8_t>(img.at(1, 0), img.at(1, 0) + 3), (std::vector<uint8_t>{200, 255, 0}));
}

TEST(RegressRender, NhwcBgrAndClamping) {
  Manifest m = tensor_manifest(1, 2, "nhwc", "bgr", "< (double)0 >", "< (double)1 >", "1");
  TensorPicture p;
  std::string why;
  ASSERT_TRUE(tensor_picture(m, m.sinks[0], &p, &why)) << why;
  EXPECT_TRUE(p.nhwc);
  EXPECT_TRUE(p.bgr);
  const auto bytes = tensor_bytes_of({1, 2, 3, -5, 300, NAN});  // pixel 0: B G R; pixel 1
  const RgbImage img = tensor_to_image(bytes.data(), bytes.size(), p);
  EXPECT_EQ(std::vector<uint8_t>(img.at(0, 0), img.at(0, 0) + 3), (std::vector<uint8_t>{3, 2, 1}));
  EXPECT_EQ(std::vector<uint8_t>(img.at(0, 1), img.at(0, 1) + 3), (std::vector<uint8_t>{0, 255, 0}));
}

// An int8 gray NHWC tensor (1:W:H:1): drawn gray, each value de-normalised with mean[0] and std[0]
// (the only ones the element used), on all three colours; its heat map takes the one channel.
TEST(RegressRender, Int8GrayDrawnGrayWithTheFirstMean) {
  Manifest m = tensor_manifest(2, 1, "nhwc", "bgr", "< (double)128, (double)0, (double)50 >", "< (double)1 >", "1");
  m.sinks[0].caps = "other/tensors, types=(string)int8, dimensions=(string)1:2:1:1";
  m.sinks[0].dtype = "int8";
  for (auto& kv : m.elements[0].properties)
    if (kv.first == "dtype") kv.second = "int8";
  m.elements[0].properties.push_back({"channels", "1"});
  TensorPicture p;
  std::string why;
  ASSERT_TRUE(tensor_picture(m, m.sinks[0], &p, &why)) << why;
  EXPECT_EQ(p.channels, 1);
  EXPECT_EQ(p.bytes(), 2u);
  const std::vector<uint8_t> bytes = {(uint8_t)(int8_t)-28, 100};  // pixels 100 and 228
  const RgbImage img = tensor_to_image(bytes.data(), bytes.size(), p);
  EXPECT_EQ(std::vector<uint8_t>(img.at(0, 0), img.at(0, 0) + 3), (std::vector<uint8_t>{100, 100, 100}));
  EXPECT_EQ(std::vector<uint8_t>(img.at(1, 0), img.at(1, 0) + 3), (std::vector<uint8_t>{228, 228, 228}));
  const std::vector<uint8_t> run = {(uint8_t)(int8_t)-28, 97};
  const HeatMap h = diff_heat_map(bytes.data(), run.data(), bytes.size(), p);
  EXPECT_EQ(h.max, 3);
  EXPECT_EQ(h.worst_x, 1);
  EXPECT_EQ(h.differing, 1u);
  // a recording from before the channels property: colour, so a 1-channel tensor has no picture
  m.elements[0].properties.pop_back();
  EXPECT_FALSE(tensor_picture(m, m.sinks[0], &p, &why));
}

TEST(RegressRender, NoPictureWithoutACudatensorizeOfThatSize) {
  Manifest m = tensor_manifest(4, 4, "nchw", "rgb", "< (double)0 >", "< (double)1 >", "1");
  m.sinks[0].caps = "other/tensors, types=(string)float32, dimensions=(string)8:8:3:1";
  TensorPicture p;
  std::string why;
  EXPECT_FALSE(tensor_picture(m, m.sinks[0], &p, &why));
  EXPECT_NE(why.find("no cudatensorize"), std::string::npos) << why;
}

TEST(RegressRender, HeatMapFindsTheWorstPixelAndNonFiniteOnes) {
  Manifest m = tensor_manifest(3, 1, "nchw", "rgb", "< (double)0 >", "< (double)1 >", "1");
  TensorPicture p;
  std::string why;
  ASSERT_TRUE(tensor_picture(m, m.sinks[0], &p, &why)) << why;
  const auto a = tensor_bytes_of({0, 0, 0, 0, 0, 0, 0, 0, 0});
  const auto b = tensor_bytes_of({0, 0.5f, 0, 0, 0, NAN, 0, 0.25f, 0});  // pixel 1: 0.5 (R) and 0.25 (B)
  const HeatMap h = diff_heat_map(a.data(), b.data(), a.size(), p);
  EXPECT_EQ(h.max, 0.5);
  EXPECT_EQ(h.worst_x, 1);
  EXPECT_EQ(h.at_max, 1u);
  EXPECT_EQ(h.differing, 2u);
  EXPECT_EQ(h.nonfinite, 1u);  // pixel 2, G
  EXPECT_EQ(std::vector<uint8_t>(h.image.at(0, 0), h.image.at(0, 0) + 3), (std::vector<uint8_t>{0, 0, 0}));
  uint8_t top[3];
  heat_colour(1.0, top);
  EXPECT_EQ(std::vector<uint8_t>(h.image.at(1, 0), h.image.at(1, 0) + 3), std::vector<uint8_t>(top, top + 3));
  EXPECT_EQ(std::vector<uint8_t>(h.image.at(2, 0), h.image.at(2, 0) + 3),
            std::vector<uint8_t>(kNonFiniteColour, kNonFiniteColour + 3));
}

TEST(RegressImage, PngHeaderHasTheSize) {
  RgbImage img(5, 3);  // rows of 15 bytes: GStreamer pads RGB rows to 16
  img.at(4, 2)[0] = 255;
  std::vector<uint8_t> png;
  std::string err;
  ASSERT_TRUE(encode_png(img, &png, &err)) << err;
  ASSERT_GT(png.size(), 33u);
  EXPECT_EQ(memcmp(png.data(), "\x89PNG\r\n\x1a\n", 8), 0);
  EXPECT_EQ(memcmp(png.data() + 12, "IHDR", 4), 0);
  EXPECT_EQ(png[19], 5);  // width, big-endian
  EXPECT_EQ(png[23], 3);  // height
  EXPECT_FALSE(encode_png(RgbImage(), &png, &err));
}

TEST(RegressSides, CheckKeepsFirstDifferingFailingAndWorstOnly) {
  RunKeeper k;
  const std::vector<uint8_t> d1{1}, d2{2}, d3{3}, d4{4};
  k.keep_tensor("tensor", 0, tensor_result(0, true), d1.data(), 1);     // identical: not kept
  k.keep_tensor("tensor", 1, tensor_result(0.1, true), d2.data(), 1);   // first differing
  k.keep_tensor("tensor", 2, tensor_result(0.3, false), d3.data(), 1);  // first failing, worst so far
  k.keep_tensor("tensor", 3, tensor_result(0.2, false), d4.data(), 1);  // neither
  std::vector<uint8_t> out;
  std::string why;
  EXPECT_FALSE(k.tensor_bytes("tensor", 0, &out, &why));
  EXPECT_TRUE(k.tensor_bytes("tensor", 1, &out, &why));
  EXPECT_EQ(out, d2);
  EXPECT_TRUE(k.tensor_bytes("tensor", 2, &out, &why));
  EXPECT_EQ(out, d3);
  EXPECT_FALSE(k.tensor_bytes("tensor", 3, &out, &why));
  EXPECT_NE(why.find("was not kept"), std::string::npos);
  MatchesEntry e;
  e.items.resize(2);
  k.keep_matches("matches", 5, e);
  ASSERT_NE(k.matches("matches", 5), nullptr);
  EXPECT_EQ(k.matches("matches", 5)->items.size(), 2u);
  EXPECT_EQ(k.matches("matches", 4), nullptr);
}

TEST(RegressHtml, PicksTheFirstFailingAndEachSinksWorstFrame) {
  std::vector<FrameResult> frames(5);
  for (size_t i = 0; i < frames.size(); i++) frames[i].index = i;
  frames[1].sinks["tensor"] = tensor_result(0.2, false);
  frames[3].sinks["tensor"] = tensor_result(0.7, false);
  SinkResult moved;
  moved.kind = "matches";
  moved.ref_present = moved.run_present = true;
  moved.match.max_dpos = 0.3;
  moved.match.max_dscore = 0.001;
  SinkResult rescored = moved;
  rescored.match.max_dpos = 0;
  rescored.match.max_dscore = 0.5;  // a larger score change, but nothing moved: not the worst
  frames[4].sinks["matches"] = moved;
  frames[2].sinks["matches"] = rescored;
  std::vector<FramePick> picks = pick_frames(frames);
  ASSERT_EQ(picks.size(), 3u);
  EXPECT_EQ(picks[0].frame, 1u);
  EXPECT_EQ(picks[0].why, "first failing frame");
  EXPECT_EQ(picks[1].frame, 4u);
  EXPECT_EQ(picks[1].why, "the worst of sink 'matches': largest match position delta, 0.3 px");
  EXPECT_EQ(picks[2].frame, 3u);
  EXPECT_EQ(picks[2].why, "the worst of sink 'tensor': largest max abs diff, 0.7");
  // only scores changed: the largest score change is the worst; one frame both first and worst
  frames[4].sinks.clear();
  frames[3].sinks["tensor"] = tensor_result(0.1, false);
  picks = pick_frames(frames);
  ASSERT_EQ(picks.size(), 2u);
  EXPECT_EQ(picks[0].why, "first failing frame; the worst of sink 'tensor': largest max abs diff, 0.2");
  EXPECT_EQ(picks[1].frame, 2u);
  EXPECT_EQ(picks[1].why, "the worst of sink 'matches': largest match score delta, 0.5");
  // nothing differs: nothing pictured
  for (auto& f : frames) f.sinks.clear();
  EXPECT_TRUE(pick_frames(frames).empty());
}

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
