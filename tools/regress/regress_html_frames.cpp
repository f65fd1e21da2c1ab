#include <gst/gst.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "regress_html_parts.h"
#include "regress_image.h"
#include "regress_render.h"
#include "regress_sides.h"

namespace regress {

namespace {

std::string num(double v) { return format_short(v, 6); }

bool compared(const SinkResult& r) { return r.ref_present && r.run_present; }

// An image (or, without one, a dark canvas) of img_w x img_h units, showing the view
// (vx, vy, vw, vh) of it display_w pixels wide, with SVG drawn over it in the same units.
std::string picture(const std::string& png, int img_w, int img_h, double vx, double vy, double vw, double vh,
                    int display_w, const std::string& overlay, const std::string& alt) {
  const double s = display_w / vw;
  char box[320];
  g_snprintf(box, sizeof box, "<div class=\"pic\" style=\"width:%dpx;height:%dpx\">", display_w,
             (int)std::lround(vh * s));
  std::string o = box;
  if (!png.empty()) {
    char img[320];
    g_snprintf(img, sizeof img, "style=\"width:%.2fpx;height:%.2fpx;left:%.2fpx;top:%.2fpx\"", img_w * s, img_h * s,
               -vx * s, -vy * s);
    o += "<img src=\"" + markup_escape(png) + "\" alt=\"" + markup_escape(alt) + "\" " + img + ">";
  }
  o += "<svg viewBox=\"" + num(vx) + " " + num(vy) + " " + num(vw) + " " + num(vh) +
       "\" preserveAspectRatio=\"none\" xmlns=\"http://www.w3.org/2000/svg\">" + overlay + "</svg></div>";
  return o;
}

int tensor_display_width(int w) { return w <= 360 ? w * std::max(1, 360 / w) : 360; }

std::string png_name(uint64_t frame, const std::string& sink, const char* what) {
  char buf[32];
  g_snprintf(buf, sizeof buf, "frame-%05" G_GUINT64_FORMAT "-", frame);
  return buf + sink + "-" + what + ".png";
}

std::string stats_caption(const TensorStats& s) {
  return "min " + num(s.min) + ", max " + num(s.max) + ", mean " + num(s.mean);
}

std::string figure(const std::string& picture_html, const std::string& caption) {
  return "<figure>" + picture_html + "<figcaption>" + caption + "</figcaption></figure>\n";
}

std::string tensor_pictures(uint64_t frame, const SinkInfo& sink, const SinkResult& r, const HtmlReportInput& in,
                            const std::string& dir, std::string* error) {
  const std::string rl = in.cmp->ref_label(), ul = in.cmp->run_label();
  std::string o = "<h3>sink '" + markup_escape(sink.name) + "' (tensor)</h3>\n";
  auto no_pictures = [&](const std::string& why) {
    return o + "<p class=\"note\">No tensor pictures: " + markup_escape(why) + ".</p>\n";
  };
  const SinkInfo* run_sink = in.run->sink(sink.name);
  TensorPicture pref, prun;
  std::string why;
  if (!run_sink || !tensor_picture(*in.ref, sink, &pref, &why) || !tensor_picture(*in.run, *run_sink, &prun, &why))
    return no_pictures(why.empty() ? "the sink is not in " + ul : why);
  for (const auto& [label, where, m] : {std::make_tuple(rl, in.ref_where, in.ref), std::make_tuple(ul, in.run_where, in.run)})
    if (m->store != "full")
      return no_pictures("they need the tensors of both sides, and " + label + " (" + where +
                         ") stores tensor digests only (--store digest); record with --store full to see them");
  std::vector<uint8_t> ref_bytes, run_bytes;
  if (!in.ref_data->tensor_bytes(sink.name, frame, &ref_bytes, &why))
    return no_pictures("they need the tensors of both sides, and " + why + "; record with --store full to see them");
  if (r.identical)
    run_bytes = ref_bytes;
  else if (!in.run_data->tensor_bytes(sink.name, frame, &run_bytes, &why))
    return no_pictures("they need the tensors of both sides, and " + why + "; record with --store full to see them");

  const std::string fr = png_name(frame, sink.name, "ref"), fu = png_name(frame, sink.name, "run"),
                    fd = png_name(frame, sink.name, "diff");
  if (!write_png(dir + "/" + fr, tensor_to_image(ref_bytes.data(), ref_bytes.size(), pref), error) ||
      !write_png(dir + "/" + fu, tensor_to_image(run_bytes.data(), run_bytes.size(), prun), error))
    return "";
  const int dw = tensor_display_width(pref.width);
  auto norm = [](const TensorPicture& p) {
    return "de-normalised with " + p.element + "'s scale " + num(p.scale) + ", mean " + num(p.mean[0]) + "/" +
           num(p.mean[1]) + "/" + num(p.mean[2]) + ", std " + num(p.std[0]) + "/" + num(p.std[1]) + "/" +
           num(p.std[2]);
  };
  o += "<div class=\"row\">\n";
  o += figure(picture(fr, pref.width, pref.height, 0, 0, pref.width, pref.height, dw, "", rl),
              "<b>" + markup_escape(rl) + "</b> " + std::to_string(pref.width) + "x" + std::to_string(pref.height) +
                  "; " + stats_caption(r.ref_stats) + "<br>" + markup_escape(norm(pref)));
  o += figure(picture(fu, prun.width, prun.height, 0, 0, prun.width, prun.height, tensor_display_width(prun.width),
                      "", ul),
              "<b>" + markup_escape(ul) + "</b> " + std::to_string(prun.width) + "x" + std::to_string(prun.height) +
                  "; " + stats_caption(r.run_stats) + "<br>" + markup_escape(norm(prun)));
  if (ref_bytes.size() != run_bytes.size() || pref.width != prun.width || pref.height != prun.height ||
      pref.type != prun.type || pref.nhwc != prun.nhwc) {
    o += "</div>\n<p class=\"note\">No difference map: the two tensors differ in size or layout.</p>\n";
    return o;
  }
  const HeatMap h = diff_heat_map(ref_bytes.data(), run_bytes.data(), ref_bytes.size(), pref);
  if (!write_png(dir + "/" + fd, h.image, error)) return "";
  std::string ring, where = "; " + std::to_string(h.differing) + " of " +
                           std::to_string((uint64_t)pref.width * pref.height) + " pixels differ";
  if (h.worst_x >= 0 && h.at_max == 1) {  // a ring only where one pixel is the worst
    const double rad = std::max(2.5, pref.width / 24.0);
    ring = "<circle class=\"worst\" cx=\"" + num(h.worst_x + 0.5) + "\" cy=\"" + num(h.worst_y + 0.5) + "\" r=\"" +
           num(rad) + "\"/>";
    where += "; ring: the largest, at pixel (" + std::to_string(h.worst_x) + ", " + std::to_string(h.worst_y) + ")";
  }
  std::string caption = "<b>|" + markup_escape(rl) + " &minus; " + markup_escape(ul) +
                        "|</b>, largest over the channels, in tensor units";
  if (r.identical)
    caption += ": identical";
  else
    caption += markup_escape(where) + "<br><span class=\"scale\" style=\"background:" + heat_css_gradient() +
               "\"></span> 0 &hellip; " + num(h.max);
  if (h.nonfinite)
    caption += "<br>" + std::to_string(h.nonfinite) + " pixels where NaN meets a number, in <span style=\"color:rgb(" +
               std::to_string(kNonFiniteColour[0]) + "," + std::to_string(kNonFiniteColour[1]) + "," +
               std::to_string(kNonFiniteColour[2]) + ")\">&#9632;</span>";
  o += figure(picture(fd, pref.width, pref.height, 0, 0, pref.width, pref.height, dw, ring, "difference"), caption);
  o += "</div>\n";
  if (!r.identical && r.data_compared)
    o += "<p>max abs diff " + num(r.diff.max_abs) + " (element " + std::to_string(r.diff.worst_index) + "), PSNR " +
         num(r.diff.psnr) + " dB, " + std::to_string(r.diff.differing) + " of " + std::to_string(r.diff.count) +
         " values differ.</p>\n";
  return o;
}

// The matcher's frame size, from a match sink's caps.
bool frame_size(const SinkInfo& sink, int* w, int* h) {
  GstCaps* caps = gst_caps_from_string(sink.caps.c_str());
  bool ok = caps && gst_caps_get_size(caps) &&
            gst_structure_get_int(gst_caps_get_structure(caps, 0), "width", w) &&
            gst_structure_get_int(gst_caps_get_structure(caps, 0), "height", h);
  if (caps) gst_caps_unref(caps);
  return ok && *w > 0 && *h > 0;
}

std::string boxes(const std::vector<MatchRec>& list, const char* cls) {
  std::string o;
  for (size_t i = 0; i < list.size(); i++) {
    const MatchRec& m = list[i];
    o += std::string("<rect class=\"") + cls + "\" x=\"" + num(m.sub_x) + "\" y=\"" + num(m.sub_y) + "\" width=\"" +
         std::to_string(m.w) + "\" height=\"" + std::to_string(m.h) + "\"/>";
  }
  return o;
}

std::string match_table(const std::vector<MatchRec>& a, const std::vector<MatchRec>& b, const MatchDiff& d,
                        const std::string& rl, const std::string& ul) {
  auto cell = [](const std::vector<MatchRec>& list, int i) -> std::string {
    if (i < 0) return "<td colspan=\"3\">(none)</td>";
    const MatchRec& m = list[i];
    return "<td>" + num(m.sub_x) + "</td><td>" + num(m.sub_y) + "</td><td>" + num(m.score) + "</td>";
  };
  std::string o = "<table class=\"matches\"><tr><th colspan=\"3\" class=\"ref\">" + markup_escape(rl) +
                  "</th><th colspan=\"3\" class=\"run\">" + markup_escape(ul) +
                  "</th><th>position delta (px)</th><th>score delta</th></tr>\n"
                  "<tr><th>x</th><th>y</th><th>score</th><th>x</th><th>y</th><th>score</th><th></th><th></th></tr>\n";
  std::vector<bool> used_a(a.size()), used_b(b.size());
  for (const auto& p : d.pairs) {
    used_a[p.ref] = used_b[p.run] = true;
    o += "<tr>" + cell(a, p.ref) + cell(b, p.run) + "<td>" + num(p.dpos) + "</td><td>" + num(p.dscore) + "</td></tr>\n";
  }
  for (size_t i = 0; i < a.size(); i++)
    if (!used_a[i]) o += "<tr>" + cell(a, (int)i) + cell(b, -1) + "<td></td><td></td></tr>\n";
  for (size_t j = 0; j < b.size(); j++)
    if (!used_b[j]) o += "<tr>" + cell(a, -1) + cell(b, (int)j) + "<td></td><td></td></tr>\n";
  return o + "</table>\n";
}

std::string match_pictures(uint64_t frame, const SinkInfo& sink, const SinkResult& r, const HtmlReportInput& in,
                           const std::string& frame_png, const std::string& frame_missing) {
  const std::string rl = in.cmp->ref_label(), ul = in.cmp->run_label();
  std::string o = "<h3>sink '" + markup_escape(sink.name) + "' (matches)</h3>\n";
  const MatchesEntry* ea = in.ref_data->matches(sink.name, frame);
  const MatchesEntry* eb = in.run_data->matches(sink.name, frame);
  int w = 0, h = 0;
  if (!ea || !eb || !frame_size(sink, &w, &h))
    return o + "<p class=\"note\">No picture: the matches of this frame are not at hand.</p>\n";
  const MatchDiff d = diff_matches(ea->items, eb->items);
  const std::string overlay = boxes(ea->items, "mref") + boxes(eb->items, "mrun");
  o += "<div class=\"row\">\n";
  std::string caption = "<span class=\"kref\">&#9632;</span> " + markup_escape(rl) + " (wide)" +
                        " &nbsp; <span class=\"krun\">&#9632;</span> " + markup_escape(ul) + " (thin, dashed)";
  if (!frame_missing.empty()) caption += "<br>No frame image: " + markup_escape(frame_missing) + ".";
  o += figure(picture(frame_png, w, h, 0, 0, w, h, std::min(640, w), overlay, "frame " + std::to_string(frame)),
              caption);
  // a close-up of the pair that moved most (or the first match), where sub-pixel moves show
  const MatchRec* m1 = nullptr;
  const MatchRec* m2 = nullptr;
  double most = -1;
  for (const auto& p : d.pairs)
    if (p.dpos > most) {
      most = p.dpos;
      m1 = &ea->items[p.ref];
      m2 = &eb->items[p.run];
    }
  if (!m1 && !ea->items.empty()) m1 = &ea->items[0];
  if (!m1 && !eb->items.empty()) m1 = &eb->items[0];
  if (m1) {
    if (!m2) m2 = m1;
    const double margin = std::max(4.0, 0.15 * std::max(m1->w, m1->h));
    const double x0 = std::min(m1->sub_x, m2->sub_x) - margin, y0 = std::min(m1->sub_y, m2->sub_y) - margin;
    const double x1 = std::max(m1->sub_x + m1->w, m2->sub_x + m2->w) + margin;
    const double y1 = std::max(m1->sub_y + m1->h, m2->sub_y + m2->h) + margin;
    const int zw = (int)std::lround(std::min(320.0, 320.0 * (x1 - x0) / (y1 - y0)));
    o += figure(picture(frame_png, w, h, x0, y0, x1 - x0, y1 - y0, zw, overlay, "close-up"),
                "close-up, " + format_short(zw / (x1 - x0), 2) + "x" + (most > 0 ? ", position delta " + num(most) + " px" : ""));
  }
  o += "</div>\n" + match_table(ea->items, eb->items, d, rl, ul);
  return o;
}

}  // namespace

std::vector<FramePick> pick_frames(const std::vector<FrameResult>& frames) {
  std::vector<FramePick> picks;
  for (const auto& f : frames) {
    bool fails = false;
    for (const auto& kv : f.sinks)
      if (compared(kv.second) && !kv.second.pass) fails = true;
    if (fails) {
      picks.push_back({f.index, "first failing frame"});
      break;
    }
  }
  // each sink's worst frame, as the text summary names them: a tensor sink's largest max abs
  // diff; a match sink's largest position delta, or where nothing moved, its largest score delta
  struct Worst {
    std::pair<double, double> rank{0, 0};  // compared in this order
    uint64_t frame = 0;
    std::string why;
  };
  std::map<std::string, Worst> worst;  // by sink, in name order
  for (const auto& f : frames)
    for (const auto& [name, r] : f.sinks) {
      if (!compared(r)) continue;
      const bool tensor = r.kind == "tensor";
      const std::pair<double, double> rank =
          tensor ? std::make_pair(tensor_badness(r), 0.0) : std::make_pair(r.match.max_dpos, r.match.max_dscore);
      Worst& w = worst[name];
      if (rank <= w.rank) continue;
      w.rank = rank;
      w.frame = f.index;
      w.why = "the worst of sink '" + name + "': " +
              (tensor ? "largest max abs diff, " + num(rank.first)
                      : rank.first > 0 ? "largest match position delta, " + num(rank.first) + " px"
                                       : "largest match score delta, " + num(rank.second));
    }
  for (const auto& [name, w] : worst) {
    if (w.rank == std::make_pair(0.0, 0.0)) continue;
    auto same = std::find_if(picks.begin(), picks.end(), [&](const FramePick& p) { return p.frame == w.frame; });
    if (same != picks.end())
      same->why += "; " + w.why;
    else
      picks.push_back({w.frame, w.why});
  }
  return picks;
}

std::string frame_sections_html(const std::vector<FramePick>& picks, const std::vector<FrameResult>& frames,
                                const HtmlReportInput& in, const std::string& dir,
                                std::vector<std::pair<std::string, std::string>>* nav, std::string* error) {
  // the clip's frames, decoded once for all pictures with matches
  bool matches = false;
  for (const auto& s : in.ref->sinks)
    if (s.kind == "matches") matches = true;
  std::map<uint64_t, RgbImage> decoded;
  std::string missing = in.clip.empty() ? in.clip_missing : "";
  if (matches && !in.clip.empty()) {
    std::vector<FrameWanted> wanted;
    for (const auto& p : picks) {
      FrameWanted w;
      w.index = p.frame;
      w.pts = frames[p.frame].pts();
      wanted.push_back(w);
    }
    std::string why;
    if (!decode_frames(in.clip, wanted, &decoded, &why)) missing = why;
  }
  std::string o;
  for (const auto& p : picks) {
    const FrameResult& f = frames[p.frame];
    const std::string id = "frame-" + std::to_string(p.frame);
    nav->emplace_back("#" + id, "frame " + std::to_string(p.frame));
    o += "<section id=\"" + id + "\"><h2>Frame " + std::to_string(p.frame) + ": " + markup_escape(p.why) +
         "</h2>\n<p>pts " + format_time(f.pts());
    for (const auto& [name, r] : f.sinks)
      if (!r.pass) o += "; sink '" + markup_escape(name) + "' fails: " + markup_escape(r.problem);
    o += "</p>\n";
    std::string frame_png;
    if (decoded.count(p.frame)) {
      frame_png = png_name(p.frame, "clip", "frame");
      if (!write_png(dir + "/" + frame_png, decoded[p.frame], error)) return "";
    }
    for (const auto& sink : in.ref->sinks) {
      auto it = f.sinks.find(sink.name);
      if (it == f.sinks.end() || !compared(it->second)) continue;
      if (sink.kind == "tensor") {
        const std::string part = tensor_pictures(p.frame, sink, it->second, in, dir, error);
        if (!error->empty()) return "";
        o += part;
      } else {
        o += match_pictures(p.frame, sink, it->second, in, frame_png,
                            frame_png.empty() ? (missing.empty() ? "the clip gave no such frame" : missing) : "");
      }
    }
    o += "</section>\n";
  }
  return o;
}

}  // namespace regress
