#include "regress_compare.h"

#include <gst/gst.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "regress_pipeline.h"

namespace regress {

namespace {

std::string fmt(double v) { return format_short(v, 6); }

void fail(SinkResult* r, const std::string& why) {
  if (r->pass) {
    r->pass = false;
    r->problem = why;
  } else {
    r->notes += (r->notes.empty() ? "" : "; ") + why;
  }
}

void compare_pts(SinkResult* r, int64_t ref, int64_t run, const std::string& rl, const std::string& ul) {
  r->pts_ref = ref;
  r->pts_run = run;
  if (ref != run) fail(r, "pts differs: " + rl + " " + format_time(ref) + ", " + ul + " " + format_time(run));
}

}  // namespace

bool FrameResult::pass() const {
  for (const auto& kv : sinks)
    if (!kv.second.pass) return false;
  return true;
}

int64_t FrameResult::pts() const {
  for (const auto& kv : sinks) {
    if (kv.second.pts_ref >= 0) return kv.second.pts_ref;
    if (kv.second.pts_run >= 0) return kv.second.pts_run;
  }
  return -1;
}

SinkResult compare_tensor(const std::string& sink, const TensorEntry& ref, const uint8_t* ref_data,
                          const TensorEntry& run, const uint8_t* run_data, DType type, const CompareOptions& opt,
                          const std::string& rl, const std::string& ul) {
  SinkResult r;
  r.sink = sink;
  r.kind = "tensor";
  r.ref_present = r.run_present = true;
  r.ref_bytes = ref.bytes;
  r.run_bytes = run.bytes;
  r.ref_stats = ref.stats;
  r.run_stats = run.stats;
  r.identical = ref.sha256 == run.sha256 && ref.bytes == run.bytes;
  r.ref_tensors = ref.tensors;
  r.run_tensors = run.tensors;
  const bool batched = !ref.slots.empty() || !run.slots.empty();
  if (ref.tensors != run.tensors) {
    fail(&r, "the frame gave " + std::to_string(ref.tensors) + " tensors in " + rl + ", " +
                 std::to_string(run.tensors) + " in " + ul);
  } else if (ref.bytes != run.bytes) {
    fail(&r, "size differs: " + rl + " " + std::to_string(ref.bytes) + " bytes, " + ul + " " +
                 std::to_string(run.bytes) + " bytes");
  } else if (ref_data && run_data) {
    r.data_compared = true;
    r.diff = diff_tensors(ref_data, ref.bytes, run_data, run.bytes, type);
    r.identical = r.diff.identical;
    // a batch is judged slot by slot (below), each slot against the tolerance
    const std::string why = tensor_diff_failure(r.diff, opt.tensor_tol);
    if (!batched && !why.empty()) fail(&r, why);
  } else if (!r.identical && !batched) {
    fail(&r, "SHA-256 differs (digest-only: exact comparison only)");
  }
  if (batched) {
    r.slots = compare_slots(ref, ref_data, run, run_data, type, opt.tensor_tol, rl, ul);
    for (const SlotResult& s : r.slots)
      if (!s.pass) fail(&r, s.name + ": " + s.problem);
  }
  if (ref.transform.present != run.transform.present) {
    fail(&r, std::string("transform meta only in ") + (ref.transform.present ? rl : ul));
  } else if (ref.transform.present) {
    r.transform_delta = transform_delta(ref.transform, run.transform);
    if (r.transform_delta > kTransformTolerance) fail(&r, "transform meta differs by " + fmt(r.transform_delta));
  }
  compare_pts(&r, ref.pts, run.pts, rl, ul);
  return r;
}

namespace {

std::string member_text(const MatchRec& m) { return "scale " + fmt(m.scale) + " angle " + fmt(m.angle); }

std::string yes_no(bool b) { return b ? "true" : "false"; }

}  // namespace

SinkResult compare_matches(const std::string& sink, const MatchesEntry& ref, const MatchesEntry& run,
                           const CompareOptions& opt, const std::string& rl, const std::string& ul) {
  SinkResult r;
  r.sink = sink;
  r.kind = "matches";
  r.ref_present = r.run_present = true;
  r.match = diff_matches(ref.items, run.items);
  // a bank's reasons name their template; the single template's read as they always did
  const bool named = !r.match.single_template();
  for (const TemplateMatchDiff& t : r.match.templates) {
    const std::string who = named ? "template '" + t.label + "': " : "";
    if (named && (t.n_ref == 0 || t.n_run == 0)) {
      const bool in_ref = t.n_run == 0;
      const size_t n = in_ref ? t.n_ref : t.n_run;
      fail(&r, "template '" + t.label + "' only in " + (in_ref ? rl : ul) + " (" + std::to_string(n) +
                   (n == 1 ? " match)" : " matches)"));
    } else if (t.n_ref != t.n_run) {
      fail(&r, who + std::to_string(t.n_ref) + " matches in " + rl + ", " + std::to_string(t.n_run) + " in " + ul);
    }
    if (t.max_dpos > opt.pos_tol)
      fail(&r, who + "match position delta " + fmt(t.max_dpos) + " px > tolerance " + fmt(opt.pos_tol));
    if (t.max_dscore > opt.score_tol)
      fail(&r, who + "match score delta " + fmt(t.max_dscore) + " > tolerance " + fmt(opt.score_tol));
  }
  // a match found again at another scale or angle of its template, or by the other kind of search
  for (const MatchPair& p : r.match.pairs) {
    const MatchRec &a = ref.items[p.ref], &b = run.items[p.run];
    const std::string who = named ? "template '" + a.label + "': " : "";
    const std::string at = " (match at " + fmt(a.sub_x) + ", " + fmt(a.sub_y) + ")";
    if (p.member_changed) fail(&r, who + member_text(a) + " in " + rl + ", " + member_text(b) + " in " + ul + at);
    if (p.full_changed)
      fail(&r, who + "full-search " + yes_no(a.full_search) + " in " + rl + ", " + yes_no(b.full_search) + " in " + ul +
                   at);
  }
  compare_pts(&r, ref.pts, run.pts, rl, ul);
  return r;
}

std::vector<TemplateSummary> summarize_templates(const std::vector<std::pair<uint64_t, const SinkResult*>>& results,
                                                 const CompareOptions& opt) {
  std::map<std::string, TemplateSummary> by_label;
  for (const auto& [frame, r] : results) {
    if (!r->ref_present || !r->run_present) continue;
    for (const TemplateMatchDiff& t : r->match.templates) {
      TemplateSummary& s = by_label[t.label];
      s.label = t.label;
      s.n_ref += t.n_ref;
      s.n_run += t.n_run;
      if (t.n_ref) s.frames_ref++;
      if (t.n_run) s.frames_run++;
      if (t.n_ref != t.n_run) s.count_frames++;
      s.member_changes += t.member_changes;
      s.full_changes += t.full_changes;
      if (t.max_dpos > s.max_dpos) {
        s.max_dpos = t.max_dpos;
        s.worst_pos_frame = frame;
      }
      if (t.max_dscore > s.max_dscore) {
        s.max_dscore = t.max_dscore;
        s.worst_score_frame = frame;
      }
      if (t.n_ref != t.n_run || t.member_changes || t.full_changes || t.max_dpos > opt.pos_tol ||
          t.max_dscore > opt.score_tol) {
        s.failing_frames++;
        s.first_failing = std::min<uint64_t>(s.first_failing, frame);
      }
    }
  }
  std::vector<TemplateSummary> out;
  for (auto& kv : by_label) out.push_back(kv.second);
  return out;
}

bool single_template(const std::vector<TemplateSummary>& templates) {
  return templates.empty() || (templates.size() == 1 && templates[0].label == kSingleTemplateLabel);
}

/* ---- Comparison ------------------------------------------------------------------------- */

Comparison::Comparison(std::string command, std::string ref_label, std::string run_label, CompareOptions opt)
    : command_(std::move(command)), ref_label_(std::move(ref_label)), run_label_(std::move(run_label)), opt_(opt) {}

void Comparison::header(const std::string& key, const std::string& value) { header_.emplace_back(key, value); }
void Comparison::error(const std::string& message) { errors_.push_back(message); }
void Comparison::note(const std::string& message) { notes_.push_back(message); }
void Comparison::hint(const std::string& message) { hints_.push_back(message); }
bool Comparison::has_errors() const { return !errors_.empty(); }

namespace {

// The template matcher reads luma: plane 0 of NV12 / I420 / GRAY8, or gray computed from RGB.
std::string luma_class(const std::string& format) {
  if (format == "NV12" || format == "I420" || format == "GRAY8") return "planar luma";
  if (format == "BGR" || format == "RGB" || format == "BGRx" || format == "RGBx" || format == "BGRA" ||
      format == "RGBA")
    return "gray from RGB";
  return format;
}

std::string field_text(const GstStructure* s, const char* field) {
  const GValue* v = gst_structure_get_value(s, field);
  if (!v) return "(absent)";
  gchar* t = gst_value_serialize(v);
  std::string out = t ? t : "?";
  g_free(t);
  return out;
}

}  // namespace

SinkResult compare_detections(const std::string& sink, const DetectionsEntry& ref, const DetectionsEntry& run,
                              const CompareOptions& opt, const std::string& rl, const std::string& ul) {
  SinkResult r;
  r.sink = sink;
  r.kind = "detections";
  r.ref_present = r.run_present = true;
  DetOptions det = opt.det;
  det.tensor_tol = opt.tensor_tol;
  r.det = diff_detections(ref, run, det, rl, ul);
  for (const std::string& why : r.det.failures) fail(&r, why);
  compare_pts(&r, ref.pts, run.pts, rl, ul);
  return r;
}

void Comparison::compare_manifests(const Manifest& ref, const Manifest& run) {
  const std::string& rl = ref_label_;
  const std::string& ul = run_label_;
  auto setting = [&](const std::string& msg) {
    if (opt_.allow_setting_changes)
      note("allowed setting change: " + msg);
    else
      error(msg);
  };

  // sinks and their caps
  for (const auto& s : ref.sinks) {
    const SinkInfo* o = run.sink(s.name);
    if (!o) {
      error("sink '" + s.name + "' is in " + rl + " but not in " + ul);
      continue;
    }
    if (o->kind != s.kind) {
      error("sink '" + s.name + "' carries " + s.kind + " in " + rl + " but " + o->kind + " in " + ul);
      continue;
    }
    if (s.memory != o->memory)
      note("sink '" + s.name + "' memory: " + rl + " " + s.memory + ", " + ul + " " + o->memory);
    if (s.caps.empty() || o->caps.empty()) continue;  // a sink without frames: counted below
    GstCaps* a = gst_caps_from_string(s.caps.c_str());
    GstCaps* b = gst_caps_from_string(o->caps.c_str());
    if (!a || !b || gst_caps_get_size(a) == 0 || gst_caps_get_size(b) == 0) {
      if (s.caps != o->caps)
        setting("sink '" + s.name + "' caps: " + rl + " '" + s.caps + "', " + ul + " '" + o->caps + "'");
    } else {
      const GstStructure* sa = gst_caps_get_structure(a, 0);
      const GstStructure* sb = gst_caps_get_structure(b, 0);
      if (!gst_structure_has_name(sb, gst_structure_get_name(sa))) {
        setting("sink '" + s.name + "' caps media type: " + rl + " '" + gst_structure_get_name(sa) + "', " + ul + " '" +
                gst_structure_get_name(sb) + "'");
      } else {
        std::set<std::string> fields;
        if (s.kind == "tensor") {
          for (int i = 0; i < gst_structure_n_fields(sa); i++) fields.insert(gst_structure_nth_field_name(sa, i));
          for (int i = 0; i < gst_structure_n_fields(sb); i++) fields.insert(gst_structure_nth_field_name(sb, i));
        } else if (s.kind == "matches") {
          // positions are in frame pixels: what matters is the frame size, rate and the luma
          fields = {"width", "height", "framerate", "format"};
        } else {
          // boxes are in frame pixels; the detector chose its own input
          fields = {"width", "height", "framerate"};
        }
        for (const auto& f : fields) {
          const std::string va = field_text(sa, f.c_str()), vb = field_text(sb, f.c_str());
          if (va == vb) continue;
          if (s.kind == "matches" && f == "format" && luma_class(va) == luma_class(vb)) {
            note("sink '" + s.name + "' frame format: " + rl + " " + va + ", " + ul + " " + vb +
                 " (same luma for the matcher)");
            continue;
          }
          setting("sink '" + s.name + "' caps field '" + f + "': " + rl + " '" + va + "', " + ul + " '" + vb + "'");
        }
      }
    }
    if (a) gst_caps_unref(a);
    if (b) gst_caps_unref(b);
  }
  for (const auto& s : run.sinks)
    if (!ref.sink(s.name)) error("sink '" + s.name + "' is in " + ul + " but not in " + rl);

  // element properties
  // Where it ran, not what it computes: the cudaprep elements' backend and device-id, and the GPU
  // --device-id gives GStreamer's CUDA elements.
  static const std::set<std::string> device_props = {"backend", "device-id"};
  std::vector<std::string> only_ref, only_run;
  for (const auto& e : ref.elements) {
    const ElementInfo* o = run.element(e.name);
    const bool cudaprep = e.plugin == "cudaprep";
    if (!o || o->factory != e.factory) {
      if (cudaprep)
        setting("element " + e.name + " (" + e.factory + ") is in " + rl + "'s pipeline but not in " + ul + "'s");
      else
        only_ref.push_back(e.name + " (" + e.factory + ")");
      continue;
    }
    std::map<std::string, std::string> pa(e.properties.begin(), e.properties.end());
    std::map<std::string, std::string> pb(o->properties.begin(), o->properties.end());
    std::set<std::string> names;
    for (auto& kv : pa) names.insert(kv.first);
    for (auto& kv : pb) names.insert(kv.first);
    for (const auto& n : names) {
      if ((cudaprep && device_props.count(n)) || n == "cuda-device-id") continue;
      auto ia = pa.find(n), ib = pb.find(n);
      if (cudaprep && (ia == pa.end() || ib == pb.end())) {
        note("element " + e.name + " property '" + n + "' is recorded only in " + (ia == pa.end() ? ul : rl) +
             " (another plugin version?)");
        continue;
      }
      const std::string va = ia == pa.end() ? "(default)" : ia->second;
      const std::string vb = ib == pb.end() ? "(default)" : ib->second;
      if (va != vb)
        setting("element " + e.name + " (" + e.factory + ") property '" + n + "': " + rl + " '" + va + "', " + ul +
                " '" + vb + "'");
    }
  }
  for (const auto& e : run.elements) {
    const ElementInfo* o = ref.element(e.name);
    if (o && o->factory == e.factory) continue;
    if (e.plugin == "cudaprep")
      setting("element " + e.name + " (" + e.factory + ") is in " + ul + "'s pipeline but not in " + rl + "'s");
    else
      only_run.push_back(e.name + " (" + e.factory + ")");
  }
  if (!only_ref.empty() || !only_run.empty()) {
    std::string msg = "elements outside cudaprep differ (not compared):";
    if (!only_ref.empty()) {
      msg += " only in " + rl + ":";
      for (auto& s : only_ref) msg += " " + s;
      if (!only_run.empty()) msg += ";";
    }
    if (!only_run.empty()) {
      msg += " only in " + ul + ":";
      for (auto& s : only_run) msg += " " + s;
    }
    note(msg);
  }

  if (normalize_description(ref.pipeline) != normalize_description(run.pipeline))
    note("the pipeline differs (the clip path is {clip} in both):\n      " + rl + ": " +
         normalize_description(ref.pipeline) + "\n      " + ul + ": " + normalize_description(run.pipeline));
  if (ref.gstreamer_version != run.gstreamer_version)
    note("GStreamer version: " + rl + " " + ref.gstreamer_version + ", " + ul + " " + run.gstreamer_version);
  std::string va, vb;
  for (auto& e : ref.elements)
    if (e.plugin == "cudaprep") va = e.plugin_version;
  for (auto& e : run.elements)
    if (e.plugin == "cudaprep") vb = e.plugin_version;
  if (va != vb) note("cudaprep plugin version: " + rl + " " + va + ", " + ul + " " + vb);
}

void Comparison::compare_frame_counts(const Manifest& ref, const Manifest& run) {
  for (const auto& s : ref.sinks) {
    const SinkInfo* o = run.sink(s.name);
    if (o && o->frames != s.frames)
      error("frame count differs for sink '" + s.name + "': " + ref_label_ + " has " + std::to_string(s.frames) +
            " frames, " + run_label_ + " has " + std::to_string(o->frames) +
            " (the frames both have are compared below)");
  }
}

bool Comparison::note_digest_only(const Manifest& ref, const Manifest& run, const std::string& ref_dir,
                                  const std::string& run_dir) {
  if (opt_.tensor_tol.kind == TensorTolerance::Exact) return false;
  bool tensors = false;
  for (auto& s : ref.sinks)
    if (s.kind == "tensor") tensors = true;
  if (!tensors) return false;
  std::string who;
  if (ref.store == "digest") who = ref_label_ + " (" + ref_dir + ")";
  if (run.store == "digest") who += (who.empty() ? "" : " and ") + run_label_ + " (" + run_dir + ")";
  if (who.empty()) return false;
  note("TOLERANCE NOT APPLIED: " + who +
       " stores tensor digests only (--store digest), so tensors can only be "
       "compared exactly (SHA-256); --tensor-tol " +
       opt_.tensor_tol.text() +
       " cannot be applied and any difference in a tensor counts as a regression. Record with --store full "
       "to compare within a tolerance.");
  return true;
}

void Comparison::add(uint64_t frame, const SinkResult& r) {
  std::lock_guard<std::mutex> lock(mu_);
  if (frames_.size() <= frame) {
    const size_t old = frames_.size();
    frames_.resize(frame + 1);
    for (size_t i = old; i < frames_.size(); i++) frames_[i].index = i;
  }
  const bool was = frames_[frame].pass();
  frames_[frame].sinks[r.sink] = r;
  if (was && !frames_[frame].pass()) failing_++;
}

uint64_t Comparison::failing_frames() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failing_;
}

