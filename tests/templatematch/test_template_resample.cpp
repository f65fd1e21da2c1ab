// scale_template and rotate_template against OpenCV's cv::resize and cv::warpAffine, pixel for
// pixel, on real photographs and random images of odd sizes, with and without masks; the sizes,
// the masks a rotation uncovers, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <random>
#include <string>
#include <vector>

#include "template_resample.h"
#include "templatematch.h"

using namespace cudaprep;

namespace {

std::string data_path(const std::string& name) { return std::string(TEST_IMAGE_DIR) + "/" + name; }

cv::Mat load_gray(const std::string& name) {
  cv::Mat g = cv::imread(data_path(name), cv::IMREAD_GRAYSCALE);
  EXPECT_FALSE(g.empty()) << "cannot read " << data_path(name);
  return g;
}

MaskedGray from_mat(const cv::Mat& m, const cv::Mat& mask = cv::Mat()) {
  MaskedGray g;
  g.width = m.cols;
  g.height = m.rows;
  for (int y = 0; y < m.rows; y++) g.pixels.insert(g.pixels.end(), m.ptr<uint8_t>(y), m.ptr<uint8_t>(y) + m.cols);
  if (!mask.empty())
    for (int y = 0; y < mask.rows; y++)
      g.mask.insert(g.mask.end(), mask.ptr<uint8_t>(y), mask.ptr<uint8_t>(y) + mask.cols);
  return g;
}

cv::Mat pixels_mat(const MaskedGray& g) { return cv::Mat(g.height, g.width, CV_8UC1, (void*)g.pixels.data()).clone(); }
cv::Mat mask_mat(const MaskedGray& g) {
  if (!g.masked()) return cv::Mat(g.height, g.width, CV_8UC1, cv::Scalar(1));
  return cv::Mat(g.height, g.width, CV_8UC1, (void*)g.mask.data()).clone();
}

cv::Mat random_mat(int w, int h, std::mt19937* rng) {
  cv::Mat m(h, w, CV_8UC1);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) m.at<uint8_t>(y, x) = (uint8_t)((*rng)() & 255);
  return m;
}

// A mask with values 0..255 (non-zero counts): random blobs, so nearest sampling matters.
cv::Mat random_mask(int w, int h, std::mt19937* rng) {
  cv::Mat m(h, w, CV_8UC1);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) m.at<uint8_t>(y, x) = ((*rng)() % 3) ? (uint8_t)(1 + (*rng)() % 255) : 0;
  return m;
}

// Number of differing pixels; the first difference in *where.
int differences(const cv::Mat& a, const cv::Mat& b, std::string* where) {
  if (a.size() != b.size()) {
    *where = "size " + std::to_string(a.cols) + "x" + std::to_string(a.rows) + " vs " + std::to_string(b.cols) + "x" +
             std::to_string(b.rows);
    return -1;
  }
  int n = 0;
  for (int y = 0; y < a.rows; y++)
    for (int x = 0; x < a.cols; x++)
      if (a.at<uint8_t>(y, x) != b.at<uint8_t>(y, x)) {
        if (n++ == 0)
          *where = "(" + std::to_string(x) + "," + std::to_string(y) + "): " + std::to_string(a.at<uint8_t>(y, x)) +
                   " vs " + std::to_string(b.at<uint8_t>(y, x));
      }
  return n;
}

// The documented recipe, with OpenCV.
void opencv_scale(const cv::Mat& src, const cv::Mat& mask, double s, cv::Mat* px, cv::Mat* m) {
  cv::Size dsize((int)std::lround(src.cols * s), (int)std::lround(src.rows * s));
  cv::resize(src, *px, dsize, 0, 0, s < 1 ? cv::INTER_AREA : cv::INTER_LINEAR);
  cv::Mat mm;
  cv::resize(mask, mm, dsize, 0, 0, cv::INTER_NEAREST);
  *m = mm != 0;
  *m /= 255;
}

