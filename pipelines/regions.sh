#!/usr/bin/env bash
# Regions of one frame as a batch (a classifier's crops): three regions of a test pattern (one
# partly outside the frame, clipped), each grown by 10% and stretched to 224x224, in one 3-slot
# tensor per frame. Runs anywhere (the CPU path without a GPU). With a detector upstream that
# attaches GstVideoRegionOfInterestMeta, use roi-meta=true roi-type=<class> instead of rois
# (README, cudatensorize); the meta's slots map each slot back to the frame.
#   pipelines/regions.sh [cudatensorize properties...]
set -euo pipefail
source "$(dirname "$0")/env.sh"
need_props "$@"
need_built pipelines/tensor_consumer
exec "$BUILD/pipelines/tensor_consumer" \
  "videotestsrc num-buffers=30 ! video/x-raw,format=NV12,width=1280,height=720 ! \
   cudatensorize width=224 height=224 resize-mode=stretch batch-size=3 roi-margin=0.1 \
   rois=\"<<0,0,320,240>,<400,200,300,300>,<1100,600,300,300>>\" $* ! appsink name=sink"
