// Real photographs (Debian's opencv-doc examples) in any supported format, for the CPU tests.
#pragma once
#include <gtest/gtest.h>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <random>
#include <string>

#include "test_images.h"

namespace tztest {

inline cv::Mat load_photo(const std::string& name) {
  const std::string path = std::string(TEST_IMAGE_DIR) + "/" + name;
  cv::Mat m = cv::imread(path, cv::IMREAD_COLOR);
  EXPECT_FALSE(m.empty()) << "cannot read " << path;
  return m;
}

// A BGR photo converted to `f`, with padded rows and offset planes. Alpha/x bytes are random.
inline tztest::HostImage from_bgr(const cv::Mat& bgr, cudaprep::PixelFormat f, int row_pad, int plane_gap,
                                  std::mt19937& rng) {
  const int w = bgr.cols, h = bgr.rows;
  tztest::HostImage im = tztest::make_image(f, w, h, row_pad, plane_gap);
  std::uniform_int_distribution<int> byte(0, 255);
  if (cudaprep::is_yuv(f)) {
    cv::Mat even;
    cv::copyMakeBorder(bgr, even, 0, h % 2, 0, w % 2, cv::BORDER_REPLICATE);
    cv::Mat yuv;
    cv::cvtColor(even, yuv, cv::COLOR_BGR2YUV_I420);  // (3/2 H) x W: Y, then U, then V
    const int ew = even.cols, eh = even.rows, cw = ew / 2, chh = eh / 2;
    const uint8_t* Y = yuv.ptr<uint8_t>(0);
    const uint8_t* U = Y + size_t(ew) * eh;
    const uint8_t* V = U + size_t(cw) * chh;
    tztest::put_yuv(im, f, Y, ew, U, V, w, h, cw, chh, &rng);
    return im;
  }
  cv::Mat gray;
  if (f == cudaprep::PixelFormat::GRAY8) cv::cvtColor(bgr, gray, cv::COLOR_BGR2GRAY);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const cv::Vec3b p = bgr.at<cv::Vec3b>(y, x);  // B, G, R
      uint8_t* d = im.plane(0) + y * im.stride(0);
      switch (f) {
        case cudaprep::PixelFormat::BGR:
          d[3 * x] = p[0];
          d[3 * x + 1] = p[1];
          d[3 * x + 2] = p[2];
          break;
        case cudaprep::PixelFormat::RGB:
          d[3 * x] = p[2];
          d[3 * x + 1] = p[1];
          d[3 * x + 2] = p[0];
          break;
        case cudaprep::PixelFormat::BGRx:
        case cudaprep::PixelFormat::BGRA:
          d[4 * x] = p[0];
          d[4 * x + 1] = p[1];
          d[4 * x + 2] = p[2];
          d[4 * x + 3] = uint8_t(byte(rng));
          break;
        case cudaprep::PixelFormat::RGBx:
        case cudaprep::PixelFormat::RGBA:
          d[4 * x] = p[2];
          d[4 * x + 1] = p[1];
          d[4 * x + 2] = p[0];
          d[4 * x + 3] = uint8_t(byte(rng));
          break;
        case cudaprep::PixelFormat::GRAY8: d[x] = gray.at<uint8_t>(y, x); break;
        default: break;
      }
    }
  }
  return im;
}

}  // namespace tztest
