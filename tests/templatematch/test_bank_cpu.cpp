// The CPU bank matcher: every member of a bank equals its own single-template result, masked
// members agree with OpenCV's cv::matchTemplate(..., mask) and with a double-precision evaluation
// of the masked definition, and bad banks are refused with one exact message each.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <random>
#include <string>

#include "bank_match.h"
#include "templatematch.h"
#include "tm_test_util.h"

using namespace cudaprep;
using tmtest::Gray;

namespace {

cv::Mat load_gray(const std::string& name) {
  cv::Mat bgr = cv::imread(std::string(TEST_IMAGE_DIR) + "/" + name, cv::IMREAD_COLOR);
  EXPECT_FALSE(bgr.empty()) << "cannot read " << name;
  cv::Mat gray;
  cv::cvtColor(bgr, gray, cv::COLOR_BGR2GRAY);
  return gray;
}

Gray from_mat(const cv::Mat& m) {
  Gray g(m.cols, m.rows);
  for (int y = 0; y < m.rows; ++y)
    for (int x = 0; x < m.cols; ++x) g.at(x, y) = m.at<uint8_t>(y, x);
  return g;
}

MaskedGray masked_of(const cv::Mat& templ, const cv::Mat& mask = cv::Mat()) {
  MaskedGray g;
  g.width = templ.cols;
  g.height = templ.rows;
  for (int y = 0; y < templ.rows; ++y)
    for (int x = 0; x < templ.cols; ++x) {
      g.pixels.push_back(templ.at<uint8_t>(y, x));
      if (!mask.empty()) g.mask.push_back(mask.at<uint8_t>(y, x));
    }
  return g;
}

void add_template(TemplateBank* bank, const std::string& label, MaskedGray image, double threshold = 0.8,
                  int max_matches = 1) {
  BankTemplate t;
  t.label = label;
  t.threshold = threshold;
  t.max_matches = max_matches;
  bank->templates.push_back(t);
  BankMember m;
  m.image = std::move(image);
  m.template_index = static_cast<int>(bank->templates.size()) - 1;
  bank->members.push_back(std::move(m));
}

// Masked TM_CCOEFF_NORMED from the definition, in double; NaN where the window has no variance.
double direct_masked(const cv::Mat& img, const cv::Mat& templ, const cv::Mat& mask, int u, int v) {
  double n = 0, si = 0, sii = 0, st = 0, stt = 0, sti = 0;
  for (int j = 0; j < templ.rows; ++j)
    for (int i = 0; i < templ.cols; ++i) {
      if (!mask.at<uint8_t>(j, i)) continue;
      const double I = img.at<uint8_t>(v + j, u + i), T = templ.at<uint8_t>(j, i);
      n += 1;
      si += I;
      sii += I * I;
      st += T;
      stt += T * T;
      sti += T * I;
    }
  const double vi = n * sii - si * si, vt = n * stt - st * st;
  if (vi <= 0) return NAN;
  return (n * sti - si * st) / std::sqrt(vi * vt);
}

// Masks of several shapes, 0 / 255 (and one with other non-zero values, which count the same).
cv::Mat make_mask(int w, int h, int kind, uint32_t seed) {
  cv::Mat m(h, w, CV_8U, cv::Scalar(0));
  std::mt19937 rng(seed);
  switch (kind) {
    case 0: {  // random, about 70 % set
      std::uniform_int_distribution<int> d(0, 9);
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) m.at<uint8_t>(y, x) = d(rng) < 7 ? 255 : 0;
      break;
    }
    case 1:  // an ellipse, as a logo with transparent corners
      cv::ellipse(m, cv::Point(w / 2, h / 2), cv::Size(w / 2, h / 2), 0, 0, 360, cv::Scalar(255), -1);
      break;
    case 2:  // a ring with soft alpha values: any non-zero value counts
      cv::circle(m, cv::Point(w / 2, h / 2), std::min(w, h) / 2, cv::Scalar(17), -1);
      cv::circle(m, cv::Point(w / 2, h / 2), std::min(w, h) / 5, cv::Scalar(0), -1);
      break;
    default:  // a rotated rectangle
      cv::RotatedRect rr(cv::Point2f(w / 2.f, h / 2.f), cv::Size2f(w * 0.7f, h * 0.5f), 30);
      cv::Point2f pts[4];
      rr.points(pts);
      std::vector<cv::Point> poly(pts, pts + 4);
      cv::fillConvexPoly(m, poly, cv::Scalar(255));
  }
  return m;
}

}  // namespace

