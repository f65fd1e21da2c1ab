// cudaprep-regress suite: the command line (suite record / check / merge / list).
#include <glib.h>
#include <glib/gstdio.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "regress_math.h"
#include "regress_store.h"
#include "regress_suite.h"

namespace regress {

namespace {

const char* kSuiteUsage =
    "usage:\n"
    "  cudaprep-regress suite record --suite DIR|FILE --out RESULTS [--clips ROOT] [--goldens DIR] [-j N]\n"
    "                                [--gpus 0,1,... [--jobs-per-gpu K]] [--timeout S] [--parts N --part-index I]\n"
    "                                [--store full|digest] [--force] [--junit FILE] [--retry-failed N]\n"
    "                                [--wrapper PROGRAM] [--quiet]\n"
    "  cudaprep-regress suite check  --suite DIR|FILE --out RESULTS [--clips ROOT] [--goldens DIR] [-j N]\n"
    "                                [--gpus 0,1,... [--jobs-per-gpu K]] [--timeout S] [--parts N --part-index I]\n"
    "                                [--tensor-tol exact|max-abs=X|psnr=DB] [--match-pos-tol PX]\n"
    "                                [--match-score-tol S] [--det-iou X] [--det-pos-tol PX] [--det-conf-tol X]\n"
    "                                [--det-missed N] [--det-extra N] [--junit FILE] [--retry-failed N]\n"
    "                                [--wrapper PROGRAM] [--quiet]\n"
    "  cudaprep-regress suite merge  --out RESULTS [--junit FILE] PART_RESULTS...\n"
    "  cudaprep-regress suite list   --suite DIR|FILE [--clips ROOT] [--goldens DIR] [--parts N --part-index I]\n"
    "A suite is a directory of goldens (clips found by name under --clips ROOT) or a manifest file\n"
    "([suite] defaults, one [clip NAME] group a clip). Each clip runs in its own process; -j N at a time\n"
    "(default: the cores; with --gpus, K on each GPU: --jobs-per-gpu K, default 4). RESULTS gets\n"
    "results.json, index.html and clips/NAME/ (log, report, HTML report).\n"
    "Exit status: 0 every clip passed, 1 a regression, 2 a setup error, timeout or crash (or a usage error).\n";

int suite_usage(const std::string& msg) {
  fprintf(stderr, "cudaprep-regress suite: %s\n%s", msg.c_str(), kSuiteUsage);
  return 2;
}

int suite_error(const std::string& msg) {
  fprintf(stderr, "cudaprep-regress suite: error: %s\n", msg.c_str());
  return 2;
}

struct SuiteArgs {
  std::map<std::string, std::string> opts;
  std::vector<std::string> positional;
  bool has(const std::string& k) const { return opts.count(k) > 0; }
  std::string get(const std::string& k) const {
    auto it = opts.find(k);
    return it == opts.end() ? "" : it->second;
  }
};

bool parse(int argc, char** argv, const std::set<std::string>& with_value, const std::set<std::string>& flags,
           SuiteArgs* a, std::string* error) {
  for (int i = 3; i < argc; i++) {
    std::string s = argv[i], key, value;
    bool has_value = false;
    if (s.rfind("-j", 0) == 0 && s.rfind("--", 0) != 0) {  // -j N, -jN
      key = "jobs";
      if (s.size() > 2) {
        value = s.substr(2);
        has_value = true;
      }
    } else if (s.rfind("--", 0) == 0) {
      key = s.substr(2);
      const size_t eq = key.find('=');
      if (eq != std::string::npos) {
        value = key.substr(eq + 1);
        key.resize(eq);
        has_value = true;
      }
    } else {
      a->positional.push_back(s);
      continue;
    }
    if (flags.count(key)) {
      if (has_value) {
        *error = "--" + key + " takes no value";
        return false;
      }
      a->opts[key] = "";
      continue;
    }
    if (!with_value.count(key)) {
      *error = "unknown option " + s;
      return false;
    }
    if (!has_value) {
      if (i + 1 >= argc) {
        *error = (key == "jobs" ? std::string("-j") : "--" + key) + " needs a value";
        return false;
      }
      value = argv[++i];
    }
    if (a->opts.count(key)) {
      *error = "--" + key + " given twice";
      return false;
    }
    a->opts[key] = value;
  }
  return true;
}

bool parse_count(const std::string& text, long min, long max, long* out) {
  if (text.empty() || text.size() > 9) return false;
  for (char c : text)
    if (!g_ascii_isdigit(c)) return false;
  *out = atol(text.c_str());
  return *out >= min && *out <= max;
}

// The tool's own program, which runs each clip. Started through a dynamic loader
// (`ld-linux-x86-64.so.2 cudaprep-regress ...`, as a relocated install on an older glibc runs),
// /proc/self/exe is the loader: argv[0] names the program then (--wrapper runs it the same way).
std::string self_exe(const char* argv0) {
  gchar* p = g_file_read_link("/proc/self/exe", nullptr);
  std::string s = p ? p : argv0;
  g_free(p);
  const std::string base = s.substr(s.rfind('/') + 1);
  if (base.rfind("ld-linux", 0) == 0 || base.rfind("ld.so", 0) == 0 || base.rfind("ld64.so", 0) == 0) {
    gchar* abs = g_canonicalize_filename(argv0, nullptr);
    s = abs;
    g_free(abs);
  }
  return s;
}

// parts and the part index; false with a message on a malformed pair
bool parse_parts(const SuiteArgs& a, uint32_t* parts, uint32_t* index, std::string* error) {
  *parts = 1;
  *index = 0;
  if (a.has("parts") != a.has("part-index")) {
    *error = "--parts N and --part-index I go together";
    return false;
  }
  if (!a.has("parts")) return true;
  long n = 0, i = 0;
  if (!parse_count(a.get("parts"), 1, 1000000, &n)) {
    *error = "--parts " + a.get("parts") + ": expected a whole number >= 1";
    return false;
  }
  if (!parse_count(a.get("part-index"), 0, n - 1, &i)) {
    *error = "--part-index " + a.get("part-index") + ": expected a whole number from 0 to " + std::to_string(n - 1);
    return false;
  }
  *parts = (uint32_t)n;
  *index = (uint32_t)i;
  return true;
}

bool suite_defaults(const SuiteArgs& a, SuiteDefaults* d, std::string* error) {
  d->clips_root = a.get("clips");
  d->goldens_dir = a.get("goldens");
  for (const char* k : {"tensor-tol", "match-pos-tol", "match-score-tol", "det-iou", "det-pos-tol", "det-conf-tol",
                        "det-missed", "det-extra", "store"})
    if (a.has(k)) d->options[k] = a.get(k);
  if (a.has("timeout")) {
    if (!parse_decimal(a.get("timeout"), &d->timeout_s) || d->timeout_s <= 0 || !std::isfinite(d->timeout_s)) {
      *error = "--timeout " + a.get("timeout") + ": expected seconds (a decimal number > 0)";
      return false;
    }
  }
  if (a.has("store") && a.get("store") != "full" && a.get("store") != "digest") {
    *error = "--store " + a.get("store") + ": expected full or digest";
    return false;
  }
  if (a.has("tensor-tol")) {
    TensorTolerance t;
    if (!parse_tensor_tolerance(a.get("tensor-tol"), &t, error)) return false;
  }
  for (const char* k : {"match-pos-tol", "match-score-tol", "det-pos-tol", "det-conf-tol"}) {
    double v = 0;
    if (a.has(k) && (!parse_decimal(a.get(k), &v) || v < 0 || std::signbit(v))) {
      *error = std::string("--") + k + " " + a.get(k) + ": expected a decimal number >= 0 (e.g. 0.5 or 1e-6)";
      return false;
    }
  }
  double iou = 0;
  if (a.has("det-iou") && (!parse_decimal(a.get("det-iou"), &iou) || !(iou > 0) || iou > 1)) {
    *error = "--det-iou " + a.get("det-iou") + ": expected a decimal number > 0 and <= 1 (e.g. 0.5)";
    return false;
  }
  for (const char* k : {"det-missed", "det-extra"}) {
    const std::string v = a.has(k) ? a.get(k) : "0";
    if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos) {
      *error = std::string("--") + k + " " + v + ": expected a count of detections (0, 1, 2, ...)";
      return false;
    }
  }
  return true;
}

bool load_selected(const SuiteArgs& a, Suite* suite, std::vector<SuiteClip>* selected, uint32_t* parts, uint32_t* index,
                   std::string* error, bool* usage) {
  *usage = true;
  if (!a.has("suite")) {
    *error = "--suite DIR|FILE is required";
    return false;
  }
  SuiteDefaults d;
  if (!parse_parts(a, parts, index, error) || !suite_defaults(a, &d, error)) return false;
  *usage = false;
  if (!load_suite(a.get("suite"), d, suite, error)) return false;
  for (const auto& c : suite->clips)
    if (suite_part(c.name, *parts) == *index) selected->push_back(c);
  return true;
}

// `to_dir` as seen from `from_dir` ("" when the same, else ending in '/'): relative, with ".."
// where needed, so that results and their reports can move together (CI artifacts).
std::string relative_dir(const std::string& from_dir, const std::string& to_dir) {
  gchar* fa = g_canonicalize_filename(from_dir.c_str(), nullptr);
  gchar* ta = g_canonicalize_filename(to_dir.c_str(), nullptr);
  gchar** f = g_strsplit(fa, "/", -1);
  gchar** t = g_strsplit(ta, "/", -1);
  std::vector<std::string> fv, tv;
  for (gchar** p = f; *p; p++)
    if (**p) fv.push_back(*p);
  for (gchar** p = t; *p; p++)
    if (**p) tv.push_back(*p);
  g_strfreev(f);
  g_strfreev(t);
  g_free(fa);
  g_free(ta);
  size_t common = 0;
  while (common < fv.size() && common < tv.size() && fv[common] == tv[common]) common++;
  std::string rel;
  for (size_t i = common; i < fv.size(); i++) rel += "../";
  for (size_t i = common; i < tv.size(); i++) rel += tv[i] + "/";
  return rel;
}

bool write_reports(const SuiteResults& r, const std::string& out, const std::string& junit, std::string* error) {
  if (!results_to_file(r, out + "/results.json", error)) return false;
  const std::string html = html_index(r);
  if (!write_file(out + "/index.html", html.data(), html.size(), error)) return false;
  if (!junit.empty()) {
    // links relative to the JUnit file's folder
    gchar* jdir = g_path_get_dirname(junit.c_str());
    g_mkdir_with_parents(jdir, 0755);
    const std::string base = relative_dir(jdir, out);
    g_free(jdir);
    const std::string xml = junit_xml(r, base);
    if (!write_file(junit, xml.data(), xml.size(), error)) return false;
  }
  return true;
}

int cmd_run(const std::string& command, int argc, char** argv) {
  SuiteArgs a;
  std::string err;
  std::set<std::string> values = {"suite",   "clips", "goldens",    "out",   "jobs",         "gpus",   "jobs-per-gpu",
                                  "timeout", "parts", "part-index", "junit", "retry-failed", "wrapper"};
  std::set<std::string> flags = {"quiet"};
  if (command == "record") {
    values.insert("store");
    flags.insert("force");
  } else {
    values.insert({"tensor-tol", "match-pos-tol", "match-score-tol", "det-iou", "det-pos-tol", "det-conf-tol",
                   "det-missed", "det-extra"});
  }
  if (!parse(argc, argv, values, flags, &a, &err)) return suite_usage(err);
  if (!a.positional.empty()) return suite_usage("unexpected argument " + a.positional[0]);
  if (!a.has("out")) return suite_usage("--out RESULTS is required (the results directory)");
  SuiteRunConfig cfg;
  cfg.command = command;
  cfg.out = a.get("out");
  while (cfg.out.size() > 1 && cfg.out.back() == '/') cfg.out.pop_back();
  cfg.self = self_exe(argv[0]);
  cfg.wrapper = a.get("wrapper");
  cfg.force = a.has("force");
  cfg.progress = !a.has("quiet");
  long n = 0;
  cfg.jobs = (int)g_get_num_processors();
  if (a.has("jobs")) {
    if (!parse_count(a.get("jobs"), 1, 4096, &n))
      return suite_usage("-j " + a.get("jobs") + ": expected a whole number >= 1");
    cfg.jobs = (int)n;
  }
  if (a.has("retry-failed")) {
    if (!parse_count(a.get("retry-failed"), 0, 100, &n))
      return suite_usage("--retry-failed " + a.get("retry-failed") + ": expected a whole number from 0 to 100");
    cfg.retry_failed = (int)n;
  }
  if (a.has("gpus")) {
    gchar** ids = g_strsplit(a.get("gpus").c_str(), ",", -1);
    bool ok = ids[0] != nullptr;
    for (gchar** p = ids; *p; p++) {
      if (!parse_count(*p, 0, 1023, &n) || std::count(cfg.gpus.begin(), cfg.gpus.end(), (int)n)) ok = false;
      cfg.gpus.push_back((int)n);
    }
    g_strfreev(ids);
    if (!ok) return suite_usage("--gpus " + a.get("gpus") + ": expected GPU indices, each once: 0,1,...");
  }
  // with --gpus and no -j: --jobs-per-gpu clips on each GPU at once (default 4)
  long per_gpu = 4;
  if (a.has("jobs-per-gpu") && !parse_count(a.get("jobs-per-gpu"), 1, 256, &per_gpu))
    return suite_usage("--jobs-per-gpu " + a.get("jobs-per-gpu") + ": expected a whole number >= 1");
  if (a.has("jobs-per-gpu") && (!a.has("gpus") || a.has("jobs")))
    return suite_usage("--jobs-per-gpu goes with --gpus and without -j");
  if (!cfg.gpus.empty() && !a.has("jobs")) cfg.jobs = (int)(cfg.gpus.size() * per_gpu);
  Suite suite;
  std::vector<SuiteClip> selected;
  uint32_t parts = 1, index = 0;
  bool usage = false;
  if (!load_selected(a, &suite, &selected, &parts, &index, &err, &usage))
    return usage ? suite_usage(err) : suite_error(err);
  if (g_mkdir_with_parents(cfg.out.c_str(), 0755) != 0)
    return suite_error("cannot create " + cfg.out + ": " + g_strerror(errno));
  if (cfg.progress)
    fprintf(stderr, "suite %s: %s: %zu clips%s, %d at a time%s\n", command.c_str(), suite.name.c_str(), selected.size(),
            parts > 1 ? (" (part " + std::to_string(index) + " of " + std::to_string(parts) + ", " +
                         std::to_string(suite.clips.size()) + " in the suite)")
                            .c_str()
                      : "",
            cfg.jobs, cfg.gpus.empty() ? "" : (" over GPUs " + a.get("gpus")).c_str());
  SuiteResults results;
  run_suite(suite, selected, cfg, &results);
  results.parts = parts;
  results.part_indices = {index};
  results.suite_clips = (uint32_t)suite.clips.size();
  if (!write_reports(results, cfg.out, a.get("junit"), &err)) return suite_error(err);
  fputs(results_summary(results).c_str(), stdout);
  printf("results: %s/results.json, %s/index.html%s\n", cfg.out.c_str(), cfg.out.c_str(),
         a.has("junit") ? (", " + a.get("junit")).c_str() : "");
  return results.exit_code();
}

int cmd_merge(int argc, char** argv) {
  SuiteArgs a;
  std::string err;
  if (!parse(argc, argv, {"out", "junit"}, {}, &a, &err)) return suite_usage(err);
  if (!a.has("out")) return suite_usage("merge needs --out RESULTS");
  if (a.positional.empty()) return suite_usage("merge needs the parts' results (results.json or their directories)");
  std::string out = a.get("out");
  std::vector<SuiteResults> parts;
  for (const auto& p : a.positional) {
    const std::string file = g_file_test(p.c_str(), G_FILE_TEST_IS_DIR) ? p + "/results.json" : p;
    SuiteResults r;
    if (!results_from_file(file, &r, &err)) return suite_error(err);
    // links from the merged results' directory to this part's files
    gchar* pdir = g_path_get_dirname(file.c_str());
    const std::string prefix = relative_dir(out, pdir);
    g_free(pdir);
    for (auto& c : r.clips)
      for (std::string* s : {&c.log, &c.report, &c.html})
        if (!s->empty()) *s = prefix + *s;
    parts.push_back(r);
  }
  SuiteResults merged;
  if (!merge_results(parts, &merged, &err)) return suite_error(err);
  if (g_mkdir_with_parents(out.c_str(), 0755) != 0)
    return suite_error("cannot create " + out + ": " + g_strerror(errno));
  if (!write_reports(merged, out, a.get("junit"), &err)) return suite_error(err);
  fputs(results_summary(merged).c_str(), stdout);
  std::vector<uint32_t> missing;
  for (uint32_t i = 0; i < merged.parts; i++)
    if (!std::count(merged.part_indices.begin(), merged.part_indices.end(), i)) missing.push_back(i);
  if (!missing.empty()) {
    std::string m;
    for (uint32_t i : missing) m += (m.empty() ? "" : ", ") + std::to_string(i);
    return suite_error("parts missing: " + m + " of " + std::to_string(merged.parts) + " (the report covers " +
                       std::to_string(merged.clips.size()) + " of " + std::to_string(merged.suite_clips) + " clips)");
  }
  if (merged.clips.size() != merged.suite_clips)
    return suite_error("the parts hold " + std::to_string(merged.clips.size()) + " clips, the suite " +
                       std::to_string(merged.suite_clips));
  return merged.exit_code();
}

int cmd_list(int argc, char** argv) {
  SuiteArgs a;
  std::string err;
  if (!parse(argc, argv, {"suite", "clips", "goldens", "parts", "part-index"}, {}, &a, &err)) return suite_usage(err);
  if (!a.positional.empty()) return suite_usage("unexpected argument " + a.positional[0]);
  Suite suite;
  std::vector<SuiteClip> selected;
  uint32_t parts = 1, index = 0;
  bool usage = false;
  if (!load_selected(a, &suite, &selected, &parts, &index, &err, &usage))
    return usage ? suite_usage(err) : suite_error(err);
  for (const auto& c : selected) printf("%s\t%s\t%s\n", c.name.c_str(), c.clip.c_str(), c.golden.c_str());
  return 0;
}

}  // namespace

int cmd_suite(int argc, char** argv) {
  if (argc < 3) return suite_usage("suite needs a command: record, check, merge or list");
  const std::string sub = argv[2];
  if (sub == "record" || sub == "check") return cmd_run(sub, argc, argv);
  if (sub == "merge") return cmd_merge(argc, argv);
  if (sub == "list") return cmd_list(argc, argv);
  if (sub == "--help" || sub == "-h" || sub == "help") {
    fputs(kSuiteUsage, stdout);
    return 0;
  }
  return suite_usage("unknown suite command '" + sub + "'");
}

}  // namespace regress
