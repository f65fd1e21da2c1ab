#!/usr/bin/env bash
# A sanitize-pipelines.sh run that timed out, repeated: N times under the tool, N times without,
# each under a timeout, with the named debug categories logged (their tail printed on a timeout).
# Run on the GPU machine after dev/gpu/device-run.sh has unpacked the build and the bundle.
# Usage: dev/gpu/repeat-sanitize.sh TOOL NAME [N] [GST_DEBUG]
set -u
cd "$(dirname "$0")/../.."
source .gstbundle/env.sh
export GST_PLUGIN_PATH=$PWD/build/gst GST_REGISTRY=/tmp/cudaprep-registry.bin
tool=$1 name=$2 n=${3:-3}
export GST_DEBUG=${4:-cudatensorbatch:6,aggregator:5} GST_DEBUG_NO_COLOR=1
for i in $(seq "$n"); do
  for how in "$tool" none; do
    log=/tmp/repeat-$how-$i.log
    t0=$SECONDS
    if [ "$how" = none ]; then
      # the same description as sanitize-pipelines.sh's, with its racecheck frame limit
      d=$(source <(sed -n '/^describe()/,/^}/p' dev/gpu/sanitize-pipelines.sh)
          dec="filesrc location=tests/data/vtest-h264.mp4 ! qtdemux ! h264parse ! nvh264dec ! identity eos-after=4"
          cuda="video/x-raw(memory:CUDAMemory)" describe "$name")
      timeout -k 5 60 gst-launch-1.0 -q $d > "$log" 2>&1
    else
      timeout -k 5 90 bash dev/gpu/sanitize-pipelines.sh "$tool" "$name" > "$log" 2>&1
    fi
    rc=$?
    echo "run $i, $how: rc=$rc, $((SECONDS - t0)) s"
    [ $rc -eq 124 ] && { echo "--- tail of $log"; grep -v '^$' "$log" | tail -25 | cut -c1-300; }
  done
done