int Comparison::exit_code() const {
  if (!errors_.empty()) return 2;
  return failing_frames() ? 1 : 0;
}

std::string Comparison::frame_line(const FrameResult& f, const SinkResult& r) const {
  char head[96];
  g_snprintf(head, sizeof head, "  %6" G_GUINT64_FORMAT "  %-18s  %-10s %-4s  ", f.index,
             format_time(r.pts_ref >= 0 ? r.pts_ref : r.pts_run).c_str(), r.sink.c_str(), r.pass ? "ok" : "FAIL");
  std::string s = head;
  if (!r.ref_present || !r.run_present) {
    return s + "only in " + (r.ref_present ? ref_label_ : run_label_);
  }
  if (r.kind == "tensor") {
    if (r.ref_tensors != r.run_tensors) {
      s += std::to_string(r.ref_tensors) + " vs " + std::to_string(r.run_tensors) + " tensors";
    } else if (r.ref_bytes != r.run_bytes) {
      s += "size differs";
    } else if (r.identical) {
      s += "identical";
    } else if (r.data_compared) {
      s += "max-abs " + fmt(r.diff.max_abs) + " (element " + std::to_string(r.diff.worst_index) + "), PSNR " +
           fmt(r.diff.psnr) + " dB, " + std::to_string(r.diff.differing) + " of " + std::to_string(r.diff.count) +
           " values differ";
    } else {
      s += "SHA-256 differs; stats " + run_label_ + " - " + ref_label_ + ": min " +
           fmt(r.run_stats.min - r.ref_stats.min) + ", max " + fmt(r.run_stats.max - r.ref_stats.max) + ", mean " +
           fmt(r.run_stats.mean - r.ref_stats.mean) + ", L2 " + fmt(r.run_stats.l2 - r.ref_stats.l2);
    }
  } else if (r.kind == "detections") {
    s += std::to_string(r.det.n_ref) + " vs " + std::to_string(r.det.n_run) + " detections";
    if (!r.det.pairs.empty()) s += ", max shift " + fmt(r.det.max_shift) + " px, max dconf " + fmt(r.det.max_dconf);
    if (!r.det.missed.empty()) s += ", " + std::to_string(r.det.missed.size()) + " missed";
    if (!r.det.extra.empty()) s += ", " + std::to_string(r.det.extra.size()) + " extra";
  } else {
    s += std::to_string(r.match.n_ref) + " vs " + std::to_string(r.match.n_run) + " matches";
    if (!r.match.pairs.empty())
      s += ", max dpos " + fmt(r.match.max_dpos) + " px, max dscore " + fmt(r.match.max_dscore);
    if (!r.match.single_template()) {
      s += " (";
      for (size_t i = 0; i < r.match.templates.size(); i++) {
        const TemplateMatchDiff& t = r.match.templates[i];
        s += (i ? ", " : "") + t.label + " " + std::to_string(t.n_ref) + " vs " + std::to_string(t.n_run);
      }
      s += ")";
    }
  }
  if (!r.pass) s += "  <- " + r.problem + (r.notes.empty() ? "" : "; " + r.notes);
  return s;
}

