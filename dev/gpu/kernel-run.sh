#!/usr/bin/env bash
# On the GPU machine: the kernel-level GPU suites, the kernel benchmark and memcheck over the
# tensorize tests, without GStreamer (for kernel experiments: carry only these binaries).
# Here: mkdir -p .carry-k/build-gpu/{bench,tests/tensorize} and copy build-gpu/bench/tensorize_bench,
# build-gpu/tests/tensorize/tensorize{,_batch}_gpu into it (stripped: about 30 MiB), then run
# `bash dev/gpu/kernel-run.sh` there with carry [".carry-k"].
set -u
B=.carry-k/build-gpu
OUT=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 200 $B/tests/tensorize/tensorize_gpu > $OUT/tz_gpu.log 2>&1; echo "tensorize_gpu rc=$?"; tail -1 $OUT/tz_gpu.log
timeout 120 $B/tests/tensorize/tensorize_batch_gpu > $OUT/tzb_gpu.log 2>&1; echo "tensorize_batch_gpu rc=$?"; tail -1 $OUT/tzb_gpu.log
timeout 200 $B/bench/tensorize_bench > $OUT/bench.log 2>&1; echo "bench rc=$?"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/tensorize/tensorize_gpu --gtest_filter='*FullHd*:*OddShapes*' > $OUT/mc1.log 2>&1; echo "memcheck tensorize_gpu rc=$?"; grep "ERROR SUMMARY" $OUT/mc1.log
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/tensorize/tensorize_batch_gpu > $OUT/mc2.log 2>&1; echo "memcheck tensorize_batch_gpu rc=$?"; grep "ERROR SUMMARY" $OUT/mc2.log
grep -E "FAILED|Failure" $OUT/tz_gpu.log $OUT/tzb_gpu.log | head -20
tail -45 $OUT/bench.log
