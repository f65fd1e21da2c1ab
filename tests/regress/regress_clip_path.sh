#!/usr/bin/env bash
# Clip paths reach filesrc byte for byte, whatever they hold: non-ASCII (UTF-8 or not), spaces,
# quotes, backslashes ({clip} is set as a property value, not written into the description).
source "$(dirname "$0")/common.sh"
check_clip() {  # check_clip 'what' PATH [ARGS]: checks a copy of the clip at PATH against the golden
  local what=$1 path=$2; shift 2
  cp "$CLIP" "$path"
  expect 0 "$what" -p "RESULT: PASS: 31 frames" -- "$TOOL" check --clip "$path" --golden "$GOLDEN" "$@"
}
mkdir -p "$TMP/dir ü 日本"
check_clip "UTF-8 names (dir ü 日本/clip_é.mp4)" "$TMP/dir ü 日本/clip_é.mp4"
LATIN1=$(printf '%s/clip_\xe9.mp4' "$TMP")
check_clip "a file name that is not UTF-8 (Latin-1 e-acute)" "$LATIN1"
check_clip "quotes, backslash, spaces, gst-launch syntax" "$TMP/a \"b\" c\\d 'e' location=y ! fakesink.mp4"
# {clip} already quoted in the description
QUOTED=${PIPELINE/'location={clip}'/'location="{clip}"'}
check '[ "$QUOTED" != "$PIPELINE" ]' "the test pipeline quotes {clip}"
check_clip "quoted {clip}, a file name that is not UTF-8" "$LATIN1" --pipeline "$QUOTED"
# record from a Latin-1 name: the manifest is still valid UTF-8 JSON, the clip named in it
expect 0 "record from a file name that is not UTF-8" -p "recorded 31 frames" -- \
  "$TOOL" record --clip "$LATIN1" --pipeline "$PIPELINE" --out "$TMP/rec"
check 'python3 -c "import json,sys; m=json.load(open(sys.argv[1], encoding=\"utf-8\")); sys.exit(m[\"clip\"] != \"clip_\ufffd.mp4\")" "$TMP/rec/manifest.json"' \
  "the manifest names the clip in UTF-8 (U+FFFD for the byte that is not)"
check 'grep -q "\"location\": \"{clip}\"" "$TMP/rec/manifest.json"' "the location property is recorded as {clip}"
expect 0 "the recording reads back and equals the golden" -p "RESULT: PASS" -- "$TOOL" compare "$GOLDEN" "$TMP/rec"
expect 0 "checked against its own clip: no note about another clip name" -p "RESULT: PASS" -- \
  "$TOOL" check --clip "$LATIN1" --golden "$TMP/rec"
check '! grep -q "recorded from a clip named" "$LAST"' "same clip name"
# {clip} must be (in) a property value
expect 2 "{clip} only as an element name" -p "{clip} is in no element property" -- \
  "$TOOL" record --clip "$CLIP" --out "$TMP/x" --pipeline "filesrc location=/nonexistent name={clip} ! appsink name=tensor"
finish
