// cudaprep-regress: the parts of the HTML report (regress_html.h), one file each.
#pragma once

#include <string>
#include <vector>

#include "regress_compare.h"
#include "regress_html.h"
#include "regress_plot.h"

namespace regress {

// regress_html_plots.cpp: the plots of each sink over the frames, with the tolerances.
struct SinkPlots {
  std::string sink, kind;
  std::vector<Plot> plots;
  std::string note;                        // what is not plotted and why
  std::vector<TemplateSummary> templates;  // a matches sink's templates (a table, unless the single one)
};
std::vector<SinkPlots> report_plots(const std::vector<FrameResult>& frames, const HtmlReportInput& in);
// The plots, and a matches sink's table per template (a bank's).
std::string plots_html(const std::vector<SinkPlots>& plots, const std::string& ref_label, const std::string& run_label);

// regress_html_pictures.cpp: one sink's pictures of one frame (PNGs written into dir). A
// tensor sink: both tensors drawn back as images and a heat map of their difference (false with
// *error when a PNG cannot be written); a match sink: the clip's frame (frame_png, or a dark
// canvas and frame_missing saying why) with both sides' matches, a close-up and a table.
std::string tensor_pictures(uint64_t frame, const SinkInfo& sink, const SinkResult& r, const HtmlReportInput& in,
                            const std::string& dir, std::string* error);
std::string match_pictures(uint64_t frame, const SinkInfo& sink, const HtmlReportInput& in,
                           const std::string& frame_png, const std::string& frame_missing);
// A detections sink: the clip's frame with both sides' boxes and a table of the pairs, the
// missed and the extra detections.
std::string detection_pictures(uint64_t frame, const SinkInfo& sink, const HtmlReportInput& in,
                               const std::string& frame_png, const std::string& frame_missing);
// regress_html_slots.cpp: a batched tensor's slots: the one to draw (the first failing, else the
// most different, else slot 0) and a table row per slot with its figures.
size_t picture_slot(const SinkResult& r);
std::string slot_table_html(uint64_t frame, const SinkResult& r, size_t pictured, const std::string& ref_label,
                            const std::string& run_label);

// "frame-00007-<sink>-<what>.png"
std::string png_name(uint64_t frame, const std::string& sink, const char* what);

// regress_html_frames.cpp: which frames get pictures, and their sections.
struct FramePick {
  uint64_t frame = 0;
  std::string why;  // "first failing frame", "worst frame: max abs diff 0.5 (sink 'tensor')"
};
std::vector<FramePick> pick_frames(const std::vector<FrameResult>& frames);
// The sections, with an entry per frame for the navigation ("#frame-7", title).
std::string frame_sections_html(const std::vector<FramePick>& picks, const std::vector<FrameResult>& frames,
                                const HtmlReportInput& in, const std::string& dir,
                                std::vector<std::pair<std::string, std::string>>* nav, std::string* error);

}  // namespace regress
