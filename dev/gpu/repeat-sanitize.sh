#!/usr/bin/env bash
# A sanitize-pipelines.sh run that timed out, repeated: N times under the tool, N times without,
# each under a time limit. On a timeout, before killing it, prints every thread of the hung
# gst-launch-1.0: name, state, kernel wait channel and CPU ticks, twice 2 s apart (a spinning
# thread's ticks grow, a deadlocked one's do not). Run on the GPU machine after
# dev/gpu/device-run.sh has unpacked the build and the bundle.
# Usage: [WRAP='timeout -k 5 100 timeout 100'] dev/gpu/repeat-sanitize.sh TOOL NAME [N] [GST_DEBUG (0: none)] [LIMIT_S]
set -u
cd "$(dirname "$0")/../.."
source .gstbundle/env.sh
export GST_PLUGIN_PATH=$PWD/build/gst GST_REGISTRY=/tmp/cudaprep-registry.bin
tool=$1 name=$2 n=${3:-3} limit=${5:-60}
export GST_DEBUG=${4:-cudatensorbatch:6,aggregator:5} GST_DEBUG_NO_COLOR=1
threads() {  # pid: one line per thread
  for t in /proc/$1/task/*; do
    read -r -a st < "$t/stat" 2>/dev/null || continue
    printf '  %-16s %s wchan=%-22s ticks=%s\n' "$(cat "$t/comm" 2>/dev/null)" "${st[2]}" \
      "$(cat "$t/wchan" 2>/dev/null)" "$(( ${st[13]} + ${st[14]} ))"
  done
}
for i in $(seq "$n"); do
  for how in "$tool" none; do
    log=/tmp/repeat-$how-$i.log
    if [ "$how" = none ]; then
      # the same description as sanitize-pipelines.sh's, with its racecheck frame limit
      d=$(source <(sed -n -e '/^tm=/p' -e '/^describe()/,/^}/p' dev/gpu/sanitize-pipelines.sh)
          dec="filesrc location=tests/data/vtest-h264.mp4 ! qtdemux ! h264parse ! nvh264dec ! identity eos-after=4"
          cuda="video/x-raw(memory:CUDAMemory)" describe "$name")
      gst-launch-1.0 -q $d > "$log" 2>&1 &
    else
      # as device-run.sh's sanitize step runs it: under two timeouts (each a process group of its own)
      ${WRAP:-} bash dev/gpu/sanitize-pipelines.sh "$tool" "$name" > "$log" 2>&1 &
    fi
    job=$! t0=$SECONDS
    while kill -0 $job 2>/dev/null && [ $((SECONDS - t0)) -lt "$limit" ]; do sleep 0.5; done
    if kill -0 $job 2>/dev/null; then
      echo "run $i, $how: still running after ${limit} s"
      ps -eo pid,ppid,pgid,tpgid,stat,wchan:24,comm | grep -E 'PID|gst-launch|sanitizer|timeout|bash' | grep -v grep
      for p in $(pgrep -f '^gst-launch-1.0|/gst-launch-1.0 ' || true); do
        echo " gst-launch pid $p:"; threads "$p"; sleep 2; echo " 2 s later:"; threads "$p"
      done
      echo "--- tail of $log"; grep -v '^$' "$log" | tail -n 15 | cut -c1-300
      pkill -9 -f compute-sanitizer; pkill -9 -f gst-launch-1.0; kill -9 $job 2>/dev/null
      wait $job 2>/dev/null
    else
      wait $job; echo "run $i, $how: rc=$?, $((SECONDS - t0)) s"
    fi
  done
done
