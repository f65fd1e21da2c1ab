// CPU template matcher against OpenCV's cv::matchTemplate(TM_CCOEFF_NORMED) on real photographs,
// video frames and random images, plus the matcher's own rules (flat windows, refusals, peaks,
// non-maximum suppression, search regions, sub-pixel), to_gray and draw_boxes.
#include <gtest/gtest.h>

#include <cfloat>
#include <chrono>
#include <cmath>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "templatematch.h"
#include "templatematch_internal.h"
#include "tm_test_util.h"

using namespace cudaprep;
using tmtest::Gray;

namespace {

std::string data_path(const std::string& name) { return std::string(TEST_IMAGE_DIR) + "/" + name; }

Gray from_mat(const cv::Mat& m) {
  EXPECT_EQ(m.type(), CV_8UC1);
  Gray g(m.cols, m.rows);
  for (int y = 0; y < m.rows; ++y)
    for (int x = 0; x < m.cols; ++x) g.at(x, y) = m.at<uint8_t>(y, x);
  return g;
}

cv::Mat to_mat(const Gray& g) {
  cv::Mat m(g.height, g.width, CV_8UC1);
  for (int y = 0; y < g.height; ++y)
    for (int x = 0; x < g.width; ++x) m.at<uint8_t>(y, x) = g.at(x, y);
  return m;
}

cv::Mat load_gray(const std::string& name) {
  cv::Mat bgr = cv::imread(data_path(name), cv::IMREAD_COLOR);
  EXPECT_FALSE(bgr.empty()) << "cannot read " << data_path(name);
  cv::Mat gray;
  cv::cvtColor(bgr, gray, cv::COLOR_BGR2GRAY);
  return gray;
}

// Mean of the squares and standard deviation of every window (from exact integer sums).
void window_stats(const cv::Mat& img, int tw, int th, cv::Mat* rms, cv::Mat* sd) {
  cv::Mat sum, sqsum;
  cv::integral(img, sum, sqsum, CV_64F, CV_64F);
  const int mw = img.cols - tw + 1, mh = img.rows - th + 1;
  rms->create(mh, mw, CV_64F);
  sd->create(mh, mw, CV_64F);
  const double n = double(tw) * th;
  for (int v = 0; v < mh; ++v)
    for (int u = 0; u < mw; ++u) {
      double s =
          sum.at<double>(v + th, u + tw) - sum.at<double>(v, u + tw) - sum.at<double>(v + th, u) + sum.at<double>(v, u);
      double q = sqsum.at<double>(v + th, u + tw) - sqsum.at<double>(v, u + tw) - sqsum.at<double>(v + th, u) +
                 sqsum.at<double>(v, u);
      rms->at<double>(v, u) = std::sqrt(q / n);
      sd->at<double>(v, u) = std::sqrt(std::max(0.0, (q - s * s / n) / n));
    }
}

// TM_CCOEFF_NORMED straight from the definition, in double (slow: a few positions only).
double direct_score(const cv::Mat& img, const cv::Mat& templ, int u, int v) {
  const double n = double(templ.cols) * templ.rows;
  double si = 0, sii = 0, st = 0, stt = 0, sti = 0;
  for (int j = 0; j < templ.rows; ++j)
    for (int i = 0; i < templ.cols; ++i) {
      const double I = img.at<uint8_t>(v + j, u + i), T = templ.at<uint8_t>(j, i);
      si += I;
      sii += I * I;
      st += T;
      stt += T * T;
      sti += T * I;
    }
  const double vi = sii - si * si / n, vt = stt - st * st / n;
  if (vi <= 1e-9) return 0;
  return (sti - si * st / n) / std::sqrt(vi * vt);
}

struct Comparison {
  double max_diff = 0;         // over the windows where OpenCV is reliable
  double max_direct_diff = 0;  // against the double reference, on sampled windows
  int compared = 0, excluded = 0;
  cv::Point cv_peak, our_peak;
  double cv_max = 0, our_max = 0;
};

// OpenCV correlates with a float DFT and subtracts the window and template means afterwards, so
// its absolute error on the numerator is a few float epsilons of the raw sum(T * I) (the DFT
// spreads the error of the bright parts of the frame over dark windows too), which the
// normalisation then divides by N * sigma_T * sigma_I. Its error on a score is therefore about
//   err ~ k * FLT_EPSILON * rms(T) * max(rms(frame), rms(window)) / (sigma_T * sigma_I)
// (measured: up to 15 for a 64x64 template; the DFT's error does not shrink with the template,
// so k grows for small ones, about as 1/sqrt(N)). Where that estimate with
// k = 8 * max(1, sqrt(4096 / N)) exceeds 1e-4 the window is
// near-flat relative to its brightness and OpenCV cannot deliver 1e-4: such windows are excluded
// from the comparison with OpenCV (and counted). Our scores are exact there too: every
// comparison also checks a sample of windows, excluded ones included, against a double-precision
// evaluation of the definition.
Comparison compare_with_opencv(const cv::Mat& frame, const cv::Mat& templ, std::vector<float>* our_map = nullptr) {
  Comparison c;
  cv::Mat ref;
  cv::matchTemplate(frame, templ, ref, cv::TM_CCOEFF_NORMED);
  cv::minMaxLoc(ref, nullptr, &c.cv_max, nullptr, &c.cv_peak);

  Gray f = from_mat(frame), t = from_mat(templ);
  TemplateMatcherCpu m;
  EXPECT_TRUE(m.set_template(t.view()).ok());
  std::vector<float> map;
  int mw = 0, mh = 0;
  Status s = m.score_map(f.view(), Rect{}, &map, &mw, &mh);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(mw, ref.cols);
  EXPECT_EQ(mh, ref.rows);
  if (!s.ok() || mw != ref.cols || mh != ref.rows) return c;

  cv::Mat rms, sd;
  window_stats(frame, templ.cols, templ.rows, &rms, &sd);
  cv::Scalar t_mean, t_sd;
  cv::meanStdDev(templ, t_mean, t_sd);
  const double t_rms = std::sqrt(t_mean[0] * t_mean[0] + t_sd[0] * t_sd[0]);
  cv::Scalar f_mean, f_sd;
  cv::meanStdDev(frame, f_mean, f_sd);
  const double f_rms = std::sqrt(f_mean[0] * f_mean[0] + f_sd[0] * f_sd[0]);
  const double n = double(templ.cols) * templ.rows;
  const double k = 8 * std::max(1.0, std::sqrt(4096.0 / n));
  c.our_max = -2;
  for (int v = 0; v < mh; ++v)
    for (int u = 0; u < mw; ++u) {
      const float ours = map[size_t(v) * mw + u];
      if (ours > c.our_max) {
        c.our_max = ours;
        c.our_peak = cv::Point(u, v);
      }
      if ((u * 7 + v * 13) % 97 == 0)
        c.max_direct_diff = std::max(c.max_direct_diff, std::abs(ours - direct_score(frame, templ, u, v)));
      const double est =
          k * FLT_EPSILON * t_rms * std::max(f_rms, rms.at<double>(v, u)) / (t_sd[0] * sd.at<double>(v, u));
      if (!(est <= 1e-4)) {
        ++c.excluded;
        continue;
      }
      ++c.compared;
      c.max_diff = std::max(c.max_diff, std::abs(double(ours) - double(ref.at<float>(v, u))));
    }
  if (our_map) *our_map = std::move(map);
  return c;
}

void expect_agrees(const Comparison& c, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_GT(c.compared, 0);
  EXPECT_LT(c.max_diff, 1e-4) << "compared " << c.compared << " windows, excluded " << c.excluded;
  EXPECT_LT(c.max_direct_diff, 1e-6);  // float rounding of an exact score
  EXPECT_LE(c.excluded, c.compared / 3) << "too many near-flat windows excluded";
  std::printf("%s: %d windows within %.2e of OpenCV, %d near-flat excluded\n", what.c_str(), c.compared, c.max_diff,
              c.excluded);
  EXPECT_EQ(c.cv_peak, c.our_peak);
  EXPECT_NEAR(c.cv_max, c.our_max, 1e-4);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Search region resolution

TEST(ResolveSearchRegion, EmptyMeansWholeFrame) {
  Rect r;
  ASSERT_TRUE(resolve_search_region(640, 480, 32, 16, Rect{}, &r).ok());
  EXPECT_EQ(r.x, 0);
  EXPECT_EQ(r.y, 0);
  EXPECT_EQ(r.w, 640);
  EXPECT_EQ(r.h, 480);
  ASSERT_TRUE(resolve_search_region(640, 480, 32, 16, Rect{10, 20, 100, 50}, &r).ok());
  EXPECT_EQ(r.x, 10);
  EXPECT_EQ(r.w, 100);
}

TEST(ResolveSearchRegion, Messages) {
  Rect r;
  Status s = resolve_search_region(640, 480, 32, 32, Rect{600, 0, 100, 100}, &r);
  EXPECT_EQ(s.message(), "search region (600,0 100x100) lies outside the frame 640x480");
  s = resolve_search_region(640, 480, 32, 32, Rect{-1, 0, 100, 100}, &r);
  EXPECT_EQ(s.message(), "search region (-1,0 100x100) lies outside the frame 640x480");
  s = resolve_search_region(100, 50, 64, 64, Rect{}, &r);
  EXPECT_EQ(s.message(), "template 64x64 is larger than the frame 100x50");
  s = resolve_search_region(640, 480, 64, 32, Rect{0, 0, 63, 200}, &r);
  EXPECT_EQ(s.message(), "template 64x32 is larger than the search region (0,0 63x200)");
  s = resolve_search_region(4000, 4000, 257, 10, Rect{}, &r);
  EXPECT_EQ(s.message(), "template 257x10 is larger than the maximum of 256x256");
}

// ---------------------------------------------------------------------------------------------
// Scores against OpenCV

TEST(TemplateMatchCpu, PhotographsAgreeWithOpenCV) {
  struct Case {
    const char* file;
    int x, y, w, h;
  } cases[] = {
      {"messi5.jpg", 250, 140, 64, 64}, {"messi5.jpg", 100, 200, 37, 29},  // odd, non-square
      {"baboon.jpg", 200, 100, 48, 48},                                    // fur: much texture
      {"fruits.jpg", 300, 200, 32, 40}, {"baboon.jpg", 300, 50, 16, 16},   // small: OpenCV's error grows, see above
  };
  for (const Case& k : cases) {
    cv::Mat img = load_gray(k.file);
    ASSERT_FALSE(img.empty());
    cv::Mat templ = img(cv::Rect(k.x, k.y, k.w, k.h)).clone();
    Comparison c = compare_with_opencv(img, templ);
    expect_agrees(c, std::string(k.file) + " template " + std::to_string(k.w) + "x" + std::to_string(k.h));
    EXPECT_EQ(c.our_peak, cv::Point(k.x, k.y));
    EXPECT_NEAR(c.our_max, 1.0, 1e-6);
  }
}

TEST(TemplateMatchCpu, TemplateFromOnePhotoSearchedInAnother) {
  // Two views of the same scene: the peak is not a perfect copy, its score is below 1.
  cv::Mat a = load_gray("left01.jpg"), b = load_gray("left02.jpg");
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  cv::Mat templ = a(cv::Rect(200, 150, 64, 48)).clone();
  expect_agrees(compare_with_opencv(b, templ), "left01 -> left02");
}

TEST(TemplateMatchCpu, VideoFramesAgreeWithOpenCV) {
  for (const char* clip : {"vtest.avi", "Megamind.avi"}) {
    cv::VideoCapture cap(data_path(clip));
    if (!cap.isOpened()) {
      ADD_FAILURE() << "cannot open " << clip;
      continue;
    }
    cv::Mat frame, first, later;
    // Frames 40 and 43 (Megamind.avi fades in from black over its first frames).
    for (int i = 0; i <= 43 && cap.read(frame); ++i) {
      if (i == 40) cv::cvtColor(frame, first, cv::COLOR_BGR2GRAY);
      if (i == 43) cv::cvtColor(frame, later, cv::COLOR_BGR2GRAY);
    }
    ASSERT_FALSE(first.empty());
    ASSERT_FALSE(later.empty());
    const int tw = 48, th = 40;
    // The most contrasted window of a coarse grid over the middle of the frame: something that
    // moves or stands out (a walker, a face), not a patch of wall.
    cv::Point at;
    double best_sd = -1;
    for (int y = first.rows / 4; y + th <= first.rows * 3 / 4; y += 8)
      for (int x = first.cols / 4; x + tw <= first.cols * 3 / 4; x += 8) {
        cv::Scalar mean, sd;
        cv::meanStdDev(first(cv::Rect(x, y, tw, th)), mean, sd);
        if (sd[0] > best_sd) {
          best_sd = sd[0];
          at = cv::Point(x, y);
        }
      }
    cv::Mat templ = first(cv::Rect(at.x, at.y, tw, th)).clone();
    Comparison c = compare_with_opencv(later, templ);
    expect_agrees(c, clip);
    // The scene moved little in 3 frames: the best match stays close to where the template was cut.
    EXPECT_LT(std::abs(c.our_peak.x - at.x), 40) << clip;
    EXPECT_LT(std::abs(c.our_peak.y - at.y), 40) << clip;
  }
}

TEST(TemplateMatchCpu, RandomImagesAgreeWithOpenCV) {
  const int sizes[][4] = {{200, 150, 8, 8}, {173, 111, 31, 17}, {256, 256, 64, 64}, {120, 90, 5, 3}};
  uint32_t seed = 1;
  for (const auto& sz : sizes) {
    Gray f = tmtest::random_gray(sz[0], sz[1], seed++);
    Gray t = tmtest::crop(f, sz[0] / 3, sz[1] / 4, sz[2], sz[3]);
    Comparison c = compare_with_opencv(to_mat(f), to_mat(t));
    SCOPED_TRACE(std::to_string(sz[2]) + "x" + std::to_string(sz[3]));
    EXPECT_LT(c.max_diff, 1e-4);
    EXPECT_LT(c.max_direct_diff, 1e-6);
    EXPECT_LE(c.excluded, c.compared / 10);
    EXPECT_EQ(c.cv_peak, c.our_peak);
  }
}

// ---------------------------------------------------------------------------------------------
// Matcher rules

TEST(TemplateMatchCpu, FlatWindowsScoreZero) {
  Gray f = tmtest::random_gray(160, 120, 7);
  for (int y = 30; y < 100; ++y)
    for (int x = 40; x < 140; ++x) f.at(x, y) = 77;
  Gray t = tmtest::random_gray(20, 16, 8);
  TemplateMatcherCpu m;
  ASSERT_TRUE(m.set_template(t.view()).ok());
  std::vector<float> map;
  int mw, mh;
  ASSERT_TRUE(m.score_map(f.view(), Rect{}, &map, &mw, &mh).ok());
  int flat = 0;
  for (int v = 30; v + 16 <= 100; ++v)
    for (int u = 40; u + 20 <= 140; ++u, ++flat) EXPECT_EQ(map[size_t(v) * mw + u], 0.0f) << u << "," << v;
  EXPECT_GT(flat, 1000);
}

TEST(TemplateMatchCpu, FlatTemplateRefused) {
  Gray t(24, 24);
  std::fill(t.px.begin(), t.px.end(), 200);
  TemplateMatcherCpu m;
  Status s = m.set_template(t.view());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "template has no variance (flat): TM_CCOEFF_NORMED is undefined for it");
  EXPECT_FALSE(m.has_template());
  Gray big = tmtest::random_gray(300, 10, 3);
  s = m.set_template(big.view());
  EXPECT_EQ(s.message(), "template 300x10 is larger than the maximum of 256x256");
  std::vector<Match> out;
  s = m.match(big.view(), MatchSettings{}, &out);
  EXPECT_EQ(s.message(), "no template set");
}

namespace {
// Low-contrast noise with copies of a high-contrast template pasted in.
struct Pasted {
  Gray frame, templ;
  std::vector<std::pair<int, int>> at;
};
Pasted pasted_scene() {
  Pasted p;
  p.frame = tmtest::random_gray(400, 300, 11, 100, 140);
  p.templ = tmtest::random_gray(24, 20, 12);
  p.at = {{30, 40}, {200, 35}, {320, 150}, {60, 220}, {250, 260}};
  for (auto& xy : p.at) tmtest::paste(p.frame, p.templ, xy.first, xy.second);
  return p;
}
}  // namespace

TEST(TemplateMatchCpu, NmsFindsEveryCopyOnce) {
  Pasted p = pasted_scene();
  TemplateMatcherCpu m;
  ASSERT_TRUE(m.set_template(p.templ.view()).ok());
  MatchSettings s;
  s.threshold = 0.5;
  s.max_matches = 20;
  std::vector<Match> out;
  ASSERT_TRUE(m.match(p.frame.view(), s, &out).ok());
  ASSERT_EQ(out.size(), p.at.size());
  // All score 1: ties are ordered by position (y, then x).
  std::vector<std::pair<int, int>> expect = p.at;
  std::sort(expect.begin(), expect.end(),
            [](auto a, auto b) { return a.second != b.second ? a.second < b.second : a.first < b.first; });
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].x, expect[i].first);
    EXPECT_EQ(out[i].y, expect[i].second);
    EXPECT_EQ(out[i].width, 24);
    EXPECT_EQ(out[i].height, 20);
    EXPECT_NEAR(out[i].score, 1.0, 1e-6);
    EXPECT_NEAR(out[i].sub_x, out[i].x, 0.5);
  }
}

