#include <algorithm>
#include <map>

#include "regress_html_parts.h"
#include "regress_image.h"
#include "regress_sides.h"

namespace regress {

namespace {

std::string num(double v) { return format_short(v, 6); }

bool compared(const SinkResult& r) { return r.ref_present && r.run_present; }

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
      const bool tensor = r.kind == "tensor", det = r.kind == "detections";
      const std::pair<double, double> rank = tensor ? std::make_pair(tensor_badness(r), 0.0)
                                             : det  ? std::make_pair(r.det.max_shift, r.det.max_dconf)
                                                    : std::make_pair(r.match.max_dpos, r.match.max_dscore);
      Worst& w = worst[name];
      if (rank <= w.rank) continue;
      w.rank = rank;
      w.frame = f.index;
      w.why = "the worst of sink '" + name + "': " +
              (tensor           ? "largest max abs diff, " + num(rank.first)
               : det            ? (rank.first > 0 ? "largest box shift, " + num(rank.first) + " px"
                                                  : "largest confidence delta, " + num(rank.second))
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
    if (s.kind == "matches" || s.kind == "detections") matches = true;
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
      } else if (sink.kind == "detections") {
        o += detection_pictures(p.frame, sink, in, frame_png,
                                frame_png.empty() ? (missing.empty() ? "the clip gave no such frame" : missing) : "");
      } else {
        o += match_pictures(p.frame, sink, in, frame_png,
                            frame_png.empty() ? (missing.empty() ? "the clip gave no such frame" : missing) : "");
      }
    }
    o += "</section>\n";
  }
  return o;
}

}  // namespace regress