std::string Comparison::slot_lines(const SinkResult& r, bool all_slots) const {
  std::string out;
  for (const SlotResult& slot : r.slots)
    if (all_slots || !slot.pass) out += slot_line(slot, ref_label_, run_label_) + "\n";
  return out;
}

std::string Comparison::render(bool all_frames, size_t max_frame_lines) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::ostringstream o;
  o << "cudaprep-regress " << command_ << "\n";
  for (auto& h : header_) {
    std::string key = h.first + ":";
    key.resize(std::max<size_t>(key.size(), 13), ' ');
    o << "  " << key << h.second << "\n";
  }
  if (!notes_.empty()) {
    o << "\nnotes:\n";
    for (auto& n : notes_) o << "  - " << n << "\n";
  }
  if (!errors_.empty()) {
    o << "\nsetup errors:\n";
    for (auto& e : errors_) o << "  - " << e << "\n";
    for (auto& h : hints_) o << "  " << h << "\n";
  }

  // per-frame lines; runs of frames that only one side has are folded into one line
  size_t lines = 0, skipped = 0;
  std::ostringstream fl;
  auto only_side = [](const FrameResult& f) -> int {  // 1: reference only, 2: run only, 0: compared
    int side = -1;
    for (const auto& kv : f.sinks) {
      const SinkResult& r = kv.second;
      const int this_side = (r.ref_present && r.run_present) ? 0 : (r.ref_present ? 1 : 2);
      if (side == -1)
        side = this_side;
      else if (side != this_side)
        return 0;
    }
    return side < 0 ? 0 : side;
  };
  for (size_t i = 0; i < frames_.size(); i++) {
    const FrameResult& f = frames_[i];
    const int side = only_side(f);
    if (side) {
      size_t j = i;
      while (j + 1 < frames_.size() && only_side(frames_[j + 1]) == side) j++;
      if (all_frames || lines < max_frame_lines) {
        fl << "  frames " << f.index << ".." << frames_[j].index << ": only in "
           << (side == 1 ? ref_label_ : run_label_) << "\n";
        lines++;
      } else {
        skipped++;
      }
      i = j;
      continue;
    }
    for (const auto& kv : f.sinks) {
      if (!all_frames && kv.second.pass) continue;
      if (!all_frames && lines >= max_frame_lines) {
        skipped++;
        continue;
      }
      fl << frame_line(f, kv.second) << "\n" << slot_lines(kv.second, all_frames);
      lines++;
    }
  }
  if (lines) {
    o << "\n" << (all_frames ? "frames:" : "failing frames:") << "\n";
    o << "   frame  pts                 sink       result\n";
    o << fl.str();
    if (skipped) o << "  ... " << skipped << " more failing lines (--report FILE or --verbose lists all)\n";
  }
  summary_to(o);
  return o.str();
}