// The pass-based NMS against its definition: sort best first (score, then y, then x) and keep each
// candidate whose box overlaps no kept one. Few distinct scores, so ties are common.
TEST(SelectMatches, EqualsSortThenGreedyOnRandomCandidates) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 500; ++trial) {
    const int tw = 1 + static_cast<int>(rng() % 40), th = 1 + static_cast<int>(rng() % 40);
    const int max_matches = 1 + static_cast<int>(rng() % 80);  // beyond kMaxMatches too
    const int n = static_cast<int>(rng() % 400);
    std::set<std::pair<int, int>> used;
    std::vector<tm::Candidate> candidates;
    while (static_cast<int>(candidates.size()) < n) {
      tm::Candidate c;
      c.u = static_cast<int>(rng() % 300);
      c.v = static_cast<int>(rng() % 200);
      if (!used.insert({c.u, c.v}).second) continue;
      c.score = 0.5f + 0.1f * static_cast<float>(rng() % 5);
      c.dx = (static_cast<int>(rng() % 101) - 50) / 100.0;
      c.dy = (static_cast<int>(rng() % 101) - 50) / 100.0;
      candidates.push_back(c);
    }
    const Rect search{7, 3, 400, 300};

    std::vector<tm::Candidate> sorted = candidates;
    std::sort(sorted.begin(), sorted.end(), [](const tm::Candidate& a, const tm::Candidate& b) {
      return a.score != b.score ? a.score > b.score : a.v != b.v ? a.v < b.v : a.u < b.u;
    });
    std::vector<tm::Candidate> expect;
    for (const tm::Candidate& c : sorted) {
      if (static_cast<int>(expect.size()) == std::min(max_matches, kMaxMatches)) break;
      bool overlaps = false;
      for (const tm::Candidate& k : expect)
        overlaps = overlaps || (std::abs(k.u - c.u) < tw && std::abs(k.v - c.v) < th);
      if (!overlaps) expect.push_back(c);
    }

    std::vector<Match> got;
    tm::select_matches(candidates.data(), n, search, tw, th, max_matches, &got);
    ASSERT_EQ(got.size(), expect.size()) << "trial " << trial;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].x, search.x + expect[i].u) << "trial " << trial << " match " << i;
      EXPECT_EQ(got[i].y, search.y + expect[i].v) << "trial " << trial << " match " << i;
      EXPECT_EQ(got[i].width, tw);
      EXPECT_EQ(got[i].height, th);
      EXPECT_EQ(got[i].score, static_cast<double>(expect[i].score));
      EXPECT_EQ(got[i].sub_x, got[i].x + expect[i].dx);
      EXPECT_EQ(got[i].sub_y, got[i].y + expect[i].dy);
    }
  }
}

