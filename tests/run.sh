#!/usr/bin/env bash
# Runs the whole test suite: installs and builds what is missing, then every Meson test.
# GPU tests skip (exit 77) where no GPU is usable. Ends with "N passed, N failed, N skipped",
# counted per test case (a GPU binary skipped as a whole counts as one skipped).
# Arguments go to `meson test` (e.g. --suite cpu); CUDAPREP_BUILD_DIR picks the build directory
# (default build/), CUDAPREP_MESON_ARGS its options (see scripts/bootstrap.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${CUDAPREP_BUILD_DIR:-build}
scripts/bootstrap.sh || { echo "0 passed, 1 failed"; exit 1; }
# As bootstrap.sh: meson test regenerates the build when a meson.build changed, and finds nvcc again.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
rm -rf "$build/test-results" && mkdir -p "$build/test-results"
export GTEST_OUTPUT=json:$PWD/$build/test-results/
meson test -C "$build" --print-errorlogs --num-processes 2 "$@"
status=$?
python3 tests/summarize.py "$build/meson-logs/testlog.json" "$build/test-results"
exit $status
