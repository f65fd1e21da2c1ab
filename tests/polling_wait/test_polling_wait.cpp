#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include "gpu_wait.h"

using namespace cudaprep;
using Clock = std::chrono::steady_clock;

namespace {

double since_us(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

// "GPU work" that ends @work_us after the wait begins; counts the checks.
struct FakeWork {
  Clock::time_point start;
  double work_us;
  int checks = 0;
  Status check(bool* done) {
    ++checks;
    *done = since_us(start) >= work_us;
    return Status();
  }
};

// One wait for work of @work_us; returns how long the wait took after the work ended.
double wait_once(PollingWait& w, double work_us, int* checks = nullptr) {
  FakeWork work{Clock::now(), work_us};
  const Status st = w.wait([&](bool* done) { return work.check(done); });
  EXPECT_TRUE(st.ok()) << st.message();
  if (checks) *checks = work.checks;
  return since_us(work.start) - work_us;
}

}  // namespace

TEST(PollingWait, ReturnsOnlyOnceTheWorkIsDone) {
  PollingWait w;
  for (int i = 0; i < 20; i++) EXPECT_GE(wait_once(w, 2000), 0.0);
}

TEST(PollingWait, LearnsToSleepThroughMostOfTheWork) {
  PollingWait w;
  EXPECT_EQ(w.first_sleep_us(), 0.0);  // nothing learned: checks from the start
  int first_checks = 0;
  wait_once(w, 3000, &first_checks);
  for (int i = 0; i < 10; i++) wait_once(w, 3000);
  // It now sleeps until shortly before the work usually ends: less than the work, a good part of it.
  EXPECT_LT(w.first_sleep_us(), 3000.0);
  EXPECT_GT(w.first_sleep_us(), 1000.0);
  int learned_checks = 0;
  wait_once(w, 3000, &learned_checks);
  EXPECT_LT(learned_checks, first_checks);
  EXPECT_LE(learned_checks, 40);  // a shorter window of 4 us checks, not the whole wait
}

TEST(PollingWait, LongWorkCostsFewChecks) {
  // Without history it checks every 4 us at first, then at 1/16 of the time waited (at most
  // 50 us): a 20 ms wait costs a few hundred checks, not 5000.
  PollingWait w;
  int checks = 0;
  const double late = wait_once(w, 20000, &checks);
  EXPECT_LT(checks, 600);
  EXPECT_GE(late, 0.0);
  EXPECT_LT(late, 20000.0 / 16 + 5000);  // one interval late at most, with a loaded machine's slack
}

TEST(PollingWait, ShorterWorkIsNotOversleptForLong) {
  // Learned on 3 ms work, then the work takes 1 ms. A wait that finds the work done at its
  // first check cannot tell how much shorter the work was: the sleeps shrink by growing steps
  // (20, 40, 80 ... us) until a check comes before the end again.
  PollingWait w;
  for (int i = 0; i < 8; i++) wait_once(w, 3000);
  // (How late the first short wait is depends on how far the machine's sleeps overshoot, which
  // the wait learns too: on a loaded machine it may already sleep less than 1 ms. Not asserted.)
  for (int i = 0; i < 11; i++) wait_once(w, 1000);
  EXPECT_LT(w.first_sleep_us(), 1000.0);
  // No longer about 2 ms late. The best of 3: one wait on a loaded 2-core machine was once
  // descheduled for 1.4 ms after a correct sleep, which says nothing of what the wait learned.
  double best = 1e9;
  for (int i = 0; i < 3; i++) best = std::min(best, wait_once(w, 1000));
  EXPECT_LT(best, 1000.0);
}

TEST(PollingWait, AnErrorEndsTheWaitWithIt) {
  PollingWait w;
  int calls = 0;
  const Status st = w.wait([&](bool* done) {
    *done = false;
    return ++calls == 3 ? Status::error("kernel failed") : Status();
  });
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "kernel failed");
  EXPECT_EQ(calls, 3);
}

TEST(PollingWait, ResetForgets) {
  PollingWait w;
  for (int i = 0; i < 4; i++) wait_once(w, 2000);
  EXPECT_GT(w.first_sleep_us(), 0.0);
  w.reset();
  EXPECT_EQ(w.first_sleep_us(), 0.0);
}

#if defined(__linux__)
TEST(PollingWait, LeavesTheTimerSlackAsItFoundIt) {
  prctl(PR_SET_TIMERSLACK, 123456UL, 0, 0, 0);
  PollingWait w;
  for (int i = 0; i < 3; i++) wait_once(w, 500);
  EXPECT_EQ(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0), 123456);
  prctl(PR_SET_TIMERSLACK, 0UL, 0, 0, 0);  // 0: the thread's default again
}
#endif
