#!/usr/bin/env bash
# compute-sanitizer memcheck / racecheck over whole gst-launch-1.0 pipelines, on the GPU machine
# with the GStreamer bundle sourced and GST_PLUGIN_PATH at the build's plugin (dev/gpu/device-run.sh
# sanitize does both). Covers the stream-ordered handoff: CUDA and system-memory tensors, frames
# uploaded through the staging ring, matching with drawing, both elements behind a tee, and two
# decoders into one cudatensorbatch (frames in its pads' pools on its stream; CUDA and system
# memory batches).
# Usage: sanitize-pipelines.sh [--list | TOOL [NAME]]   TOOL: memcheck (default) or racecheck.
# Exit status: 0 clean, else the first failing run's.
set -u
cd "$(dirname "$0")/../.."
clip=tests/data/vtest-h264.mp4
dec="filesrc location=$clip ! qtdemux ! h264parse ! nvh264dec"
cuda="video/x-raw(memory:CUDAMemory)"
tm='cudatemplatematch template-rect=<300,200,64,64> threshold=0.5 max-matches=4'
names=(tensorize-cuda tensorize-system tensorize-upload templatematch-draw templatematch-upload tee-both
  batch-cuda batch-system)
describe() {
  case $1 in
    tensorize-cuda) echo "$dec ! $cuda ! cudatensorize ! other/tensors(memory:CUDAMemory) ! fakesink" ;;
    tensorize-system) echo "$dec ! $cuda ! cudatensorize dtype=float16 ! other/tensors ! fakesink" ;;
    tensorize-upload) echo "$dec ! video/x-raw ! cudatensorize ! other/tensors(memory:CUDAMemory) ! fakesink" ;;
    templatematch-draw) echo "$dec ! $cuda ! $tm ! fakesink" ;;
    templatematch-upload) echo "$dec ! video/x-raw ! $tm ! fakesink" ;;
    tee-both) echo "$dec ! $cuda ! tee name=t t. ! queue ! cudatensorize ! other/tensors(memory:CUDAMemory) ! fakesink t. ! queue ! $tm ! fakesink" ;;
    batch-cuda) echo "cudatensorbatch name=b ! other/tensors(memory:CUDAMemory) ! fakesink $dec ! $cuda ! b.sink_0 $dec ! $cuda ! b.sink_1" ;;
    batch-system) echo "cudatensorbatch name=b ! other/tensors ! fakesink $dec ! $cuda ! b.sink_0 $dec ! $cuda ! b.sink_1" ;;
  esac
}
[ "${1:-}" = --list ] && { printf '%s\n' "${names[@]}"; exit 0; }
tool=${1:-memcheck}
[ -n "${2:-}" ] && names=("$2")
# Racecheck replays every shared-memory access: a few frames are enough.
limit=""
[ "$tool" = racecheck ] && limit="! identity eos-after=4"
rc=0
for n in "${names[@]}"; do
  d=$(describe "$n")
  [ -n "$d" ] || { echo "unknown pipeline $n" >&2; exit 2; }
  d=${d//nvh264dec/nvh264dec $limit}
  echo "== $tool $n: $d"
  compute-sanitizer --tool "$tool" --error-exitcode 9 gst-launch-1.0 -q $d
  r=$?
  [ $r -eq 0 ] || { echo "FAILED ($r): $tool $n"; [ $rc -ne 0 ] || rc=$r; }
done
exit $rc
