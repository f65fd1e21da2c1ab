// The worker pool shared by the CPU paths (kernels/common/worker_pool.h).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "templatematch.h"
#include "tensorize.h"
#include "worker_pool.h"

using namespace cudaprep;

namespace {

TEST(WorkerPool, CallsEveryIndexOnce) {
  WorkerPool pool(4);
  for (int n : {0, 1, 2, 3, 4, 5, 7, 100}) {
    std::vector<std::atomic<int>> calls(n);
    pool.parallel_for(n, [&calls](int i) { calls[i].fetch_add(1); });
    for (int i = 0; i < n; ++i) EXPECT_EQ(calls[i].load(), 1) << "n " << n << " index " << i;
  }
}

TEST(WorkerPool, SpreadsOverItsThreadsAndReusesThem) {
  WorkerPool pool(4);
  for (int call = 0; call < 20; ++call) {
    // Every share waits until all four are running: only four distinct threads can finish this.
    std::atomic<int> started{0};
    std::mutex mu;
    std::set<std::thread::id> ids;
    pool.parallel_for(4, [&](int) {
      started.fetch_add(1);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (started.load() < 4 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
      std::lock_guard<std::mutex> lock(mu);
      ids.insert(std::this_thread::get_id());
    });
    EXPECT_EQ(ids.size(), 4u) << "call " << call;
  }
  EXPECT_EQ(pool.stats().threads_started, 3);  // the caller is the fourth
  EXPECT_EQ(pool.stats().jobs, 20);
}

TEST(WorkerPool, ResultsEqualTheSerialOnes) {
  WorkerPool pool(3);
  std::vector<uint64_t> serial(1000), parallel(1000);
  auto value = [](int i) { return uint64_t(i) * 2654435761u % 1000003u; };
  for (int i = 0; i < 1000; ++i) serial[i] = value(i);
  pool.parallel_for(1000, [&](int i) { parallel[i] = value(i); });
  EXPECT_EQ(serial, parallel);
}

TEST(WorkerPool, OneThreadRunsInline) {
  WorkerPool pool(1);
  const std::thread::id caller = std::this_thread::get_id();
  int calls = 0;
  pool.parallel_for(5, [&](int) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    ++calls;
  });
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(pool.stats().threads_started, 0);
  EXPECT_EQ(pool.stats().jobs, 0);
}

TEST(WorkerPool, NestedCallRunsInline) {
  WorkerPool pool(4);
  std::vector<std::atomic<int>> calls(4 * 3);
  pool.parallel_for(4, [&](int i) { pool.parallel_for(3, [&](int j) { calls[3 * i + j].fetch_add(1); }); });
  for (auto& c : calls) EXPECT_EQ(c.load(), 1);
  EXPECT_EQ(pool.stats().jobs, 1);
}

// Callers on several threads at once: each job completes with its own function and results.
TEST(WorkerPool, CallersOnSeveralThreadsTakeTurns) {
  WorkerPool pool(4);
  std::vector<std::thread> callers;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&pool, &wrong, t] {
      for (int k = 0; k < 50; ++k) {
        std::vector<int> out(37, -1);
        pool.parallel_for(37, [&](int i) { out[i] = t * 1000 + i; });
        for (int i = 0; i < 37; ++i)
          if (out[i] != t * 1000 + i) wrong.fetch_add(1);
      }
    });
  }
  for (auto& c : callers) c.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(pool.stats().jobs, 4 * 50);
  EXPECT_LE(pool.stats().threads_started, 3);
}

// The CPU paths start no thread per frame: after a first frame, the shared pool's thread count
// stays put while each frame is one job.
TEST(WorkerPool, CpuPathsStartNoThreadPerFrame) {
  WorkerPool& pool = WorkerPool::shared();
  const bool spreads = pool.max_threads() > 1;

  TensorizeConfig cfg;
  cfg.format = PixelFormat::BGR;
  cfg.src_width = 640;
  cfg.src_height = 480;
  TensorizePlan plan;
  ASSERT_TRUE(make_tensorize_plan(cfg, &plan).ok());
  std::vector<uint8_t> frame(640 * 480 * 3);
  std::mt19937 rng(5);
  for (auto& b : frame) b = uint8_t(rng());
  ImageView view;
  view.format = PixelFormat::BGR;
  view.width = 640;
  view.height = 480;
  view.planes[0] = {frame.data(), 640 * 3};
  std::vector<float> first(tensor_elements(plan)), out(tensor_elements(plan));
  ASSERT_TRUE(tensorize_cpu(plan, view, first.data()).ok());
  const WorkerPool::Stats before = pool.stats();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(tensorize_cpu(plan, view, out.data()).ok());
    EXPECT_EQ(out, first);
  }
  WorkerPool::Stats after = pool.stats();
  EXPECT_EQ(after.threads_started, before.threads_started);
  EXPECT_EQ(after.jobs - before.jobs, spreads ? 5 : 0);

  std::vector<uint8_t> gray(640 * 480);
  for (auto& b : gray) b = uint8_t(rng());
  TemplateMatcherCpu matcher;
  ASSERT_TRUE(matcher.set_template(GrayView{gray.data() + 100 * 640 + 200, 640, 64, 64}).ok());
  const GrayView g{gray.data(), 640, 640, 480};
  std::vector<float> scores0, scores;
  int mw = 0, mh = 0;
  ASSERT_TRUE(matcher.score_map(g, Rect{}, &scores0, &mw, &mh).ok());
  const WorkerPool::Stats before_match = pool.stats();
  EXPECT_EQ(before_match.threads_started, after.threads_started);  // the same helpers serve both paths
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(matcher.score_map(g, Rect{}, &scores, &mw, &mh).ok());
    EXPECT_EQ(scores, scores0);
  }
  after = pool.stats();
  EXPECT_EQ(after.threads_started, before_match.threads_started);
  EXPECT_EQ(after.jobs - before_match.jobs, spreads ? 5 : 0);
}

}  // namespace