void opencv_rotate(const cv::Mat& src, const cv::Mat& mask, double a, cv::Mat* px, cv::Mat* m) {
  const double c = std::fabs(std::cos(a * CV_PI / 180)), sn = std::fabs(std::sin(a * CV_PI / 180));
  const int bw = (int)std::ceil(src.cols * c + src.rows * sn - 1e-6);
  const int bh = (int)std::ceil(src.cols * sn + src.rows * c - 1e-6);
  const cv::Point2f centre((src.cols - 1) / 2.f, (src.rows - 1) / 2.f);
  cv::Mat M = cv::getRotationMatrix2D(centre, a, 1.0);
  M.at<double>(0, 2) += (bw - 1) / 2.0 - centre.x;
  M.at<double>(1, 2) += (bh - 1) / 2.0 - centre.y;
  cv::warpAffine(src, *px, M, cv::Size(bw, bh), cv::INTER_LINEAR, cv::BORDER_CONSTANT, cv::Scalar(0));
  cv::Mat mm, ones(src.size(), CV_32F, cv::Scalar(1)), cover;
  cv::warpAffine(mask, mm, M, cv::Size(bw, bh), cv::INTER_NEAREST, cv::BORDER_CONSTANT, cv::Scalar(0));
  cv::warpAffine(ones, cover, M, cv::Size(bw, bh), cv::INTER_LINEAR, cv::BORDER_CONSTANT, cv::Scalar(0));
  *m = (mm != 0) & (cover == 1.0f);
  *m /= 255;
}

struct Case {
  std::string name;
  cv::Mat px, mask;  // mask empty: unmasked
};

// Crops of the photographs at odd and even sizes, and random images, some with random masks.
std::vector<Case> cases(int max_side, uint32_t seed) {
  std::vector<Case> out;
  std::mt19937 rng(seed);
  for (const char* name : {"fruits.jpg", "messi5.jpg", "baboon.jpg", "building.jpg"}) {
    cv::Mat g = load_gray(name);
    if (g.empty()) continue;
    for (int k = 0; k < 3; k++) {
      const int w = 4 + (int)(rng() % (max_side - 3)), h = 4 + (int)(rng() % (max_side - 3));
      const int x = (int)(rng() % (g.cols - w)), y = (int)(rng() % (g.rows - h));
      Case c{std::string(name) + " " + std::to_string(w) + "x" + std::to_string(h), g(cv::Rect(x, y, w, h)).clone(),
             cv::Mat()};
      if (k == 2) c.mask = random_mask(w, h, &rng), c.name += " masked";
      out.push_back(c);
    }
  }
  for (int k = 0; k < 6; k++) {
    const int w = 4 + (int)(rng() % (max_side - 3)), h = 4 + (int)(rng() % (max_side - 3));
    Case c{"random " + std::to_string(w) + "x" + std::to_string(h), random_mat(w, h, &rng), cv::Mat()};
    if (k % 2) c.mask = random_mask(w, h, &rng), c.name += " masked";
    out.push_back(c);
  }
  return out;
}

void expect_scale_equals_opencv(const Case& c, double s, int* compared) {
  int dw = (int)std::lround(c.px.cols * s), dh = (int)std::lround(c.px.rows * s);
  if (dw < kMinTemplateSide || dh < kMinTemplateSide || dw > kMaxTemplateSide || dh > kMaxTemplateSide) return;
  MaskedGray out;
  Status st = scale_template(from_mat(c.px, c.mask), s, &out);
  ASSERT_TRUE(st.ok()) << c.name << " scale " << s << ": " << st.message();
  cv::Mat px, m;
  opencv_scale(c.px, c.mask.empty() ? cv::Mat(c.px.size(), CV_8UC1, cv::Scalar(1)) : c.mask, s, &px, &m);
  std::string where;
  EXPECT_EQ(differences(pixels_mat(out), px, &where), 0) << c.name << " scale " << s << ": " << where;
  EXPECT_EQ(differences(mask_mat(out), m, &where), 0) << c.name << " scale " << s << " mask: " << where;
  EXPECT_EQ(out.masked(), !c.mask.empty()) << c.name << " scale " << s;
  ++*compared;
}

}  // namespace

