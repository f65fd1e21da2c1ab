#!/usr/bin/env bash
# Four cameras and a test pattern into one batch: four copies of the shipped clip (NVDEC where a
# GPU is usable, else libav, as main.sh decides) and videotestsrc (BGR 1280x720) feed
# cudatensorbatch, which pushes one 640x640 letterboxed 5-slot tensor (640:640:3:5) per batch;
# the example consumer prints each slot's camera and PTS and maps a box from slot i back into
# that camera's frame.
#   pipelines/batch.sh [cudatensorbatch properties...]
set -euo pipefail
source "$(dirname "$0")/env.sh"
need_props "$@"
need_file "$CLIP"
need_built pipelines/batch_consumer
echo "decoder: $H264DEC"
P="cudatensorbatch name=b width=640 height=640 $* ! appsink name=sink"
for i in 0 1 2 3; do
  P+=" filesrc location=$CLIP ! qtdemux ! h264parse ! $H264DEC ! queue ! b.sink_$i"
done
P+=" videotestsrc num-buffers=30 pattern=ball ! video/x-raw,format=BGR,width=1280,height=720,framerate=25/3 ! queue ! b.sink_4"
exec "$BUILD/pipelines/batch_consumer" "$P"
