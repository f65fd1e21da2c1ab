#!/usr/bin/env bash
# Two stages over N cameras: N-1 copies of the shipped clip (NVDEC where a GPU is usable, else
# libav, as main.sh decides) and a test pattern's moving ball (BGR 640x360), each teed twice:
# its frames go into one cudatensorbatch, the detector's batch (one 320x320 letterboxed slot a
# camera), and through a stand-in detector (cudatemplatematch, whose matches are ROI metas of
# type "template-match": on even cameras the people, on odd ones the parked van, on the test
# pattern the ball) into a second cudatensorbatch, the classifier's batch: every pad with
# roi-meta=true, so each detection of every camera becomes one 224x224 slot (grown by 10%,
# stretched), 4 slots a tensor, as many tensors a batch window as its detections fill.
# batch_consumer reads both batches: per classifier slot its camera, region and id, and its crop
# mapped back into that camera's frame. Runs anywhere (the CPU path without a GPU).
#   pipelines/multi_camera.sh [--all] [N]     N cameras (default 3, at least 1); --all: every
#                                            batch's slots, not only the first's
set -euo pipefail
source "$(dirname "$0")/env.sh"
ALL=()
if [ "${1:-}" = --all ]; then
  ALL=(--all)
  shift
fi
N=${1:-3}
[[ $N =~ ^[1-9][0-9]?$ ]] || die "the number of cameras must be 1 to 99, not '$N' (--help: usage)"
[ $# -le 1 ] || die "takes at most one number of cameras (--help: usage)"
need_file "$CLIP"
need_built pipelines/batch_consumer
echo "decoder: $H264DEC"
P="cudatensorbatch name=det width=320 height=320 ! appsink name=detector"
P+=" cudatensorbatch name=cls width=224 height=224 batch-size=4 resize-mode=stretch roi-margin=0.1"
for ((i = 0; i < N; i++)); do P+=" sink_$i::roi-meta=true sink_$i::roi-type=template-match"; done
P+=" ! appsink name=sink"
for ((i = 0; i < N; i++)); do
  if ((i == N - 1 && N > 1)); then
    src="videotestsrc num-buffers=31 pattern=ball ! video/x-raw,format=BGR,width=640,height=360,framerate=10/1"
    find='template-rect="<300,160,40,40>" threshold=0.7'
  else
    src="filesrc location=$CLIP ! qtdemux ! h264parse ! $H264DEC"
    if ((i % 2 == 0)); then
      find='template-rect="<380,200,48,64>" threshold=0.5 max-matches=3'
    else
      find='template-rect="<650,40,72,56>" threshold=0.7'
    fi
  fi
  P+=" $src ! tee name=cam$i cam$i. ! queue ! det.sink_$i"
  P+=" cam$i. ! queue ! cudatemplatematch name=detect$i $find draw=false ! queue ! cls.sink_$i"
done
echo "pipeline: $P"
exec "$BUILD/pipelines/batch_consumer" "${ALL[@]}" --detector detector "$P"
