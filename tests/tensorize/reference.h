// Independent double-precision reference of the tensorize transform, written from the
// documented semantics (kernels/tensorize/tensorize.h) only: it shares no code with kernels/ (it reads the
// config and image description structs, nothing else).
//
// Besides the exact value of every tensor element it returns the range [lo, hi] the value takes
// when the sample position moves by up to `position_slack` source pixels in x and y: the
// kernels compute positions in float, so their samples are off by a tiny, bounded amount;
// checking against that range (instead of a fixed tolerance) is tight on flat areas, tolerant
// only where the image is steep, and also accepts either pixel where a nearest-neighbour
// position is an exact tie.
#pragma once
#include <vector>

#include "image.h"
#include "tensorize.h"

namespace tzref {

struct Geometry {
  double rx, ry, rw, rh;  // resolved ROI
  double sx, sy;          // scale: (x_t + 0.5) = sx * (x_s + 0.5 - rx) + ox
  double ox, oy;
  double ax, ay, aw, ah;  // active rectangle in the tensor (clipped)
};

// Geometry from the resize-mode definitions. The config must be valid.
Geometry geometry(const cudaprep::TensorizeConfig& cfg);

// Whether tensor pixel x (or y) samples the source: a <= x + 0.5 < a + len (with 1e-6 slack
// against the rounding of the geometry: a boundary within 1e-6 below a pixel centre counts).
bool inside(double a, double len, int x);

struct Tensor {
  std::vector<double> value, lo, hi;  // normalised, in cfg's layout
  std::vector<unsigned char> active;  // per element: 1 = sampled the source, 0 = pad
};

// position_slack < 0: derived from the size of the coordinates (a few float ulps).
Tensor tensorize(const cudaprep::TensorizeConfig& cfg, const cudaprep::ImageView& src, double position_slack = -1);

// RGB (0..255) of the source, sampled at source position (xs, ys), pixel-index coordinates.
void sample_rgb(const cudaprep::TensorizeConfig& cfg, const Geometry& g, const cudaprep::ImageView& src, double xs,
                double ys, double rgb[3]);

// Python's round(): half to even.
double py_round(double v);

// IEEE binary16 of a float, computed from the value with frexp / ldexp (round to nearest even).
unsigned short ref_half_bits(float f);

}  // namespace tzref
