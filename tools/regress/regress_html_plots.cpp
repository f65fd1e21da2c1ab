#include <cmath>
#include <map>

#include "regress_html_parts.h"

namespace regress {

namespace {

Plot make_plot(const std::string& sink, const std::string& series, const std::string& y_label, uint64_t frames) {
  Plot p;
  p.id = "plot-" + sink + "-" + series;
  p.y_label = y_label;
  p.frames = frames;
  return p;
}

void set_tolerance(Plot* p, double value, const std::string& label) {
  p->has_tolerance = true;
  p->tolerance = value;
  p->tolerance_label = label;
}

bool full_store(const Manifest* m) { return m && m->store == "full"; }

// A detections sink: the largest box shift and confidence delta of its pairs per frame, and per
// class its count on each side over the frames (the reference's dashed).
void detection_plots(const std::vector<FrameResult>& frames, const std::string& sink, const CompareOptions& opt,
                     const HtmlReportInput& in, SinkPlots* sp) {
  const uint64_t n = frames.size();
  Plot a = make_plot(sink, "box-shift", "box shift (px)", n);
  Plot b = make_plot(sink, "confidence-delta", "confidence delta", n);
  a.from_zero = b.from_zero = true;
  set_tolerance(&a, opt.det.pos_tol, "tolerance " + format_short(opt.det.pos_tol, 6) + " px");
  set_tolerance(&b, opt.det.conf_tol, "tolerance " + format_short(opt.det.conf_tol, 6));
  std::map<std::string, Plot> counts;
  std::vector<std::pair<uint64_t, const SinkResult*>> results;
  for (const auto& f : frames) {
    auto it = f.sinks.find(sink);
    if (it == f.sinks.end() || !it->second.ref_present || !it->second.run_present) continue;
    results.emplace_back(f.index, &it->second);
  }
  for (const DetClassSummary& c : summarize_detection_classes(results)) {
    Plot p =
        make_plot(sink, "count-" + c.key,
                  "detections of " + c.key + " (" + in.cmp->run_label() + "; " + in.cmp->ref_label() + " dashed)", n);
    p.from_zero = true;
    p.ref_label = in.cmp->ref_label();
    counts[c.key] = p;
  }
  for (const auto& [frame, r] : results) {
    PlotPoint pa, pb;
    pa.frame = pb.frame = frame;
    pa.failing = pb.failing = !r->pass;
    pa.value = r->det.max_shift;
    pb.value = r->det.max_dconf;
    if (!r->det.pairs.empty()) {
      a.points.push_back(pa);
      b.points.push_back(pb);
    }
    for (auto& [key, p] : counts) {
      auto c = r->det.classes.find(key);
      PlotPoint run, ref;
      run.frame = ref.frame = frame;
      run.failing = !r->pass;
      run.value = c == r->det.classes.end() ? 0 : (double)c->second.n_run;
      ref.value = c == r->det.classes.end() ? 0 : (double)c->second.n_ref;
      p.points.push_back(run);
      p.ref_points.push_back(ref);
    }
  }
  sp->plots = {a, b};
  for (auto& kv : counts) sp->plots.push_back(kv.second);
}

}  // namespace

std::vector<SinkPlots> report_plots(const std::vector<FrameResult>& frames, const HtmlReportInput& in) {
  const CompareOptions& opt = in.cmp->options();
  const bool values = full_store(in.ref) && full_store(in.run);
  std::vector<SinkPlots> out;
  for (const auto& sink : in.ref->sinks) {
    SinkPlots sp;
    sp.sink = sink.name;
    sp.kind = sink.kind;
    const uint64_t n = frames.size();
    if (sink.kind == "tensor") {
      Plot a, b;
      if (values) {
        a = make_plot(sink.name, "max-abs", "max abs diff", n);
        a.from_zero = true;
        b = make_plot(sink.name, "psnr", "PSNR (dB)", n);
        b.nonfinite_label = "inf: identical in value";
        a.nonfinite_label = "inf: NaN against a number";
        if (opt.tensor_tol.kind == TensorTolerance::MaxAbs)
          set_tolerance(&a, opt.tensor_tol.value, "tolerance " + opt.tensor_tol.text());
        else if (opt.tensor_tol.kind == TensorTolerance::Exact)
          set_tolerance(&a, 0, "tolerance exact: any difference fails");
        else
          set_tolerance(&b, opt.tensor_tol.value, "tolerance " + opt.tensor_tol.text());
      } else {
        // the text report's figures for digest-only recordings: differences of the stats
        a = make_plot(sink.name, "mean-delta", "mean difference", n);
        b = make_plot(sink.name, "l2-delta", "L2 difference", n);
        set_tolerance(&a, 0, "exact (digest-only): any difference fails");
        set_tolerance(&b, 0, "exact (digest-only): any difference fails");
        sp.note =
            "A recording stores tensor digests only (--store digest): per-value figures (max abs diff, "
            "PSNR) are not available. Plotted: " +
            in.cmp->run_label() + "'s mean and L2 minus " + in.cmp->ref_label() +
            "'s, per frame, as in the text report.";
      }
      for (const auto& f : frames) {
        auto it = f.sinks.find(sink.name);
        if (it == f.sinks.end() || !it->second.ref_present || !it->second.run_present) continue;
        const SinkResult& r = it->second;
        if (r.ref_bytes != r.run_bytes) continue;  // no figures for tensors of different sizes
        PlotPoint pa, pb;
        pa.frame = pb.frame = f.index;
        pa.failing = pb.failing = !r.pass;
        if (values) {
          if (!r.identical && !r.data_compared) continue;
          pa.value = r.identical ? 0 : r.diff.max_abs;
          pb.value = r.identical ? INFINITY : r.diff.psnr;
        } else {
          pa.value = r.identical ? 0 : r.run_stats.mean - r.ref_stats.mean;
          pb.value = r.identical ? 0 : r.run_stats.l2 - r.ref_stats.l2;
        }
        a.points.push_back(pa);
        b.points.push_back(pb);
      }
      sp.plots = {a, b};
    } else if (sink.kind == "detections") {
      detection_plots(frames, sink.name, opt, in, &sp);
    } else {
      Plot a = make_plot(sink.name, "position-delta", "match position delta (px)", n);
      Plot b = make_plot(sink.name, "score-delta", "match score delta", n);
      a.from_zero = b.from_zero = true;
      set_tolerance(&a, opt.pos_tol, "tolerance " + format_short(opt.pos_tol, 6) + " px");
      set_tolerance(&b, opt.score_tol, "tolerance " + format_short(opt.score_tol, 6));
      std::string counts;
      std::vector<std::pair<uint64_t, const SinkResult*>> results;
      for (const auto& f : frames) {
        auto it = f.sinks.find(sink.name);
        if (it == f.sinks.end() || !it->second.ref_present || !it->second.run_present) continue;
        const SinkResult& r = it->second;
        results.emplace_back(f.index, &r);
        if (r.match.n_ref != r.match.n_run)
          counts += (counts.empty() ? "" : ", ") + std::to_string(f.index) + " (" + std::to_string(r.match.n_ref) +
                    " vs " + std::to_string(r.match.n_run) + ")";
        if (r.match.pairs.empty()) continue;  // nothing paired, nothing to measure
        PlotPoint pa, pb;
        pa.frame = pb.frame = f.index;
        pa.failing = pb.failing = !r.pass;
        pa.value = r.match.max_dpos;
        pb.value = r.match.max_dscore;
        a.points.push_back(pa);
        b.points.push_back(pb);
      }
      if (!counts.empty()) sp.note = "Frames with a different number of matches: " + counts + ".";
      sp.templates = summarize_templates(results, opt);
      sp.plots = {a, b};
    }
    out.push_back(sp);
  }
  return out;
}

namespace {

// A bank's templates side by side: matches on each side, frames whose counts differ, the largest
// position and score deltas, scale / angle and full-search changes; failing rows in red.
std::string template_table_html(const std::string& sink, const std::vector<TemplateSummary>& templates,
                                const std::string& rl, const std::string& ul) {
  auto frame_of = [](double v, uint64_t frame) {
    return format_short(v, 6) + (v > 0 ? " (frame " + std::to_string(frame) + ")" : "");
  };
  std::string o = "<table class=\"templates\"><tr><th>template</th><th>matches in " + markup_escape(rl) +
                  "</th><th>matches in " + markup_escape(ul) +
                  "</th><th>frames with another count</th><th>max position delta (px)</th><th>max score delta</th>"
                  "<th>at another scale / angle</th><th>another full-search</th><th>failing frames</th></tr>\n";
  for (const TemplateSummary& t : templates) {
    std::string name = markup_escape(t.label);
    if (t.n_run == 0 && t.n_ref) name += " (only in " + markup_escape(rl) + ")";
    if (t.n_ref == 0 && t.n_run) name += " (only in " + markup_escape(ul) + ")";
    o += std::string("<tr") + (t.failing_frames ? " class=\"fail\"" : "") + " data-template=\"" +
         markup_escape(t.label) + "\" data-sink=\"" + markup_escape(sink) + "\" data-ref=\"" + std::to_string(t.n_ref) +
         "\" data-run=\"" + std::to_string(t.n_run) + "\" data-failing=\"" + std::to_string(t.failing_frames) +
         "\"><td>" + name + "</td><td>" + std::to_string(t.n_ref) + "</td><td>" + std::to_string(t.n_run) +
         "</td><td>" + std::to_string(t.count_frames) + "</td><td>" + frame_of(t.max_dpos, t.worst_pos_frame) +
         "</td><td>" + frame_of(t.max_dscore, t.worst_score_frame) + "</td><td>" + std::to_string(t.member_changes) +
         "</td><td>" + std::to_string(t.full_changes) + "</td><td>" + std::to_string(t.failing_frames) +
         (t.failing_frames ? " (first " + std::to_string(t.first_failing) + ")" : std::string()) + "</td></tr>\n";
  }
  return o + "</table>\n";
}

}  // namespace

std::string plots_html(const std::vector<SinkPlots>& plots, const std::string& ref_label,
                       const std::string& run_label) {
  std::string o;
  for (const auto& sp : plots) {
    o += "<h3>sink '" + markup_escape(sp.sink) + "' (" + sp.kind + ")</h3>\n";
    if (!single_template(sp.templates)) {
      o += "<p>Per template (matches are paired only within their template):</p>\n";
      o += template_table_html(sp.sink, sp.templates, ref_label, run_label);
    }
    if (!sp.note.empty()) o += "<p class=\"note\">" + markup_escape(sp.note) + "</p>\n";
    for (const auto& p : sp.plots) o += plot_svg(p);
  }
  o += "<p class=\"legend\"><span class=\"key line\"></span> value per frame &nbsp; <span class=\"key tol\"></span> "
       "tolerance &nbsp; <span class=\"key fail\"></span> failing frame &nbsp; (hover a point for its value)</p>\n";
  return o;
}

}  // namespace regress
