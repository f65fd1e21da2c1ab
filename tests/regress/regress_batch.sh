#!/usr/bin/env bash
# Batched tensors (issue 10): cudatensorize with 3 regions and batch-size 2 gives two tensors a
# frame (the last slot empty). They are recorded as one frame with its per-slot meta, checked
# against themselves, and a change in one slot fails naming that frame and slot; a recording
# whose batch contradicts itself is refused.
source "$(dirname "$0")/common.sh"
ROIS='rois="<<0,0,300,200>,<400,100,200,300>,<100,300,250,250>>"'
BATCHED="filesrc location={clip} ! qtdemux ! h264parse ! avdec_h264 ! cudatensorize backend=cpu width=32 height=32 batch-size=2 $ROIS ! appsink name=tensor"
# element INDEX of slot SLOT (of the frame's slots one after the other): 3 x 32 x 32 values a slot
slot_element() { echo $(($1 * 3 * 32 * 32 + $2)); }

expect 0 "record a batched clip" -p "recorded 31 frames" -p "dimensions=(string)32:32:3:2" -- \
  "$TOOL" record --clip "$CLIP" --pipeline "$BATCHED" --out "$TMP/b"
check "python3 - '$TMP/b' <<'EOF'
import json, os, sys
d = sys.argv[1]
frames = [json.loads(l) for l in open(os.path.join(d, 'frames.jsonl'))]
m = json.load(open(os.path.join(d, 'manifest.json')))
t = frames[0]['tensor']
s = t['slots']
ok = (len(frames) == 31 and m['sinks'][0]['batch'] == 2 and t['tensors'] == 2 and len(s) == 4
      and [x['region_index'] for x in s] == [0, 1, 2, -1] and [x['empty'] for x in s] == [False, False, False, True]
      and [(x['tensor'], x['slot']) for x in s] == [(0, 0), (0, 1), (1, 0), (1, 1)]
      and s[2]['source_rect'] == [100, 300, 250, 250] and t['bytes'] == 2 * 2 * 3 * 32 * 32 * 4
      and os.path.getsize(os.path.join(d, t['file'])) == t['bytes'])
sys.exit(0 if ok else 1)
EOF" "31 frames of two tensors each, with every slot's meta (region, empty, source rect)"
expect 0 "the batched recording checks against a second run" -p "RESULT: PASS: 31 frames" \
  -p "tensor 1 slot 1: 31 frames compared, 0 failing, 31 empty" -- \
  "$TOOL" check --clip "$CLIP" --golden "$TMP/b" --report "$TMP/pass.txt"
check 'grep -q "tensor 1 slot 0 (region 2) *ok *identical" "$TMP/pass.txt"' "the full report has a row per slot"

# one slot changed: that frame and that slot fail, the others pass
cp -r "$TMP/b" "$TMP/p"
$PERTURB "$TMP/p" tensor tensor 5 "$(slot_element 2 100)" 0.25
expect 1 "a changed slot fails naming the frame and the slot" \
  -p "first failing frame: 5" -p "tensor 1 slot 0 (region 2): tensor differs (max abs diff 0.25" \
  -p "RESULT: REGRESSION: 1 of 31 frames fail" -p "tensor 1 slot 0: 31 frames compared, 1 failing" \
  -p "tensor 0 slot 0: 31 frames compared, 0 failing" -- \
  "$TOOL" check --clip "$CLIP" --golden "$TMP/p" --report "$TMP/fail.txt" --html "$TMP/html"
check 'grep -q "tensor 1 slot 0 (region 2) *FAIL *max-abs 0.25 (element 100)" "$TMP/fail.txt"' \
  "the slot's own figures, element counted inside the slot"
check 'grep -q "tensor 0 slot 1 (region 1) *ok *identical" "$TMP/fail.txt"' "the other slots of that frame pass"
check 'grep -q "<table class=\"slots\">" "$TMP/html/index.html" && grep -q "tensor 1 slot 0 (region 2) (pictured)" "$TMP/html/index.html"' \
  "the HTML report has the slot table and draws the failing slot"
# element 100 of the slot is pixel (4, 3) of its channel 0: the top of the heat map's scale there
expect 0 "the HTML report of a batch: well-formed, its slot rows are the text report's, the heat map is the slot's" \
  -p "4 slot rows compared" -- \
  python3 "$ROOT/tests/regress/check_html_report.py" "$TMP/html" "$TMP/fail.txt" \
  --pixel frame-00005-tensor-diff.png 4 3 255,255,170 --pixel frame-00005-tensor-diff.png 0 0 0,0,0
expect 1 "compare names the slot too" -p "tensor 1 slot 0 (region 2)" -p "first failing frame: 5" -- \
  "$TOOL" compare "$TMP/b" "$TMP/p"
expect 0 "record the batch digest-only" -- "$TOOL" record --clip "$CLIP" --pipeline "$BATCHED" --out "$TMP/d" --store digest
expect 1 "digest-only: the slot digests name the slot" -p "tensor 1 slot 0 (region 2): SHA-256 differs" \
  -p "first failing frame: 5" -- "$TOOL" compare "$TMP/d" "$TMP/p"