std::string Comparison::render_summary() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::ostringstream o;
  summary_to(o);
  return o.str();
}

std::vector<FrameResult> Comparison::frame_results() const {
  std::lock_guard<std::mutex> lock(mu_);
  return frames_;
}

std::string Comparison::template_summary_line(const TemplateSummary& t) const {
  std::ostringstream o;
  o << "    template '" << t.label << "': ";
  if (t.n_run == 0 && t.n_ref) {
    o << "only in " << ref_label_ << " (" << t.n_ref << " matches in " << t.frames_ref << " frames, none in "
      << run_label_ << ")";
  } else if (t.n_ref == 0 && t.n_run) {
    o << "only in " << run_label_ << " (" << t.n_run << " matches in " << t.frames_run << " frames, none in "
      << ref_label_ << ")";
  } else {
    o << "matches " << ref_label_ << " " << t.n_ref << ", " << run_label_ << " " << t.n_run;
    if (t.count_frames) o << " (" << t.count_frames << " frames with a different count)";
    o << "; max position delta " << fmt(t.max_dpos) << " px";
    if (t.max_dpos > 0) o << " (frame " << t.worst_pos_frame << ")";
    o << ", max score delta " << fmt(t.max_dscore);
    if (t.max_dscore > 0) o << " (frame " << t.worst_score_frame << ")";
    if (t.member_changes) o << "; " << t.member_changes << " matches at another scale or angle";
    if (t.full_changes) o << "; " << t.full_changes << " matches with another full-search";
  }
  o << "; " << t.failing_frames << " failing";
  if (t.failing_frames) o << ", first frame " << t.first_failing;
  return o.str();
}

