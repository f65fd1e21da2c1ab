// cudaprep-regress suite: running the clips, each in its own process.
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>

#include "regress_store.h"
#include "regress_suite.h"

extern char** environ;

namespace regress {

namespace {

const double kKillGraceS = 10;  // after SIGTERM on a timeout, SIGKILL

// SIGINT / SIGTERM to the suite: the clips run in process groups of their own (a timeout stops
// all of a clip's processes), so the terminal's Ctrl-C does not reach them; the suite stops
// starting clips, passes SIGTERM on to the running ones and reports what it has.
volatile sig_atomic_t g_stop_signal = 0;
void on_stop_signal(int sig) { g_stop_signal = sig; }

double now_s() { return g_get_monotonic_time() / 1e6; }

std::string clip_dir_rel(const SuiteClip& c) { return "clips/" + c.name; }

std::vector<std::string> clip_command(const SuiteClip& c, const SuiteRunConfig& cfg, int gpu, const std::string& dir) {
  std::vector<std::string> argv;
  if (!cfg.wrapper.empty()) argv.push_back(cfg.wrapper);
  argv.push_back(cfg.self);
  argv.push_back(cfg.command);
  argv.push_back("--clip");
  argv.push_back(c.clip);
  if (cfg.command == "record") {
    argv.push_back("--pipeline");
    argv.push_back(c.pipeline);
    argv.push_back("--out");
    argv.push_back(c.golden);
    auto it = c.options.find("store");
    if (it != c.options.end()) argv.push_back("--store=" + it->second);
    if (cfg.force) argv.push_back("--force");
  } else {
    argv.push_back("--golden");
    argv.push_back(c.golden);
    if (!c.pipeline.empty()) {
      argv.push_back("--pipeline");
      argv.push_back(c.pipeline);
    }
    for (const char* k : {"tensor-tol", "match-pos-tol", "match-score-tol", "det-iou", "det-pos-tol", "det-conf-tol",
                          "det-missed", "det-extra"}) {
      auto it = c.options.find(k);
      if (it != c.options.end()) argv.push_back(std::string("--") + k + "=" + it->second);
    }
    argv.push_back("--report");
    argv.push_back(dir + "/report.txt");
    argv.push_back("--html");
    argv.push_back(dir + "/html");
  }
  if (gpu >= 0) argv.push_back("--device-id=" + std::to_string(gpu));
  return argv;
}

struct Job {
  size_t index;  // into clips
  pid_t pid = -1;
  int gpu = -1;
  double start = 0, deadline = 0, kill_at = 0;
  bool timed_out = false;
  bool stopping = false;  // the suite was interrupted: SIGTERM sent
  std::string log;        // relative to out
};

bool spawn(const std::vector<std::string>& args, const std::string& log_path, pid_t* pid, std::string* error) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);  // its own process group: a timeout stops all of it
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  // signals the suite was started with ignored (SIGINT in a shell's background job) act as usual
  sigset_t def;
  sigemptyset(&def);
  sigaddset(&def, SIGINT);
  sigaddset(&def, SIGTERM);
  sigaddset(&def, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &def);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  const int rc = posix_spawnp(pid, argv[0], &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    *error = std::string("cannot run ") + argv[0] + ": " + g_strerror(rc);
    return false;
  }
  return true;
}

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r\n");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r\n") - a + 1);
}

// The lines of the tool's output that say why a clip failed.
std::string failure_message(const std::string& log_text, Verdict v) {
  std::string first_failing, result, error, last;
  size_t pos = 0;
  while (pos < log_text.size()) {
    size_t end = log_text.find('\n', pos);
    if (end == std::string::npos) end = log_text.size();
    const std::string line = trim(log_text.substr(pos, end - pos));
    pos = end + 1;
    if (line.empty()) continue;
    last = line;
    if (line.rfind("first failing frame:", 0) == 0 && first_failing.empty()) first_failing = line;
    if (line.rfind("RESULT:", 0) == 0) result = line;
    if (line.rfind("cudaprep-regress: error: ", 0) == 0 && error.empty()) error = line.substr(25);
  }
  if (v == Verdict::kRegression) return !first_failing.empty() ? first_failing : result;
  if (v == Verdict::kSetupError) return !error.empty() ? error : result;
  return last;
}

}  // namespace

