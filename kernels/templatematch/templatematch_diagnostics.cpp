// The stderr lines of the CUDA template matcher's diagnostics (see templatematch_diagnostics.h).
#include "templatematch_diagnostics.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "templatematch_trace.h"

namespace cudaprep {
namespace tm {

void print_kernel_time(float ms) { std::fprintf(stderr, "tm profile (ms): kernel %.4f\n", ms); }

void print_host_times(double enqueue_us, double wait_us, double select_us, int candidates) {
  std::fprintf(stderr, "tm host (us): enqueue %.2f wait %.2f select %.2f candidates %d\n", enqueue_us, wait_us,
               select_us, candidates);
}

void print_trace(const unsigned long long* t, unsigned blocks, int smem_per_block, int clock_khz) {
  if (!blocks) return;
  const double cyc_us = clock_khz > 0 ? clock_khz / 1000.0 : 1980.0;
  unsigned long long g0 = ~0ull, g1 = 0, gs = 0;
  std::vector<int> per_sm(1024, 0);
  int max_per_sm = 0;
  for (unsigned b = 0; b < blocks; ++b) {
    const unsigned long long* r = &t[static_cast<size_t>(b) * kTraceSlots];
    g0 = std::min(g0, r[kTrGtStart]);
    g1 = std::max(g1, r[kTrGtEnd]);
    gs = std::max(gs, r[kTrGtStart]);
    if (r[kTrSm] < per_sm.size()) max_per_sm = std::max(max_per_sm, ++per_sm[r[kTrSm]]);
  }
  std::fprintf(stderr,
               "tm trace: %u blocks of %d B shared, <=%d per SM over the launch, span %.2f us, starts spread %.2f us |",
               blocks, smem_per_block, max_per_sm, (g1 - g0) / 1000.0, (gs - g0) / 1000.0);
  const char* names[] = {"stage", "mma", "cluster", "box", "map", "cells", "tail"};
  for (int ph = 1; ph <= kTrEnd; ++ph) {
    std::vector<double> d;
    for (unsigned b = 0; b < blocks; ++b) {
      const unsigned long long* r = &t[static_cast<size_t>(b) * kTraceSlots];
      d.push_back(static_cast<double>(static_cast<long long>(r[ph] - r[ph - 1])) / cyc_us);
    }
    std::sort(d.begin(), d.end());
    std::fprintf(stderr, " %s %.2f/%.2f", names[ph - 1], d[d.size() / 2], d.back());
  }
  for (unsigned b = 0; b < blocks; ++b) {
    const unsigned long long* r = &t[static_cast<size_t>(b) * kTraceSlots];
    if (r[kTrLast])
      std::fprintf(stderr, " | last block: total %.2f, tail %.2f, ended at +%.2f us",
                   (r[kTrEnd] - r[kTrStart]) / cyc_us, (r[kTrEnd] - r[kTrCells]) / cyc_us, (r[kTrGtEnd] - g0) / 1000.0);
  }
  std::fprintf(stderr, "\n");
}

}  // namespace tm
}  // namespace cudaprep
