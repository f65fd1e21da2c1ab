#!/usr/bin/env bash
# Two stages on the shipped clip: a first stage that finds objects and attaches them as
# GstVideoRegionOfInterestMeta (here cudatemplatematch stands in for a detector: its matches are
# ROI metas of type "template-match"), then cudatensorize roi-meta=true crops every object into a
# 4-slot batch of 224x224 tensors for a second-stage classifier; batch_consumer reads each
# slot's region and transform and maps a box in the slot back to the frame. Runs anywhere (the
# CPU path without a GPU).
#   pipelines/two_stage.sh [cudatensorize properties...]
set -euo pipefail
source "$(dirname "$0")/env.sh"
need_props "$@"
need_file "$CLIP"
need_built pipelines/batch_consumer
echo "decoder: $H264DEC"
exec "$BUILD/pipelines/batch_consumer" \
  "filesrc location=$CLIP ! qtdemux ! h264parse ! $H264DEC ! \
   cudatemplatematch template-rect=\"<380,200,48,64>\" max-matches=4 threshold=0.5 draw=false ! \
   cudatensorize roi-meta=true roi-type=template-match roi-margin=0.2 resize-mode=stretch \
   width=224 height=224 batch-size=4 $* ! appsink name=sink"
