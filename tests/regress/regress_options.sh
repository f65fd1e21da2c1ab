#!/usr/bin/env bash
# Numeric options take plain decimal numbers in their range, nothing else (usage error, exit 2,
# naming the option); record replaces an existing recording only with --force.
source "$(dirname "$0")/common.sh"

bad() {  # bad OPTION VALUE: refused by compare and check alike
  expect 2 "$1 '$2' refused" -p "$1 $2" -p "usage:" -- "$TOOL" compare "$GOLDEN" "$GOLDEN" "$1" "$2"
}
for v in psnr=-5 psnr=0 psnr=-0 psnr=0x10 psnr=inf psnr=nan psnr=1e999 max-abs=0x1p-3 max-abs=0x10 max-abs=-1 \
         max-abs=-0 max-abs=inf max-abs=nan max-abs=INF max-abs=1e999 "max-abs= 1" "max-abs=1 " max-abs=1,5 \
         max-abs=1e max-abs=. max-abs=+ max-abs=1.2.3 max-abs=0b1; do
  bad --tensor-tol "$v"
done
for o in --match-pos-tol --match-score-tol; do
  for v in 0x10 0x1p-3 -1 -0 inf nan 1e999 " 1" "1 " 1,5 "" .e1 1e+; do
    bad "$o" "$v"
  done
done
expect 2 "check refuses a PSNR tolerance of 0 before playing anything" -p "--tensor-tol psnr=0" -p "> 0" -- \
  "$TOOL" check --clip "$CLIP" --golden "$GOLDEN" --tensor-tol psnr=0
expect 2 "--match-pos-tol=0x10 (the = form)" -p "--match-pos-tol 0x10" -- \
  "$TOOL" compare "$GOLDEN" "$GOLDEN" --match-pos-tol=0x10
for v in max-abs=0 max-abs=1e-5 max-abs=.5 max-abs=5. max-abs=+2 max-abs=1E-3 psnr=60 psnr=0.5 psnr=1e2; do
  expect 0 "--tensor-tol $v accepted" -p "RESULT: PASS" -- "$TOOL" compare "$GOLDEN" "$GOLDEN" --tensor-tol "$v"
done
expect 0 "match tolerances accepted" -p "match position 0.5 px, match score 1e-06" -- \
  "$TOOL" compare "$GOLDEN" "$GOLDEN" --match-pos-tol 0.5 --match-score-tol 1E-6

# record over an existing recording: refused without --force, replaced with it
expect 0 "record" -p "recorded 31 frames" -- "$TOOL" record --clip "$CLIP" --pipeline "$PIPELINE" --out "$TMP/r" --store digest
touch "$TMP/r/marker"
expect 2 "record over a recording without --force" -p "holds a recording already" -p "use --force" -- \
  "$TOOL" record --clip "$CLIP" --pipeline "$PIPELINE" --out "$TMP/r" --store digest
check '[ -f "$TMP/r/marker" ] && [ -f "$TMP/r/manifest.json" ]' "the recording is left as it was"
check '[ -z "$(ls -d "$TMP"/r.* 2>/dev/null)" ]' "nothing else left behind"
expect 2 "--force takes no value" -p "--force takes no value" -- \
  "$TOOL" record --clip "$CLIP" --pipeline "$PIPELINE" --out "$TMP/r" --force=yes
expect 0 "record over a recording with --force" -p "recorded 31 frames" -- \
  "$TOOL" record --clip "$CLIP" --pipeline "$PIPELINE" --out "$TMP/r" --force
check '[ ! -e "$TMP/r/marker" ] && [ -d "$TMP/r/tensors" ]' "replaced by the new recording (full, this time)"
check '[ -z "$(ls -d "$TMP"/r.* 2>/dev/null)" ]' "no temporary or old copy left behind"
expect 0 "the new recording equals the golden" -p "RESULT: PASS" -- "$TOOL" compare "$GOLDEN" "$TMP/r"
mkdir -p "$TMP/occupied" && touch "$TMP/occupied/precious.txt"
expect 2 "--force does not replace a directory that holds no recording" -p "refusing to overwrite" -- \
  "$TOOL" record --clip "$CLIP" --pipeline "$PIPELINE" --out "$TMP/occupied" --force
check '[ -f "$TMP/occupied/precious.txt" ]' "the directory is left alone"
mkdir -p "$TMP/empty"
expect 0 "an empty directory is no recording to protect" -- \
  "$TOOL" record --clip "$CLIP" --pipeline "$PIPELINE" --out "$TMP/empty" --store digest
expect 0 "--help mentions --force" -p "--force" -- "$TOOL" --help
finish
