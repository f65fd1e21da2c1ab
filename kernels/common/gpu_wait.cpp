#include "gpu_wait.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <string>

#if defined(__linux__)
#include <sys/prctl.h>
#endif

namespace cudaprep {

double PollingWait::now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void PollingWait::sleep_us(double us) {
  const long ns = static_cast<long>(us * 1000);
  timespec ts{ns / 1000000000L, ns % 1000000000L};
  nanosleep(&ts, nullptr);
}

unsigned long PollingWait::lower_timer_slack() {
#if defined(__linux__)
  const int previous = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);  // 1 us: the checks' sleeps are 4 us
  return previous > 0 ? static_cast<unsigned long>(previous) : 0;
#else
  return 0;
#endif
}

void PollingWait::restore_timer_slack(unsigned long previous) {
#if defined(__linux__)
  if (previous > 0) prctl(PR_SET_TIMERSLACK, previous, 0, 0, 0);
#else
  (void)previous;
#endif
}

double PollingWait::first_sleep_us() const {
  if (count_ == 0) return 0;
  const std::size_t n = std::min(count_, kHistory);
  const double shortest = *std::min_element(waited_.begin(), waited_.begin() + n);
  // Less the median overshoot of the recent first sleeps, and 10 us for the check itself.
  double late = 0;
  if (overshoots_ > 0) {
    const std::size_t m = std::min(overshoots_, kHistory);
    std::array<double, kHistory> recent = overshoot_;
    std::nth_element(recent.begin(), recent.begin() + m / 2, recent.begin() + m);
    late = recent[m / 2];
  }
  const double sleep = shortest - late - 10;
  return sleep > 5 ? sleep : 0;
}

void PollingWait::learn(double waited_us, double overslept_at_us, double overshoot_us) {
  if (overslept_at_us >= 0) {
    overslept_in_a_row_ = std::min(overslept_in_a_row_ + 1, 20);
    const double step = std::min(10.0 * double(1 << overslept_in_a_row_), overslept_at_us / 2);
    waited_us = overslept_at_us - step;
  } else {
    overslept_in_a_row_ = 0;
  }
  waited_[next_] = waited_us;
  next_ = (next_ + 1) % kHistory;
  ++count_;
  if (overshoot_us >= 0) {
    overshoot_[next_overshoot_] = overshoot_us;
    next_overshoot_ = (next_overshoot_ + 1) % kHistory;
    ++overshoots_;
  }
}

void PollingWait::reset() {
  count_ = next_ = overshoots_ = next_overshoot_ = 0;
  overslept_in_a_row_ = 0;
}

namespace cuda {

namespace {

// Spin or Poll until *flag != 0 (StreamWaiter::wait).
Status wait_for_flag(const volatile unsigned* flag, void* stream, GpuWait mode, PollingWait& polling,
                     const char* kernel) {
  auto kernel_state = [&](bool* set) -> Status {
    *set = *flag != 0;
    if (*set) return Status();
    bool ended = false;
    const Status st = stream_query(stream, &ended);
    if (!st.ok()) return Status::error(std::string(kernel) + ": " + st.message());
    if (!ended) return Status();
    *set = *flag != 0;
    return *set ? Status() : Status::error(std::string(kernel) + " finished without writing its results");
  };
  if (mode == GpuWait::Poll) {
    CUDAPREP_RETURN_IF_ERROR(polling.wait(kernel_state));
  } else {
    for (unsigned spin = 0; !*flag; ++spin) {
      bool set = false;
      if ((spin & 255u) == 255u) CUDAPREP_RETURN_IF_ERROR(kernel_state(&set));
      if (set) break;
    }
  }
  std::atomic_thread_fence(std::memory_order_acquire);
  return Status();
}

// Records `event` on `stream`, made on first use (blocking-sync or not).
Status record_event(Event& event, bool blocking_sync, void* stream) {
  if (!event.valid()) CUDAPREP_RETURN_IF_ERROR(event.create(blocking_sync));
  return event.record(stream);
}

}  // namespace

Status StreamWaiter::mark(void* stream) {
  CUDAPREP_RETURN_IF_ERROR(record_event(blocking_, true, stream));
  marked_ = true;
  return Status();
}

Status StreamWaiter::wait(void* stream, GpuWait mode, const volatile unsigned* flag, const char* kernel) {
  const bool marked = marked_;
  marked_ = false;
  if (!kernel) kernel = "the stream's last kernel";
  if (mode == GpuWait::StreamSync) return stream_sync(stream);
  if (mode == GpuWait::Blocking) {
    const bool spin_after_mark = marked && flag;  // else: sleep until everything enqueued is done
    if (!spin_after_mark) CUDAPREP_RETURN_IF_ERROR(record_event(blocking_, true, stream));
    CUDAPREP_RETURN_IF_ERROR(blocking_.synchronize());
    return spin_after_mark ? wait_for_flag(flag, stream, GpuWait::Spin, polling_, kernel) : Status();
  }
  if (flag) return wait_for_flag(flag, stream, mode, polling_, kernel);
  CUDAPREP_RETURN_IF_ERROR(record_event(plain_, false, stream));
  if (mode == GpuWait::Poll) return polling_.wait([this](bool* done) { return plain_.query(done); });
  bool done = false;
  while (!done) CUDAPREP_RETURN_IF_ERROR(plain_.query(&done));
  return Status();
}

void StreamWaiter::reset() {
  marked_ = false;
  blocking_.reset();
  plain_.reset();
  polling_.reset();
}

}  // namespace cuda
}  // namespace cudaprep
