// Internal to the CUDA template matcher: the per-block record of MatcherCudaOptions'
// diagnostics.trace, written by the frame kernel and summarised by templatematch_diagnostics.cpp.
// Thread 0 of each block records clock64() at the phase boundaries, %globaltimer at start and end,
// its SM and whether it was the last block.
#pragma once

namespace cudaprep {
namespace tm {

constexpr int kTraceSlots = 12;  // 64-bit words per block
enum TraceSlot {
  kTrStart,
  kTrStaged,
  kTrMma,
  kTrCluster,
  kTrBox,
  kTrMap,
  kTrCells,
  kTrEnd,
  kTrGtStart,
  kTrGtEnd,
  kTrSm,
  kTrLast
};

}  // namespace tm
}  // namespace cudaprep
