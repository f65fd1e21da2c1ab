// Internal to the CUDA template matcher: the stderr lines of MatcherCudaOptions::Diagnostics
// (the benchmark parses them). Plain C++: the matcher gathers the figures.
#pragma once

namespace cudaprep {
namespace tm {

// diagnostics.kernel_time: "tm profile (ms): kernel T".
void print_kernel_time(float ms);

// diagnostics.host_time: match()'s host-side phases (launch call, wait, final suppression).
void print_host_times(double enqueue_us, double wait_us, double select_us, int candidates);

// diagnostics.trace, one line per launch: the span (first block start to last block end,
// %globaltimer), the spread of block starts, blocks per SM, then per phase the median and maximum
// over blocks (us at the nominal SM clock), and the last block's ticket-to-end time. `slots`:
// kTraceSlots words per block (templatematch_trace.h); clock_khz 0: 1.98 GHz assumed.
void print_trace(const unsigned long long* slots, unsigned blocks, int smem_per_block, int clock_khz);

}  // namespace tm
}  // namespace cudaprep
