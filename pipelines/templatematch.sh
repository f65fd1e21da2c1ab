#!/usr/bin/env bash
# Template matching on the shipped street clip: the template is cut from the first frame
# (the parked van), searched in every frame, drawn, and a few frames are written as PNG
# snapshots (out/match-000.png ...). Match messages are printed (-m).
#   pipelines/templatematch.sh [clip] [cudatemplatematch properties...]
set -euo pipefail
source "$(dirname "$0")/env.sh"
FILE=${1:-$CLIP}; shift || true
need_file "$FILE"
need_props "$@"
need_built
PROPS=${*:-template-rect="<650,40,72,56>" threshold=0.7 max-matches=2 thickness=3}
rm -f "$OUTDIR"/match-*.png
if [ "$H264DEC" = nvh264dec ]; then DOWN="cudadownload !"; else DOWN=""; fi
run_launch -m filesrc location="$FILE" ! qtdemux ! h264parse ! $H264DEC ! \
  cudatemplatematch $PROPS ! $DOWN videorate drop-only=true ! video/x-raw,framerate=2/1 ! \
  videoconvert ! pngenc ! multifilesink location="$OUTDIR/match-%03d.png"
grep -o 'template-match, timestamp=(guint64)[0-9]*.*num-matches=(uint)[0-9]*' "$OUTDIR/launch.log" | head -40 || true
ls "$OUTDIR"/match-*.png
