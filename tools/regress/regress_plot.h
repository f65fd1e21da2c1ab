// cudaprep-regress: a line plot over frames as inline SVG, for the HTML report. Every point
// carries its frame and exact value (data-frame, data-value) and a tooltip, so that what is
// drawn can be read back and checked against the text report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace regress {

struct PlotPoint {
  uint64_t frame = 0;
  double value = 0;  // +-inf / NaN are drawn in a band above the plot area
  bool failing = false;
};

struct Plot {
  std::string id;       // element id and data-series name ("tensor-max-abs")
  std::string y_label;  // "max abs diff", "PSNR (dB)"
  uint64_t frames = 0;  // x runs over 0 .. frames-1
  std::vector<PlotPoint> points;
  bool has_tolerance = false;
  double tolerance = 0;
  std::string tolerance_label;  // "tolerance max-abs=1e-05"
  std::string nonfinite_label;  // text for the band of non-finite values ("inf: identical")
  bool from_zero = false;       // a magnitude: the y axis starts at 0
  // a second series to compare with (the reference's), drawn as a dashed line with its own
  // points (class "refpt", data-frame and data-value as the main series')
  std::vector<PlotPoint> ref_points;
  std::string ref_label;
};

std::string plot_svg(const Plot& p);

// Text made safe for HTML / SVG (GLib's g_markup_escape_text).
std::string markup_escape(const std::string& text);

// 3 to 7 round tick values covering lo..hi ("nice numbers": 1, 2 or 5 times a power of ten).
std::vector<double> nice_ticks(double lo, double hi);

}  // namespace regress