TEST(TemplateMatchCpu, MaxMatchesAndThreshold) {
  Pasted p = pasted_scene();
  TemplateMatcherCpu m;
  ASSERT_TRUE(m.set_template(p.templ.view()).ok());
  MatchSettings s;
  s.threshold = 0.5;
  s.max_matches = 2;
  std::vector<Match> out;
  ASSERT_TRUE(m.match(p.frame.view(), s, &out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].y, 35);  // first in (y, x) order among equal scores
  EXPECT_EQ(out[1].y, 40);
  s.max_matches = 1000;  // clamped to kMaxMatches
  ASSERT_TRUE(m.match(p.frame.view(), s, &out).ok());
  EXPECT_EQ(out.size(), 5u);
  s.threshold = 1.01;  // nothing reaches it
  ASSERT_TRUE(m.match(p.frame.view(), s, &out).ok());
  EXPECT_TRUE(out.empty());
  s.threshold = -1.0;  // everything is a candidate: NMS still leaves non-overlapping boxes only
  s.max_matches = kMaxMatches;
  ASSERT_TRUE(m.match(p.frame.view(), s, &out).ok());
  EXPECT_EQ(out.size(), size_t(kMaxMatches));
  for (size_t i = 0; i < out.size(); ++i)
    for (size_t j = i + 1; j < out.size(); ++j)
      EXPECT_FALSE(std::abs(out[i].x - out[j].x) < 24 && std::abs(out[i].y - out[j].y) < 20);
  s.max_matches = 0;
  EXPECT_EQ(m.match(p.frame.view(), s, &out).message(), "max_matches must be at least 1 (got 0)");
}

