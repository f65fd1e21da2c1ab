#!/usr/bin/env bash
# A multi-camera batch of regions: three cameras (the clip twice, each with its own stand-in
# detector, and a test pattern's ball) into one cudatensorbatch with roi-meta on every pad,
# batch-size 3 (one slot a pad at least), so that a batch window of five detections gives two
# tensors, the second starting with the second camera's region 0. Recorded as one frame a window (the meta's tensor index, not the
# regions, says which tensors belong together) with, per slot, the camera (source pad), region
# index and id, transform and bytes; checked against itself; then each of those fields changed
# (another region margin on one camera, cameras swapped between pads, a camera on another pad,
# an edited region id) fails naming the sink, the tensor, the slot and the field.
source "$(dirname "$0")/common.sh"
DEC="filesrc location={clip} ! qtdemux ! h264parse ! avdec_h264"
PEOPLE='cudatemplatematch backend=cpu template-rect="<380,200,48,64>" search-region="<300,150,300,150>" threshold=0.5 max-matches=3 draw=false'
VAN='cudatemplatematch backend=cpu template-rect="<650,40,72,56>" search-region="<560,0,208,160>" threshold=0.7 draw=false'
BALL_SRC='videotestsrc num-buffers=31 pattern=ball ! video/x-raw,format=BGR,width=640,height=360,framerate=10/1'
BALL='cudatemplatematch backend=cpu template-rect="<300,160,40,40>" threshold=0.7 draw=false'
BATCH='cudatensorbatch name=b backend=cpu width=16 height=16 batch-size=3 resize-mode=stretch roi-margin=0.1'
PADS='sink_0::roi-meta=true sink_1::roi-meta=true sink_2::roi-meta=true'
# cameras PAD_PEOPLE PAD_BALL PAD_VAN [PADS]: the three cameras on these pads of b
cameras() {
  echo "$BATCH ${4:-$PADS} ! appsink name=tensor $DEC ! $PEOPLE ! queue ! b.$1 $BALL_SRC ! $BALL ! queue ! b.$2 $DEC ! $VAN ! queue ! b.$3"
}
GOLDEN_P=$(cameras sink_0 sink_1 sink_2)

expect 0 "record the three cameras' regions" -p "recorded 32 frames" -p "dimensions=(string)16:16:3:3" -- \
  "$TOOL" record --clip "$CLIP" --pipeline "$GOLDEN_P" --out "$TMP/g"
# 32 windows (the test pattern's last frame at 3.0 s alone, the clip's at 3.6 s); the window at
# 0.5 s: people 3, ball 1, van 1 -> 2 tensors, 6 slots
check "python3 - '$TMP/g' <<'EOF'
import json, os, sys
frames = [json.loads(l)['tensor'] for l in open(os.path.join(sys.argv[1], 'frames.jsonl'))]
bad = []
for i, f in enumerate(frames):
    s = f['slots']
    filled = [x for x in s if not x['empty']]
    cams = [x['source_pad'] for x in filled]
    if cams != sorted(cams) or f.get('tensors', 1) * 3 != len(s):
        bad.append((i, cams, f.get('tensors')))
    for pad in set(cams):
        if [x['region_index'] for x in filled if x['source_pad'] == pad] != list(range(cams.count(pad))):
            bad.append((i, pad, 'regions'))
    if any(not all(k in x for k in ('region_id', 'transform', 'source_rect', 'sha256')) for x in s):
        bad.append((i, 'fields'))
f = frames[5]
ok = (not bad and f['tensors'] == 2 and sum(g.get('tensors', 1) == 2 for g in frames) >= 30 and [x.get('source_pad') for x in f['slots']] ==
      ['sink_0', 'sink_0', 'sink_0', 'sink_1', 'sink_2', None]
      and [x['region_index'] for x in f['slots']] == [0, 1, 2, 0, 0, -1]
      and f['slots'][3]['transform']['source'] == [640, 360] and f['slots'][4]['transform']['source'] == [768, 576])
