#!/usr/bin/env bash
# On the GPU machine (after dev/gpu/device-pack.sh here, with .carry and .gstbundle carried;
# after GST_CHROOT=NAME dev/gpu/device-pack.sh, .carry alone: it holds both in one archive):
# GPU tests, element tests on the GPU, compute-sanitizer, then benchmarks; a summary last.
# Logs: $OUT/logs.tgz when $OUT is set, refreshed after every step (the device tool returns at
# most 8 files). Each step ends after STEP_TIMEOUT seconds (default 200) as rc=124.
# RACECHECK=0 leaves the (slow) template-matching racecheck out.
# Usage: dev/gpu/device-run.sh [tests|bench|all|pipeline-bench|stream-cases|startup|regress-bench|phases|sanitize-pipelines] [gtest filter]
# (pipeline-bench, stream-cases, startup, regress-bench and sanitize-pipelines take a device call of their own each: not part of all)
set -u
cd "$(dirname "$0")/../.."
what=${1:-all}
filter=${2:-*}
LOG=/tmp/cudaprep-logs
rm -rf "$LOG" && mkdir -p "$LOG"
# A warm machine keeps build/ and .gstbundle/ from the last call: what this call carried replaces them.
if [ -f .carry/gst-chroot.tar.xz ]; then
  rm -rf .gstbundle && tar -xJf .carry/gst-chroot.tar.xz  # (.gstbundle/ and .carry/<build dir>)
fi
B=$(ls -d .carry/build* 2>/dev/null | head -1)  # what device-pack.sh packed: .carry/<its build dir>
if [ -n "$B" ] && ! diff -rq "$B" build >/dev/null 2>&1; then
  rm -rf build && mkdir -p build && cp -r "$B/." build/
fi
source .gstbundle/env.sh
# Where the bundle runs on its own glibc (env.sh: the host's is older), our binaries go through it.
run=()
[ -n "${GST_BUNDLE_LOADER:-}" ] && run=(gst-bundle-run)
export GST_PLUGIN_PATH=$PWD/build/gst
export GST_REGISTRY=/tmp/cudaprep-registry.bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
# The host CPU and its clock policy: the elements' CPU-bound figures vary from host to host.
echo "cpu: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores," \
  "governor $(cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>/dev/null || echo n/a)," \
  "MHz now $(awk '/^cpu MHz/ {s += $4; n++} END {if (n) printf "%.0f", s / n; else printf "n/a"}' /proc/cpuinfo)"
summary=()
step() {  # name, command...
  local name=$1; shift
  local t0=$(date +%s)
  timeout -k 5 "${STEP_TIMEOUT:-200}" "$@" > "$LOG/$name.log" 2>&1  # (a hang ends as rc=124)
  local rc=$?
  local line=$(grep -E '^\[  (PASSED|FAILED)  \]|ERROR SUMMARY|RACECHECK SUMMARY|RESULT|tensors received' "$LOG/$name.log" | tail -2 | tr '\n' ' ')
  summary+=("$(printf '%-28s rc=%-3s %4ss  %s' "$name" "$rc" "$(( $(date +%s) - t0 ))" "$line")")
  echo "${summary[-1]}"  # as it happens: a run cut short still shows how far it got
  [ $rc -eq 0 ] || tail -30 "$LOG/$name.log"
  # after every step: a call cut short still brings back the logs of how far it got
  [ -n "${OUT:-}" ] && tar -C /tmp -czf "$OUT/logs.tgz" cudaprep-logs
}
# Order: everything quick first, benchmarks, then the sanitizers (slow; each under a timeout that
# keeps the whole call within the device tool's 10 minutes).
if [ "$what" = tests ] || [ "$what" = all ]; then
  for t in $(find build/tests -type f -perm -u+x -name '*gpu*' | sort); do
    step "$(basename $t)" "${run[@]}" "$t" --gtest_filter="$filter"
  done
  for t in $(find build/tests -type f -perm -u+x \( -name 'test_*element' -o -name 'test_tensorize_regions' \
             -o -name test_tensors_caps -o -name test_transform_matrix -o -name test_model_info_upstream \) | sort); do
    step "$(basename $t)" "${run[@]}" "$t" --gtest_filter="$filter"
  done
  step main-job-nvdec "${run[@]}" build/pipelines/tensor_consumer --preview $LOG/letterbox.png \
      "filesrc location=tests/data/vtest-h264.mp4 ! qtdemux ! h264parse ! nvh264dec ! cudatensorize ! appsink name=sink"
  [ -x tools/regress/gpu-check.sh ] && step regress-gpu-check bash tools/regress/gpu-check.sh
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  # (element_latency times elements inside a pipeline: pipeline_bench.py runs it, not this loop)
  for b in $(find build/bench -type f -perm -u+x ! -name element_latency | sort); do
    step "$(basename $b)" "${run[@]}" "$b"
    cat "$LOG/$(basename $b).log" | tail -25
  done