TEST(TemplateMatchCpu, SearchRegionRestrictsAndReportsFrameCoordinates) {
  Pasted p = pasted_scene();
  TemplateMatcherCpu m;
  ASSERT_TRUE(m.set_template(p.templ.view()).ok());
  MatchSettings s;
  s.threshold = 0.5;
  s.max_matches = 10;
  s.search = Rect{150, 20, 240, 170};  // holds (200,35) and (320,150) only
  std::vector<Match> out;
  ASSERT_TRUE(m.match(p.frame.view(), s, &out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].x, 200);
  EXPECT_EQ(out[0].y, 35);
  EXPECT_EQ(out[1].x, 320);
  EXPECT_EQ(out[1].y, 150);
  // The map of a region equals the matching window of the whole frame's map.
  std::vector<float> whole, part;
  int ww, wh, pw, ph;
  ASSERT_TRUE(m.score_map(p.frame.view(), Rect{}, &whole, &ww, &wh).ok());
  ASSERT_TRUE(m.score_map(p.frame.view(), s.search, &part, &pw, &ph).ok());
  EXPECT_EQ(pw, 240 - 24 + 1);
  EXPECT_EQ(ph, 170 - 20 + 1);
  for (int v = 0; v < ph; ++v)
    for (int u = 0; u < pw; ++u) ASSERT_EQ(part[size_t(v) * pw + u], whole[size_t(v + 20) * ww + u + 150]);
  s.search = Rect{390, 0, 20, 20};
  EXPECT_EQ(m.match(p.frame.view(), s, &out).message(), "search region (390,0 20x20) lies outside the frame 400x300");
}