TEST(BankCpu, EveryMemberEqualsItsSingleTemplate) {
  cv::Mat img = load_gray("messi5.jpg"), other = load_gray("baboon.jpg");
  ASSERT_FALSE(img.empty());
  Gray frame = from_mat(img);
  for (int count : {1, 8, 32}) {
    TemplateBank bank;
    std::mt19937 rng(count);
    for (int k = 0; k < count; ++k) {
      const int w = 4 + static_cast<int>(rng() % 125), h = 4 + static_cast<int>(rng() % 125);
      const cv::Mat& src = k % 3 == 2 ? other : img;
      const int x = static_cast<int>(rng() % (src.cols - w)), y = static_cast<int>(rng() % (src.rows - h));
      add_template(&bank, "t" + std::to_string(k), masked_of(src(cv::Rect(x, y, w, h)).clone()), 0.5, 3);
    }
    BankMatcherCpu matcher;
    ASSERT_TRUE(matcher.set_bank(bank).ok());
    std::vector<Match> all;
    ASSERT_TRUE(
        matcher.match(frame.view(), BankSearch::over(bank, Rect{0, 0, frame.width, frame.height}), false, &all).ok());
    for (int k = 0; k < count; ++k) {
      SCOPED_TRACE("bank of " + std::to_string(count) + ", template " + std::to_string(k));
      const MaskedGray& g = bank.members[k].image;
      TemplateMatcherCpu single;
      ASSERT_TRUE(single.set_template(GrayView{g.pixels.data(), g.width, g.width, g.height}).ok());
      std::vector<float> a, b;
      int aw = 0, ah = 0, bw = 0, bh = 0;
      ASSERT_TRUE(single.score_map(frame.view(), Rect{}, &a, &aw, &ah).ok());
      ASSERT_TRUE(matcher.score_map(frame.view(), k, Rect{}, &b, &bw, &bh).ok());
      ASSERT_EQ(aw, bw);
      ASSERT_EQ(ah, bh);
      EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)));
      MatchSettings s;
      s.threshold = 0.5;
      s.max_matches = 3;
      std::vector<Match> expected;
      ASSERT_TRUE(single.match(frame.view(), s, &expected).ok());
      std::vector<Match> got;
      for (const Match& m : all)
        if (m.member == k) got.push_back(m);
      tmtest::expect_same_matches(expected, got, false);  // the single matcher's are member 0
    }
  }
}

TEST(BankCpu, MaskedAgreesWithOpenCVAndTheDefinition) {
  struct Case {
    const char* file;
    int x, y, w, h;
  } cases[] = {{"messi5.jpg", 250, 140, 64, 64},
               {"baboon.jpg", 200, 100, 48, 37},
               {"fruits.jpg", 300, 200, 33, 40},
               {"messi5.jpg", 100, 200, 17, 23}};
  int compared = 0;
  for (const Case& c : cases) {
    cv::Mat img = load_gray(c.file);
    ASSERT_FALSE(img.empty());
    Gray frame = from_mat(img);
    cv::Mat templ = img(cv::Rect(c.x, c.y, c.w, c.h)).clone();
    for (int kind = 0; kind < 4; ++kind) {
      SCOPED_TRACE(std::string(c.file) + " " + std::to_string(c.w) + "x" + std::to_string(c.h) + " mask " +
                   std::to_string(kind));
      cv::Mat mask = make_mask(c.w, c.h, kind, 7 + kind);
      TemplateBank bank;
      add_template(&bank, "masked", masked_of(templ, mask));
      BankMatcherCpu matcher;
      Status st = matcher.set_bank(bank);
      ASSERT_TRUE(st.ok()) << st.message();
      std::vector<float> ours;
      int mw = 0, mh = 0;
      ASSERT_TRUE(matcher.score_map(frame.view(), 0, Rect{}, &ours, &mw, &mh).ok());
      cv::Mat ref;
      cv::matchTemplate(img, templ, ref, cv::TM_CCOEFF_NORMED, mask);
      ASSERT_EQ(ref.cols, mw);
      ASSERT_EQ(ref.rows, mh);
      // OpenCV's masked path correlates in float through a DFT: compare where the window's
      // standard deviation under the mask is not small against its brightness (as the unmasked
      // comparison does), and check every 37th window against the double definition.
      cv::Mat binary = mask != 0;
      double max_diff = 0, max_direct = 0;
      int here = 0, excluded = 0;
      for (int v = 0; v < mh; ++v)
        for (int u = 0; u < mw; ++u) {
          const float o = ours[static_cast<size_t>(v) * mw + u];
          if ((u + 3 * v) % 37 == 0) {
            const double d = direct_masked(img, templ, binary, u, v);
            if (std::isnan(d))
              EXPECT_TRUE(std::isnan(o));
            else
              max_direct = std::max(max_direct, std::abs(o - d));
          }
          cv::Scalar mean, sd;
          cv::meanStdDev(img(cv::Rect(u, v, c.w, c.h)), mean, sd, binary);
          if (!((u * 7 + v * 13) % 11 == 0)) continue;  // a sample: meanStdDev per window is slow
          if (sd[0] < 0.02 * mean[0] + 2.0) {
            ++excluded;
            continue;
          }
          ++here;
          max_diff = std::max(max_diff, std::abs(static_cast<double>(o) - ref.at<float>(v, u)));
        }
      EXPECT_GT(here, excluded);
      EXPECT_LT(max_diff, 2e-4) << here << " windows compared";
      EXPECT_LT(max_direct, 1e-6);
      compared += here;
      // The template itself is found where it was cut.
      std::vector<Match> found;
      ASSERT_TRUE(
          matcher.match(frame.view(), BankSearch::over(bank, Rect{0, 0, frame.width, frame.height}), false, &found)
              .ok());
      ASSERT_EQ(found.size(), 1u);
      EXPECT_EQ(found[0].x, c.x);
      EXPECT_EQ(found[0].y, c.y);
      EXPECT_NEAR(found[0].score, 1.0, 1e-6);
    }
  }
  std::printf("masked: %d windows compared with OpenCV\n", compared);
}