std::vector<DetClassSummary> summarize_detection_classes(
    const std::vector<std::pair<uint64_t, const SinkResult*>>& results) {
  std::map<std::string, DetClassSummary> by;
  for (const auto& [frame, r] : results) {
    if (!r->ref_present || !r->run_present) continue;
    for (const auto& [key, c] : r->det.classes) {
      DetClassSummary& s = by[key];
      s.key = key;
      s.n_ref += c.n_ref;
      s.n_run += c.n_run;
      s.missed += c.missed;
      s.extra += c.extra;
      if (c.n_ref != c.n_run) s.count_frames++;
    }
  }
  std::vector<DetClassSummary> out;
  for (auto& kv : by) out.push_back(kv.second);
  return out;
}

void Comparison::detection_summary_to(std::ostringstream& o, const std::string& name,
                                      const std::vector<const SinkResult*>& list, const std::vector<uint64_t>& idx,
                                      uint64_t both, uint64_t failing, const std::string& only) const {
  uint64_t n_ref = 0, n_run = 0, pairs = 0, missed = 0, extra = 0, wshift = 0, wconf = 0;
  double max_shift = 0, max_dconf = 0;
  std::vector<std::pair<uint64_t, const SinkResult*>> results;
  for (size_t i = 0; i < list.size(); i++) {
    const SinkResult* r = list[i];
    results.emplace_back(idx[i], r);
    if (!r->ref_present || !r->run_present) continue;
    n_ref += r->det.n_ref;
    n_run += r->det.n_run;
    pairs += r->det.pairs.size();
    missed += r->det.missed.size();
    extra += r->det.extra.size();
    if (r->det.max_shift > max_shift) {
      max_shift = r->det.max_shift;
      wshift = idx[i];
    }
    if (r->det.max_dconf > max_dconf) {
      max_dconf = r->det.max_dconf;
      wconf = idx[i];
    }
  }
  o << "  sink '" << name << "' (detections): " << both << " frames compared, " << failing << " failing" << only
    << "; detections " << ref_label_ << " " << n_ref << ", " << run_label_ << " " << n_run << "; " << pairs
    << " paired, " << missed << " missed, " << extra << " extra; max box shift " << fmt(max_shift) << " px";
  if (max_shift > 0) o << " (frame " << wshift << ")";
  o << ", max confidence delta " << fmt(max_dconf);
  if (max_dconf > 0) o << " (frame " << wconf << ")";
  o << "\n";
  for (const DetClassSummary& c : summarize_detection_classes(results)) {
    o << "    class '" << c.key << "': " << ref_label_ << " " << c.n_ref << ", " << run_label_ << " " << c.n_run;
    if (c.count_frames) o << " (" << c.count_frames << " frames with a different count)";
    o << "; " << c.missed << " missed, " << c.extra << " extra\n";
  }
}

