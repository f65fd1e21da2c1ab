#!/usr/bin/env bash
# Where an element's time goes inside the pipeline bench's pipeline (issue 11): the element's
# per-frame phase log (gst/core/frame_phases.h: GST_DEBUG CATEGORY:LOG, "frame phases (us): ...") over
# the clip behind nvh264dec, as median (p90) per phase, and the INFO lines of its stop. Run on the
# GPU machine with the GStreamer bundle sourced and GST_PLUGIN_PATH set (device-run.sh does both).
# Usage: dev/gpu/phases.sh CATEGORY 'ELEMENT ! CAPS... ' [clip]
#   e.g. dev/gpu/phases.sh cudatemplatematch 'cudatemplatematch template-rect="<728,368,64,64>"'
set -euo pipefail
category=$1 branch=$2 clip=${3:-.carry/bench/pipeline-clip-1080p.mp4}
log=$(mktemp)
line=""  # STREAMS=N: N copies of the pipeline in one process (the phases of all of them together)
for ((n = 0; n < ${STREAMS:-1}; n++)); do
  line+=" filesrc location=\"$clip\" ! qtdemux ! h264parse ! nvh264dec ! 'video/x-raw(memory:CUDAMemory)' ! $branch ! fakesink"
done
eval "GST_DEBUG=$category:6 GST_DEBUG_NO_COLOR=1 gst-launch-1.0 -q $line" 2> "$log" >/dev/null
grep -o 'texture objects:.*' "$log" | tail -1 || true
python3 - "$log" "$branch" <<'PY'
import re, statistics, sys
phases = {}
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"frame phases \(us\): (.*)", line)
    if not m:
        continue
    for part in m.group(1).split(", "):
        name, value = part.rsplit(" ", 1)
        phases.setdefault(name, []).append(float(value))
frames = len(phases.get("total", []))
p90 = lambda v: sorted(v)[int(0.9 * (len(v) - 1))]
print(f"{sys.argv[2]}: {frames} frames; median (p90) per phase, us: " +
      ", ".join(f"{k} {statistics.median(v):.1f} ({p90(v):.1f})" for k, v in phases.items()))
PY
rm -f "$log"