TEST(TemplateMatchCpu, SubPixelFitOnShiftedPattern) {
  // A smooth blob pattern rendered at a fractional offset: the template is the same pattern
  // rendered at integer position, so the true top-left is (60 + dx, 45 + dy).
  auto render = [](Gray& g, double ox, double oy) {
    for (int y = 0; y < g.height; ++y)
      for (int x = 0; x < g.width; ++x) {
        const double X = x - ox, Y = y - oy;
        double v = 30;
        v += 180 * std::exp(-((X - 14) * (X - 14) + (Y - 12) * (Y - 12)) / 40.0);
        v += 120 * std::exp(-((X - 26) * (X - 26) + (Y - 22) * (Y - 22)) / 25.0);
        g.at(x, y) = static_cast<uint8_t>(std::lround(std::min(255.0, v)));
      }
  };
  Gray t(40, 34);
  render(t, 0, 0);
  TemplateMatcherCpu m;
  ASSERT_TRUE(m.set_template(t.view()).ok());
  for (auto d : {std::pair<double, double>{0.3, -0.2}, {-0.4, 0.25}, {0.0, 0.0}}) {
    Gray f(160, 120);
    render(f, 60 + d.first, 45 + d.second);
    MatchSettings s;
    s.threshold = 0.5;
    std::vector<Match> out;
    ASSERT_TRUE(m.match(f.view(), s, &out).ok());
    ASSERT_EQ(out.size(), 1u);
    EXPECT_NEAR(out[0].sub_x, 60 + d.first, 0.12);
    EXPECT_NEAR(out[0].sub_y, 45 + d.second, 0.12);
    EXPECT_LE(std::abs(out[0].sub_x - out[0].x), 0.5);
  }
}

TEST(TemplateMatchCpu, PitchedFrameAndTemplate) {
  Gray f = tmtest::random_gray(150, 100, 21, 0, 255, 173);
  Gray t = tmtest::random_gray(19, 23, 22, 0, 255, 40);
  Gray fd = tmtest::crop(f, 0, 0, 150, 100), td = tmtest::crop(t, 0, 0, 19, 23);
  TemplateMatcherCpu a, b;
  ASSERT_TRUE(a.set_template(t.view()).ok());
  ASSERT_TRUE(b.set_template(td.view()).ok());
  std::vector<float> ma, mb;
  int w1, h1, w2, h2;
  ASSERT_TRUE(a.score_map(f.view(), Rect{}, &ma, &w1, &h1).ok());
  ASSERT_TRUE(b.score_map(fd.view(), Rect{}, &mb, &w2, &h2).ok());
  EXPECT_EQ(ma, mb);
}

// The matcher keeps its row sums, candidate list and helper threads from frame to frame. Frames,
// search regions (split over many workers, then over one) and templates that change between calls
// must give exactly what a fresh matcher gives, also after a move and from another thread.
TEST(TemplateMatchCpu, ReusedMatcherEqualsFreshOneFrameAfterFrame) {
  Gray a = tmtest::structured_gray(640, 480, 31);
  Gray b = tmtest::structured_gray(400, 300, 32, 416);
  const Gray t1 = tmtest::crop(a, 300, 200, 32, 32), t2 = tmtest::crop(b, 200, 150, 48, 24);
  tmtest::paste(b, t1, 50, 30);
  const Rect whole{}, small{40, 24, 100, 70};  // small: little enough work for a single worker
  struct Step {
    const Gray* frame;
    Rect search;
    const Gray* templ;
  };
  const Step steps[] = {
      {&a, whole, &t1}, {&b, small, &t1}, {&a, small, &t1}, {&b, whole, &t1},
      {&a, whole, &t2}, {&b, small, &t2}, {&a, small, &t2}, {&b, whole, &t2},
  };
  struct Result {
    std::vector<Match> matches;
    std::vector<float> map;
    int map_w = 0, map_h = 0;
  };
  MatchSettings s;
  s.threshold = -1.0;  // every cell is a candidate: the candidate count changes with every step
  s.max_matches = 8;
  auto run_step = [&s](TemplateMatcherCpu& m, const Step& step, Result* out) {
    s.search = step.search;
    ASSERT_TRUE(m.match(step.frame->view(), s, &out->matches).ok());
    ASSERT_TRUE(m.score_map(step.frame->view(), step.search, &out->map, &out->map_w, &out->map_h).ok());
  };

  TemplateMatcherCpu reused;
  const Gray* reused_templ = nullptr;
  for (int round = 0; round < 2; ++round) {
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; ++i) {
      SCOPED_TRACE("round " + std::to_string(round) + ", step " + std::to_string(i));
      const Step& step = steps[i];
      if (reused_templ != step.templ) {
        ASSERT_TRUE(reused.set_template(step.templ->view()).ok());
        reused_templ = step.templ;
      }
      if (round == 1 && i == 4) {  // the helpers belong to the matcher: they move with it
        TemplateMatcherCpu moved(std::move(reused));
        reused = std::move(moved);
      }
      Result got;
      if (round == 1 && i % 2 == 1) {  // a streaming thread that changed between frames
        std::thread other([&] { run_step(reused, step, &got); });
        other.join();
      } else {
        run_step(reused, step, &got);
      }
      TemplateMatcherCpu fresh;
      ASSERT_TRUE(fresh.set_template(step.templ->view()).ok());
      Result want;
      run_step(fresh, step, &want);
      ASSERT_FALSE(want.matches.empty());
      ASSERT_EQ(got.matches.size(), want.matches.size());
      for (size_t k = 0; k < want.matches.size(); ++k) {
        EXPECT_EQ(got.matches[k].x, want.matches[k].x);
        EXPECT_EQ(got.matches[k].y, want.matches[k].y);
        EXPECT_EQ(got.matches[k].width, want.matches[k].width);
        EXPECT_EQ(got.matches[k].height, want.matches[k].height);
        EXPECT_EQ(got.matches[k].sub_x, want.matches[k].sub_x);
        EXPECT_EQ(got.matches[k].sub_y, want.matches[k].sub_y);
        EXPECT_EQ(got.matches[k].score, want.matches[k].score);
      }
      EXPECT_EQ(got.map_w, want.map_w);
      EXPECT_EQ(got.map_h, want.map_h);
      EXPECT_TRUE(got.map == want.map);
    }
  }
}