void Comparison::summary_to(std::ostringstream& o) const {
  // per-sink summary
  std::map<std::string, std::vector<const SinkResult*>> by_sink;
  std::map<std::string, std::vector<uint64_t>> frames_of;
  for (const auto& f : frames_)
    for (const auto& kv : f.sinks) {
      by_sink[kv.first].push_back(&kv.second);
      frames_of[kv.first].push_back(f.index);
    }
  o << "\nsummary:\n";
  const uint64_t compared_frames = frames_.size();
  for (const auto& [name, list] : by_sink) {
    const auto& idx = frames_of[name];
    uint64_t both = 0, failing = 0, identical = 0, only_ref = 0, only_run = 0;
    for (auto* r : list) {
      if (r->ref_present && r->run_present) {
        both++;
        if (!r->pass) failing++;
      } else if (r->ref_present) {
        only_ref++;
      } else {
        only_run++;
      }
      if (r->identical) identical++;
    }
    std::string only;
    if (only_ref) only += ", " + std::to_string(only_ref) + " only in " + ref_label_;
    if (only_run) only += ", " + std::to_string(only_run) + " only in " + run_label_;
    if (list.front()->kind == "tensor") {
      bool figures = true;
      double max_abs = 0, sum_sq = 0, lo = INFINITY, hi = -INFINITY;
      uint64_t count = 0, worst = 0;
      for (size_t i = 0; i < list.size(); i++) {
        const SinkResult* r = list[i];
        if (!r->ref_present || !r->run_present) continue;
        lo = std::min(lo, r->ref_stats.min);
        hi = std::max(hi, r->ref_stats.max);
        if (r->identical) {
          count += r->diff.count ? r->diff.count : 0;
          continue;
        }
        if (!r->data_compared) {
          figures = false;
          continue;
        }
        count += r->diff.count;
        sum_sq += r->diff.sum_sq;
        if (r->diff.max_abs > max_abs || (std::isnan(r->diff.max_abs))) {
          max_abs = r->diff.max_abs;
          worst = idx[i];
        }
      }
      o << "  sink '" << name << "' (tensor): " << both << " frames compared, " << identical << " identical, "
        << failing << " failing" << only;
      if (figures) {
        o << "; max abs diff " << fmt(max_abs);
        if (max_abs > 0) o << " (frame " << worst << ")";
        o << ", PSNR "
          << (sum_sq == 0 ? std::string("inf") : fmt(psnr_db(sum_sq, count ? count : 1, psnr_peak(lo, hi)))) << " dB";
      } else {
        o << "; per-value figures n/a (digest-only recording)";
      }
      o << "\n";
      std::vector<std::pair<uint64_t, const std::vector<SlotResult>*>> slots;
      for (size_t i = 0; i < list.size(); i++)
        if (!list[i]->slots.empty()) slots.emplace_back(idx[i], &list[i]->slots);
      if (!slots.empty()) slot_summary_to(o, slots);
    } else if (list.front()->kind == "detections") {
      detection_summary_to(o, name, list, idx, both, failing, only);
    } else {
      uint64_t n_ref = 0, n_run = 0, count_mismatch = 0, wpos = 0, wscore = 0;
      double max_dpos = 0, max_dscore = 0;
      for (size_t i = 0; i < list.size(); i++) {
        const SinkResult* r = list[i];
        if (!r->ref_present || !r->run_present) continue;
        n_ref += r->match.n_ref;
        n_run += r->match.n_run;
        if (r->match.n_ref != r->match.n_run) count_mismatch++;
        if (r->match.max_dpos > max_dpos) {
          max_dpos = r->match.max_dpos;
          wpos = idx[i];
        }
        if (r->match.max_dscore > max_dscore) {
          max_dscore = r->match.max_dscore;
          wscore = idx[i];
        }
      }
      o << "  sink '" << name << "' (matches): " << both << " frames compared, " << failing << " failing" << only
        << "; matches " << ref_label_ << " " << n_ref << ", " << run_label_ << " " << n_run;
      if (count_mismatch) o << " (" << count_mismatch << " frames with a different count)";
      o << "; max position delta " << fmt(max_dpos) << " px";
      if (max_dpos > 0) o << " (frame " << wpos << ")";
      o << ", max score delta " << fmt(max_dscore);
      if (max_dscore > 0) o << " (frame " << wscore << ")";
      o << "\n";
      std::vector<std::pair<uint64_t, const SinkResult*>> results;
      for (size_t i = 0; i < list.size(); i++) results.emplace_back(idx[i], list[i]);
      const std::vector<TemplateSummary> templates = summarize_templates(results, opt_);
      if (!single_template(templates))
        for (const TemplateSummary& t : templates) o << template_summary_line(t) << "\n";
    }
  }
  std::string tol = "tensors " + opt_.tensor_tol.text() + ", match position " + fmt(opt_.pos_tol) +
                    " px, match score " + fmt(opt_.score_tol);
  bool detections = false;
  for (const auto& [name, list] : by_sink) detections = detections || list.front()->kind == "detections";
  if (detections)
    tol += ", detections IoU " + fmt(opt_.det.iou) + ", box " + fmt(opt_.det.pos_tol) + " px, confidence " +
           fmt(opt_.det.conf_tol) + ", missed " + std::to_string(opt_.det.missed) + ", extra " +
           std::to_string(opt_.det.extra) + " a frame";
  o << "  tolerances: " << tol << "\n";

  const FrameResult* first = nullptr;
  for (const auto& f : frames_)
    if (!f.pass()) {
      first = &f;
      break;
    }
  if (first) {
    o << "  first failing frame: " << first->index << " (pts " << format_time(first->pts()) << ")";
    const char* sep = ": ";
    for (const auto& kv : first->sinks)
      if (!kv.second.pass) {
        o << sep << "sink '" << kv.first << "': " << kv.second.problem;
        sep = "; ";
      }
    o << "\n";
  }

  const int code = errors_.empty() ? (failing_ ? 1 : 0) : 2;
  o << "RESULT: ";
  if (code == 0)
    o << "PASS: " << compared_frames << " frames, all within tolerance";
  else if (code == 1)
    o << "REGRESSION: " << failing_ << " of " << compared_frames << " frames fail, first failing frame "
      << first->index;
  else {
    o << "ERROR: " << errors_.front();
    if (errors_.size() > 1) o << " (and " << errors_.size() - 1 << " more, see above)";
    uint64_t failing_compared = 0;
    for (const auto& f : frames_) {
      bool bad = false;
      for (const auto& kv : f.sinks)
        if (kv.second.ref_present && kv.second.run_present && !kv.second.pass) bad = true;
      if (bad) failing_compared++;
    }
    if (failing_compared)
      o << "; besides, " << failing_compared << (failing_compared == 1 ? " frame" : " frames")
        << " that both sides have " << (failing_compared == 1 ? "fails" : "fail");
  }
  o << " (exit " << code << ")\n";
}

