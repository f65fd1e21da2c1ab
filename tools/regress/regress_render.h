// cudaprep-regress: tensors turned back into pictures for the HTML report: de-normalised with
// the settings the tensor was made with (cudatensorize's scale, mean, std, channel order and
// layout from the manifest), and a heat map of the absolute difference of two tensors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "regress_image.h"
#include "regress_math.h"
#include "regress_store.h"

namespace regress {

struct TensorPicture {
  int width = 0, height = 0;
  bool nhwc = false;  // else NCHW
  bool bgr = false;   // channel order of the tensor
  int channels = 3;   // 3, or 1: gray (drawn gray)
  DType type = DType::F32;
  double scale = 1.0 / 255.0;
  double mean[3] = {0, 0, 0}, std[3] = {1, 1, 1};
  std::string element;  // the cudatensorize whose settings are used

  // Bytes of one picture (one slot of a batch).
  size_t bytes() const { return (size_t)width * height * channels * dtype_size(type); }
};

// Finds how to draw a tensor sink: its caps give the size, the cudatensorize element of that
// size, layout and type gives the normalisation. False with the reason where there is none.
bool tensor_picture(const Manifest& m, const SinkInfo& sink, TensorPicture* out, std::string* why);

// pixel = (value * std + mean) / scale, clamped to 0..255, in RGB order (a gray tensor's one
// channel on all three).
RgbImage tensor_to_image(const uint8_t* data, size_t bytes, const TensorPicture& p);

struct HeatMap {
  RgbImage image;
  double max = 0;                  // of the finite differences: the top of the colour scale
  int worst_x = -1, worst_y = -1;  // pixel of the largest difference (-1 when none differ)
  uint64_t nonfinite = 0;          // pixels where NaN meets a number (drawn in kNonFiniteColour)
  uint64_t differing = 0;          // pixels with any difference
  uint64_t at_max = 0;             // pixels whose difference is the largest
};
// Per pixel, the largest |ref - run| over the channels, on a black-red-yellow scale.
HeatMap diff_heat_map(const uint8_t* ref, const uint8_t* run, size_t bytes, const TensorPicture& p);
// The heat map's colour for t in 0..1, and the scale as a CSS gradient for the legend.
void heat_colour(double t, uint8_t rgb[3]);
std::string heat_css_gradient();
extern const uint8_t kNonFiniteColour[3];

}  // namespace regress
