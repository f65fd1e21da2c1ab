#include <cmath>

#include "regress_html_parts.h"
#include "regress_image.h"

namespace regress {

namespace {

std::string num(double v) { return format_short(v, 6); }

// How bad a slot is, for picking the one to draw: failing first, then the largest difference.
std::pair<int, double> slot_badness(const SlotResult& s) {
  const double d = !s.data_compared || s.identical ? 0 : (std::isnan(s.diff.max_abs) ? INFINITY : s.diff.max_abs);
  return {s.pass ? 0 : 1, d};
}

}  // namespace

size_t picture_slot(const SinkResult& r) {
  size_t best = 0;
  for (size_t i = 1; i < r.slots.size(); i++)
    if (slot_badness(r.slots[i]) > slot_badness(r.slots[best])) best = i;
  return best;
}

std::string slot_table_html(uint64_t frame, const SinkResult& r, size_t pictured, const std::string& rl,
                            const std::string& ul) {
  std::string o = "<table class=\"slots\"><tr><th>slot</th><th>empty (" + markup_escape(rl) + " / " +
                  markup_escape(ul) +
                  ")</th><th>max abs diff</th><th>PSNR (dB)</th><th>values differing</th>"
                  "<th>transform delta</th><th>result</th></tr>\n";
  for (size_t i = 0; i < r.slots.size(); i++) {
    const SlotResult& s = r.slots[i];
    auto yes_no = [](bool present, bool empty) { return present ? (empty ? "yes" : "no") : "-"; };
    const bool figures = s.data_compared && !s.identical;
    // the text report's figure for this slot, for tests/regress/check_html_report.py
    const std::string max_abs = figures ? format_double(s.diff.max_abs) : s.identical ? "0" : "";
    o += std::string("<tr") + (s.pass ? "" : " class=\"fail\"") + " data-frame=\"" + std::to_string(frame) +
         "\" data-sink=\"" + markup_escape(r.sink) + "\" data-slot=\"" + std::to_string(i) + "\" data-max-abs=\"" +
         max_abs + "\"><td>" + markup_escape(s.name) + (i == pictured ? " (pictured)" : "") + "</td><td>" +
         yes_no(s.ref_present, s.ref_empty) + " / " + yes_no(s.run_present, s.run_empty) + "</td><td>" +
         (figures       ? num(s.diff.max_abs)
          : s.identical ? "0"
                        : "-") +
         "</td><td>" +
         (figures       ? num(s.diff.psnr)
          : s.identical ? "inf"
                        : "-") +
         "</td><td>" + (figures ? std::to_string(s.diff.differing) + " of " + std::to_string(s.diff.count) : "-") +
         "</td><td>" + num(s.transform_delta) + "</td><td>" +
         (s.pass ? std::string("ok") : "FAIL: " + markup_escape(s.problem)) + "</td></tr>\n";
  }
  return o + "</table>\n";
}

}  // namespace regress