void run_suite(const Suite& suite, const std::vector<SuiteClip>& clips, const SuiteRunConfig& cfg,
               SuiteResults* results) {
  const double t0 = now_s();
  results->clips.assign(clips.size(), ClipResult());
  for (size_t i = 0; i < clips.size(); i++) {
    ClipResult& r = results->clips[i];
    r.name = clips[i].name;
    r.clip = clips[i].clip;
    r.golden = clips[i].golden;
    r.attempts = 0;
  }
  std::vector<int> gpu_load(cfg.gpus.size(), 0);
  size_t done = 0, failing = 0;

  // Starts clip i (attempt attempt); false when it could not be started (result filled).
  auto start = [&](size_t i, int attempt, Job* job) {
    const SuiteClip& c = clips[i];
    ClipResult& r = results->clips[i];
    r.attempts = attempt;
    const std::string rel = clip_dir_rel(c);
    const std::string dir = cfg.out + "/" + rel;
    g_mkdir_with_parents(dir.c_str(), 0755);
    job->index = i;
    job->log = rel + (attempt > 1 ? "/log-retry" + std::to_string(attempt - 1) + ".txt" : "/log.txt");
    job->gpu = -1;
    if (!cfg.gpus.empty()) {
      size_t best = 0;
      for (size_t g = 1; g < gpu_load.size(); g++)
        if (gpu_load[g] < gpu_load[best]) best = g;
      job->gpu = (int)best;
    }
    r.log = job->log;
    r.gpu = job->gpu >= 0 ? cfg.gpus[job->gpu] : -1;
    std::string err;
    if (cfg.command == "record" && c.pipeline.empty()) {
      r.verdict = Verdict::kSetupError;
      r.message = "no pipeline for this clip (the manifest's pipeline=, or the golden's own)";
      return false;
    }
    if (cfg.command == "record") {
      gchar* parent = g_path_get_dirname(c.golden.c_str());
      g_mkdir_with_parents(parent, 0755);
      g_free(parent);
    }
    if (!spawn(clip_command(c, cfg, r.gpu, dir), cfg.out + "/" + job->log, &job->pid, &err)) {
      r.verdict = Verdict::kSetupError;
      r.message = err;
      return false;
    }
    if (job->gpu >= 0) gpu_load[job->gpu]++;
    job->start = now_s();
    job->deadline = c.timeout_s > 0 ? job->start + c.timeout_s : 0;
    job->timed_out = false;
    return true;
  };

  auto finish = [&](const Job& job, int status) {
    const SuiteClip& c = clips[job.index];
    ClipResult& r = results->clips[job.index];
    if (job.gpu >= 0) gpu_load[job.gpu]--;
    r.seconds = now_s() - job.start;
    r.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    std::string log_text, err;
    read_file(cfg.out + "/" + job.log, &log_text, &err);
    if (job.timed_out) {
      r.verdict = Verdict::kTimeout;
      char buf[128];
      g_snprintf(buf, sizeof buf, "timed out after %g s (stopped)", c.timeout_s);
      r.message = buf;
    } else if (WIFSIGNALED(status)) {
      r.verdict = Verdict::kCrash;
      r.message = std::string("crashed: killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
                  strsignal(WTERMSIG(status)) + ")";
      const std::string last = failure_message(log_text, Verdict::kCrash);
      if (!last.empty()) r.message += "; last output: " + last;
    } else if (r.exit_status == 0) {
      r.verdict = Verdict::kPass;
      r.message = "";
    } else if (r.exit_status == 1) {
      r.verdict = Verdict::kRegression;
      r.message = failure_message(log_text, Verdict::kRegression);
    } else if (r.exit_status == 2) {
      r.verdict = Verdict::kSetupError;
      r.message = failure_message(log_text, Verdict::kSetupError);
    } else {
      r.verdict = Verdict::kCrash;
      r.message = "crashed: exit status " + std::to_string(r.exit_status);
      const std::string last = failure_message(log_text, Verdict::kCrash);
      if (!last.empty()) r.message += "; last output: " + last;
    }
    if (cfg.command == "check") {
      const std::string rel = clip_dir_rel(c);
      r.report =
          g_file_test((cfg.out + "/" + rel + "/report.txt").c_str(), G_FILE_TEST_EXISTS) ? rel + "/report.txt" : "";
      r.html = g_file_test((cfg.out + "/" + rel + "/html/index.html").c_str(), G_FILE_TEST_EXISTS)
                   ? rel + "/html/index.html"
                   : "";
    }
  };

  auto progress = [&](const ClipResult& r, const char* what) {
    if (!cfg.progress) return;
    const double el = std::max(now_s() - t0, 1e-3);
    const double rate = done / el * 60;
    const double left = done ? (clips.size() - done) * el / done : 0;
    fprintf(stderr, "suite %s: [%zu/%zu] %-11s %s (%.1f s)%s | %zu failing, %.1f clips/min, about %.0f s left\n",
            cfg.command.c_str(), done, clips.size(), what, r.name.c_str(), r.seconds,
            r.gpu >= 0 ? (" gpu " + std::to_string(r.gpu)).c_str() : "", failing, rate, left);
    if (r.verdict != Verdict::kPass && !r.message.empty()) fprintf(stderr, "    %s\n", r.message.c_str());
    fflush(stderr);
  };

  // Runs the given clips, `jobs` at a time.
  auto run_batch = [&](const std::vector<size_t>& todo, int jobs, int attempt, bool count) {
    std::deque<size_t> pending(todo.begin(), todo.end());
    std::vector<Job> running;
    bool forwarded = false;
    while (!pending.empty() || !running.empty()) {
      if (g_stop_signal) {
        for (size_t i : pending) {
          ClipResult& r = results->clips[i];
          r.verdict = Verdict::kSetupError;
          r.message = std::string("not run: the suite was interrupted by ") + strsignal(g_stop_signal);
          r.attempts = std::max(r.attempts, 1);
        }
        pending.clear();
        if (!forwarded)
          for (Job& job : running) {
            kill(-job.pid, SIGTERM);
            job.kill_at = now_s() + kKillGraceS;
            job.stopping = true;
          }
        forwarded = true;
      }
      while (!pending.empty() && (int)running.size() < jobs) {
        Job job;
        const size_t i = pending.front();
        pending.pop_front();
        if (start(i, attempt, &job)) {
          running.push_back(job);
        } else if (count) {
          done++;
          failing++;
          progress(results->clips[i], verdict_name(results->clips[i].verdict));
        }
      }
      bool reaped = false;
      for (size_t k = 0; k < running.size();) {
        Job& job = running[k];
        int status = 0;
        const pid_t p = waitpid(job.pid, &status, WNOHANG);
        if (p == job.pid) {
          finish(job, status);
          kill(-job.pid, SIGKILL);  // anything it left in its group
          ClipResult& r = results->clips[job.index];
          if (count) {
            done++;
            if (r.verdict != Verdict::kPass) failing++;
            progress(r, verdict_name(r.verdict));
          }
          running.erase(running.begin() + k);
          reaped = true;
          continue;
        }
        const double t = now_s();
        if (job.deadline > 0 && !job.timed_out && t > job.deadline) {
          job.timed_out = true;
          job.kill_at = t + kKillGraceS;
          kill(-job.pid, SIGTERM);
        } else if ((job.timed_out || job.stopping) && t > job.kill_at) {
          kill(-job.pid, SIGKILL);
          job.kill_at = t + 3600;
        }
        k++;
      }
      if (!reaped) g_usleep(20000);
    }
  };

  struct sigaction sa = {}, old_int = {}, old_term = {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);

  std::vector<size_t> all;
  for (size_t i = 0; i < clips.size(); i++) all.push_back(i);
  run_batch(all, std::max(1, cfg.jobs), 1, true);

  // failures again, one at a time: a clip that passes now is flaky
  for (int round = 1; round <= cfg.retry_failed && !g_stop_signal; round++) {
    std::vector<size_t> again;
    for (size_t i = 0; i < clips.size(); i++)
      if (results->clips[i].verdict != Verdict::kPass && results->clips[i].attempts == round) again.push_back(i);
    if (again.empty()) break;
    if (cfg.progress)
      fprintf(stderr, "suite %s: running %zu failed clips again (attempt %d)\n", cfg.command.c_str(), again.size(),
              round + 1);
    std::vector<ClipResult> before;
    for (size_t i : again) before.push_back(results->clips[i]);
    run_batch(again, 1, round + 1, false);
    for (size_t k = 0; k < again.size(); k++) {
      ClipResult& r = results->clips[again[k]];
      if (r.verdict == Verdict::kPass) {
        r.flaky = true;
        r.message = std::string("flaky: ") + verdict_name(before[k].verdict) + " on attempt " +
                    std::to_string(before[k].attempts) +
                    (before[k].message.empty() ? "" : " (" + before[k].message + ")") + ", passed on attempt " +
                    std::to_string(r.attempts);
      }
      if (cfg.progress)
        fprintf(stderr, "suite %s: again %-11s %s%s\n", cfg.command.c_str(), verdict_name(r.verdict), r.name.c_str(),
                r.flaky ? " (flaky)" : "");
    }
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  results->interrupted = g_stop_signal;
  results->suite = suite.name;
  results->command = cfg.command;
  results->seconds = now_s() - t0;
}

}  // namespace regress