fi
if [ "$what" = tests ] || [ "$what" = all ]; then
  for t in $(find build/tests -type f -perm -u+x -name '*gpu*' ! -name '*elements*' | sort); do
    # (the NmsInKernel instances repeat the others with another suppression bound: left out for time)
    step "memcheck-$(basename $t)" timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 "${run[@]}" "$t" \
        --gtest_filter="$filter:-*NmsInKernel*"
  done
  t=build/tests/templatematch/test_templatematch_gpu
  # Racecheck is slow on the large shared-memory blocks: one cluster split, and the suppression test alone.
  [ "${RACECHECK:-1}" = 1 ] && [ -x $t ] && step racecheck-templatematch timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 "${run[@]}" $t \
      --gtest_filter="${RACECHECK_FILTER:-*PastedCopies*:*GpuDraw*:*GpuClusterSplit*Kz6}"
  [ "${RACECHECK:-1}" = 1 ] && [ -x $t ] && step racecheck-suppression timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 "${run[@]}" $t \
      --gtest_filter="*Suppression*"
  t=build/tests/templatematch/test_bank_gpu
  # Masked and unmasked groups with both suppression routes, and masked templates on the
  # single-template kernel (about 60 s of it); every group shape takes longer than this call has
  # left: "bank" runs it.
  [ "${RACECHECK:-1}" = 1 ] && [ -x $t ] && step racecheck-bank timeout 195 compute-sanitizer --tool racecheck \
      --error-exitcode 9 "${run[@]}" $t --gtest_filter='*FlatPatches*:*MaskedSingle*'
fi
# The template bank alone: its GPU tests, the element's bank tests, both sanitizers, its benchmarks
# (template_mask_cpu_bench runs where .carry/opencv/ holds OpenCV's libraries: device-pack.sh OPENCV=1).
if [ "$what" = bank ]; then
  t=build/tests/templatematch/test_bank_gpu
  step test_bank_gpu "${run[@]}" $t
  step test_template_bank_element "${run[@]}" build/tests/elements/test_template_bank_element
  step memcheck-bank timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 "${run[@]}" $t
  STEP_TIMEOUT=420 step racecheck-bank timeout 400 compute-sanitizer --tool racecheck --error-exitcode 9 "${run[@]}" $t \
      --gtest_filter='*EveryGroupShape*:*FlatPatches*:*MaskedSingle*'
  step template_bank_bench "${run[@]}" build/bench/template_bank_bench && tail -16 "$LOG/template_bank_bench.log"
  if [ -x build/bench/template_mask_cpu_bench ] && [ -d .carry/opencv ]; then
    step template_mask_cpu_bench env LD_LIBRARY_PATH=$PWD/.carry/opencv build/bench/template_mask_cpu_bench &&
      tail -3 "$LOG/template_mask_cpu_bench.log"
  fi
fi
if [ "$what" = pipeline-bench ] || [ "$what" = phases ]; then
  # phases: where the elements' time goes in the bench's pipeline (dev/gpu/phases.sh)
  if [ "$what" = phases ]; then
    for branch in "cudatensorize ! 'other/tensors(memory:CUDAMemory)'" "cudatensorize ! other/tensors" \
        'cudatemplatematch template-rect="<728,368,64,64>" draw=false' \
        'cudatemplatematch template-rect="<728,368,64,64>" draw=true'; do
      name=phases-$(echo "$branch" | tr -c 'a-z0-9=\n' '-' | cut -c1-40)
      step "$name" bash dev/gpu/phases.sh "${branch%% *}" "$branch" && tail -2 "$LOG/$name.log"
    done
  fi
  # PIPELINE_ARGS: options of pipeline_bench.py, quoted as in a shell (e.g. --only 'CASE')
  eval "pipeline_args=(${PIPELINE_ARGS:-})"
  step pipeline-bench bash bench/pipeline_bench.sh "${pipeline_args[@]}"
  tail -20 "$LOG/pipeline-bench.log"
