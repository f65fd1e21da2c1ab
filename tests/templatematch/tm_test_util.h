// Helpers shared by the template-matching tests (CPU and GPU suites). No OpenCV here: the GPU
// suite must build without it.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "templatematch.h"

namespace tmtest {

struct Gray {
  int width = 0, height = 0;
  int64_t stride = 0;
  std::vector<uint8_t> px;
  Gray() = default;
  Gray(int w, int h, int64_t s = 0) : width(w), height(h), stride(s ? s : w), px(static_cast<size_t>(stride) * h) {}
  uint8_t& at(int x, int y) { return px[static_cast<size_t>(y) * stride + x]; }
  uint8_t at(int x, int y) const { return px[static_cast<size_t>(y) * stride + x]; }
  cudaprep::GrayView view() const { return cudaprep::GrayView{px.data(), stride, width, height}; }
  cudaprep::GrayView sub(int x, int y, int w, int h) const {
    return cudaprep::GrayView{px.data() + static_cast<size_t>(y) * stride + x, stride, w, h};
  }
};

inline Gray random_gray(int w, int h, uint32_t seed, int lo = 0, int hi = 255, int64_t stride = 0) {
  Gray g(w, h, stride);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  for (auto& p : g.px) p = static_cast<uint8_t>(d(rng));
  return g;
}

// Smooth, structured content: a few sinusoids and blobs, quantised to bytes.
inline Gray structured_gray(int w, int h, uint32_t seed, int64_t stride = 0) {
  Gray g(w, h, stride);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(0.0, 1.0);
  double fx[3], fy[3], ph[3];
  for (int k = 0; k < 3; ++k) {
    fx[k] = 0.02 + 0.15 * d(rng);
    fy[k] = 0.02 + 0.15 * d(rng);
    ph[k] = 6.28 * d(rng);
  }
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      double v = 0;
      for (int k = 0; k < 3; ++k) v += std::sin(fx[k] * x + fy[k] * y * (k + 1) * 0.5 + ph[k]);
      v = 128 + 40 * v + 10 * d(rng);
      g.at(x, y) = static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
    }
  return g;
}

inline Gray crop(const Gray& src, int x, int y, int w, int h) {
  Gray g(w, h);
  for (int j = 0; j < h; ++j)
    for (int i = 0; i < w; ++i) g.at(i, j) = src.at(x + i, y + j);
  return g;
}

inline void paste(Gray& dst, const Gray& src, int x, int y) {
  for (int j = 0; j < src.height; ++j)
    for (int i = 0; i < src.width; ++i) dst.at(x + i, y + j) = src.at(i, j);
}

// The same matches in the same order: positions, scores and sub-pixel positions bit for bit,
// and with `members` the bank member of each.
inline void expect_same_matches(const std::vector<cudaprep::Match>& want, const std::vector<cudaprep::Match>& got,
                                bool members = true) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("match " + std::to_string(i));
    if (members) {
      EXPECT_EQ(want[i].member, got[i].member);
    }
    EXPECT_EQ(want[i].x, got[i].x);
    EXPECT_EQ(want[i].y, got[i].y);
    EXPECT_EQ(want[i].score, got[i].score);
    EXPECT_EQ(want[i].sub_x, got[i].sub_x);
    EXPECT_EQ(want[i].sub_y, got[i].sub_y);
  }
}

}  // namespace tmtest
