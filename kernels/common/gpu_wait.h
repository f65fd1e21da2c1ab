// How a host thread waits for GPU work whose results it needs on the host (a download, a match
// list): the ways users choose between (the elements' gpu-wait property), and the polling wait.
#pragma once

#include <array>
#include <cstddef>

#include "cuda_device.h"
#include "status.h"

namespace cudaprep {

// The values are the elements' gpu-wait enum values: append only.
enum class GpuWait {
  // Spin until the work is done: lowest latency, a CPU core busy for the whole GPU time.
  // (cudatemplatematch spins on a flag its kernel writes into pinned memory.)
  Spin,
  // cudaStreamSynchronize: honours a context created with blocking synchronisation.
  StreamSync,
  // A blocking-sync event: the thread sleeps until the driver wakes it. Least CPU; the wake-up
  // can come late (80-120 us after the thread idled 2 ms, on the hosts of bench/README.md).
  Blocking,
  // Sleep through most of the expected time (learned from the recent waits), then check every
  // few microseconds: about the latency of Spin for part of its CPU time.
  Poll,
};

// Learns how long the waits of one kind take and sleeps through most of the next one: until
// shortly before the shortest of the recent waits would end (less the recent first sleeps'
// overshoot: a sleeping thread wakes late after idle), then checks every 4 us, then at longer
// intervals (at most 1/16 of the time waited, 50 us) once the wait runs long, so that slow GPU
// work costs few checks. A wait done at its first check does not say how much sooner the work
// ended: it learns a time before that check, further before with every such wait in a row
// (20, 40, 80 us ...), so that the sleeps shrink quickly when the work does and settle just
// early enough for the wake-ups' spread. The thread's timer slack is lowered for the wait and restored after
// (Linux: 50 us by default, which would stretch every short sleep). No allocation.
class PollingWait {
 public:
  // Waits until `check(bool* done)` reports done or fails; returns its error.
  template <typename Check>
  Status wait(Check&& check);

  // The time the next wait sleeps before its first check, in microseconds (for tests).
  double first_sleep_us() const;
  // Forgets what earlier waits took (new work, or work of another size).
  void reset();

 private:
  static double now_us();
  static void sleep_us(double us);
  static unsigned long lower_timer_slack();
  static void restore_timer_slack(unsigned long previous);
  // A wait of @waited_us; @overslept_at_us >= 0: it was done at its first check, made then;
  // @overshoot_us < 0: there was no first sleep.
  void learn(double waited_us, double overslept_at_us, double overshoot_us);

  static constexpr std::size_t kHistory = 16;
  std::array<double, kHistory> waited_{};     // recent waits, start to done seen
  std::array<double, kHistory> overshoot_{};  // recent first sleeps: how much longer than asked
  std::size_t count_ = 0, next_ = 0, overshoots_ = 0, next_overshoot_ = 0;
  int overslept_in_a_row_ = 0;
};

template <typename Check>
Status PollingWait::wait(Check&& check) {
  bool done = false;
  Status st = check(&done);
  if (!st.ok() || done) return st;
  const unsigned long slack = lower_timer_slack();
  const double start = now_us(), first = first_sleep_us();
  double overshoot = -1;  // none: no first sleep
  if (first > 0) {
    sleep_us(first);
    overshoot = now_us() - start - first;
  }
  bool overslept = first > 0;  // until a check finds the work not yet done
  double first_check = 0;
  for (;;) {
    st = check(&done);
    if (first_check == 0) first_check = now_us() - start;
    if (!st.ok() || done) break;
    overslept = false;
    const double waited = now_us() - start;
    const double interval = waited / 16 < 4 ? 4 : (waited / 16 > 50 ? 50 : waited / 16);
    sleep_us(interval);
  }
  restore_timer_slack(slack);
  if (st.ok()) learn(now_us() - start, overslept ? first_check : -1, overshoot);
  return st;
}

namespace cuda {

// Waits for everything enqueued so far on a stream, the way a GpuWait says. One per kind of
// wait (its polling learns that kind's duration); its events are made on first use, in the
// context current then, and released by reset() / the destructor with that context current.
// With `flag` (pinned memory that the stream's last kernel sets after its results), Spin and Poll
// wait on the flag instead, sooner than the stream's end; every 256 spins, and at each poll, they
// ask the driver whether the stream failed, or ended without the flag set (an error naming
// `kernel`), so that a failed launch ends the wait instead of hanging; they can return while the
// kernel's last block is still leaving.
//
// mark(): the work enqueued after this point is short (a few small kernels before the flag). The
// next Blocking wait with a flag sleeps until the mark, then spins on the flag for the rest, so
// that the driver's late wake-up overlaps that rest instead of following it.
class StreamWaiter {
 public:
  Status mark(void* stream);
  Status wait(void* stream, GpuWait mode, const volatile unsigned* flag = nullptr, const char* kernel = nullptr);
  void reset();

 private:
  Event blocking_;  // Blocking: recorded at the wait, or at the mark
  Event plain_;     // Spin and Poll without a flag: queried
  PollingWait polling_;
  bool marked_ = false;
};

}  // namespace cuda
}  // namespace cudaprep
