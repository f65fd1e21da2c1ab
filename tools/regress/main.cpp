// cudaprep-regress: frame-by-frame regression tests of cudaprep pipelines over recorded clips.
//
//   cudaprep-regress record  --clip FILE --pipeline DESC --out DIR [--store full|digest] [--force]
//   cudaprep-regress check   --clip FILE --golden DIR [--pipeline DESC] [tolerances] [--report FILE]
//   cudaprep-regress compare DIR_A DIR_B [tolerances] [--report FILE]
//
// Exit status: 0 pass, 1 regression, 2 usage or setup error. See tools/regress/README.md.
#include <gst/gst.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "regress_compare.h"
#include "regress_html.h"
#include "regress_pipeline.h"
#include "regress_place.h"
#include "regress_store.h"
#include "regress_suite.h"

using namespace regress;

namespace {

const char* kUsage =
    "usage:\n"
    "  cudaprep-regress record  --clip FILE --pipeline DESC --out DIR [--store full|digest] [--force]\n"
    "                           [--progress]\n"
    "  cudaprep-regress check   --clip FILE --golden DIR [--pipeline DESC] [--tensor-tol exact|max-abs=X|psnr=DB]\n"
    "                           [--match-pos-tol PX] [--match-score-tol S] [--report FILE] [--progress]\n"
    "                           [--verbose] [--allow-setting-changes] [--html DIR] [--device-id N]\n"
    "                           [--det-iou X] [--det-pos-tol PX] [--det-conf-tol X] [--det-missed N] [--det-extra N]\n"
    "  cudaprep-regress compare DIR_A DIR_B [--tensor-tol ...] [--match-pos-tol PX] [--match-score-tol S]\n"
    "                           [--det-iou X] [--det-pos-tol PX] [--det-conf-tol X] [--det-missed N] [--det-extra N]\n"
    "                           [--report FILE] [--verbose] [--allow-setting-changes] [--html DIR [--clip FILE]]\n"
    "  cudaprep-regress suite record|check|merge|list ...  (many clips: cudaprep-regress suite --help)\n"
    "  cudaprep-regress --version\n"
    "DESC is a gst-launch description with {clip} where the clip goes and appsinks named after what\n"
    "they carry (appsink name=tensor after cudatensorize, appsink name=matches after cudatemplatematch,\n"
    "appsink name=detections for any detector's ROI metas and analytics detections).\n"
    "Element settings go in DESC, batches too (cudatensorize batch-size=2 rois=\"<<x,y,w,h>,...>\", roi-meta=true,\n"
    "cudatensorbatch): a frame's tensors are recorded together, slot by slot, and checked per slot.\n"
    "record refuses to replace an existing recording in DIR unless --force is given.\n"
    "Tolerances are plain decimal numbers: max-abs=X, the match tolerances, --det-pos-tol and --det-conf-tol\n"
    ">= 0, psnr=DB > 0, --det-iou > 0 and <= 1; --det-missed and --det-extra are counts per frame.\n"
    "Exit status: 0 pass, 1 regression, 2 usage or setup error (also when interrupted: SIGINT, SIGTERM).\n";

int usage_error(const std::string& msg) {
  fprintf(stderr, "cudaprep-regress: %s\n%s", msg.c_str(), kUsage);
  return 2;
}

int setup_error(const std::string& msg) {
  fprintf(stderr, "cudaprep-regress: error: %s\n", msg.c_str());
  return 2;
}

struct Args {
  std::string command;
  std::map<std::string, std::string> opts;
  std::vector<std::string> positional;
  bool flag(const std::string& k) const { return opts.count(k) > 0; }
  std::string get(const std::string& k, const std::string& def = "") const {
    auto it = opts.find(k);
    return it == opts.end() ? def : it->second;
  }
};

bool parse_args(int argc, char** argv, const std::vector<std::string>& with_value,
                const std::vector<std::string>& flags, Args* a, std::string* error) {
  for (int i = 2; i < argc; i++) {
    std::string s = argv[i];
    if (s.rfind("--", 0) != 0) {
      a->positional.push_back(s);
      continue;
    }
    std::string key = s.substr(2), value;
    const size_t eq = key.find('=');
    bool has_value = false;
    if (eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
      has_value = true;
    }
    if (std::find(flags.begin(), flags.end(), key) != flags.end()) {
      if (has_value) {
        *error = "--" + key + " takes no value";
        return false;
      }
      a->opts[key] = "";
    } else if (std::find(with_value.begin(), with_value.end(), key) != with_value.end()) {
      if (!has_value) {
        if (i + 1 >= argc) {
          *error = "--" + key + " needs a value";
          return false;
        }
        value = argv[++i];
      }
      if (a->opts.count(key)) {
        *error = "--" + key + " given twice";
        return false;
      }
      a->opts[key] = value;
    } else {
      *error = "unknown option --" + key + " for " + a->command;
      return false;
    }
  }
  return true;
}

bool parse_nonneg(const std::string& text, const char* what, double* out, std::string* error) {
  if (!parse_decimal(text, out) || *out < 0 || std::signbit(*out)) {
    *error = std::string(what) + " " + text + ": expected a decimal number >= 0 (e.g. 0.5 or 1e-6)";
    return false;
  }
  return true;
}

bool parse_count(const std::string& text, const char* what, uint64_t* out, std::string* error) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos) {
    *error = std::string(what) + " " + text + ": expected a count of detections (0, 1, 2, ...)";
    return false;
  }
  *out = std::stoull(text);
  return true;
}