# the empty slot: its emptiness flag and its padding are compared
cp -r "$TMP/b" "$TMP/e"
$PERTURB "$TMP/e" tensor tensor 7 "$(slot_element 3 0)" 0.5
expect 1 "a changed pad value in the empty slot fails" -p "tensor 1 slot 1 (empty): tensor differs" \
  -p "first failing frame: 7" -- "$TOOL" compare "$TMP/b" "$TMP/e"
python3 - "$TMP/e" <<'EOF'
import json, os, sys
p = os.path.join(sys.argv[1], 'frames.jsonl')
frames = [json.loads(l) for l in open(p)]
frames[9]['tensor']['slots'][3]['empty'] = False
open(p, 'w').write(''.join(json.dumps(f, separators=(',', ':')) + '\n' for f in frames))
EOF
expect 1 "an emptiness flag that differs fails" -p "tensor 1 slot 1: filled in A, empty in B" -- \
  "$TOOL" compare "$TMP/e" "$TMP/b"

# a run whose frames give another number of tensors (2 regions: one tensor) is not cut short
expect 1 "fewer tensors a frame fail every frame, none dropped" \
  -p "the frame gave 2 tensors in golden, 1 in this run" -p "RESULT: REGRESSION: 31 of 31 frames fail" -- \
  "$TOOL" check --clip "$CLIP" --golden "$TMP/b" --allow-setting-changes \
  --pipeline "${BATCHED/,<100,300,250,250>>/>}"

# a recording whose batch contradicts itself is refused
cp -r "$TMP/b" "$TMP/c1"
$PERTURB "$TMP/c1" sink-int tensor batch 3
expect 2 "a manifest batch that contradicts its caps" \
  -p "field \"batch\" is 3 but its field \"caps\"" -p "makes it 2" -p "contradicts itself" -- \
  "$TOOL" check --clip "$CLIP" --golden "$TMP/c1"
cp -r "$TMP/b" "$TMP/c2"
sed -i 's/32:32:3:2/32:32:3:3/' "$TMP/c2/manifest.json"
$PERTURB "$TMP/c2" sink-int tensor batch 3
expect 2 "caps of batch 3 against frames of batch 2" \
  -p "field \"bytes\" is 49152 but the manifest's field \"caps\" makes 36864 bytes a tensor, and the frame has 2 tensors" -- \
  "$TOOL" compare "$TMP/c2" "$TMP/b"
cp -r "$TMP/b" "$TMP/c3"
python3 - "$TMP/c3" <<'EOF'
import json, os, sys
p = os.path.join(sys.argv[1], 'frames.jsonl')
frames = [json.loads(l) for l in open(p)]
del frames[4]['tensor']['slots'][3]
open(p, 'w').write(''.join(json.dumps(f, separators=(',', ':')) + '\n' for f in frames))
EOF
expect 2 "a frame with a slot missing" -p "frames.jsonl line 5: corrupt" \
  -p "field \"slots\" has 3 slots but the frame has 2 tensors of batch 2" -- "$TOOL" compare "$TMP/c3" "$TMP/b"

# roi-meta: the matcher's boxes as regions, as many as it finds (frame 1: two, one tensor;
# the others three, two tensors)
ROI_META="filesrc location={clip} ! qtdemux ! h264parse ! avdec_h264 ! cudatemplatematch backend=cpu template-rect=\"<496,154,40,80>\" max-matches=3 threshold=0.5 draw=false ! cudatensorize backend=cpu width=16 height=32 resize-mode=stretch roi-meta=true batch-size=2 ! appsink name=tensor"
expect 0 "record a batch of the matcher's boxes (roi-meta)" -p "recorded 31 frames" -- \
  "$TOOL" record --clip "$CLIP" --pipeline "$ROI_META" --out "$TMP/m"
check "python3 - '$TMP/m' <<'EOF'
import json, os, sys
frames = [json.loads(l)['tensor'] for l in open(os.path.join(sys.argv[1], 'frames.jsonl'))]
ok = (frames[1].get('tensors', 1) == 1 and len(frames[1]['slots']) == 2 and frames[0]['tensors'] == 2
      and [s['region_index'] for s in frames[0]['slots']] == [0, 1, 2, -1])
sys.exit(0 if ok else 1)
EOF" "frames with two and three regions: one and two tensors"
expect 0 "the roi-meta batch checks against a second run" -p "RESULT: PASS: 31 frames" \
  -p "tensor 1 slot 0: 30 frames compared" -- "$TOOL" check --clip "$CLIP" --golden "$TMP/m"

# NHWC (3:W:H:B) batches the same way
expect 0 "record an NHWC batch" -p "dimensions=(string)3:32:32:2" -- \
  "$TOOL" record --clip "$CLIP" --pipeline "${BATCHED/batch-size=2/batch-size=2 layout=nhwc}" --out "$TMP/n"
expect 0 "an NHWC batch checks against a second run" -p "RESULT: PASS: 31 frames" -p "tensor 1 slot 1: 31 frames compared" -- \
  "$TOOL" check --clip "$CLIP" --golden "$TMP/n"
finish