TEST(TemplateMatchCpu, FastEnoughFor640x480) {
#ifdef __SANITIZE_ADDRESS__
  GTEST_SKIP() << "a timing test: the sanitizers make the code several times slower";
#endif
  Gray f = tmtest::structured_gray(640, 480, 5);
  Gray t = tmtest::crop(f, 300, 200, 32, 32);
  TemplateMatcherCpu m;
  ASSERT_TRUE(m.set_template(t.view()).ok());
  std::vector<Match> out;
  MatchSettings s;
  ASSERT_TRUE(m.match(f.view(), s, &out).ok());  // warm-up
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(m.match(f.view(), s, &out).ok());
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("CPU match 640x480, 32x32 template: %.1f ms\n", secs * 1e3);
  EXPECT_LT(secs, 1.0);
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out[0].x, 300);
  EXPECT_EQ(out[0].y, 200);
}

// ---------------------------------------------------------------------------------------------
// to_gray

TEST(ToGrayCpu, MatchesCvtColorForEveryPackedFormat) {
  cv::Mat bgr = cv::imread(data_path("fruits.jpg"), cv::IMREAD_COLOR);
  ASSERT_FALSE(bgr.empty());
  // Plus every extreme channel value, to exercise the rounding.
  cv::Mat rnd(64, 97, CV_8UC3);
  cv::randu(rnd, 0, 256);
  for (const cv::Mat& src : {bgr, rnd}) {
    cv::Mat ref;
    cv::cvtColor(src, ref, cv::COLOR_BGR2GRAY);
    cv::Mat rgb, bgra, rgba;
    cv::cvtColor(src, rgb, cv::COLOR_BGR2RGB);
    cv::cvtColor(src, bgra, cv::COLOR_BGR2BGRA);
    cv::cvtColor(src, rgba, cv::COLOR_BGR2RGBA);
    // The x / alpha byte must not matter.
    cv::Mat bgrx = bgra.clone(), rgbx = rgba.clone();
    cv::RNG r(5);
    for (int y = 0; y < bgrx.rows; ++y)
      for (int x = 0; x < bgrx.cols; ++x) {
        bgrx.at<cv::Vec4b>(y, x)[3] = r.uniform(0, 256);
        rgbx.at<cv::Vec4b>(y, x)[3] = r.uniform(0, 256);
      }
    // OpenCV's own conversions of the 4-channel inputs give the same gray.
    cv::Mat ref4;
    cv::cvtColor(bgra, ref4, cv::COLOR_BGRA2GRAY);
    EXPECT_EQ(cv::norm(ref, ref4, cv::NORM_INF), 0);
    cv::cvtColor(rgb, ref4, cv::COLOR_RGB2GRAY);
    EXPECT_EQ(cv::norm(ref, ref4, cv::NORM_INF), 0);

    struct F {
      PixelFormat f;
      const cv::Mat* m;
    } fs[] = {{PixelFormat::BGR, &src},   {PixelFormat::RGB, &rgb},   {PixelFormat::BGRx, &bgrx},
              {PixelFormat::RGBx, &rgbx}, {PixelFormat::BGRA, &bgra}, {PixelFormat::RGBA, &rgba}};
    for (const F& k : fs) {
      ImageView v;
      v.format = k.f;
      v.width = k.m->cols;
      v.height = k.m->rows;
      v.planes[0] = Plane{k.m->data, static_cast<int64_t>(k.m->step)};
      std::vector<uint8_t> out(size_t(v.width + 3) * v.height, 0);
      ASSERT_TRUE(to_gray_cpu(v, out.data(), v.width + 3).ok());
      int bad = 0;
      for (int y = 0; y < v.height; ++y)
        for (int x = 0; x < v.width; ++x) bad += out[size_t(y) * (v.width + 3) + x] != ref.at<uint8_t>(y, x);
      EXPECT_EQ(bad, 0) << pixel_format_name(k.f);
    }
  }
}

TEST(ToGrayCpu, EveryColourEqualsCvtColor) {
  cv::Mat all(4096, 4096, CV_8UC3);
  for (int i = 0; i < (1 << 24); ++i) {
    cv::Vec3b& p = all.at<cv::Vec3b>(i >> 12, i & 4095);
    p[0] = i & 255;
    p[1] = (i >> 8) & 255;
    p[2] = i >> 16;
  }
  cv::Mat ref;
  cv::cvtColor(all, ref, cv::COLOR_BGR2GRAY);
  ImageView v;
  v.format = PixelFormat::BGR;
  v.width = v.height = 4096;
  v.planes[0] = Plane{all.data, static_cast<int64_t>(all.step)};
  cv::Mat out(4096, 4096, CV_8UC1);
  ASSERT_TRUE(to_gray_cpu(v, out.data, static_cast<int64_t>(out.step)).ok());
  EXPECT_EQ(cv::countNonZero(out != ref), 0);
}

