#!/usr/bin/env bash
# compute-sanitizer memcheck / racecheck over whole gst-launch-1.0 pipelines, on the GPU machine
# with the GStreamer bundle sourced and GST_PLUGIN_PATH at the build's plugin (dev/gpu/device-run.sh
# sanitize does both). Covers the stream-ordered handoff: CUDA and system-memory tensors, frames
# uploaded through the staging ring, matching with drawing, both elements behind a tee, two
# decoders into one cudatensorbatch (frames in its pads' pools on its stream; CUDA and system
# memory batches), and pipelines/multi_camera.sh's two stages on the GPU: two decoders and an
# uploaded test pattern, each teed into a detector's batch and through its own matcher into a
# classifier's batch of every camera's regions (roi-meta on each pad, several tensors a window).
# Usage: sanitize-pipelines.sh [--list | --print NAME | TOOL [NAME]]   TOOL: memcheck (default)
# or racecheck; --print: the gst-launch-1.0 description of NAME.
# Exit status: 0 clean, else the first failing run's.
set -u
cd "$(dirname "$0")/../.."
clip=tests/data/vtest-h264.mp4
dec="filesrc location=$clip ! qtdemux ! h264parse ! nvh264dec"
cuda="video/x-raw(memory:CUDAMemory)"
tm='cudatemplatematch template-rect=<300,200,64,64> threshold=0.5 max-matches=4'
names=(tensorize-cuda tensorize-system tensorize-upload templatematch-draw templatematch-upload tee-both
  batch-cuda batch-system batch-regions)
# batch-regions: the stand-in detectors of pipelines/multi_camera.sh (people, the parked van,
# the test pattern's ball) and its two batches
people='cudatemplatematch template-rect=<380,200,48,64> threshold=0.5 max-matches=3 draw=false'
van='cudatemplatematch template-rect=<650,40,72,56> threshold=0.7 draw=false'
ball='cudatemplatematch template-rect=<300,160,40,40> threshold=0.7 draw=false'
ball_src='videotestsrc num-buffers=31 pattern=ball ! video/x-raw,format=BGR,width=640,height=360,framerate=10/1'
classifier='cudatensorbatch name=c width=224 height=224 batch-size=4 resize-mode=stretch roi-margin=0.1
  sink_0::roi-meta=true sink_1::roi-meta=true sink_2::roi-meta=true'
# camera I SOURCE MATCHER: camera I teed into the detector's batch d and through MATCHER into c
camera() { echo "$2 ! tee name=t$1 t$1. ! queue ! d.sink_$1 t$1. ! queue ! $3 ! queue ! c.sink_$1"; }
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
    batch-regions)
      echo "cudatensorbatch name=d width=320 height=320 ! other/tensors(memory:CUDAMemory) ! fakesink" \
        $classifier "! other/tensors ! fakesink" \
        "$(camera 0 "$dec ! $cuda" "$people") $(camera 1 "$dec ! $cuda" "$van")" \
        "$(camera 2 "$ball_src ! cudaupload ! $cuda" "$ball")"
      ;;
  esac
}
[ "${1:-}" = --list ] && { printf '%s\n' "${names[@]}"; exit 0; }
if [ "${1:-}" = --print ]; then
  d=$(describe "${2:-}")
  [ -n "$d" ] || { echo "unknown pipeline ${2:-}" >&2; exit 2; }
  echo "$d"
  exit 0
fi
tool=${1:-memcheck}
[ -n "${2:-}" ] && names=("$2")
# Racecheck replays every shared-memory access: a few frames are enough.
limit=""
[ "$tool" = racecheck ] && limit="! identity eos-after=4" && ball_src=${ball_src/num-buffers=31/num-buffers=4}
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
