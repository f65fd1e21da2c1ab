#!/usr/bin/env bash
# record never loses a recording (two records on one --out at once, a recording copied into
# --out while a record runs); a full golden whose slot digest contradicts its tensor file is
# refused; a clip path the system cannot use says the system's reason.
source "$(dirname "$0")/common.sh"
LIGHT="filesrc location={clip} ! qtdemux ! h264parse ! avdec_h264 ! cudatensorize backend=cpu width=32 height=32 ! appsink name=tensor"
# ~100 ms a frame: a record that lasts about 3 s, long enough to race with
SLOW=${LIGHT/avdec_h264/avdec_h264 ! identity sleep-time=100000}

# two records started together on the same --out: one wins, the other refuses; one recording
"$TOOL" record --clip "$CLIP" --pipeline "$SLOW" --out "$TMP/both" --store digest >"$TMP/r1.txt" 2>&1 &
p1=$!
"$TOOL" record --clip "$CLIP" --pipeline "$SLOW" --out "$TMP/both" --store digest >"$TMP/r2.txt" 2>&1 &
p2=$!
wait $p1; rc1=$?
wait $p2; rc2=$?
check '[ $((rc1 + rc2)) = 2 ] && [ $((rc1 * rc2)) = 0 ]' "two records on one --out: one exits 0, the other 2 ($rc1, $rc2)"
check 'grep -q "appeared while recording" "$TMP/r1.txt" "$TMP/r2.txt"' "the loser says the recording appeared meanwhile"
check '[ $(grep -l "^recorded 31 frames" "$TMP/r1.txt" "$TMP/r2.txt" | wc -l) = 1 ]' "only one says it recorded"
expect 0 "the recording that won is whole" -p "RESULT: PASS: 31 frames" -- "$TOOL" check --clip "$CLIP" --golden "$TMP/both"
check '[ -z "$(ls -d "$TMP"/both.* 2>/dev/null)" ]' "nothing left behind"

# a recording copied into --out while a record runs is left as it was
"$TOOL" record --clip "$CLIP" --pipeline "$SLOW" --out "$TMP/copied" --store digest >"$TMP/r3.txt" 2>&1 &
p3=$!
for _ in $(seq 100); do ls -d "$TMP"/copied.recording-* >/dev/null 2>&1 && break; sleep 0.05; done
cp -r "$GOLDEN" "$TMP/copied" && touch "$TMP/copied/marker"
wait $p3; rc3=$?
check '[ $rc3 = 2 ]' "record exits 2 when --out appeared meanwhile (exit $rc3)"
check 'grep -q "appeared while recording" "$TMP/r3.txt"' "and says so"
check '[ -f "$TMP/copied/marker" ] && [ -d "$TMP/copied/tensors" ]' "the copied recording is left as it was"
check '[ -z "$(ls -d "$TMP"/copied.* 2>/dev/null)" ]' "nothing left behind"
# --force replaces it (only once the new recording is complete)
expect 0 "--force replaces it" -p "recorded 31 frames" -- \
  "$TOOL" record --clip "$CLIP" --pipeline "$LIGHT" --out "$TMP/copied" --store digest --force
check '[ ! -e "$TMP/copied/marker" ] && [ -z "$(ls -d "$TMP"/copied.* 2>/dev/null)" ]' "replaced, nothing left behind"

# a full batched golden with one slot's sha256 edited: a setup error, not a pass
ROIS='rois="<<0,0,300,200>,<400,100,200,300>,<100,300,250,250>>"'
BATCHED="filesrc location={clip} ! qtdemux ! h264parse ! avdec_h264 ! cudatensorize backend=cpu width=32 height=32 batch-size=2 $ROIS ! appsink name=tensor"
expect 0 "record a batched golden" -- "$TOOL" record --clip "$CLIP" --pipeline "$BATCHED" --out "$TMP/b"
expect 0 "and a digest recording of it" -- "$TOOL" record --clip "$CLIP" --pipeline "$BATCHED" --out "$TMP/bd" --store digest
python3 - "$TMP/b/frames.jsonl" <<'PY'
import json, sys
p = sys.argv[1]
frames = [json.loads(l) for l in open(p)]
s = frames[4]["tensor"]["slots"][1]
s["sha256"] = ("0" if s["sha256"][0] != "0" else "1") + s["sha256"][1:]
open(p, "w").write("".join(json.dumps(f, separators=(",", ":")) + "\n" for f in frames))
PY
expect 2 "check refuses a golden whose slot digest contradicts its tensor file" \
  -p "frames.jsonl line 5: corrupt" -p "slot 1" -p 'field "sha256"' -p "contradicts itself" -- \
  "$TOOL" check --clip "$CLIP" --golden "$TMP/b"
check '! grep -q "RESULT: PASS" "$LAST"' "no PASS for it"
expect 2 "compare refuses it too (no false SHA-256 regression)" -p "A: " -p "contradicts itself" -- \
  "$TOOL" compare "$TMP/b" "$TMP/bd"
check '! grep -q "REGRESSION" "$LAST"' "no REGRESSION for it"
# the frame's own digest edited: caught as before
g=$(copy_golden framesha)
python3 - "$g/frames.jsonl" <<'PY'
import json, sys
p = sys.argv[1]
frames = [json.loads(l) for l in open(p)]
t = frames[2]["tensor"]
t["sha256"] = ("0" if t["sha256"][0] != "0" else "1") + t["sha256"][1:]
open(p, "w").write("".join(json.dumps(f, separators=(",", ":")) + "\n" for f in frames))
PY
expect 2 "a frame digest edited in a full golden" -p "tensor-00002.f32: corrupt" -- \
  "$TOOL" compare "$g" "$GOLDEN"

# clip paths the system refuses: its reason, not "clip not found"
LONG=$TMP/$(printf 'd%.0s' $(seq 250))
LONG=$LONG/$LONG/$LONG/$LONG/$LONG/$LONG/$LONG/$LONG/$LONG/$LONG/$LONG/$LONG/$LONG/$LONG/$LONG/$LONG/$LONG/clip.mp4
expect 2 "a clip path longer than PATH_MAX" -p "File name too long" -- \
  "$TOOL" record --clip "$LONG" --pipeline "$LIGHT" --out "$TMP/long"
check '! grep -q "clip not found" "$LAST"' "not 'clip not found'"
expect 2 "check says it too" -p "File name too long" -- "$TOOL" check --clip "$LONG" --golden "$GOLDEN"
expect 2 "a file name longer than NAME_MAX" -p "File name too long" -- \
  "$TOOL" check --clip "$TMP/$(printf 'n%.0s' $(seq 300)).mp4" --golden "$GOLDEN"
touch "$TMP/file"
expect 2 "a path through a file" -p "Not a directory" -- "$TOOL" check --clip "$TMP/file/clip.mp4" --golden "$GOLDEN"
expect 2 "a missing clip is still 'clip not found'" -p "clip not found" -- \
  "$TOOL" check --clip "$TMP/nope.mp4" --golden "$GOLDEN"
finish
