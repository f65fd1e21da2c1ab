#!/usr/bin/env bash
# Writes every tensor of a clip as raw little-endian values, one file per frame:
# out/tensors/tensor-00000.bin ... (640*640*3 float32, NCHW, RGB, 0..1 by default; dtype=uint8,
# int8 or float16 and channels=1 change the element type and the channel count).
#   pipelines/dump-tensors.sh [clip] [cudatensorize properties...]
set -euo pipefail
source "$(dirname "$0")/env.sh"
FILE=${1:-$CLIP}; shift || true
need_file "$FILE"
need_props "$@"
need_built
mkdir -p "$OUTDIR/tensors"
run_launch -e filesrc location="$FILE" ! qtdemux ! h264parse ! $H264DEC ! cudatensorize "$@" ! \
  multifilesink location="$OUTDIR/tensors/tensor-%05d.bin"
ls "$OUTDIR/tensors" | wc -l | xargs echo "tensors written:"
