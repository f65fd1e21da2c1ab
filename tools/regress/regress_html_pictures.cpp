#include <gst/gst.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "regress_html_parts.h"
#include "regress_image.h"
#include "regress_render.h"

namespace regress {

namespace {

std::string num(double v) { return format_short(v, 6); }

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

// Keeps slot `slot` of a batch's bytes (slots one after the other, each a picture's size);
// false when the bytes do not reach it.
bool slice_slot(std::vector<uint8_t>* bytes, size_t slot, const TensorPicture& p) {
  const size_t each = p.bytes();
  if (each == 0 || bytes->size() < (slot + 1) * each) return false;
  bytes->erase(bytes->begin() + (slot + 1) * each, bytes->end());
  bytes->erase(bytes->begin(), bytes->begin() + slot * each);
  return true;
}

std::string stats_caption(const TensorStats& s) {
  return "min " + num(s.min) + ", max " + num(s.max) + ", mean " + num(s.mean);
}

std::string figure(const std::string& picture_html, const std::string& caption) {
  return "<figure>" + picture_html + "<figcaption>" + caption + "</figcaption></figure>\n";
}

// What goes with a picture: SVG drawn over it, and its caption.
struct Annotation {
  std::string overlay, caption;
};

// Writes the heat map of |ref - run| to png_path; a ring round the single worst pixel.
Annotation heat_map_figure(const std::vector<uint8_t>& ref, const std::vector<uint8_t>& run, const TensorPicture& p,
                           bool identical, const std::string& rl, const std::string& ul, const std::string& png_path,
                           std::string* error) {
  const HeatMap h = diff_heat_map(ref.data(), run.data(), ref.size(), p);
  if (!write_png(png_path, h.image, error)) return {};
  std::string ring, where = "; " + std::to_string(h.differing) + " of " + std::to_string((uint64_t)p.width * p.height) +
                            " pixels differ";
  if (h.worst_x >= 0 && h.at_max == 1) {  // a ring only where one pixel is the worst
    ring = "<circle class=\"worst\" cx=\"" + num(h.worst_x + 0.5) + "\" cy=\"" + num(h.worst_y + 0.5) + "\" r=\"" +
           num(std::max(2.5, p.width / 24.0)) + "\"/>";
    where += "; ring: the largest, at pixel (" + std::to_string(h.worst_x) + ", " + std::to_string(h.worst_y) + ")";
  }
  std::string caption = "<b>|" + markup_escape(rl) + " &minus; " + markup_escape(ul) +
                        "|</b>, largest over the channels, in tensor units";
  if (identical)
    caption += ": identical";
  else
    caption += markup_escape(where) + "<br><span class=\"scale\" style=\"background:" + heat_css_gradient() +
               "\"></span> 0 &hellip; " + num(h.max);
  if (h.nonfinite)
    caption += "<br>" + std::to_string(h.nonfinite) + " pixels where NaN meets a number, in <span style=\"color:rgb(" +
               std::to_string(kNonFiniteColour[0]) + "," + std::to_string(kNonFiniteColour[1]) + "," +
               std::to_string(kNonFiniteColour[2]) + ")\">&#9632;</span>";
  return {ring, caption};
}

}  // namespace

std::string png_name(uint64_t frame, const std::string& sink, const char* what) {
  char buf[32];
  g_snprintf(buf, sizeof buf, "frame-%05" G_GUINT64_FORMAT "-", frame);
  return buf + sink + "-" + what + ".png";
}

std::string tensor_pictures(uint64_t frame, const SinkInfo& sink, const SinkResult& r, const HtmlReportInput& in,
                            const std::string& dir, std::string* error) {
  const std::string rl = in.cmp->ref_label(), ul = in.cmp->run_label();
  std::string o = "<h3>sink '" + markup_escape(sink.name) + "' (tensor)</h3>\n";
  // a batch: a row per slot, and the pictures of the slot worth looking at
  const size_t slot = picture_slot(r);
  if (!r.slots.empty()) o += slot_table_html(frame, r, slot, rl, ul);
  auto no_pictures = [&](const std::string& why) {
    return o + "<p class=\"note\">No tensor pictures: " + markup_escape(why) + ".</p>\n";
  };
  const SinkInfo* run_sink = in.run->sink(sink.name);
  TensorPicture pref, prun;
  std::string why;
  if (!run_sink || !tensor_picture(*in.ref, sink, &pref, &why) || !tensor_picture(*in.run, *run_sink, &prun, &why))
    return no_pictures(why.empty() ? "the sink is not in " + ul : why);
  for (const auto& [label, where, m] :
       {std::make_tuple(rl, in.ref_where, in.ref), std::make_tuple(ul, in.run_where, in.run)})
    if (m->store != "full")
      return no_pictures("they need the tensors of both sides, and " + label + " (" + where +
                         ") stores tensor digests only (--store digest); record with --store full to see them");
  std::vector<uint8_t> ref_bytes, run_bytes;
  if (!in.ref_data->tensor_bytes(sink.name, frame, &ref_bytes, &why)) return no_pictures(why);
  if (r.identical)
    run_bytes = ref_bytes;
  else if (!in.run_data->tensor_bytes(sink.name, frame, &run_bytes, &why))
    return no_pictures(why);
  std::string slot_caption;
  TensorStats ref_stats = r.ref_stats, run_stats = r.run_stats;
  bool identical = r.identical;
  if (!r.slots.empty()) {
    if (!slice_slot(&ref_bytes, slot, pref) || !slice_slot(&run_bytes, slot, prun))
      return no_pictures(r.slots[slot].name + " is not in both tensors");
    slot_caption = ", " + markup_escape(r.slots[slot].name);
    ref_stats = tensor_stats(ref_bytes.data(), ref_bytes.size(), pref.type);
    run_stats = tensor_stats(run_bytes.data(), run_bytes.size(), prun.type);
    identical = r.slots[slot].identical;
  }

  const std::string fr = png_name(frame, sink.name, "ref"), fu = png_name(frame, sink.name, "run"),
                    fd = png_name(frame, sink.name, "diff");
  if (!write_png(dir + "/" + fr, tensor_to_image(ref_bytes.data(), ref_bytes.size(), pref), error) ||
      !write_png(dir + "/" + fu, tensor_to_image(run_bytes.data(), run_bytes.size(), prun), error))
    return "";
  const int dw = tensor_display_width(pref.width);
  auto norm = [](const TensorPicture& p) {
    return "de-normalised with " + p.element + "'s scale " + num(p.scale) + ", mean " + num(p.mean[0]) + "/" +
           num(p.mean[1]) + "/" + num(p.mean[2]) + ", std " + num(p.std[0]) + "/" + num(p.std[1]) + "/" + num(p.std[2]);
  };
  o += "<div class=\"row\">\n";
  o += figure(picture(fr, pref.width, pref.height, 0, 0, pref.width, pref.height, dw, "", rl),
              "<b>" + markup_escape(rl) + "</b> " + std::to_string(pref.width) + "x" + std::to_string(pref.height) +
                  slot_caption + "; " + stats_caption(ref_stats) + "<br>" + markup_escape(norm(pref)));
  o += figure(
      picture(fu, prun.width, prun.height, 0, 0, prun.width, prun.height, tensor_display_width(prun.width), "", ul),
      "<b>" + markup_escape(ul) + "</b> " + std::to_string(prun.width) + "x" + std::to_string(prun.height) +
          slot_caption + "; " + stats_caption(run_stats) + "<br>" + markup_escape(norm(prun)));
  if (ref_bytes.size() != run_bytes.size() || pref.width != prun.width || pref.height != prun.height ||
      pref.type != prun.type || pref.nhwc != prun.nhwc) {
    o += "</div>\n<p class=\"note\">No difference map: the two tensors differ in size or layout.</p>\n";
    return o;
  }
  const Annotation heat = heat_map_figure(ref_bytes, run_bytes, pref, identical, rl, ul, dir + "/" + fd, error);
  if (!error->empty()) return "";
  o += figure(picture(fd, pref.width, pref.height, 0, 0, pref.width, pref.height, dw, heat.overlay, "difference"),
              heat.caption);
  o += "</div>\n";
  if (!r.identical && r.data_compared)
    o += "<p>max abs diff " + num(r.diff.max_abs) + " (element " + std::to_string(r.diff.worst_index) + "), PSNR " +
         num(r.diff.psnr) + " dB, " + std::to_string(r.diff.differing) + " of " + std::to_string(r.diff.count) +
         " values differ.</p>\n";
  return o;
}

namespace {

// The matcher's frame size, from a match sink's caps.
bool frame_size(const SinkInfo& sink, int* w, int* h) {
  GstCaps* caps = gst_caps_from_string(sink.caps.c_str());
  bool ok = caps && gst_caps_get_size(caps) && gst_structure_get_int(gst_caps_get_structure(caps, 0), "width", w) &&
            gst_structure_get_int(gst_caps_get_structure(caps, 0), "height", h);
  if (caps) gst_caps_unref(caps);
  return ok && *w > 0 && *h > 0;
}

std::string boxes(const std::vector<MatchRec>& list, const char* cls) {
  std::string o;
  for (const MatchRec& m : list) {
    o += std::string("<rect class=\"") + cls + "\" data-template=\"" + markup_escape(m.label) + "\" x=\"" +
         num(m.sub_x) + "\" y=\"" + num(m.sub_y) + "\" width=\"" + std::to_string(m.w) + "\" height=\"" +
         std::to_string(m.h) + "\"/>";
  }
  return o;
}

// Both lists of a frame, pair by pair. A bank's table adds the template of each row and each
// side's scale / angle and full-search (a pair whose member or search differs is marked).
std::string match_table(const std::vector<MatchRec>& a, const std::vector<MatchRec>& b, const MatchDiff& d,
                        const std::string& rl, const std::string& ul) {
  const bool bank = !d.single_template();
  const int cols = bank ? 5 : 3;
  auto cell = [&](const std::vector<MatchRec>& list, int i, bool changed) -> std::string {
    if (i < 0) return "<td colspan=\"" + std::to_string(cols) + "\">(none)</td>";
    const MatchRec& m = list[i];
    std::string o = "<td>" + num(m.sub_x) + "</td><td>" + num(m.sub_y) + "</td><td>" + num(m.score) + "</td>";
    if (bank)
      o += std::string("<td") + (changed ? " class=\"diff\"" : "") + ">" + num(m.scale) + " / " + num(m.angle) +
           "</td><td>" + (m.full_search ? "full" : "tracked") + "</td>";
    return o;
  };
  auto label = [&](const MatchRec& m) { return bank ? "<td>" + markup_escape(m.label) + "</td>" : std::string(); };
  const std::string span = std::to_string(cols);
  std::string o = std::string("<table class=\"matches\"><tr>") + (bank ? "<th></th>" : "") + "<th colspan=\"" + span +
                  "\" class=\"ref\">" + markup_escape(rl) + "</th><th colspan=\"" + span + "\" class=\"run\">" +
                  markup_escape(ul) + "</th><th>position delta (px)</th><th>score delta</th></tr>\n<tr>" +
                  (bank ? "<th>template</th>" : "");
  for (int side = 0; side < 2; side++)
    o += std::string("<th>x</th><th>y</th><th>score</th>") + (bank ? "<th>scale / angle</th><th>search</th>" : "");
  o += "<th></th><th></th></tr>\n";
  std::vector<bool> used_a(a.size()), used_b(b.size());
  for (const auto& p : d.pairs) {
    used_a[p.ref] = used_b[p.run] = true;
    const bool changed = p.member_changed || p.full_changed;
    o += "<tr>" + label(a[p.ref]) + cell(a, p.ref, changed) + cell(b, p.run, changed) + "<td>" + num(p.dpos) +
         "</td><td>" + num(p.dscore) + "</td></tr>\n";
  }
  for (size_t i = 0; i < a.size(); i++)
    if (!used_a[i])
      o += "<tr>" + label(a[i]) + cell(a, (int)i, false) + cell(b, -1, false) + "<td></td><td></td></tr>\n";
  for (size_t j = 0; j < b.size(); j++)
    if (!used_b[j])
      o += "<tr>" + label(b[j]) + cell(a, -1, false) + cell(b, (int)j, false) + "<td></td><td></td></tr>\n";
  return o + "</table>\n";
}

// A close-up of the pair of matches that moved most (or of the first match), where sub-pixel
// moves show; "" without matches.
std::string close_up(const MatchesEntry& a, const MatchesEntry& b, const MatchDiff& d, const std::string& frame_png,
                     int w, int h, const std::string& overlay) {
  const MatchRec* m1 = nullptr;
  const MatchRec* m2 = nullptr;
  double most = -1;
  for (const auto& p : d.pairs)
    if (p.dpos > most) {
      most = p.dpos;
      m1 = &a.items[p.ref];
      m2 = &b.items[p.run];
    }
  if (!m1 && !a.items.empty()) m1 = &a.items[0];
  if (!m1 && !b.items.empty()) m1 = &b.items[0];
  if (!m1) return "";
  if (!m2) m2 = m1;
  const double margin = std::max(4.0, 0.15 * std::max(m1->w, m1->h));
  const double x0 = std::min(m1->sub_x, m2->sub_x) - margin, y0 = std::min(m1->sub_y, m2->sub_y) - margin;
  const double x1 = std::max(m1->sub_x + m1->w, m2->sub_x + m2->w) + margin;
  const double y1 = std::max(m1->sub_y + m1->h, m2->sub_y + m2->h) + margin;
  const int zw = (int)std::lround(std::min(320.0, 320.0 * (x1 - x0) / (y1 - y0)));
  return figure(
      picture(frame_png, w, h, x0, y0, x1 - x0, y1 - y0, zw, overlay, "close-up"),
      "close-up, " + format_short(zw / (x1 - x0), 2) + "x" + (most > 0 ? ", position delta " + num(most) + " px" : ""));
}

}  // namespace

std::string match_pictures(uint64_t frame, const SinkInfo& sink, const HtmlReportInput& in,
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
  o += close_up(*ea, *eb, d, frame_png, w, h, overlay);
  o += "</div>\n" + match_table(ea->items, eb->items, d, rl, ul);
  return o;
}

namespace {

std::string det_boxes(const std::vector<DetRec>& list, const char* cls) {
  std::string o;
  for (const DetRec& d : list)
    o += std::string("<rect class=\"") + cls + "\" data-class=\"" + markup_escape(det_class_key(d)) + "\" x=\"" +
         num(d.x) + "\" y=\"" + num(d.y) + "\" width=\"" + num(d.w) + "\" height=\"" + num(d.h) + "\"><title>" +
         markup_escape(det_text(d)) + "</title></rect>";
  return o;
}

std::string det_cell(const DetRec* d) {
  if (!d) return "<td colspan=\"2\">(none)</td>";
  return "<td>" + markup_escape(det_text(*d)) + "</td><td>" +
         (d->has_confidence ? num(d->confidence) : std::string("none")) + "</td>";
}

}  // namespace

std::string detection_pictures(uint64_t frame, const SinkInfo& sink, const HtmlReportInput& in,
                               const std::string& frame_png, const std::string& frame_missing) {
  const std::string rl = in.cmp->ref_label(), ul = in.cmp->run_label();
  std::string o = "<h3>sink '" + markup_escape(sink.name) + "' (detections)</h3>\n";
  const DetectionsEntry* ea = in.ref_data->detections(sink.name, frame);
  const DetectionsEntry* eb = in.run_data->detections(sink.name, frame);
  int w = 0, h = 0;
  if (!ea || !eb || !frame_size(sink, &w, &h))
    return o + "<p class=\"note\">No picture: the detections of this frame are not at hand.</p>\n";
  const DetDiff d = diff_detections(*ea, *eb, in.cmp->options().det, rl, ul);
  const std::string overlay = det_boxes(ea->items, "mref") + det_boxes(eb->items, "mrun");
  std::string caption = "<span class=\"kref\">&#9632;</span> " + markup_escape(rl) + " (wide)" +
                        " &nbsp; <span class=\"krun\">&#9632;</span> " + markup_escape(ul) + " (thin, dashed)";
  if (!frame_missing.empty()) caption += "<br>No frame image: " + markup_escape(frame_missing) + ".";
  o += "<div class=\"row\">\n" +
       figure(picture(frame_png, w, h, 0, 0, w, h, std::min(640, w), overlay, "frame " + std::to_string(frame)),
              caption) +
       "</div>\n";
  o += "<table class=\"detections\"><tr><th>" + markup_escape(rl) + "</th><th>confidence</th><th>" + markup_escape(ul) +
       "</th><th>confidence</th><th>IoU</th><th>box shift (px)</th><th>confidence delta</th></tr>\n";
  for (const DetPair& p : d.pairs)
    o += "<tr data-det=\"pair\">" + det_cell(&ea->items[p.ref]) + det_cell(&eb->items[p.run]) + "<td>" + num(p.iou) +
         "</td><td>" + num(p.shift) + "</td><td>" + num(p.dconf) + "</td></tr>\n";
  for (size_t i : d.missed)
    o += "<tr class=\"fail\" data-det=\"missed\">" + det_cell(&ea->items[i]) + det_cell(nullptr) +
         "<td colspan=\"3\">missed</td></tr>\n";
  for (size_t i : d.extra)
    o += "<tr class=\"fail\" data-det=\"extra\">" + det_cell(nullptr) + det_cell(&eb->items[i]) +
         "<td colspan=\"3\">extra</td></tr>\n";
  return o + "</table>\n";
}

}  // namespace regress