bool tolerance_options(const Args& a, CompareOptions* opt, std::string* error) {
  if (a.flag("tensor-tol") && !parse_tensor_tolerance(a.get("tensor-tol"), &opt->tensor_tol, error)) return false;
  if (a.flag("match-pos-tol") && !parse_nonneg(a.get("match-pos-tol"), "--match-pos-tol", &opt->pos_tol, error))
    return false;
  if (a.flag("match-score-tol") && !parse_nonneg(a.get("match-score-tol"), "--match-score-tol", &opt->score_tol, error))
    return false;
  if (a.flag("det-iou") &&
      (!parse_decimal(a.get("det-iou"), &opt->det.iou) || !(opt->det.iou > 0) || opt->det.iou > 1)) {
    *error = "--det-iou " + a.get("det-iou") + ": expected a decimal number > 0 and <= 1 (e.g. 0.5)";
    return false;
  }
  if (a.flag("det-pos-tol") && !parse_nonneg(a.get("det-pos-tol"), "--det-pos-tol", &opt->det.pos_tol, error))
    return false;
  if (a.flag("det-conf-tol") && !parse_nonneg(a.get("det-conf-tol"), "--det-conf-tol", &opt->det.conf_tol, error))
    return false;
  if (a.flag("det-missed") && !parse_count(a.get("det-missed"), "--det-missed", &opt->det.missed, error)) return false;
  if (a.flag("det-extra") && !parse_count(a.get("det-extra"), "--det-extra", &opt->det.extra, error)) return false;
  opt->allow_setting_changes = a.flag("allow-setting-changes");
  return true;
}

// --device-id N: the GPU every element with a device-id property runs on
bool device_id_option(const Args& a, int* id, std::string* error) {
  if (!a.flag("device-id")) return true;
  const std::string v = a.get("device-id");
  if (v.empty() || v.size() > 4 || v.find_first_not_of("0123456789") != std::string::npos) {
    *error = "--device-id " + v + ": expected a GPU index (0, 1, ...)";
    return false;
  }
  *id = atoi(v.c_str());
  return true;
}

bool clip_ok(const std::string& clip, std::string* error) {
  if (clip.empty()) {
    *error = "--clip FILE is required";
    return false;
  }
  GStatBuf st;
  if (g_stat(clip.c_str(), &st) != 0) {
    const int e = errno;  // the system's reason: "File name too long", "Permission denied", ...
    *error = e == ENOENT ? "clip not found: " + clip : "clip " + clip + ": " + g_strerror(e);
    return false;
  }
  if (!S_ISREG(st.st_mode) || g_access(clip.c_str(), R_OK) != 0) {
    *error = "clip is not a readable file: " + clip;
    return false;
  }
  return true;
}

