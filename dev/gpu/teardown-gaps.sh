#!/usr/bin/env bash
# Where a pipeline's time goes after its last buffer (issue 11: the system-memory tensor's process
# lived 0.2 s longer than the others after its last frame). Runs BRANCH behind nvh264dec with a
# timestamped debug log and prints every gap of more than 10 ms between two log lines from the
# last buffer on, with the lines around it. Run on the GPU machine after device-run.sh (bundle
# sourced, GST_PLUGIN_PATH set). Usage: dev/gpu/teardown-gaps.sh 'BRANCH' [clip]
set -euo pipefail
branch=$1 clip=${2:-.carry/bench/pipeline-clip-1080p.mp4}
log=$(mktemp)
t0=$(date +%s.%N)
eval "GST_DEBUG='cudatensorize:5,cudaprep*:5,GST_BUFFER_POOL:5,GST_STATES:4,basesink:5' GST_DEBUG_NO_COLOR=1 \
  gst-launch-1.0 -q filesrc location=\"$clip\" ! qtdemux ! h264parse ! nvh264dec ! \
  'video/x-raw(memory:CUDAMemory)' ! $branch ! fakesink" 2> "$log" >/dev/null
t1=$(date +%s.%N)
python3 - "$log" "$branch" "$t0" "$t1" <<'PY'
import re, sys
lines = [l.rstrip() for l in open(sys.argv[1], errors="replace")]
stamp = lambda l: (lambda m: int(m[1]) * 3600 + int(m[2]) * 60 + float(m[3]))(re.match(r"(\d+):(\d+):(\d+\.\d+)", l))
timed = [(stamp(l), l) for l in lines if re.match(r"\d+:\d+:\d+\.\d+", l)]
last = max((i for i, (_, l) in enumerate(timed) if "rendering buffer" in l or "got times" in l), default=0)
print(f"{sys.argv[2]}: process {float(sys.argv[4]) - float(sys.argv[3]):.3f} s; log from the last buffer "
      f"({timed[last][0]:.3f} s) to its end ({timed[-1][0]:.3f} s): {timed[-1][0] - timed[last][0]:.3f} s")
for i in range(max(last, 1), len(timed)):
    gap = timed[i][0] - timed[i - 1][0]
    if gap > 0.010:
        print(f"  gap {gap * 1e3:.0f} ms between:\n    {timed[i - 1][1][:220]}\n    {timed[i][1][:220]}")
PY
rm -f "$log"
