#!/usr/bin/env bash
# Integer and gray tensors (issue 12 item 5): a uint8 gray recording of the clip checks against a
# second run exactly; one value changed by 3 levels fails naming the frame, with the difference in
# the tensor's own integer units, and passes with max-abs=3; the HTML report draws the tensor gray,
# uint8's pixels as they are (the letterbox in the pad value). An int8 NHWC colour recording
# round-trips too.
source "$(dirname "$0")/common.sh"
CHECK_HTML="python3 $ROOT/tests/regress/check_html_report.py"
tensorize() { echo "filesrc location={clip} ! qtdemux ! h264parse ! avdec_h264 ! cudatensorize backend=cpu width=32 height=32 $1 ! appsink name=tensor"; }
GRAY=$(tensorize "dtype=uint8 channels=1")

expect 0 "record a uint8 gray clip" -p "recorded 31 frames" -p "types=(string)uint8" \
  -p "dimensions=(string)32:32:1:1" -- "$TOOL" record --clip "$CLIP" --pipeline "$GRAY" --out "$TMP/g"
check "python3 - '$TMP/g' <<'EOF2'
import json, os, sys
d = sys.argv[1]
frames = [json.loads(l) for l in open(os.path.join(d, 'frames.jsonl'))]
sink = [s for s in json.load(open(os.path.join(d, 'manifest.json')))['sinks'] if s['name'] == 'tensor'][0]
t = frames[0]['tensor']
# 768x576 letterboxed into 32x32: 24 rows of image between rows of the pad value 114
ok = (sink['dtype'] == 'uint8' and t['bytes'] == 32 * 32 and t['file'].endswith('.u8')
      and os.path.getsize(os.path.join(d, t['file'])) == 32 * 32 and t['max'] <= 255 and t['min'] >= 0
      and open(os.path.join(d, t['file']), 'rb').read()[0] == 114)
sys.exit(0 if ok else 1)
EOF2" "one byte a pixel, in a .u8 file, the pad value in the letterbox"
expect 0 "the gray recording checks against a second run, exactly" -p "RESULT: PASS: 31 frames" -- \
  "$TOOL" check --clip "$CLIP" --golden "$TMP/g"

cp -r "$TMP/g" "$TMP/p"
# element 16 * 32 + 10: pixel (10, 16), inside the image
$PERTURB "$TMP/p" tensor tensor 5 522 3
expect 1 "a value 3 levels off fails, in integer units" -p "first failing frame: 5" \
  -p "max abs diff 3" -p "RESULT: REGRESSION: 1 of 31 frames fail" -- \
  "$TOOL" check --clip "$CLIP" --golden "$TMP/p" --report "$TMP/fail.txt" --html "$TMP/html"
expect 0 "max-abs=3 lets it through" -p "RESULT: PASS: 31 frames" -- \
  "$TOOL" check --clip "$CLIP" --golden "$TMP/p" --tensor-tol max-abs=3
expect 1 "max-abs=2 does not" -p "first failing frame: 5" -- \
  "$TOOL" check --clip "$CLIP" --golden "$TMP/p" --tensor-tol max-abs=2
# the golden's (changed) value at pixel (10, 16), drawn as it is on all three colours
V=$(python3 -c 'import json,sys; f=[json.loads(l) for l in open(sys.argv[1]+"/frames.jsonl")][5]["tensor"]["file"]; print(open(sys.argv[1]+"/"+f,"rb").read()[522])' "$TMP/p")
expect 0 "the HTML report draws the gray tensor (the pad value in the letterbox) and the changed pixel" -- \
  $CHECK_HTML "$TMP/html" "$TMP/fail.txt" --pixel frame-00005-tensor-ref.png 0 0 114,114,114 \
  --pixel frame-00005-tensor-ref.png 10 16 "$V,$V,$V" \
  --pixel frame-00005-tensor-diff.png 10 16 255,255,170 --pixel frame-00005-tensor-diff.png 0 0 0,0,0

INT8=$(tensorize "dtype=int8 layout=nhwc")
expect 0 "record an int8 NHWC clip" -p "recorded 31 frames" -p "types=(string)int8" \
  -p "dimensions=(string)3:32:32:1" -- "$TOOL" record --clip "$CLIP" --pipeline "$INT8" --out "$TMP/i"
expect 0 "the int8 recording checks against a second run, exactly" -p "RESULT: PASS: 31 frames" -- \
  "$TOOL" check --clip "$CLIP" --golden "$TMP/i"
cp -r "$TMP/i" "$TMP/q"
$PERTURB "$TMP/q" tensor tensor 3 1600 -1
expect 1 "an int8 value one step off fails exactly" -p "first failing frame: 3" -p "max abs diff 1" -- \
  "$TOOL" compare "$TMP/i" "$TMP/q" --html "$TMP/html-i" --report "$TMP/fail-i.txt"
expect 0 "the HTML report of int8 draws pixel - 128 back: the pad value in the letterbox" -- \
  $CHECK_HTML "$TMP/html-i" "$TMP/fail-i.txt" --pixel frame-00003-tensor-ref.png 0 0 114,114,114
finish
