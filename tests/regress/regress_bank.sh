#!/usr/bin/env bash
# A bank of templates (cudatemplatematch templates="man.pgm;sign.pgm;van.pgm", cut from the
# clip's frame 0) is recorded and compared per template: each match keeps its template's label,
# scale, angle and full-search flag; matches pair only within their template; a template whose
# file changed, a moved or rescored match, a match at another scale or angle, found by the other
# search, or a template on one side only, fail naming that template; the others stay quiet. The
# shipped golden, recorded before matches had labels, still checks.
source "$(dirname "$0")/common.sh"

# the clip's luma, frame by frame (what the matcher reads of I420)
gst-launch-1.0 -q filesrc location="$CLIP" ! qtdemux ! h264parse ! avdec_h264 ! video/x-raw,format=I420 ! \
  filesink location="$TMP/frames.i420" || { echo "FAIL: cannot decode the clip"; exit 1; }
# cut FRAME X Y W H FILE: a PGM template of the frame's luma
cut() {
  python3 - "$TMP/frames.i420" "$@" <<'EOF'
import sys
path, frame, x, y, w, h, out = sys.argv[1], *map(int, sys.argv[2:7]), sys.argv[7]
W, H = 768, 576
with open(path, "rb") as f:
    f.seek(frame * W * H * 3 // 2)
    luma = f.read(W * H)
with open(out, "wb") as f:
    f.write(b"P5\n%d %d\n255\n" % (w, h))
    for row in range(y, y + h):
        f.write(luma[row * W + x:row * W + x + w])
EOF
}
mkdir -p "$TMP/t"
cut 0 496 154 40 80 "$TMP/t/man.pgm"    # the man crossing the car park (the shipped golden's template)
cut 0 412 204 34 40 "$TMP/t/sign.pgm"   # the sign on the lamp post
cut 0 652 44 72 52 "$TMP/t/van.pgm"     # the white van
check '[ -s "$TMP/t/man.pgm" ] && [ -s "$TMP/t/sign.pgm" ] && [ -s "$TMP/t/van.pgm" ]' "three templates cut from frame 0"

BANK="$TMP/t/man.pgm;$TMP/t/sign.pgm;$TMP/t/van.pgm"
P="filesrc location={clip} ! qtdemux ! h264parse ! avdec_h264"
P+=" ! cudatemplatematch backend=cpu templates=\"$BANK\" max-matches=2 threshold=0.6 draw=false ! appsink name=matches"
expect 0 "record a bank of three templates" -p "recorded 31 frames" -p "  matches: " -p " (man " -p ", sign " -p ", van " -- \
  "$TOOL" record --clip "$CLIP" --pipeline "$P" --out "$TMP/bank"
# every template matches (somewhere), each match with its label, scale, angle and search
count() { grep -o "\"template\":\"$1\"" "$TMP/bank/frames.jsonl" | wc -l; }
for t in man sign van; do
  check "[ \"\$(count $t)\" -ge 20 ]" "template $t matches in most frames ($(count $t) matches)"
done
check '[ "$(count template-match)" -eq 0 ]' "no match is left unlabelled"
check 'grep -q "\"scale\":1,\"angle\":0,\"full_search\":true}" "$TMP/bank/frames.jsonl"' \
  "matches record scale, angle and full-search"

expect 0 "the bank checks against its own recording" -p "RESULT: PASS: 31 frames" \
  -p "    template 'man': matches golden" -p "    template 'sign': matches golden" -p "    template 'van': matches golden" -- \
  "$TOOL" check --clip "$CLIP" --golden "$TMP/bank"

# one template's file replaced by another patch: its matches change, the others' do not
cp "$TMP/t/sign.pgm" "$TMP/t/sign.orig"
cut 0 640 240 40 80 "$TMP/t/sign.pgm"  # the man walking at the right
expect 1 "the sign template's file replaced" -p "RESULT: REGRESSION" -p "template 'sign'" \
  -p "    template 'man': matches golden" -p "    template 'van': matches golden" -- \
  "$TOOL" check --clip "$CLIP" --golden "$TMP/bank" --html "$TMP/html-sign" --report "$TMP/sign.txt"
check 'grep -q "^    template '"'"'sign'"'"': .*; 31 failing, first frame 0" "$LAST"' "every frame fails for the sign template"
check 'grep -q "^    template '"'"'man'"'"': .*; 0 failing$" "$LAST"' "the man template does not fail"
check 'grep -q "^    template '"'"'van'"'"': .*; 0 failing$" "$LAST"' "the van template does not fail"
check '! grep "<- " "$TMP/sign.txt" | grep -q "template '"'"'man\|template '"'"'van"' "no failing frame names another template"
check 'grep -q "<table class=\"templates\">" "$TMP/html-sign/index.html"' "the HTML report has a table per template"
check 'grep -q "<tr class=\"fail\" data-template=\"sign\" " "$TMP/html-sign/index.html"' "its sign row fails"
check 'grep -q "<tr data-template=\"man\" " "$TMP/html-sign/index.html"' "its man row passes"
expect 0 "the HTML report's template rows agree with the text report" -p "templates: 3 rows compared" -- \
  python3 "$ROOT/tests/regress/check_html_report.py" "$TMP/html-sign" "$TMP/sign.txt"

# compare: two recordings, the second with the replaced file
expect 0 "record with the replaced sign template" -- "$TOOL" record --clip "$CLIP" --pipeline "$P" --out "$TMP/bank2"
cp "$TMP/t/sign.orig" "$TMP/t/sign.pgm"
expect 1 "compare names the changed template" -p "template 'sign'" -p "RESULT: REGRESSION" -- \
  "$TOOL" compare "$TMP/bank" "$TMP/bank2"
check 'grep -q "^    template '"'"'man'"'"': .*; 0 failing$" "$LAST"' "compare: the man template does not fail"

# tracking: after a match each template is searched around it, with a full search every 8
# frames; the recording says which search found each match, and checks against itself
P2="filesrc location={clip} ! qtdemux ! h264parse ! avdec_h264 ! cudatemplatematch backend=cpu"
P2+=" templates=\"$TMP/t/man.pgm;$TMP/t/van.pgm\" track=true full-search-interval=8 max-matches=2 threshold=0.6"
P2+=" draw=false ! appsink name=matches"
expect 0 "record a tracking bank" -p "recorded 31 frames" -- "$TOOL" record --clip "$CLIP" --pipeline "$P2" --out "$TMP/tracking"
searches() { grep -o "\"template\":\"$1\",[^}]*\"full_search\":$2" "$TMP/tracking/frames.jsonl" | wc -l; }
check '[ "$(searches van true)" -ge 4 ] && [ "$(searches van false)" -ge 20 ]' \
  "van matches found by full searches ($(searches van true)) and by tracking ($(searches van false))"
expect 0 "the tracking bank checks against its own recording" -p "RESULT: PASS: 31 frames" \
  -p "    template 'van': matches golden" -- "$TOOL" check --clip "$CLIP" --golden "$TMP/tracking"

# perturbed recordings: each change is found in its frame and template (check plays the clip
# for the first; compare, which does not, for the others)
frame_of() { python3 -c '
import json, sys
for line in open(sys.argv[1]):
    f = json.loads(line)
    if [m for m in f["matches"]["matches"] if m["template"] == sys.argv[2]]:
        print(f["frame"]); break' "$TMP/bank/frames.jsonl" "$1"; }
F=$(frame_of van)
check '[ -n "$F" ]' "a frame with a van match ($F)"
rm -rf "$TMP/moved"; cp -r "$TMP/bank" "$TMP/moved"
$PERTURB "$TMP/moved" match matches "$F" 0.3 0.001 van
expect 1 "a van match moved by 0.3 px" -p "first failing frame: $F" \
  -p "template 'van': match position delta 0.3 px > tolerance 0" -p "template 'van': match score delta 0.001 > tolerance 0" -- \
  "$TOOL" check --clip "$CLIP" --golden "$TMP/moved"
check 'grep -q "^    template '"'"'van'"'"': .*max position delta 0.3 px (frame '"$F"').*; 1 failing, first frame '"$F"'$" "$LAST"' \
  "the van line gives the delta and its frame"
check 'grep -q "^    template '"'"'sign'"'"': .*; 0 failing$" "$LAST"' "the sign template does not fail"
expect 0 "the moved van match within tolerance" -p "RESULT: PASS" -- \
  "$TOOL" compare "$TMP/moved" "$TMP/bank" --match-pos-tol 0.31 --match-score-tol 0.0011

rm -rf "$TMP/scaled"; cp -r "$TMP/bank" "$TMP/scaled"
$PERTURB "$TMP/scaled" match-field matches "$F" van scale 1.25
expect 1 "a van match at another scale" -p "first failing frame: $F" \
  -p "template 'van': scale 1.25 angle 0 in A, scale 1 angle 0 in B" -- \
  "$TOOL" compare "$TMP/scaled" "$TMP/bank" --match-pos-tol 100 --match-score-tol 1
rm -rf "$TMP/turned"; cp -r "$TMP/bank" "$TMP/turned"
$PERTURB "$TMP/turned" match-field matches "$F" van angle 10
expect 1 "a van match at another angle" -p "template 'van': scale 1 angle 10 in A, scale 1 angle 0 in B" -- \
  "$TOOL" compare "$TMP/turned" "$TMP/bank"
rm -rf "$TMP/tracked"; cp -r "$TMP/bank" "$TMP/tracked"
$PERTURB "$TMP/tracked" match-field matches "$F" van full_search false
expect 1 "a van match found by tracking in A" -p "template 'van': full-search false in A, true in B" -- \
  "$TOOL" compare "$TMP/tracked" "$TMP/bank"

# a match that changed template: the totals agree, the templates' counts do not
rm -rf "$TMP/relabelled"; cp -r "$TMP/bank" "$TMP/relabelled"
$PERTURB "$TMP/relabelled" match-field matches "$F" van template '"man"'
expect 1 "a van match labelled man" -p "template 'van': " -p "template 'man': " -- \
  "$TOOL" compare "$TMP/relabelled" "$TMP/bank" --match-pos-tol 1000 --match-score-tol 1

# a template on one side only is named
rm -rf "$TMP/novan"; cp -r "$TMP/bank" "$TMP/novan"
$PERTURB "$TMP/novan" drop-template matches van
expect 1 "compare: the van template only in A" -p "template 'van' only in A" -p "    template 'van': only in A (" -- \
  "$TOOL" compare "$TMP/bank" "$TMP/novan"
expect 1 "compare: the van template only in B" -p "template 'van' only in B" -p "    template 'van': only in B (" -- \
  "$TOOL" compare "$TMP/novan" "$TMP/bank"

# the shipped golden was recorded before matches had a template: it reads as the single
# template, and still checks against the element that now labels its matches
check '! grep -q "\"template\"" "$GOLDEN/frames.jsonl"' "the shipped golden has no template labels"
expect 0 "the shipped golden still checks" -p "RESULT: PASS: 31 frames" -- \
  "$TOOL" check --clip "$CLIP" --golden "$GOLDEN"
check '! grep -q "^    template " "$LAST"' "a single template's summary has no per-template lines"
finish
