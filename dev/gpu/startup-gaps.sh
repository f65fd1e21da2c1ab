#!/usr/bin/env bash
# Where a pipeline's start goes, up to its first buffer at the sink: runs BRANCH behind nvh264dec
# with a timestamped debug log and prints every gap of more than GAP_MS (default 5) ms between
# two log lines up to the first buffer the sink renders, with the lines around it; the same for
# the decode-only pipeline first, to compare. Run on the GPU machine after device-run.sh (bundle
# sourced, GST_PLUGIN_PATH set). Usage: dev/gpu/startup-gaps.sh 'BRANCH' [clip]
set -euo pipefail
branch=$1 clip=${2:-.carry/bench/pipeline-clip-1080p.mp4}
log=$(mktemp)
for b in fakesink "$branch ! fakesink"; do
  eval "GST_DEBUG='cudatensorize:5,cudatensorbatch:5,cudaprep*:5,GST_STATES:4,basesink:5,cudacontext:5,cudabufferpool:5,nvdecoder:4' \
    GST_DEBUG_NO_COLOR=1 gst-launch-1.0 -q filesrc location=\"$clip\" ! qtdemux ! h264parse ! nvh264dec ! \
    'video/x-raw(memory:CUDAMemory)' ! $b" 2> "$log" >/dev/null
  python3 - "$log" "$b" "${GAP_MS:-5}" <<'PY'
import re, sys
lines = [l.rstrip() for l in open(sys.argv[1], errors="replace")]
stamp = lambda l: (lambda m: int(m[1]) * 3600 + int(m[2]) * 60 + float(m[3]))(re.match(r"(\d+):(\d+):(\d+\.\d+)", l))
timed = [(stamp(l), l) for l in lines if re.match(r"\d+:\d+:\d+\.\d+", l)]
first = next((i for i, (_, l) in enumerate(timed) if "basesink" in l and ("rendering" in l or "got times" in l)), len(timed) - 1)
print(f"{sys.argv[2]}: first buffer at the sink {timed[first][0]:.3f} s after the log's start")
for i in range(1, first + 1):
    gap = timed[i][0] - timed[i - 1][0]
    if gap > float(sys.argv[3]) / 1e3:
        print(f"  gap {gap * 1e3:.0f} ms at {timed[i - 1][0]:.3f} s between:\n    {timed[i - 1][1][:200]}\n    {timed[i][1][:200]}")
PY
done
rm -f "$log"