TEST(TemplateResample, ScaleEqualsOpenCV) {
  int compared = 0;
  for (const Case& c : cases(256, 1)) {
    for (double s = 0.3; s <= 3.0001; s += 0.05) expect_scale_equals_opencv(c, s, &compared);
    for (double s : {0.5, 0.25, 1.0 / 3, 0.2, 1.0, 1.5, 2.0, 2.5, 3.0, 0.999, 1.001, 0.75, 1.25, 0.8})
      expect_scale_equals_opencv(c, s, &compared);
  }
  EXPECT_GT(compared, 400);
}

// Factors that divide the size exactly take OpenCV's whole-cell path (2x2: (sum + 2) >> 2).
TEST(TemplateResample, IntegerShrinkFactorsEqualOpenCV) {
  std::mt19937 rng(7);
  cv::Mat photo = load_gray("baboon.jpg");
  ASSERT_FALSE(photo.empty());
  int compared = 0;
  for (int k : {2, 3, 4, 5}) {
    for (int cells : {4, 7, 13, 32}) {
      for (int cells_y : {4, 9, 20}) {
        const int w = k * cells, h = k * cells_y;
        for (const cv::Mat& src : {random_mat(w, h, &rng), photo(cv::Rect(17, 29, w, h)).clone()}) {
          Case c{"factor " + std::to_string(k) + " " + std::to_string(w) + "x" + std::to_string(h), src,
                 random_mask(w, h, &rng)};
          expect_scale_equals_opencv(c, 1.0 / k, &compared);
        }
      }
    }
  }
  EXPECT_GT(compared, 80);
}

TEST(TemplateResample, RotateEqualsOpenCV) {
  std::vector<double> angles = {90, -90, 180, -180, 270, 45, -45, 1, -1, 0.5, 30, -30, 60, 135, -120, 10.25};
  for (double a = -45; a <= 45; a += 3.7) angles.push_back(a);
  int compared = 0;
  for (const Case& c : cases(160, 2)) {
    for (double a : angles) {
      int bw, bh;
      rotated_template_size(c.px.cols, c.px.rows, a, &bw, &bh);
      if (bw > kMaxTemplateSide || bh > kMaxTemplateSide || bw < kMinTemplateSide || bh < kMinTemplateSide) continue;
      MaskedGray out;
      Status st = rotate_template(from_mat(c.px, c.mask), a, &out);
      ASSERT_TRUE(st.ok()) << c.name << " angle " << a << ": " << st.message();
      cv::Mat px, m;
      opencv_rotate(c.px, c.mask.empty() ? cv::Mat(c.px.size(), CV_8UC1, cv::Scalar(1)) : c.mask, a, &px, &m);
      std::string where;
      EXPECT_EQ(differences(pixels_mat(out), px, &where), 0) << c.name << " angle " << a << ": " << where;
      EXPECT_EQ(differences(mask_mat(out), m, &where), 0) << c.name << " angle " << a << " mask: " << where;
      compared++;
    }
  }
  EXPECT_GT(compared, 300);
}

// Right angles move every pixel (cv::rotate), keep an unmasked template unmasked and swap the
// sides; 0 is a copy.
TEST(TemplateResample, RightAnglesAreExact) {
  std::mt19937 rng(3);
  for (auto [w, h] : {std::pair{37, 21}, std::pair{4, 9}, std::pair{64, 64}, std::pair{255, 6}}) {
    cv::Mat src = random_mat(w, h, &rng);
    for (auto [a, code] : {std::pair{90.0, cv::ROTATE_90_COUNTERCLOCKWISE}, std::pair{-90.0, cv::ROTATE_90_CLOCKWISE},
                           std::pair{180.0, cv::ROTATE_180}, std::pair{270.0, cv::ROTATE_90_CLOCKWISE}}) {
      MaskedGray out;
      ASSERT_TRUE(rotate_template(from_mat(src), a, &out).ok());
      cv::Mat expected;
      cv::rotate(src, expected, code);
      std::string where;
      EXPECT_EQ(differences(pixels_mat(out), expected, &where), 0) << w << "x" << h << " angle " << a << ": " << where;
      EXPECT_FALSE(out.masked()) << w << "x" << h << " angle " << a;
    }
    MaskedGray same;
    ASSERT_TRUE(rotate_template(from_mat(src), 0, &same).ok());
    EXPECT_EQ(same.pixels, from_mat(src).pixels);
    EXPECT_FALSE(same.masked());
  }
}