fi
if [ "$what" = stream-cases ]; then
  # Eight NVDEC streams into cudatensorize / cudatensorbatch against decode only, process wall
  # and steady-state span (dev/gpu/stream-cases.sh; STREAM_RUNS runs of each, default 6).
  T="other/tensors(memory:CUDAMemory)"
  step stream-cases bash dev/gpu/stream-cases.sh 8 "${STREAM_RUNS:-6}" \
    "8 cudatensorize|cudatensorize ! $T ! fakesink" \
    "cudatensorbatch|tb.sink_%n|cudatensorbatch name=tb ! $T ! fakesink" \
    "queue, cudatensorbatch|queue ! tb.sink_%n|cudatensorbatch name=tb ! $T ! fakesink"
  tail -5 "$LOG/stream-cases.log"
fi
if [ "$what" = startup ]; then
  # What one stream's start costs (PLAYING to the first ASYNC_DONE, the element's first buffer),
  # then where it goes (dev/gpu/startup-gaps.sh).
  clip=.carry/bench/pipeline-clip-1080p.mp4
  src="filesrc location=$clip ! qtdemux ! h264parse ! nvh264dec ! video/x-raw(memory:CUDAMemory)"
  for r in 1 2 3 4 5; do
    for branch in "identity name=id0" "cudatensorize name=id0 ! other/tensors(memory:CUDAMemory)"; do
      echo "$branch: $("${run[@]}" build/bench/element_latency --element='id*' "$src ! $branch ! fakesink" |
        grep -E '^(id\* first|wall)' | tr '\n' ' ')"
    done
  done | sort | tee "$LOG/startup.log"
  step startup-gaps bash dev/gpu/startup-gaps.sh "cudatensorize ! 'other/tensors(memory:CUDAMemory)'"
  cat "$LOG/startup-gaps.log"
fi
if [ "$what" = regress-bench ]; then
  # The regression suite's throughput (bench/regress_suite_bench.sh): 8 names of the carried 540-frame
  # clip, suite check at -j 1 / -j 4 (and --gpus 0,1 where there are two GPUs) against decode only.
  # One step of up to 540 s (STEP_TIMEOUT overrides): within the device tool's 10 minutes a call.
  # REGRESS_BENCH_ARGS: options of regress_suite_bench.py, quoted as in a shell.
  eval "regress_args=(${REGRESS_BENCH_ARGS:-})"
  STEP_TIMEOUT=${STEP_TIMEOUT:-540} step regress-bench bash bench/regress_suite_bench.sh \
      --work /tmp/regress-suite-bench "${regress_args[@]}"
  cp -r /tmp/regress-suite-bench/logs "$LOG/regress-suite-logs" 2>/dev/null
  for r in /tmp/regress-suite-bench/*/results.json; do  # per clip: seconds, GPU, verdict
    [ -f "$r" ] && cp "$r" "$LOG/regress-suite-logs/$(basename "$(dirname "$r")")-results.json"
  done
  [ -n "${OUT:-}" ] && tar -C /tmp -czf "$OUT/logs.tgz" cudaprep-logs
  tail -30 "$LOG/regress-bench.log"
fi
if [ "$what" = sanitize-pipelines ]; then
  # Whole gst-launch pipelines under compute-sanitizer (the stream-ordered handoff, the upload ring).
  for tool in memcheck racecheck; do
    for n in $(bash dev/gpu/sanitize-pipelines.sh --list); do
      step "$tool-$n" timeout 100 bash dev/gpu/sanitize-pipelines.sh $tool $n
    done
  done
fi
echo "================ summary"
printf '%s\n' "${summary[@]}"