TEST(BankCpu, WindowWithNoVarianceUnderTheMaskHasNoScore) {
  Gray frame = tmtest::random_gray(96, 64, 5);
  for (int y = 10; y < 40; ++y)
    for (int x = 20; x < 60; ++x) frame.at(x, y) = 77;
  cv::Mat img(frame.height, frame.width, CV_8U, frame.px.data());
  cv::Mat templ(12, 12, CV_8U);
  cv::randu(templ, 0, 255);
  cv::Mat mask(12, 12, CV_8U, cv::Scalar(0));
  mask(cv::Rect(2, 2, 8, 8)).setTo(255);
  TemplateBank bank;
  add_template(&bank, "m", masked_of(templ, mask), -1.0, 64);
  BankMatcherCpu matcher;
  ASSERT_TRUE(matcher.set_bank(bank).ok());
  std::vector<float> ours;
  int mw = 0, mh = 0;
  ASSERT_TRUE(matcher.score_map(frame.view(), 0, Rect{}, &ours, &mw, &mh).ok());
  cv::Mat ref;
  cv::matchTemplate(img, templ, ref, cv::TM_CCOEFF_NORMED, mask);
  int flat = 0;
  for (int v = 0; v < mh; ++v)
    for (int u = 0; u < mw; ++u) {
      // The masked part (2..9) lies in the flat patch: OpenCV divides by zero there.
      const bool under = u + 2 >= 20 && u + 10 <= 60 && v + 2 >= 10 && v + 10 <= 40;
      const float o = ours[static_cast<size_t>(v) * mw + u];
      EXPECT_EQ(std::isnan(o), under) << u << "," << v;
      if (under) {
        EXPECT_FALSE(std::isfinite(ref.at<float>(v, u))) << u << "," << v;
        ++flat;
      }
    }
  EXPECT_GT(flat, 100);
  // Never a match, even at threshold -1.
  std::vector<Match> found;
  ASSERT_TRUE(matcher.match(frame.view(), BankSearch::over(bank, Rect{0, 0, 96, 64}), false, &found).ok());
  for (const Match& m : found) EXPECT_FALSE(m.x + 2 >= 20 && m.x + 10 <= 60 && m.y + 2 >= 10 && m.y + 10 <= 40);
  EXPECT_FALSE(found.empty());
}

TEST(BankCpu, SuppressionWithinAndAcrossTemplates) {
  cv::Mat img = load_gray("baboon.jpg");
  Gray frame = from_mat(img);
  cv::Mat a = img(cv::Rect(200, 100, 40, 40)).clone();
  cv::Mat b = img(cv::Rect(210, 110, 40, 40)).clone();  // overlaps a's place
  TemplateBank bank;
  add_template(&bank, "a", masked_of(a), 0.9, 4);
  add_template(&bank, "b", masked_of(b), 0.9, 4);
  BankMatcherCpu matcher;
  ASSERT_TRUE(matcher.set_bank(bank).ok());
  std::vector<Match> apart, across;
  const BankSearch search = BankSearch::over(bank, Rect{0, 0, frame.width, frame.height});
  ASSERT_TRUE(matcher.match(frame.view(), search, false, &apart).ok());
  ASSERT_TRUE(matcher.match(frame.view(), search, true, &across).ok());
  ASSERT_EQ(apart.size(), 2u);  // each at its own place, though their boxes overlap
  EXPECT_EQ(apart[0].member + apart[1].member, 1);
  ASSERT_EQ(across.size(), 1u);  // both score 1: the lower y wins the tie
  EXPECT_EQ(across[0].member, 0);
  EXPECT_EQ(across[0].x, 200);
}