print(bad[:5], [(x.get('source_pad'), x['region_index']) for x in f['slots']])
sys.exit(0 if ok else 1)
EOF" "each frame is one batch window: its tensors' slots, camera by camera, each camera's regions from 0"
expect 0 "the cameras' batch checks against a second run" -p "RESULT: PASS: 32 frames" \
  -p "tensor 1 slot 0: 31 frames compared, 0 failing" -- \
  "$TOOL" check --clip "$CLIP" --golden "$TMP/g" --report "$TMP/pass.txt"
check 'grep -q "tensor 1 slot 0 (region 0) (sink_1) *ok *identical" "$TMP/pass.txt"' \
  "the report's slot rows name the camera"

# another region margin on the ball's camera: its slot's transform and bytes
expect 1 "a camera's region margin changed: its slot's transform and bytes, named" \
  -p "first failing frame: 0" \
  -p "sink 'tensor': tensor 1 slot 0 (region 0) (sink_1): slot transform differs by" \
  -p "(src_to_tensor, tensor_to_src, source_rect); tensor differs" \
  -p "tensor 0 slot 1: 32 frames compared, 0 failing" -- \
  "$TOOL" check --clip "$CLIP" --golden "$TMP/g" --report "$TMP/margin.txt" \
  --pipeline "$(cameras sink_0 sink_1 sink_2 "$PADS sink_1::roi-margin=0.3")"
check '! grep -q "(sink_0) *FAIL\|(sink_2) *FAIL" "$TMP/margin.txt"' "the other cameras' slots pass"

# the people's and the van's cameras swapped between pads: the van's region now comes first
expect 1 "cameras swapped: the camera of each slot after the first, named" \
  -p "tensor 0 slot 0 (region 0) (sink_0): slot transform differs by" \
  -p "tensor 0 slot 1 (region 1) (sink_0): camera (source pad) 'sink_0' in golden, 'sink_1' in this run; region index 1 in golden, 0 in this run" -- \
  "$TOOL" check --clip "$CLIP" --golden "$TMP/g" --report "$TMP/swap.txt" --pipeline "$(cameras sink_2 sink_1 sink_0)"

# the van's camera on pad sink_3 instead of sink_2: the same pixels, another camera
expect 1 "a camera on another pad: only the camera field differs" \
  -p "tensor 1 slot 1 (region 0) (sink_2): camera (source pad) 'sink_2' in golden, 'sink_3' in this run" \
  -p "RESULT: REGRESSION: 31 of 32 frames fail" -- \
  "$TOOL" check --clip "$CLIP" --golden "$TMP/g" --report "$TMP/pad.txt" \
  --pipeline "$(cameras sink_0 sink_1 sink_3 'sink_0::roi-meta=true sink_1::roi-meta=true sink_3::roi-meta=true')"
check 'grep -q "(sink_2) *FAIL *identical" "$TMP/pad.txt" && ! grep "(sink_2) *FAIL" "$TMP/pad.txt" | grep -qv "FAIL *identical"' \
  "its bytes are identical, only the camera fails"

# a region id edited in the recording: compare names it
cp -r "$TMP/g" "$TMP/id"
python3 - "$TMP/id" <<'PY'
import json, os, sys
p = os.path.join(sys.argv[1], 'frames.jsonl')
frames = [json.loads(l) for l in open(p)]
frames[3]['tensor']['slots'][4]['region_id'] = 7
open(p, 'w').write(''.join(json.dumps(f, separators=(',', ':')) + '\n' for f in frames))
PY
expect 1 "an edited region id fails naming it" -p "first failing frame: 3" \
  -p "tensor 1 slot 1 (region 0) (sink_2): region id 0 in A, 7 in B" -- "$TOOL" compare "$TMP/g" "$TMP/id"
finish