std::string describe_device(const DeviceInfo& d) {
  std::string s = d.kind;
  if (!d.name.empty()) s += " (" + d.name + ")";
  if (!d.driver.empty()) s += ", driver " + d.driver;
  if (!d.arch.empty()) s += ", " + d.arch;
  return s;
}

std::string describe_recording(const Recording& r) {
  std::string plugin;
  for (auto& e : r.manifest.elements)
    if (e.plugin == "cudaprep") plugin = e.plugin_version;
  return r.dir + " (recorded " + r.manifest.date + " from " + r.manifest.clip + " on " +
         describe_device(r.manifest.device) + "; " + r.manifest.gstreamer_version +
         (plugin.empty() ? "" : ", cudaprep " + plugin) + "; store " + r.manifest.store + "; " +
         std::to_string(r.manifest.frames) + " frames)";
}

bool write_text(const std::string& path, const std::string& text, std::string* error) {
  return write_file(path, text.data(), text.size(), error);
}

// Prints the report (failing frames only unless verbose) and writes the full one to --report
// and, given `html` (what the HTML report shows besides), the HTML report to --html.
int finish(const Comparison& cmp, const Args& a, HtmlReportInput* html = nullptr) {
  const std::string full = cmp.render(true, 0);
  fputs(cmp.render(a.flag("verbose"), 20).c_str(), stdout);
  fflush(stdout);
  if (a.flag("report")) {
    std::string err;
    if (!write_text(a.get("report"), full, &err)) {
      fprintf(stderr, "cudaprep-regress: error: %s\n", err.c_str());
      return 2;
    }
  }
  if (html && a.flag("html")) {
    html->cmp = &cmp;
    html->text_report = full;
    std::string err;
    if (!write_html_report(a.get("html"), *html, &err)) return setup_error(err);
    fprintf(stderr, "cudaprep-regress: HTML report: %s/index.html\n", a.get("html").c_str());
  }
  return cmp.exit_code();
}

/* ---- record ----------------------------------------------------------------------------- */

class RecordHandler : public SampleHandler {
 public:
  RecordHandler(std::string dir, bool full) : dir_(std::move(dir)), full_(full) {}

