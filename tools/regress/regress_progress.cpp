#include "regress_progress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "regress_math.h"

namespace regress {

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const uint64_t s = (uint64_t)std::llround(seconds);
  char buf[48];
  if (s < 60)
    snprintf(buf, sizeof buf, "%u s", (unsigned)s);
  else if (s < 3600)
    snprintf(buf, sizeof buf, "%u:%02u", (unsigned)(s / 60), (unsigned)(s % 60));
  else
    snprintf(buf, sizeof buf, "%u:%02u:%02u", (unsigned)(s / 3600), (unsigned)(s / 60 % 60), (unsigned)(s % 60));
  return buf;
}

std::string progress_line(const ProgressSnapshot& s) {
  std::string line = s.label + ": frame " + std::to_string(s.frames);
  double left_s = -1;
  const double fps = s.elapsed_s > 0 ? s.frames / s.elapsed_s : 0;
  if (s.expected) {
    line += "/" + std::to_string(s.expected) + " (" +
            std::to_string(std::min<uint64_t>(100, s.frames * 100 / s.expected)) + "%)";
    if (fps > 0) left_s = s.frames >= s.expected ? 0 : (s.expected - s.frames) / fps;
  } else if (s.stream_fraction >= 0) {
    const double f = std::min(1.0, s.stream_fraction);
    line += " (" + std::to_string((int)(f * 100)) + "%)";
    // the clip plays at a steady rate: what is left takes as long per unit of stream time
    if (f > 0 && s.frames > 0) left_s = s.elapsed_s * (1 - f) / f;
  }
  if (s.elapsed_s > 0) line += ", " + format_short(fps, 3) + " fps";
  if (left_s >= 0) line += ", " + format_duration(left_s) + " left";
  if (!s.note.empty()) line += ", " + s.note;
  return line;
}

}  // namespace regress
