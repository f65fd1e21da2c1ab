#!/usr/bin/env bash
# The main job. Installs and builds what is missing, then runs the shipped street clip through
# cudatensorize (640x640 letterbox, RGB, fp32 NCHW) into the example consumer, which prints the
# tensor and transform and writes the first tensor back as out/letterbox.png.
# On a machine with a GPU the clip is decoded by NVDEC and tensorized on the GPU; otherwise
# libav decodes it and the CPU path computes the same tensor.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
source pipelines/env.sh
echo "decoder: $H264DEC"
build/pipelines/tensor_consumer --preview "$OUTDIR/letterbox.png" \
  "filesrc location=$CLIP ! qtdemux ! h264parse ! $H264DEC ! cudatensorize width=640 height=640 ! appsink name=sink"