  void on_tensor(const std::string& sink, uint64_t index, const TensorEntry& entry, DType type,
                 const uint8_t* data) override {
    TensorEntry e = entry;
    if (full_) {
      e.file = tensor_file_name(sink, index, type);
      std::string err;
      if (!write_file(dir_ + "/" + e.file, data, e.bytes, &err)) {
        std::lock_guard<std::mutex> lock(mu_);
        if (error_.empty()) error_ = err;
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    frames_[index].index = index;
    frames_[index].tensors[sink] = e;
  }
  void on_matches(const std::string& sink, uint64_t index, const MatchesEntry& entry) override {
    std::lock_guard<std::mutex> lock(mu_);
    frames_[index].index = index;
    frames_[index].matches[sink] = entry;
  }
  void on_detections(const std::string& sink, uint64_t index, const DetectionsEntry& entry) override {
    std::lock_guard<std::mutex> lock(mu_);
    frames_[index].index = index;
    frames_[index].detections[sink] = entry;
  }
  const std::map<uint64_t, FrameEntry>& frames() const { return frames_; }
  const std::string& error() const { return error_; }

 private:
  std::string dir_;
  bool full_;
  std::mutex mu_;
  std::map<uint64_t, FrameEntry> frames_;
  std::string error_;
};

int cmd_record(int argc, char** argv) {
  Args a;
  a.command = "record";
  std::string err;
  if (!parse_args(argc, argv, {"clip", "pipeline", "out", "store", "device-id"}, {"progress", "force"}, &a, &err))
    return usage_error(err);
  if (!a.positional.empty()) return usage_error("unexpected argument " + a.positional[0]);
  if (!a.flag("pipeline")) return usage_error("record needs --pipeline DESC");
  if (!a.flag("out")) return usage_error("record needs --out DIR");
  const std::string store = a.get("store", "full");
  if (store != "full" && store != "digest") return usage_error("--store " + store + ": expected full or digest");
  const std::string clip = a.get("clip");
  std::string out = a.get("out");
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  int device_id = -1;
  if (!device_id_option(a, &device_id, &err)) return usage_error(err);
  if (!clip_ok(clip, &err)) return setup_error(err);

  if (g_file_test(out.c_str(), G_FILE_TEST_EXISTS)) {
    if (!g_file_test(out.c_str(), G_FILE_TEST_IS_DIR)) return setup_error(out + " exists and is not a directory");
    GDir* d = g_dir_open(out.c_str(), 0, nullptr);
    const bool empty = d && g_dir_read_name(d) == nullptr;
    if (d) g_dir_close(d);
    const std::string m = out + "/manifest.json";
    if (!empty && !g_file_test(m.c_str(), G_FILE_TEST_EXISTS))
      return setup_error(out + " is not empty and holds no recording (manifest.json): refusing to overwrite it");
    if (!empty && !a.flag("force"))
      return setup_error(out + " holds a recording already: refusing to replace it (use --force to replace it)");
  }
  // Ctrl-C / SIGTERM from here on: stop, remove the partial recording, exit 2
  InterruptGuard guard;
  const std::string tmp = out + ".recording-" + std::to_string(getpid());
  remove_tree(tmp);
  if (g_mkdir_with_parents((tmp + "/tensors").c_str(), 0755) != 0)
    return setup_error("cannot create " + tmp + ": " + g_strerror(errno));
  if (store != "full") g_rmdir((tmp + "/tensors").c_str());

  RunConfig config;
  config.clip = clip;
  config.description = a.get("pipeline");
  config.label = "record";
  config.progress = a.flag("progress");
  config.device_id = device_id;
  PipelineRun run;
  RecordHandler handler(tmp, store == "full");
  if (!run.prepare(config, &err) || !run.run(&handler, &err)) {
    remove_tree(tmp);
    if (interrupted()) return setup_error(err + ": nothing recorded (" + tmp + " removed)");
    return setup_error(err);
  }
  std::vector<std::string> sink_errors = run.sink_errors();
  if (!handler.error().empty()) sink_errors.push_back(handler.error());
  if (!sink_errors.empty()) {
    remove_tree(tmp);
    return setup_error(sink_errors.front());
  }

  Manifest m = run.manifest(store);
  std::string lines;
  uint64_t expect = 0, total_bytes = 0, matches = 0;
  std::map<std::string, uint64_t> per_template, per_class;
  uint64_t detections = 0;
  for (const auto& [index, f] : handler.frames()) {
    if (index != expect) {
      remove_tree(tmp);
      return setup_error("internal: frame " + std::to_string(expect) + " missing");
    }
    expect++;
    lines += frame_to_json(f).dump(false) + "\n";
    for (auto& t : f.tensors) total_bytes += t.second.bytes;
    for (auto& mm : f.matches) {
      matches += mm.second.items.size();
      for (const MatchRec& r : mm.second.items) per_template[r.label]++;
    }
    for (auto& dd : f.detections) {
      detections += dd.second.items.size();
      for (const DetRec& d : dd.second.items) per_class[det_class_key(d)]++;
    }
  }
  const std::string manifest_text = manifest_to_json(m).dump(true) + "\n";
  if (!write_text(tmp + "/frames.jsonl", lines, &err) || !write_text(tmp + "/manifest.json", manifest_text, &err)) {
    remove_tree(tmp);
    return setup_error(err);
  }
  if (const int sig = interrupted()) {
    remove_tree(tmp);
    return setup_error("interrupted by " + signal_name(sig) + ": nothing recorded");
  }
  // into place in one atomic step: without --force, never over a recording that appeared at
  // DIR meanwhile (another record, a copy); with --force, the older one goes only now
  const PlaceResult placed = place_recording(tmp, out, a.flag("force"), &err);
  if (placed != PlaceResult::kPlaced) {
    remove_tree(tmp);
    if (placed == PlaceResult::kTargetAppeared)
      return setup_error(out + " appeared while recording (another record or a copy): refusing to replace it; " +
                         "it is left as it was and this recording is discarded (use --force to replace it)");
    return setup_error(err);
  }

  printf("recorded %" G_GUINT64_FORMAT " frames of %s into %s (store %s, device %s)\n", m.frames, clip.c_str(),
         out.c_str(), store.c_str(), describe_device(m.device).c_str());
  for (const auto& s : m.sinks) {
    printf("  sink '%s' (%s): %" G_GUINT64_FORMAT " frames, caps %s%s\n", s.name.c_str(), s.kind.c_str(), s.frames,
           s.caps.c_str(), s.memory == "system" ? "" : (" [" + s.memory + "]").c_str());
  }
  if (store == "full") printf("  tensor data: %" G_GUINT64_FORMAT " bytes\n", total_bytes);
  bool match_sink = false, detect_sink = false;
  for (const auto& s : m.sinks) match_sink = match_sink || s.kind == "matches";
  for (const auto& s : m.sinks) detect_sink = detect_sink || s.kind == "detections";
  std::string templates;  // a bank's matches per template
  if (per_template.size() > 1 || (per_template.size() == 1 && per_template.begin()->first != kSingleTemplateLabel))
    for (const auto& [label, n] : per_template)
      templates += (templates.empty() ? " (" : ", ") + label + " " + std::to_string(n);
  if (!templates.empty()) templates += ")";
  printf("  matches: %" G_GUINT64_FORMAT "%s%s\n", matches, templates.c_str(),
         match_sink && matches == 0 ? " (none in any frame: is that what the threshold and search region mean?)" : "");
  if (detect_sink) {
    std::string classes;
    for (const auto& [key, n] : per_class) classes += (classes.empty() ? " (" : ", ") + key + " " + std::to_string(n);
    if (!classes.empty()) classes += ")";
    printf("  detections: %" G_GUINT64_FORMAT "%s%s\n", detections, classes.c_str(),
           detections == 0 ? " (none in any frame: no ROI meta or ODMtd reached the detections sink)" : "");
  }
  return 0;
}

/* ---- check ------------------------------------------------------------------------------ */

class CheckHandler : public SampleHandler {
 public:
  // keeper: what the HTML report may show of this run (nullptr: no --html)
  CheckHandler(const Recording& golden, Comparison* cmp, RunKeeper* keeper)
      : golden_(golden), cmp_(cmp), keeper_(keeper) {}

  // A digest-only golden holds a frame to its digest: one equal to it needs no copy and no stats.
  const TensorEntry* expected_tensor(const std::string& sink, uint64_t index, DType type) override {
    const SinkInfo* gs = golden_.manifest.sink(sink);
    DType gtype;
    if (golden_.full() || !gs || gs->kind != "tensor" || !dtype_from_name(gs->dtype, &gtype) || gtype != type)
      return nullptr;
    return golden_tensor(sink, index);
  }

  void on_tensor(const std::string& sink, uint64_t index, const TensorEntry& entry, DType type,
                 const uint8_t* data) override {
    const SinkInfo* gs = golden_.manifest.sink(sink);
    if (!gs || gs->kind != "tensor") return;  // the manifest comparison reports it
    DType gtype = type;
    dtype_from_name(gs->dtype, &gtype);
    const TensorEntry* ref = golden_tensor(sink, index);
    if (!ref) {
      add_only_run(sink, "tensor", index, entry.pts);
      return;
    }
    std::vector<uint8_t> ref_data;
    const uint8_t* rd = nullptr;
    if (golden_.full()) {
      std::string err;
      if (!golden_.read_tensor(*ref, &ref_data, &err)) {
        corrupt(err);
        return;
      }
      rd = ref_data.data();
    }
    const SinkResult r =
        compare_tensor(sink, *ref, rd, entry, data, gtype, cmp_->options(), cmp_->ref_label(), cmp_->run_label());
    if (keeper_) keeper_->keep_tensor(sink, index, r, data, entry.bytes);
    cmp_->add(index, r);
  }

  void on_matches(const std::string& sink, uint64_t index, const MatchesEntry& entry) override {
    const SinkInfo* gs = golden_.manifest.sink(sink);
    if (!gs || gs->kind != "matches") return;
    if (keeper_) keeper_->keep_matches(sink, index, entry);
    const MatchesEntry* ref = nullptr;
    if (index < golden_.frames.size()) {
      auto it = golden_.frames[index].matches.find(sink);
      if (it != golden_.frames[index].matches.end()) ref = &it->second;
    }
    if (!ref) {
      add_only_run(sink, "matches", index, entry.pts);
      return;
    }
    cmp_->add(index, compare_matches(sink, *ref, entry, cmp_->options(), cmp_->ref_label(), cmp_->run_label()));
  }

  void on_detections(const std::string& sink, uint64_t index, const DetectionsEntry& entry) override {
    const SinkInfo* gs = golden_.manifest.sink(sink);
    if (!gs || gs->kind != "detections") return;
    if (keeper_) keeper_->keep_detections(sink, index, entry);
    const DetectionsEntry* ref = nullptr;
    if (index < golden_.frames.size()) {
      auto it = golden_.frames[index].detections.find(sink);
      if (it != golden_.frames[index].detections.end()) ref = &it->second;
    }
    if (!ref) {
      add_only_run(sink, "detections", index, entry.pts);
      return;
    }
    cmp_->add(index, compare_detections(sink, *ref, entry, cmp_->options(), cmp_->ref_label(), cmp_->run_label()));
  }

  std::string progress_note() override {
    const uint64_t n = cmp_->failing_frames();
    return n ? std::to_string(n) + " failing" : "";
  }

  std::vector<std::string> corrupt_errors() {
    std::lock_guard<std::mutex> lock(mu_);
    return corrupt_;
  }

 private:
  const TensorEntry* golden_tensor(const std::string& sink, uint64_t index) const {
    if (index >= golden_.frames.size()) return nullptr;
    auto it = golden_.frames[index].tensors.find(sink);
    return it != golden_.frames[index].tensors.end() ? &it->second : nullptr;
  }
  void add_only_run(const std::string& sink, const char* kind, uint64_t index, int64_t pts) {
    SinkResult r;
    r.sink = sink;
    r.kind = kind;
    r.run_present = true;
    r.pass = false;
    r.problem = "frame only in " + cmp_->run_label();
    r.pts_run = pts;
    cmp_->add(index, r);
  }
  void corrupt(const std::string& err) {
    std::lock_guard<std::mutex> lock(mu_);
    if (corrupt_.size() < 5) corrupt_.push_back("golden file " + err);
  }

  const Recording& golden_;
  Comparison* cmp_;
  RunKeeper* keeper_;
  std::mutex mu_;
  std::vector<std::string> corrupt_;
};

// Frames the reference has and the other side does not.
void add_missing_frames(Comparison* cmp, const Recording& ref, const Manifest& run) {
  for (const auto& s : ref.manifest.sinks) {
    const SinkInfo* o = run.sink(s.name);
    const uint64_t have = o ? o->frames : 0;
    for (uint64_t i = have; o && i < ref.frames.size(); i++) {
      const FrameEntry& f = ref.frames[i];
      SinkResult r;
      r.sink = s.name;
      r.kind = s.kind;
      r.ref_present = true;
      r.pass = false;
      r.problem = "frame missing in " + cmp->run_label();
      if (s.kind == "tensor" && f.tensors.count(s.name))
        r.pts_ref = f.tensors.at(s.name).pts;
      else if (s.kind == "matches" && f.matches.count(s.name))
        r.pts_ref = f.matches.at(s.name).pts;
      else if (s.kind == "detections" && f.detections.count(s.name))
        r.pts_ref = f.detections.at(s.name).pts;
      else
        continue;
      cmp->add(i, r);
    }
  }
}

int cmd_check(int argc, char** argv) {
  Args a;
  a.command = "check";
  std::string err;
  if (!parse_args(argc, argv,
                  {"clip", "golden", "pipeline", "tensor-tol", "match-pos-tol", "match-score-tol", "det-iou",
                   "det-pos-tol", "det-conf-tol", "det-missed", "det-extra", "report", "html", "device-id"},
                  {"progress", "verbose", "allow-setting-changes"}, &a, &err))
    return usage_error(err);
  if (!a.positional.empty()) return usage_error("unexpected argument " + a.positional[0]);
  if (!a.flag("golden")) return usage_error("check needs --golden DIR");
  CompareOptions opt;
  if (!tolerance_options(a, &opt, &err)) return usage_error(err);
  int device_id = -1;
  if (!device_id_option(a, &device_id, &err)) return usage_error(err);
  if (a.flag("html") && !html_dir_usable(a.get("html"), &err)) return setup_error(err);
  const std::string clip = a.get("clip");
  if (!clip_ok(clip, &err)) return setup_error(err);

  Recording golden;
  if (!golden.load(a.get("golden"), &err)) return setup_error("golden: " + err);
  const std::string desc = a.get("pipeline", golden.manifest.pipeline);
  const RecordingSide golden_side(golden);
  HtmlReportInput html;
  html.ref = &golden.manifest;
  html.ref_where = golden.dir;
  html.ref_data = &golden_side;
  html.clip = clip;

  Comparison cmp("check", "golden", "this run", opt);
  cmp.header("clip", clip);
  cmp.header("golden", describe_recording(golden));

  RunConfig config;
  config.clip = clip;
  config.description = desc;
  config.label = "check";
  config.progress = a.flag("progress");
  config.device_id = device_id;
  config.expected_frames = golden.manifest.frames;
  PipelineRun run;
  InterruptGuard guard;  // Ctrl-C: stop playing, report what was compared, exit 2
  if (!run.prepare(config, &err)) return setup_error(err);

  // settings first: no point playing a long clip through a pipeline set up differently
  {
    Manifest pre;
    pre.pipeline = desc;
    pre.elements = run.elements();
    for (const auto& n : run.sink_names()) {
      SinkInfo s;
      s.name = n;
      s.kind = sink_kind(n);
      pre.sinks.push_back(s);
    }
    Comparison early("check", "golden", "this run", opt);
    early.compare_manifests(golden.manifest, pre);
    if (early.has_errors()) {
      // the clip was not played: report the settings alone
      Comparison report("check", "golden", "this run", opt);
      report.header("clip", clip + " (not played)");
      report.header("golden", describe_recording(golden));
      report.header("pipeline", desc);
      for (const auto& e : early.errors()) report.error(e);
      report.hint(
          "The golden was recorded with other settings: re-record it if the change is intended "
          "(tools/regress/README.md), or pass --allow-setting-changes to compare the frames anyway.");
      html.run = &pre;
      html.run_where = "this run (not played)";
      html.played = false;
      return finish(report, a, &html);
    }
  }

  RunKeeper keeper;
  CheckHandler handler(golden, &cmp, a.flag("html") ? &keeper : nullptr);
  const bool ran = run.run(&handler, &err);
  const Manifest m = run.manifest("full");
  cmp.header("this run", describe_device(m.device) + "; " + m.gstreamer_version);
  cmp.header("pipeline", desc);
  cmp.header("frames", "golden " + std::to_string(golden.manifest.frames) + ", this run " + std::to_string(m.frames));
  if (cmp.note_digest_only(golden.manifest, m, golden.dir, ""))
    fprintf(stderr,
            "cudaprep-regress: warning: the golden stores tensor digests only: --tensor-tol %s cannot be "
            "applied, tensors are compared exactly\n",
            opt.tensor_tol.text().c_str());
  gchar* base = g_filename_display_basename(clip.c_str());
  if (golden.manifest.clip != base)
    cmp.note("the golden was recorded from a clip named " + golden.manifest.clip + ", this run plays " + base);
  g_free(base);
  if (!ran) cmp.error(err);
  for (const auto& e : run.sink_errors()) cmp.error(e);
  for (const auto& e : handler.corrupt_errors()) cmp.error(e);
  if (ran) {
    cmp.compare_manifests(golden.manifest, m);
    cmp.compare_frame_counts(golden.manifest, m);
    add_missing_frames(&cmp, golden, m);
  }
  html.run = &m;
  html.run_where = "this run";
  html.run_data = &keeper;
  return finish(cmp, a, &html);
}

/* ---- compare ---------------------------------------------------------------------------- */

int cmd_compare(int argc, char** argv) {
  Args a;
  a.command = "compare";
  std::string err;
  if (!parse_args(argc, argv,
                  {"tensor-tol", "match-pos-tol", "match-score-tol", "det-iou", "det-pos-tol", "det-conf-tol",
                   "det-missed", "det-extra", "report", "html", "clip"},
                  {"verbose", "allow-setting-changes"}, &a, &err))
    return usage_error(err);
  if (a.positional.size() != 2) return usage_error("compare needs two recordings: DIR_A DIR_B");
  CompareOptions opt;
  if (!tolerance_options(a, &opt, &err)) return usage_error(err);
  if (a.flag("clip") && !a.flag("html")) return usage_error("compare takes --clip only with --html (for its pictures)");
  if (a.flag("clip") && !clip_ok(a.get("clip"), &err)) return setup_error(err);
  if (a.flag("html") && !html_dir_usable(a.get("html"), &err)) return setup_error(err);
  Recording ra, rb;
  if (!ra.load(a.positional[0], &err)) return setup_error("A: " + err);
  if (!rb.load(a.positional[1], &err)) return setup_error("B: " + err);

  Comparison cmp("compare", "A", "B", opt);
  cmp.header("A", describe_recording(ra));
  cmp.header("B", describe_recording(rb));
  if (ra.manifest.clip != rb.manifest.clip)
    cmp.note("A was recorded from a clip named " + ra.manifest.clip + ", B from " + rb.manifest.clip);
  if (cmp.note_digest_only(ra.manifest, rb.manifest, ra.dir, rb.dir))
    fprintf(stderr,
            "cudaprep-regress: warning: a recording stores tensor digests only: --tensor-tol %s cannot be "
            "applied, tensors are compared exactly\n",
            opt.tensor_tol.text().c_str());
  cmp.compare_manifests(ra.manifest, rb.manifest);
  cmp.compare_frame_counts(ra.manifest, rb.manifest);

  compare_recordings(ra, rb, &cmp);
  const RecordingSide side_a(ra), side_b(rb);
  HtmlReportInput html;
  html.ref = &ra.manifest;
  html.run = &rb.manifest;
  html.ref_where = ra.dir;
  html.run_where = rb.dir;
  html.ref_data = &side_a;
  html.run_data = &side_b;
  html.clip = a.get("clip");
  html.clip_missing = "compare draws the matches over the clip's frames when given --clip FILE";
  return finish(cmp, a, &html);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage_error("no command");
  const std::string command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    fputs(kUsage, stdout);
    return 0;
  }
  if (command == "--version") {
    printf("cudaprep-regress %s\n", tool_version());
    return 0;
  }
  if (command == "suite") return cmd_suite(argc, argv);  // runs the clips in processes of their own
  gst_init(nullptr, nullptr);
  if (command == "record") return cmd_record(argc, argv);
  if (command == "check") return cmd_check(argc, argv);
  if (command == "compare") return cmd_compare(argc, argv);
  return usage_error("unknown command '" + command + "'");
}
