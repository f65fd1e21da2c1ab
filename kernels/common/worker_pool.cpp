#include "worker_pool.h"

#include <algorithm>
#include <system_error>

namespace cudaprep {

namespace {
// Set while this thread runs a job's function: a nested parallel_for then runs inline instead of
// waiting for the job it is part of.
thread_local bool in_job = false;
}  // namespace

WorkerPool& WorkerPool::shared() {
  static WorkerPool pool(static_cast<int>(std::min(8u, std::max(1u, std::thread::hardware_concurrency()))));
  return pool;
}

WorkerPool::WorkerPool(int max_threads) : max_threads_(std::max(1, max_threads)) {}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : helpers_) t.join();
}

WorkerPool::Stats WorkerPool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void WorkerPool::run(int n, Call call, const void* fn) {
  const int threads = std::min(n, max_threads_);
  if (threads <= 1 || in_job) {
    for (int i = 0; i < n; ++i) call(fn, i);
    return;
  }
  std::lock_guard<std::mutex> job(job_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    start_helpers(threads - 1);
    call_ = call;
    fn_ = fn;
    n_ = n;
    next_.store(0, std::memory_order_relaxed);
    participants_ = std::min(threads - 1, static_cast<int>(helpers_.size()));
    running_ = participants_;
    ++round_;
    ++stats_.jobs;
  }
  wake_.notify_all();
  work();
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [this] { return running_ == 0; });
}

void WorkerPool::start_helpers(int wanted) {
  while (static_cast<int>(helpers_.size()) < wanted) {
    const int index = static_cast<int>(helpers_.size());
    try {
      // Started between rounds: it waits for the round after the current one.
      helpers_.emplace_back([this, index, seen = round_] { serve(index, seen); });
    } catch (const std::system_error&) {
      return;  // no more threads to be had: the job runs on those there are
    }
    ++stats_.threads_started;
  }
}

void WorkerPool::serve(int index, uint64_t seen_round) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || round_ != seen_round; });
    if (stopping_) return;
    seen_round = round_;
    if (index >= participants_) continue;  // this job uses fewer helpers
    lock.unlock();
    work();
    lock.lock();
    if (--running_ == 0) done_.notify_one();
  }
}

void WorkerPool::work() {
  in_job = true;
  for (int i = next_.fetch_add(1, std::memory_order_relaxed); i < n_; i = next_.fetch_add(1, std::memory_order_relaxed))
    call_(fn_, i);
  in_job = false;
}

}  // namespace cudaprep
