// Persistent helper threads for the CPU paths (tensorize_cpu, TemplateMatcherCpu), so that no
// frame starts a thread. The helpers start on the first job that needs them and then wait for the
// next one; a job hands them a pointer to the caller's function, so a call allocates nothing once
// enough helpers exist.
//
// Rules: one job at a time. Calls from different threads are safe and run one after another (the
// later caller waits). A call made from inside a job's function runs all of its work inline on
// that thread. The function must not throw.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace cudaprep {

class WorkerPool {
 public:
  // The pool every CPU path uses: min(8, hardware threads) threads, the caller's included.
  static WorkerPool& shared();

  // max_threads counts the calling thread: a pool of 1 runs everything inline.
  explicit WorkerPool(int max_threads);
  ~WorkerPool();  // joins the helpers
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int max_threads() const { return max_threads_; }

  // Calls fn(i) once for every i in [0, n), spread over the calling thread and up to
  // min(n, max_threads()) - 1 helpers, and returns when every call has returned. Which thread
  // runs which i is not fixed.
  template <class Fn>
  void parallel_for(int n, const Fn& fn) {
    run(
        n, [](const void* f, int i) { (*static_cast<const Fn*>(f))(i); }, &fn);
  }

  struct Stats {
    int64_t threads_started = 0;  // helpers created since construction
    int64_t jobs = 0;             // calls that were spread over helpers
  };
  Stats stats() const;

 private:
  using Call = void (*)(const void* fn, int i);
  void run(int n, Call call, const void* fn);
  void start_helpers(int wanted);  // under mu_
  void serve(int index, uint64_t seen_round);
  void work();  // claims and runs indices of the current job until none is left

  const int max_threads_;
  std::mutex job_mu_;  // held for a whole job: one job at a time
  mutable std::mutex mu_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> helpers_;
  // The current job, behind mu_ (helpers read it after they woke for its round).
  uint64_t round_ = 0;
  int participants_ = 0;  // helpers taking part in this round (helpers [0, participants_))
  int running_ = 0;       // of those, how many have not finished yet
  Call call_ = nullptr;
  const void* fn_ = nullptr;
  int n_ = 0;
  std::atomic<int> next_{0};  // the next unclaimed index
  bool stopping_ = false;
  Stats stats_;
};

}  // namespace cudaprep
