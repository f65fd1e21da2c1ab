// cudaprep-regress suite: record or check many clips, each in its own process, several at a
// time and over several GPUs, split into stable parts across machines; results as JSON, JUnit
// XML and an HTML index. See tools/regress/README.md ("Suites").
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace regress {

// One clip of a suite.
struct SuiteClip {
  std::string name;                            // unique in the suite; the golden's directory name
  std::string clip;                            // the clip's path
  std::string golden;                          // the golden's directory
  std::string pipeline;                        // empty: the golden's own (check); record needs one
  std::map<std::string, std::string> options;  // tensor-tol, match-pos-tol, match-score-tol, det-*, store
  double timeout_s = 0;                        // 0: none
};

struct Suite {
  std::string name;              // JUnit classname
  std::string source;            // the directory or manifest it was read from
  std::vector<SuiteClip> clips;  // sorted by name
};

// The settings a suite run takes from the command line (they override the manifest's [suite]
// defaults; a clip's own settings in the manifest override both).
struct SuiteDefaults {
  std::string clips_root;   // --clips
  std::string goldens_dir;  // --goldens
  std::map<std::string, std::string> options;
  double timeout_s = -1;  // --timeout; -1: not given
};

// Reads a suite: a directory of goldens (every directory under it holding a manifest.json; the
// name is its path below the suite, the clip is the manifest's clip under --clips) or a
// manifest file (GKeyFile: a [suite] group and one [clip NAME] group a clip).
bool load_suite(const std::string& path, const SuiteDefaults& defaults, Suite* suite, std::string* error);

// The part (0 .. parts-1) a clip belongs to: from a hash (FNV-1a, 64 bits) of its name, so a
// clip stays in its part whatever else the suite holds.
uint32_t suite_part(const std::string& name, uint32_t parts);
uint64_t fnv1a64(const std::string& text);

enum class Verdict { kPass, kRegression, kSetupError, kTimeout, kCrash };
const char* verdict_name(Verdict v);  // "pass", "regression", "setup-error", "timeout", "crash"
bool verdict_from_name(const std::string& s, Verdict* v);
int verdict_severity(Verdict v);  // crash 4, timeout 3, setup error 2, regression 1, pass 0

struct ClipResult {
  std::string name, clip, golden;
  Verdict verdict = Verdict::kPass;
  int exit_status = 0;  // of the last attempt; -N: killed by signal N
  double seconds = 0;   // of the last attempt
  int attempts = 1;
  bool flaky = false;   // failed, then passed when run again
  int gpu = -1;         // --gpus: the GPU it ran on
  std::string message;  // why it failed: the first failing frame and figure, or the error
  std::string log;      // relative to the results directory: the tool's output
  std::string report;   // relative: the text report (check)
  std::string html;     // relative: the clip's HTML report (check), index.html in it
};

struct SuiteResults {
  std::string suite;    // name
  std::string command;  // record or check
  uint32_t parts = 1;
  std::vector<uint32_t> part_indices;  // the parts these results cover
  uint32_t suite_clips = 0;            // clips in the whole suite (all parts)
  double seconds = 0;                  // wall time
  std::vector<ClipResult> clips;       // sorted by name
  int interrupted = 0;                 // the signal that stopped the run (SIGINT, SIGTERM), or 0

  // 0 every clip passed, 1 some regression (and no worse), 2 any setup error, timeout or crash.
  int exit_code() const;
  std::map<Verdict, int> counts() const;
};

bool results_to_file(const SuiteResults& r, const std::string& path, std::string* error);
bool results_from_file(const std::string& path, SuiteResults* r, std::string* error);
// Combines parts' results: same suite, command and part count, no part twice, no clip twice.
bool merge_results(const std::vector<SuiteResults>& parts, SuiteResults* out, std::string* error);

// JUnit XML: one testsuite, one testcase per clip (classname the suite name, name the clip's
// name, time), a <failure> for regressions, an <error> for setup errors, timeouts and crashes,
// <system-out> with the links to the clip's reports. `link_base` is prefixed to those links.
std::string junit_xml(const SuiteResults& r, const std::string& link_base);
// The HTML index: counts, then a table of every clip, worst first, linking each clip's report.
std::string html_index(const SuiteResults& r);
// The summary printed at the end.
std::string results_summary(const SuiteResults& r);

// How a suite runs.
struct SuiteRunConfig {
  std::string command;  // "record" or "check"
  std::string self;     // the cudaprep-regress executable the clips run with
  std::string wrapper;  // a program each clip runs under (empty: none)
  std::string out;      // results directory
  int jobs = 1;
  std::vector<int> gpus;  // empty: no device-id given
  int retry_failed = 0;
  bool force = false;  // record: replace existing goldens
  bool progress = true;
};

// Runs the clips (each in its own process), fills `results`. Never stops at a failing clip.
void run_suite(const Suite& suite, const std::vector<SuiteClip>& clips, const SuiteRunConfig& config,
               SuiteResults* results);

// The `suite` command (record / check / merge).
int cmd_suite(int argc, char** argv);

}  // namespace regress
