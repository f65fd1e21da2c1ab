#include "regress_plot.h"

#include <glib.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "regress_math.h"

namespace regress {

namespace {

constexpr double kWidth = 960, kHeight = 210;
constexpr double kLeft = 74, kRight = 16, kTop = 26, kBottom = 34;  // plot area margins
constexpr double kBand = 12;                                        // band of non-finite values

std::string num(double v) { return format_short(v, 6); }

}  // namespace

std::string markup_escape(const std::string& text) {
  gchar* e = g_markup_escape_text(text.c_str(), (gssize)text.size());
  std::string out = e;
  g_free(e);
  return out;
}

std::vector<double> nice_ticks(double lo, double hi) {
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / 5;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) {
      step = m * mag;
      break;
    }
  std::vector<double> ticks;
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step)
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0 : t);
  return ticks;
}

std::string plot_svg(const Plot& p) {
  // y range: the finite values and the tolerance, 0 included unless all are far from it
  double lo = INFINITY, hi = -INFINITY;
  bool nonfinite = false;
  for (const auto& pt : p.points) {
    if (!std::isfinite(pt.value)) {
      nonfinite = true;
      continue;
    }
    lo = std::min(lo, pt.value);
    hi = std::max(hi, pt.value);
  }
  for (const auto& pt : p.ref_points) {
    if (!std::isfinite(pt.value)) continue;
    lo = std::min(lo, pt.value);
    hi = std::max(hi, pt.value);
  }
  if (p.has_tolerance) {
    lo = std::min(lo, p.tolerance);
    hi = std::max(hi, p.tolerance);
  }
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  if (p.from_zero || (lo > 0 && lo < hi * 0.5)) lo = std::min(lo, 0.0);
  if (hi == lo && lo == 0 && p.from_zero) {
    hi = 1;
  } else if (hi == lo) {
    const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  } else {
    const double pad = (hi - lo) * 0.08;
    hi += pad;
    if (lo != 0) lo -= pad;
  }
  const std::vector<double> ticks = nice_ticks(lo, hi);
  lo = std::min(lo, ticks.front());
  hi = std::max(hi, ticks.back());

  const double x0 = kLeft, x1 = kWidth - kRight, y0 = kTop + kBand, y1 = kHeight - kBottom;
  const double span = p.frames > 1 ? (double)(p.frames - 1) : 1.0;
  auto X = [&](double frame) { return x0 + (x1 - x0) * frame / span; };
  auto Y = [&](double v) { return y1 - (y1 - y0) * (v - lo) / (hi - lo); };
  auto XY = [&](const PlotPoint& pt) {
    const double y = std::isfinite(pt.value) ? Y(pt.value) : kTop + kBand / 2;
    return std::make_pair(X((double)pt.frame), y);
  };

  std::ostringstream o;
  o.precision(6);
  o << "<svg class=\"plot\" id=\"" << p.id << "\" data-series=\"" << p.id << "\" viewBox=\"0 0 " << kWidth << " "
    << kHeight << "\" width=\"" << kWidth << "\" height=\"" << kHeight
    << "\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"" << markup_escape(p.y_label)
    << " per frame\">\n";
  o << "<rect class=\"area\" x=\"" << x0 << "\" y=\"" << y0 << "\" width=\"" << x1 - x0 << "\" height=\"" << y1 - y0
    << "\"/>\n";
  // failing frames: a band behind the data, one per run of consecutive failing frames
  const double half = std::max(1.0, (x1 - x0) / std::max(1.0, span) / 2);
  for (size_t i = 0; i < p.points.size(); i++) {
    if (!p.points[i].failing) continue;
    size_t j = i;
    while (j + 1 < p.points.size() && p.points[j + 1].failing && p.points[j + 1].frame == p.points[j].frame + 1) j++;
    const double left = X((double)p.points[i].frame) - half, right = X((double)p.points[j].frame) + half;
    o << "<rect class=\"failband\" x=\"" << left << "\" y=\"" << kTop << "\" width=\"" << right - left << "\" height=\""
      << y1 - kTop << "\"/>\n";
    i = j;
  }
  for (double t : ticks) {
    o << "<line class=\"grid\" x1=\"" << x0 << "\" x2=\"" << x1 << "\" y1=\"" << Y(t) << "\" y2=\"" << Y(t)
      << "\"/><text class=\"ytick\" x=\"" << x0 - 6 << "\" y=\"" << Y(t) + 4 << "\">" << num(t) << "</text>\n";
  }
  for (double f : nice_ticks(0, span)) {
    if (f != std::floor(f) || f > span) continue;
    o << "<text class=\"xtick\" x=\"" << X(f) << "\" y=\"" << y1 + 16 << "\">" << (uint64_t)f << "</text>\n";
  }
  o << "<text class=\"xlabel\" x=\"" << x1 << "\" y=\"" << kHeight - 2 << "\">frame</text>\n";
  o << "<text class=\"ylabel\" x=\"" << 4 << "\" y=\"" << kTop - 10 << "\">" << markup_escape(p.y_label) << "</text>\n";
  if (nonfinite)
    o << "<text class=\"bandlabel\" x=\"" << x0 + 4 << "\" y=\"" << kTop + kBand / 2 - 8 << "\">"
      << markup_escape(p.nonfinite_label) << "</text>\n";
  if (p.has_tolerance) {
    const double ty = Y(p.tolerance);
    const double label_y = ty - y0 < 16 ? ty + 14 : ty - 5;  // below the line at the top of the area
    o << "<line class=\"tolerance\" x1=\"" << x0 << "\" x2=\"" << x1 << "\" y1=\"" << ty << "\" y2=\"" << ty
      << "\"/><text class=\"tollabel\" x=\"" << x1 - 4 << "\" y=\"" << label_y << "\">"
      << markup_escape(p.tolerance_label) << "</text>\n";
  }
  // the reference's series: a dashed line under the main one
  if (!p.ref_points.empty()) {
    std::string ref_path;
    for (const auto& pt : p.ref_points) {
      if (!std::isfinite(pt.value)) continue;
      const auto [x, y] = XY(pt);
      ref_path += (ref_path.empty() ? "M" : " L") + num(x) + " " + num(y);
    }
    if (!ref_path.empty()) o << "<path class=\"refline\" d=\"" << ref_path << "\"/>\n";
    for (const auto& pt : p.ref_points) {
      const auto [x, y] = XY(pt);
      o << "<circle class=\"refpt\" cx=\"" << x << "\" cy=\"" << y << "\" r=\"2\" data-frame=\"" << pt.frame
        << "\" data-value=\"" << format_double(pt.value) << "\"><title>frame " << pt.frame << ": "
        << markup_escape(p.ref_label) << " " << num(pt.value) << "</title></circle>\n";
    }
  }
  // the line joins consecutive finite values
  std::string path;
  bool pen = false;
  for (const auto& pt : p.points) {
    if (!std::isfinite(pt.value)) {
      pen = false;
      continue;
    }
    const auto [x, y] = XY(pt);
    path += (pen ? " L" : " M") + num(x) + " " + num(y);
    pen = true;
  }
  if (!path.empty()) o << "<path class=\"line\" d=\"" << path.substr(1) << "\"/>\n";
  const double r = p.points.size() > 400 ? 1.6 : 3;
  for (const auto& pt : p.points) {
    const auto [x, y] = XY(pt);
    o << "<circle class=\"pt" << (pt.failing ? " fail" : "") << (std::isfinite(pt.value) ? "" : " nonfinite")
      << "\" cx=\"" << x << "\" cy=\"" << y << "\" r=\"" << r << "\" data-frame=\"" << pt.frame << "\" data-value=\""
      << format_double(pt.value) << "\"><title>frame " << pt.frame << ": " << markup_escape(p.y_label) << " "
      << num(pt.value) << (pt.failing ? " (fails)" : "") << "</title></circle>\n";
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace regress