// A rotation masks out the corners it uncovers: none of the box's corners count at 45 degrees,
// the centre does, and the template's pixel count is about kept.
TEST(TemplateResample, RotationMasksUncoveredCorners) {
  std::mt19937 rng(4);
  MaskedGray out;
  ASSERT_TRUE(rotate_template(from_mat(random_mat(40, 40, &rng)), 45, &out).ok());
  EXPECT_EQ(out.width, 57);  // ceil(40 * sqrt(2))
  EXPECT_EQ(out.height, 57);
  ASSERT_TRUE(out.masked());
  const auto at = [&](int x, int y) { return out.mask[(size_t)y * out.width + x]; };
  EXPECT_EQ(at(0, 0), 0);
  EXPECT_EQ(at(56, 0), 0);
  EXPECT_EQ(at(0, 56), 0);
  EXPECT_EQ(at(56, 56), 0);
  EXPECT_EQ(at(28, 28), 1);
  long n = 0;
  for (uint8_t v : out.mask) n += v;
  EXPECT_GT(n, 1400);
  EXPECT_LE(n, 1600);
  // A masked source keeps its holes: an all-zero left half stays out after rotating.
  MaskedGray half = from_mat(random_mat(40, 40, &rng));
  half.mask.assign(40 * 40, 1);
  for (int y = 0; y < 40; y++)
    for (int x = 0; x < 20; x++) half.mask[y * 40 + x] = 0;
  ASSERT_TRUE(rotate_template(half, 180, &out).ok());
  for (int y = 0; y < 40; y++)
    for (int x = 0; x < 40; x++) ASSERT_EQ(out.mask[y * 40 + x], x >= 20 ? 0 : 1) << x << "," << y;
}

TEST(TemplateResample, Sizes) {
  int w, h;
  scaled_template_size(10, 7, 0.5, &w, &h);  // 3.5 rounds half away from zero
  EXPECT_EQ(w, 5);
  EXPECT_EQ(h, 4);
  scaled_template_size(33, 64, 1.25, &w, &h);
  EXPECT_EQ(w, 41);
  EXPECT_EQ(h, 80);
  rotated_template_size(37, 21, 90, &w, &h);
  EXPECT_EQ(w, 21);
  EXPECT_EQ(h, 37);
  rotated_template_size(37, 21, 180, &w, &h);
  EXPECT_EQ(w, 37);
  EXPECT_EQ(h, 21);
  rotated_template_size(10, 10, 30, &w, &h);  // 10 (cos 30 + sin 30) = 13.66
  EXPECT_EQ(w, 14);
  EXPECT_EQ(h, 14);
}

TEST(TemplateResample, ErrorsNameSizeScaleAndLimit) {
  std::mt19937 rng(5);
  MaskedGray t = from_mat(random_mat(20, 10, &rng)), out;
  Status st = scale_template(t, 0.3, &out);  // 6x3
  ASSERT_FALSE(st.ok());
  for (const char* part : {"6x3", "0.3", "20x10", "at least 4x4"})
    EXPECT_NE(st.message().find(part), std::string::npos) << part << ": " << st.message();
  st = scale_template(t, 13, &out);  // 260x130
  ASSERT_FALSE(st.ok());
  for (const char* part : {"260x130", "13", "at most 256x256"})
    EXPECT_NE(st.message().find(part), std::string::npos) << part << ": " << st.message();
  MaskedGray big = from_mat(random_mat(200, 200, &rng));
  st = rotate_template(big, 45, &out);  // 283x283
  ASSERT_FALSE(st.ok());
  for (const char* part : {"283x283", "45 degrees", "200x200", "at most 256x256"})
    EXPECT_NE(st.message().find(part), std::string::npos) << part << ": " << st.message();
  for (double bad : {0.0, -1.0, (double)NAN, (double)INFINITY}) EXPECT_FALSE(scale_template(t, bad, &out).ok()) << bad;
  EXPECT_FALSE(rotate_template(t, NAN, &out).ok());
  MaskedGray broken = t;
  broken.mask.assign(7, 1);
  EXPECT_FALSE(scale_template(broken, 1.5, &out).ok());
  EXPECT_FALSE(rotate_template(broken, 10, &out).ok());
}