namespace {

// A sink's frame that only one side recorded (its pts given, the other's null) fails; one that
// neither side recorded adds nothing.
void add_one_sided_frame(Comparison* cmp, uint64_t frame, const SinkInfo& sink, const int64_t* ref_pts,
                         const int64_t* run_pts) {
  if (!ref_pts && !run_pts) return;
  SinkResult r;
  r.sink = sink.name;
  r.kind = sink.kind;
  r.ref_present = ref_pts != nullptr;
  r.run_present = run_pts != nullptr;
  r.pts_ref = ref_pts ? *ref_pts : -1;
  r.pts_run = run_pts ? *run_pts : -1;
  r.pass = false;
  r.problem = "frame only in " + (r.ref_present ? cmp->ref_label() : cmp->run_label());
  cmp->add(frame, r);
}

}  // namespace

void compare_recordings(const Recording& ra, const Recording& rb, Comparison* cmp) {
  std::string err;
  const size_t n = std::max(ra.frames.size(), rb.frames.size());
  int corrupt = 0;
  for (size_t i = 0; i < n; i++) {
    static const FrameEntry empty;
    const FrameEntry& fa = i < ra.frames.size() ? ra.frames[i] : empty;
    const FrameEntry& fb = i < rb.frames.size() ? rb.frames[i] : empty;
    for (const auto& s : ra.manifest.sinks) {
      const SinkInfo* sb = rb.manifest.sink(s.name);
      if (!sb || sb->kind != s.kind) continue;
      if (s.kind == "tensor") {
        auto ia = fa.tensors.find(s.name), ib = fb.tensors.find(s.name);
        const bool ha = ia != fa.tensors.end(), hb = ib != fb.tensors.end();
        if (ha && hb) {
          DType t = DType::U8;
          dtype_from_name(s.dtype, &t);
          std::vector<uint8_t> da, db;
          const uint8_t *pa = nullptr, *pb = nullptr;
          bool ok = true;
          if (ra.full() && rb.full()) {
            if (!ra.read_tensor(ia->second, &da, &err)) {
              if (corrupt++ < 5) cmp->error(cmp->ref_label() + ": " + err);
              ok = false;
            } else if (!rb.read_tensor(ib->second, &db, &err)) {
              if (corrupt++ < 5) cmp->error(cmp->run_label() + ": " + err);
              ok = false;
            }
            pa = da.data();
            pb = db.data();
          }
          if (ok)
            cmp->add(i, compare_tensor(s.name, ia->second, pa, ib->second, pb, t, cmp->options(), cmp->ref_label(),
                                       cmp->run_label()));
          continue;
        }
        add_one_sided_frame(cmp, i, s, ha ? &ia->second.pts : nullptr, hb ? &ib->second.pts : nullptr);
      } else if (s.kind == "detections") {
        auto ia = fa.detections.find(s.name), ib = fb.detections.find(s.name);
        const bool ha = ia != fa.detections.end(), hb = ib != fb.detections.end();
        if (ha && hb) {
          cmp->add(i, compare_detections(s.name, ia->second, ib->second, cmp->options(), cmp->ref_label(),
                                         cmp->run_label()));
          continue;
        }
        add_one_sided_frame(cmp, i, s, ha ? &ia->second.pts : nullptr, hb ? &ib->second.pts : nullptr);
      } else {
        auto ia = fa.matches.find(s.name), ib = fb.matches.find(s.name);
        const bool ha = ia != fa.matches.end(), hb = ib != fb.matches.end();
        if (ha && hb) {
          cmp->add(i,
                   compare_matches(s.name, ia->second, ib->second, cmp->options(), cmp->ref_label(), cmp->run_label()));
          continue;
        }
        add_one_sided_frame(cmp, i, s, ha ? &ia->second.pts : nullptr, hb ? &ib->second.pts : nullptr);
      }
    }
  }
}

}  // namespace regress
