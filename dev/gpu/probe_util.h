// Shared by the wait and download probes (dev/gpu/*_probe.cu; experiments, not the product): the
// clocks, the error check, and the sleep-then-poll wait they compare with the driver's waits.
#pragma once
#include <cuda_runtime.h>
#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#define CK(x)                                             \
  do {                                                    \
    cudaError_t e = (x);                                  \
    if (e != cudaSuccess) {                               \
      std::printf("%s: %s\n", #x, cudaGetErrorString(e)); \
      return 1;                                           \
    }                                                     \
  } while (0)

static double thread_cpu_us() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}
static double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
static void sleep_us(double us) {
  timespec ts{0, static_cast<long>(us * 1000)};
  nanosleep(&ts, nullptr);
}

// Waits for `event` (recorded, not blocking-sync) the probes' way: sleeps until 60 us before the
// `expected` end of work started at `t0` (a wake-up is slow here), then polls it, sleeping 4 us
// between queries or, with `spin`, not at all; the thread's timer slack lowered meanwhile.
static void sleep_then_poll(cudaEvent_t event, double t0, double expected, bool spin) {
  prctl(PR_SET_TIMERSLACK, 1000UL);
  const double first = expected - 60 - (now_us() - t0);
  if (first > 5) sleep_us(first);
  while (cudaEventQuery(event) == cudaErrorNotReady)
    if (!spin) sleep_us(4);
  prctl(PR_SET_TIMERSLACK, 50000UL);
}

// Latency and thread CPU of a probe's frames: the shortest of the last 16 latencies is the next
// frame's expected time; median and p90 printed at the end.
struct FrameTimes {
  std::vector<double> latency, cpu, recent;
  double expected = 0;
  void add(double lat_us, double cpu_us) {
    latency.push_back(lat_us);
    cpu.push_back(cpu_us);
    recent.push_back(lat_us);
    if (recent.size() > 16) recent.erase(recent.begin());
    expected = *std::min_element(recent.begin(), recent.end());
  }
  void print(const char* work, const char* way) {
    std::sort(latency.begin(), latency.end());
    std::sort(cpu.begin(), cpu.end());
    std::printf("%-22s %-22s after idle: latency median %6.1f p90 %6.1f us, thread cpu median %5.1f p90 %5.1f us\n",
                work, way, latency[latency.size() / 2], latency[latency.size() * 9 / 10], cpu[cpu.size() / 2],
                cpu[cpu.size() * 9 / 10]);
  }
};
