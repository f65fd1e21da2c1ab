#!/usr/bin/env bash
# Does a case's latency depend on what ran before it? The same cudatensorize pipelines as the
# pipeline bench, alternated, each a process of its own (element_latency, pad probes). Run on the
# GPU machine after dev/gpu/device-run.sh has unpacked the build and the bundle.
# Usage: dev/gpu/latency-order.sh [rounds]
set -euo pipefail
cd "$(dirname "$0")/../.."
source .gstbundle/env.sh
export GST_PLUGIN_PATH=$PWD/build/gst GST_REGISTRY=/tmp/cudaprep-registry.bin
clip=.carry/bench/pipeline-clip-1080p.mp4
head="filesrc location=$clip ! qtdemux ! h264parse ! nvh264dec ! video/x-raw(memory:CUDAMemory)"
for round in $(seq "${1:-3}"); do
  for extra in "" "dtype=float16" ""; do
    line=$(build/bench/element_latency '--element=tz*' "$head ! cudatensorize name=tz0 $extra ! other/tensors(memory:CUDAMemory) ! fakesink" | grep '^tz')
    echo "round $round, CUDA tensor ${extra:-(defaults)}: $line"
  done
  gst-launch-1.0 -q $head ! fakesink >/dev/null  # the decode-only case, as the bench runs it between
done
