#!/usr/bin/env bash
# A matches sink (name starting with match or roi) records cudatemplatematch's ROI metas on
# video frames: one with no cudatemplatematch upstream, or one that receives tensors, is a setup
# error (exit 2) that leaves nothing behind; a matcher that legitimately matches nothing in any
# frame still records (an empty list a frame).
source "$(dirname "$0")/common.sh"
HEAD='filesrc location={clip} ! qtdemux ! h264parse ! avdec_h264'
MATCH='cudatemplatematch backend=cpu template-rect="<496,154,40,80>" draw=false'
TENSORIZE='cudatensorize backend=cpu width=64 height=64'

expect 2 "matches sink after cudatensorize, no matcher upstream" \
  -p "appsink 'matches' is a matches sink" -p "no cudatemplatematch is upstream of it" -- \
  "$TOOL" record --clip "$CLIP" --out "$TMP/a" --pipeline "$HEAD ! $TENSORIZE ! appsink name=matches"
check '[ -z "$(ls -A "$TMP" | grep "^a")" ]' "nothing left behind"
# the golden's pipeline with the sinks' names swapped: refused by check before playing
SWAPPED=${PIPELINE/appsink name=tensor/appsink name=TMPNAME}
SWAPPED=${SWAPPED/appsink name=matches/appsink name=tensor}
SWAPPED=${SWAPPED/appsink name=TMPNAME/appsink name=matches}
expect 2 "check with the sinks' names swapped" -p "no cudatemplatematch is upstream" -- \
  "$TOOL" check --clip "$CLIP" --golden "$GOLDEN" --pipeline "$SWAPPED"
expect 2 "roi sink after identity" -p "appsink 'roi'" -p "no cudatemplatematch is upstream" -- \
  "$TOOL" record --clip "$CLIP" --out "$TMP/a" --pipeline "$HEAD ! identity ! appsink name=roi"
# a matcher upstream, but tensors arrive: refused once the caps are known
expect 2 "matches sink after cudatemplatematch ! cudatensorize" \
  -p "sink 'matches' is a matches sink" -p "receives other/tensors" -p "not video frames" -- \
  "$TOOL" record --clip "$CLIP" --out "$TMP/b" --pipeline "$HEAD ! $MATCH ! $TENSORIZE ! appsink name=matches"
check '[ -z "$(ls -A "$TMP" | grep "^b")" ]' "nothing left behind"
check '[ "$(grep -c "receives other/tensors" "$LAST")" -eq 1 ]' "the error is given once"

# legitimately no match in any frame (a search region away from the man, a high threshold)
NOMATCH="$HEAD ! ${MATCH} search-region=\"<0,400,200,176>\" threshold=0.95 ! appsink name=matches"
expect 0 "a matcher that matches nothing still records" -p "recorded 31 frames" -p "matches: 0" -- \
  "$TOOL" record --clip "$CLIP" --out "$TMP/c" --pipeline "$NOMATCH"
check '[ "$(grep -c "\"matches\":\[\]" "$TMP/c/frames.jsonl")" -eq 31 ]' "31 frames with an empty list"
expect 0 "and checks against itself" -p "RESULT: PASS: 31 frames" -- "$TOOL" check --clip "$CLIP" --golden "$TMP/c"
expect 2 "check: tensors at the matches sink" -p "receives other/tensors" -p "RESULT: ERROR" -- \
  "$TOOL" check --clip "$CLIP" --golden "$TMP/c" --allow-setting-changes \
  --pipeline "${NOMATCH/ ! appsink/ ! $TENSORIZE ! appsink}"
check '[ "$(grep -c "receives other/tensors" "$LAST")" -le 2 ]' "said in the errors and the RESULT line only"
# a matcher inside a bin (ghost pads) is found
expect 0 "a matcher inside a bin" -p "recorded 31 frames" -- \
  "$TOOL" record --clip "$CLIP" --out "$TMP/d" --pipeline "$HEAD ! ( queue ! $MATCH ) ! appsink name=roi"
finish
