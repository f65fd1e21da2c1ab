// cudaprep-regress: the HTML report of check / compare (--html DIR): DIR/index.html and the PNGs
// it shows, nothing else (no scripts, fonts or links outside DIR), so that it opens from a CI
// artifact. It shows the result and summary of the text report, both sides' devices and
// versions, the settings that differ, plots over the frames with the tolerances, and pictures
// of the first failing frame and the worst frame. tools/regress/README.md describes it.
#pragma once

#include <string>

#include "regress_compare.h"
#include "regress_sides.h"
#include "regress_store.h"

namespace regress {

struct HtmlReportInput {
  const Comparison* cmp = nullptr;
  const Manifest* ref = nullptr;     // the golden / A
  const Manifest* run = nullptr;     // this run / B
  std::string ref_where, run_where;  // where each side comes from (a directory, "this run")
  const SideData* ref_data = nullptr;
  const SideData* run_data = nullptr;
  std::string clip;          // the clip, to draw the matches over its frames ("" = not at hand)
  std::string clip_missing;  // why there is no clip ("compare was not given --clip")
  bool played = true;        // false: check stopped at the settings, no frames were compared
  std::string text_report;   // the full text report
};

// Whether DIR can take a report, without touching anything: checked before a clip is played so
// that a bad --html fails at once, not after the clip. False with the reason.
bool html_dir_usable(const std::string& dir, std::string* error);

// Writes DIR/index.html and its PNGs. DIR is created; an existing DIR must hold an earlier
// report (index.html) or nothing, which is replaced. False with a message on any error.
bool write_html_report(const std::string& dir, const HtmlReportInput& in, std::string* error);

}  // namespace regress
