#!/usr/bin/env bash
# (3) Every setup error exits 2 with a message that says what is wrong.
source "$(dirname "$0")/common.sh"
copy() { rm -rf "$TMP/$1"; cp -r "$GOLDEN" "$TMP/$1"; echo "$TMP/$1"; }

expect 2 "missing clip" -p "clip not found: $TMP/nope.mp4" -- "$TOOL" check --clip "$TMP/nope.mp4" --golden "$GOLDEN"
head -c 20000 /dev/urandom >"$TMP/noise.mp4"
expect 2 "clip that does not decode" -p "the clip does not decode?" -p "qtdemux" -- \
  "$TOOL" check --clip "$TMP/noise.mp4" --golden "$GOLDEN"
: >"$TMP/empty.mp4"
expect 2 "empty clip" -p "decode" -- "$TOOL" record --clip "$TMP/empty.mp4" --pipeline "$PIPELINE" --out "$TMP/x"
expect 2 "pipeline that does not parse" -p "the pipeline does not parse" -p "nosuchelement" -- \
  "$TOOL" check --clip "$CLIP" --golden "$GOLDEN" --pipeline "filesrc location={clip} ! nosuchelement ! appsink name=tensor"
expect 2 "pipeline syntax error" -p "the pipeline does not parse" -- \
  "$TOOL" record --clip "$CLIP" --out "$TMP/x" --pipeline "filesrc location={clip} ! ! appsink name=tensor"
expect 2 "pipeline without {clip}" -p "no {clip} placeholder" -- \
  "$TOOL" record --clip "$CLIP" --out "$TMP/x" --pipeline "videotestsrc ! appsink name=tensor"
expect 2 "pipeline without appsink" -p "has no appsink" -- \
  "$TOOL" record --clip "$CLIP" --out "$TMP/x" --pipeline "filesrc location={clip} ! fakesink"
check '[ ! -e "$TMP/x" ]' "failed records leave nothing behind"

# a golden recorded with other element settings: the property is named, the clip is not played
expect 2 "golden with another element setting" \
  -p "element cudatemplatematch0 (cudatemplatematch) property 'threshold': golden '0.5', this run '0.59999999999999998'" \
  -p "(not played)" -p "re-record" -- \
  "$TOOL" check --clip "$CLIP" --golden "$GOLDEN" --pipeline "${PIPELINE/threshold=0.5/threshold=0.6}"
# a golden recorded with other caps: the caps field is named
g=$(copy caps)
sed -i 's|dimensions=(string)64:64:3:1, framerate=(fraction)25/3|dimensions=(string)64:64:3:1, framerate=(fraction)30/1|' \
  "$g/manifest.json"
expect 2 "golden with other caps" \
  -p "sink 'tensor' caps field 'framerate': golden '30/1', this run '25/3'" -- \
  "$TOOL" check --clip "$CLIP" --golden "$g"
# other dimensions in the manifest alone: the golden contradicts its own frames
g=$(copy dims)
sed -i 's/dimensions=(string)64:64:3:1/dimensions=(string)32:32:3:1/' "$g/manifest.json"
expect 2 "golden whose caps contradict its frames" \
  -p "field \"bytes\" is 49152 but the manifest's field \"caps\"" -p "makes 12288 bytes a frame" -- \
  "$TOOL" check --clip "$CLIP" --golden "$g"
# frame counts: the golden is shorter / the run is shorter; the frames both have are reported
g=$(copy short)
$PERTURB "$g" truncate 25
expect 2 "golden shorter than the run" \
  -p "frame count differs for sink 'tensor': golden has 25 frames, this run has 31" \
  -p "frames 25..30: only in this run" -p "25 frames compared, 25 identical, 0 failing" -- \
  "$TOOL" check --clip "$CLIP" --golden "$g"
expect 2 "run shorter than the golden" \
  -p "frame count differs for sink 'matches': golden has 31 frames, this run has 20" \
  -p "only in golden" -- \
  "$TOOL" check --clip "$CLIP" --golden "$GOLDEN" --pipeline "${PIPELINE/avdec_h264 !/avdec_h264 ! identity eos-after=20 !}"
# missing / corrupt golden files
expect 2 "golden directory missing" -p "no such directory" -- "$TOOL" check --clip "$CLIP" --golden "$TMP/none"
g=$(copy nomanifest); rm "$g/manifest.json"
expect 2 "manifest.json missing" -p "manifest.json: missing" -- "$TOOL" check --clip "$CLIP" --golden "$g"
g=$(copy badmanifest); echo '{"layout": 1, "frames": ' >"$g/manifest.json"
expect 2 "manifest.json corrupt" -p "manifest.json: corrupt" -- "$TOOL" check --clip "$CLIP" --golden "$g"
g=$(copy noframes); rm "$g/frames.jsonl"
expect 2 "frames.jsonl missing" -p "frames.jsonl: missing" -- "$TOOL" check --clip "$CLIP" --golden "$g"
g=$(copy badframes); sed -i '3s/.*/{"frame":2,"tensor":{"bytes":"many"}}/' "$g/frames.jsonl"
expect 2 "frames.jsonl corrupt" -p "frames.jsonl line 3: corrupt" -- "$TOOL" check --clip "$CLIP" --golden "$g"
g=$(copy notensor); rm "$g/tensors/tensor-00004.f32"
expect 2 "tensor file missing" -p "tensor-00004.f32: missing" -- "$TOOL" check --clip "$CLIP" --golden "$g"
g=$(copy shorttensor); truncate -s 100 "$g/tensors/tensor-00004.f32"
expect 2 "tensor file truncated" -p "tensor-00004.f32: corrupt: 100 bytes" -- "$TOOL" check --clip "$CLIP" --golden "$g"
g=$(copy flipped); printf '\x55' | dd of="$g/tensors/tensor-00009.f32" bs=1 seek=1000 conv=notrunc 2>/dev/null
expect 2 "tensor file altered in place" -p "tensor-00009.f32: corrupt: its SHA-256 differs" -- \
  "$TOOL" check --clip "$CLIP" --golden "$g"
expect 2 "compare with a corrupt set" -p "B: " -p "manifest.json: missing" -- "$TOOL" compare "$GOLDEN" "$TMP/nomanifest"
# usage
expect 2 "unknown option" -p "unknown option --frobnicate" -- "$TOOL" check --clip "$CLIP" --golden "$GOLDEN" --frobnicate
expect 2 "bad tolerance" -p "--tensor-tol close" -- "$TOOL" check --clip "$CLIP" --golden "$GOLDEN" --tensor-tol close
expect 2 "bad position tolerance" -p "--match-pos-tol" -- "$TOOL" compare "$GOLDEN" "$GOLDEN" --match-pos-tol -1
expect 2 "unknown command" -p "unknown command" -- "$TOOL" frobnicate
expect 2 "record without --out" -p "--out" -- "$TOOL" record --clip "$CLIP" --pipeline "$PIPELINE"
mkdir -p "$TMP/occupied" && touch "$TMP/occupied/precious.txt"
expect 2 "record refuses a directory that is not a recording" -p "refusing to overwrite" -- \
  "$TOOL" record --clip "$CLIP" --pipeline "$PIPELINE" --out "$TMP/occupied"
check '[ -f "$TMP/occupied/precious.txt" ]' "the directory is left alone"
finish