TEST(BankCpu, RefusalsNameTheProblem) {
  cv::Mat img = load_gray("baboon.jpg");
  auto bank_of = [&](cv::Mat templ, cv::Mat mask) {
    TemplateBank bank;
    add_template(&bank, "logo", masked_of(templ, mask));
    return bank;
  };
  auto message = [](const TemplateBank& bank) {
    BankMatcherCpu m;
    Status st = m.set_bank(bank);
    return st.ok() ? std::string("accepted") : st.message();
  };
  cv::Mat t = img(cv::Rect(10, 10, 20, 20)).clone();
  TemplateBank wrong_mask = bank_of(t, cv::Mat());
  wrong_mask.members[0].image.mask.assign(19 * 20, 1);
  EXPECT_EQ(message(wrong_mask), "template \"logo\": its mask has 380 values, the template 20x20 has 400 pixels");
  EXPECT_EQ(message(bank_of(t, cv::Mat(20, 20, CV_8U, cv::Scalar(0)))),
            "template \"logo\": its mask is empty (all zero)");
  cv::Mat flat_under = t.clone();
  flat_under(cv::Rect(5, 5, 10, 10)).setTo(9);
  cv::Mat inner(20, 20, CV_8U, cv::Scalar(0));
  inner(cv::Rect(5, 5, 10, 10)).setTo(255);
  EXPECT_EQ(message(bank_of(flat_under, inner)),
            "template \"logo\": no variance under its mask: TM_CCOEFF_NORMED is undefined for it");
  EXPECT_EQ(message(bank_of(img(cv::Rect(0, 0, 3, 20)).clone(), cv::Mat())),
            "template \"logo\" is 3x20: a template is 4 to 256 pixels on a side");
  TemplateBank scaled = bank_of(img(cv::Rect(0, 0, 300, 20)).clone(), cv::Mat());
  scaled.members[0].scale = 1.5;
  EXPECT_EQ(message(scaled),
            "template \"logo\" (scale 1.5, angle 0) is 300x20: a template is 4 to 256 pixels on a side");
  TemplateBank twice = bank_of(t, cv::Mat());
  add_template(&twice, "logo", masked_of(t));
  EXPECT_EQ(message(twice), "two templates are labelled \"logo\"");
  TemplateBank many;
  for (int k = 0; k <= kMaxBankTemplates; ++k) add_template(&many, "t" + std::to_string(k), masked_of(t));
  EXPECT_EQ(message(many), "65 templates: a bank holds at most 64");
  TemplateBank members = bank_of(t, cv::Mat());
  for (int k = 0; k < kMaxBankMembers; ++k) members.members.push_back(members.members[0]);
  EXPECT_EQ(message(members), "257 templates at all their scales and angles: a bank holds at most 256");
  EXPECT_EQ(message(TemplateBank()), "the template bank is empty");
}

TEST(BankCpu, SearchRegionsPerMember) {
  cv::Mat img = load_gray("messi5.jpg");
  Gray frame = from_mat(img);
  TemplateBank bank;
  add_template(&bank, "a", masked_of(img(cv::Rect(250, 140, 32, 32)).clone()), 0.9);
  add_template(&bank, "b", masked_of(img(cv::Rect(100, 200, 24, 20)).clone()), 0.9);
  BankMatcherCpu matcher;
  ASSERT_TRUE(matcher.set_bank(bank).ok());
  BankSearch search = BankSearch::over(bank, Rect{0, 0, frame.width, frame.height});
  search.regions[0] = Rect{240, 130, 60, 60};  // around a
  search.regions[1] = Rect{};                  // b not searched
  std::vector<Match> found;
  ASSERT_TRUE(matcher.match(frame.view(), search, false, &found).ok());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].member, 0);
  EXPECT_EQ(found[0].x, 250);
  search.regions[0] = Rect{240, 130, 20, 60};  // narrower than the template
  Status st = matcher.match(frame.view(), search, false, &found);
  EXPECT_EQ(st.message(), "template \"a\": template 32x32 is larger than the search region (240,130 20x60)");
}
