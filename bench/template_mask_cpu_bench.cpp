// OpenCV's cv::matchTemplate(TM_CCOEFF_NORMED) with and without a mask, 64 px over a 1920x1080
// frame, on all cores (OpenCV's default thread count): the CPU anchor of the masked matcher.
// Median wall time of one call.   template_mask_cpu_bench [iterations]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <vector>

namespace {
template <class F>
double median_ms(int iterations, F&& call) {
  call();
  std::vector<double> t;
  for (int i = 0; i < iterations; ++i) {
    const auto a = std::chrono::steady_clock::now();
    call();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 10;
  cv::Mat frame(1080, 1920, CV_8U);
  cv::randu(frame, 0, 255);
  cv::GaussianBlur(frame, frame, cv::Size(0, 0), 3);
  cv::Mat templ = frame(cv::Rect(800, 400, 64, 64)).clone();
  cv::Mat mask(64, 64, CV_8U, cv::Scalar(0));
  cv::ellipse(mask, cv::Point(32, 32), cv::Size(32, 32), 0, 0, 360, cv::Scalar(255), -1);
  cv::Mat result;
  const double masked =
      median_ms(iterations, [&] { cv::matchTemplate(frame, templ, result, cv::TM_CCOEFF_NORMED, mask); });
  const double plain = median_ms(iterations, [&] { cv::matchTemplate(frame, templ, result, cv::TM_CCOEFF_NORMED); });
  std::printf("| OpenCV %s CPU, %d threads | 64 px masked | %.3f ms |\n| | 64 px unmasked | %.3f ms |\n", CV_VERSION,
              cv::getNumThreads(), masked, plain);
  return 0;
}