TEST(ToGrayCpu, YuvAndGrayCopyTheLumaPlane) {
  Gray y = tmtest::random_gray(64, 48, 3, 0, 255, 80);
  std::vector<uint8_t> uv(80 * 24, 128);
  for (PixelFormat f : {PixelFormat::NV12, PixelFormat::I420, PixelFormat::GRAY8}) {
    ImageView v;
    v.format = f;
    v.width = 64;
    v.height = 48;
    v.planes[0] = Plane{y.px.data(), 80};
    v.planes[1] = Plane{uv.data(), 80};
    v.planes[2] = Plane{uv.data(), 80};
    std::vector<uint8_t> out(64 * 48);
    ASSERT_TRUE(to_gray_cpu(v, out.data(), 64).ok());
    for (int j = 0; j < 48; ++j)
      for (int i = 0; i < 64; ++i) ASSERT_EQ(out[j * 64 + i], y.at(i, j)) << pixel_format_name(f);
  }
}

// YUY2 / UYVY give their Y bytes, P010 its 16-bit luma rounded to 8 bits (half up, 255 at most).
TEST(ToGrayCpu, PackedAndTenBitYuvGiveTheirLuma) {
  const int W = 33, H = 7;
  std::mt19937 rng(5);
  for (PixelFormat f : {PixelFormat::YUY2, PixelFormat::UYVY, PixelFormat::P010_10LE}) {
    SCOPED_TRACE(pixel_format_name(f));
    const bool p010 = f == PixelFormat::P010_10LE;
    const int64_t stride = (p010 ? 2 * W : 4 * ((W + 1) / 2)) + 10;
    std::vector<uint8_t> img(size_t(stride) * H);
    for (auto& b : img) b = uint8_t(rng());
    std::vector<uint8_t> chroma(size_t(stride) * H, 128);
    ImageView v;
    v.format = f;
    v.width = W;
    v.height = H;
    v.planes[0] = Plane{img.data(), stride};
    v.planes[1] = Plane{chroma.data(), stride};
    std::vector<uint8_t> out(size_t(W) * H);
    ASSERT_TRUE(to_gray_cpu(v, out.data(), W).ok());
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) {
        const uint8_t* row = img.data() + y * stride;
        long want;
        if (f == PixelFormat::YUY2)
          want = row[2 * x];
        else if (f == PixelFormat::UYVY)
          want = row[2 * x + 1];
        else
          want = std::min(255L, std::lround((row[2 * x] | (row[2 * x + 1] << 8)) / 256.0));
        ASSERT_EQ(out[size_t(y) * W + x], want) << x << "," << y;
      }
  }
}

// ---------------------------------------------------------------------------------------------
// draw_boxes

namespace {
bool in_outline(int x, int y, const Rect& b, int t) {
  if (x < b.x || x >= b.x + b.w || y < b.y || y >= b.y + b.h) return false;
  return x < b.x + t || x >= b.x + b.w - t || y < b.y + t || y >= b.y + b.h - t;
}
}  // namespace

TEST(DrawBoxesCpu, PackedFormatsByHand) {
  const int W = 50, H = 40;
  const Rect boxes[] = {{5, 6, 20, 15}, {40, 30, 20, 20} /* clipped right and bottom */, {-3, -2, 8, 7}};
  BoxStyle style;
  style.r = 200;
  style.g = 100;
  style.b = 50;
  style.thickness = 2;
  for (PixelFormat f : {PixelFormat::BGR, PixelFormat::RGB, PixelFormat::BGRx, PixelFormat::RGBx, PixelFormat::BGRA,
                        PixelFormat::RGBA, PixelFormat::GRAY8}) {
    const int bpp = packed_bytes_per_pixel(f);
    const int64_t stride = W * bpp + 7;
    std::vector<uint8_t> img(stride * H), orig;
    for (size_t i = 0; i < img.size(); ++i) img[i] = uint8_t(i * 31 + 7);
    orig = img;
    ImageView v;
    v.format = f;
    v.width = W;
    v.height = H;
    v.planes[0] = Plane{img.data(), stride};
    draw_boxes_cpu(v, boxes, 3, style);
    uint8_t expect_px[4];
    switch (f) {
      case PixelFormat::BGR:
      case PixelFormat::BGRx:
      case PixelFormat::BGRA:
        expect_px[0] = 50;
        expect_px[1] = 100;
        expect_px[2] = 200;
        break;
      case PixelFormat::GRAY8: expect_px[0] = uint8_t((50 * 3735 + 100 * 19235 + 200 * 9798 + 16384) >> 15); break;
      default:
        expect_px[0] = 200;
        expect_px[1] = 100;
        expect_px[2] = 50;
    }
    expect_px[3] = 255;
    const int written = (f == PixelFormat::BGRA || f == PixelFormat::RGBA) ? 4 : std::min(bpp, 3);
    int outline = 0;
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) {
        bool in = false;
        for (const Rect& b : boxes) in = in || in_outline(x, y, b, 2);
        outline += in;
        for (int c = 0; c < bpp; ++c) {
          const size_t i = size_t(y) * stride + size_t(x) * bpp + c;
          const uint8_t want = (in && c < written) ? expect_px[c] : orig[i];
          ASSERT_EQ(img[i], want) << pixel_format_name(f) << " at " << x << "," << y << " channel " << c;
        }
      }
    // The padding at the end of each row is never touched.
    for (int y = 0; y < H; ++y)
      for (int64_t i = W * bpp; i < stride; ++i) ASSERT_EQ(img[y * stride + i], orig[y * stride + i]);
    EXPECT_GT(outline, 100);
  }
}

