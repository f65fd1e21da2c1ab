#!/usr/bin/env bash
# Turns the first tensor of a clip back into a PNG (out/preview.png) to look at the letterbox.
#   pipelines/preview.sh [clip] [cudatensorize properties...]
set -euo pipefail
source "$(dirname "$0")/env.sh"
FILE=${1:-$CLIP}; shift || true
need_file "$FILE"
need_props "$@"
need_built pipelines/tensor_consumer
exec "$BUILD/pipelines/tensor_consumer" --preview "$OUTDIR/preview.png" \
  "filesrc location=$FILE ! qtdemux ! h264parse ! $H264DEC ! cudatensorize $* ! appsink name=sink"