// The samples of a YUV frame held in one buffer per plane, addressed as each format's definition
// says (written out here, not taken from the format table).
struct YuvFrame {
  PixelFormat f;
  int w, h, cw, ch;  // luma and chroma sizes
  int64_t stride[3];
  std::vector<uint8_t> plane[3];
  ImageView view;

  YuvFrame(PixelFormat format, int width, int height) : f(format), w(width), h(height) {
    cw = (w + 1) / 2;
    ch = packed422() ? h : (h + 1) / 2;
    const int bytes = f == PixelFormat::P010_10LE ? 2 : 1;
    stride[0] = packed422() ? 4 * cw + 6 : w * bytes + 6;
    stride[1] = f == PixelFormat::I420 ? cw + 6 : 2 * cw * bytes + 6;
    stride[2] = cw + 6;
    for (int p = 0; p < 3; ++p) plane[p].assign(size_t(stride[p]) * (p == 0 ? h : ch), 0);
    view.format = f;
    view.width = w;
    view.height = h;
    for (int p = 0; p < 3; ++p) view.planes[p] = Plane{plane[p].data(), stride[p]};
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) set(luma_at(x, y), 16);
    for (int y = 0; y < ch; ++y)
      for (int x = 0; x < cw; ++x) {
        set(u_at(x, y), 128);
        set(v_at(x, y), 128);
      }
  }
  bool packed422() const { return f == PixelFormat::YUY2 || f == PixelFormat::UYVY; }
  uint8_t* at(int p, int64_t byte, int y) { return plane[p].data() + y * stride[p] + byte; }
  uint8_t* luma_at(int x, int y) {
    if (f == PixelFormat::YUY2) return at(0, 2 * x, y);
    if (f == PixelFormat::UYVY) return at(0, 2 * x + 1, y);
    return at(0, f == PixelFormat::P010_10LE ? 2 * x : x, y);
  }
  uint8_t* u_at(int x, int y) {
    switch (f) {
      case PixelFormat::NV12: return at(1, 2 * x, y);
      case PixelFormat::NV21: return at(1, 2 * x + 1, y);
      case PixelFormat::YUY2: return at(0, 4 * x + 1, y);
      case PixelFormat::UYVY: return at(0, 4 * x, y);
      case PixelFormat::P010_10LE: return at(1, 4 * x, y);
      default: return at(1, x, y);
    }
  }
  uint8_t* v_at(int x, int y) {
    switch (f) {
      case PixelFormat::NV12: return at(1, 2 * x + 1, y);
      case PixelFormat::NV21: return at(1, 2 * x, y);
      case PixelFormat::YUY2: return at(0, 4 * x + 3, y);
      case PixelFormat::UYVY: return at(0, 4 * x + 2, y);
      case PixelFormat::P010_10LE: return at(1, 4 * x + 2, y);
      default: return at(2, x, y);
    }
  }
  // P010: the 8-bit value v is the 16-bit sample v << 8.
  void set(uint8_t* q, int v) {
    if (f == PixelFormat::P010_10LE) {
      q[0] = 0;
      q[1] = uint8_t(v);
    } else {
      q[0] = uint8_t(v);
    }
  }
  int get(const uint8_t* q) const { return f == PixelFormat::P010_10LE ? (q[0] | (q[1] << 8)) : q[0]; }
  int value8(int v) const { return f == PixelFormat::P010_10LE ? v << 8 : v; }
};

TEST(DrawBoxesCpu, YuvFormatsByHand) {
  const int W = 37, H = 29;  // odd sizes: the last chroma sample covers one luma column / row
  const Rect boxes[] = {{3, 4, 12, 9}, {30, 20, 10, 12}};
  BoxStyle style;  // green
  style.thickness = 3;
  // BT.601 limited range of (0, 255, 0): Y 144.55, Cb 53.80, Cr 34.21.
  const uint8_t Y = 145, U = 54, V = 34;
  for (PixelFormat f : {PixelFormat::NV12, PixelFormat::I420, PixelFormat::NV21, PixelFormat::YUY2, PixelFormat::UYVY,
                        PixelFormat::P010_10LE}) {
    SCOPED_TRACE(pixel_format_name(f));
    YuvFrame fr(f, W, H);
    const std::vector<uint8_t> before[3] = {fr.plane[0], fr.plane[1], fr.plane[2]};
    draw_boxes_cpu(fr.view, boxes, 2, style);
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) {
        bool in = in_outline(x, y, boxes[0], 3) || in_outline(x, y, boxes[1], 3);
        ASSERT_EQ(fr.get(fr.luma_at(x, y)), fr.value8(in ? Y : 16)) << x << "," << y;
      }
    const int sub_y = fr.packed422() ? 1 : 2;
    for (int cy = 0; cy < fr.ch; ++cy)
      for (int cx = 0; cx < fr.cw; ++cx) {
        bool covers = false;
        for (int dy = 0; dy < sub_y; ++dy)
          for (int dx = 0; dx < 2; ++dx) {
            const int x = 2 * cx + dx, y = sub_y * cy + dy;
            if (x < W && y < H) covers = covers || in_outline(x, y, boxes[0], 3) || in_outline(x, y, boxes[1], 3);
          }
        ASSERT_EQ(fr.get(fr.u_at(cx, cy)), fr.value8(covers ? U : 128)) << " chroma " << cx << "," << cy;
        ASSERT_EQ(fr.get(fr.v_at(cx, cy)), fr.value8(covers ? V : 128)) << " chroma " << cx << "," << cy;
      }
    // Row padding is never written.
    for (int p = 0; p < 3; ++p)
      for (size_t i = 0; i < fr.plane[p].size(); ++i)
        if (int64_t(i % fr.stride[p]) >= fr.stride[p] - 6) {
          ASSERT_EQ(fr.plane[p][i], before[p][i]) << "plane " << p;
        }
  }
}
