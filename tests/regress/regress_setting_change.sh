#!/usr/bin/env bash
# (4) Changes are caught: a changed element setting is named (exit 2), or, compared anyway, fails
# frame by frame (exit 1) naming the first failing frame; a changed result in one frame is found
# in that frame; tolerances let the expected amount through.
source "$(dirname "$0")/common.sh"
MEAN="${PIPELINE/cudatensorize backend=cpu/cudatensorize backend=cpu mean=<0.1>}"
check '[ "$MEAN" != "$PIPELINE" ]' "the test pipeline sets mean=<0.1>"
expect 2 "mean=<0.1>: the differing property is named" \
  -p "element cudatensorize0 (cudatensorize) property 'mean': golden '< (double)0, (double)0, (double)0 >', this run '< (double)0.10000000000000001 >'" -- \
  "$TOOL" check --clip "$CLIP" --golden "$GOLDEN" --pipeline "$MEAN"
expect 1 "mean=<0.1> compared anyway: every frame fails from frame 0" \
  -p "allowed setting change" -p "first failing frame: 0 (pts 0:00:00.000000000)" \
  -p "RESULT: REGRESSION: 31 of 31 frames fail, first failing frame 0" -p "max abs diff 0.1" -- \
  "$TOOL" check --clip "$CLIP" --golden "$GOLDEN" --pipeline "$MEAN" --allow-setting-changes
expect 0 "mean=<0.1> within max-abs=0.11" -p "RESULT: PASS" -- \
  "$TOOL" check --clip "$CLIP" --golden "$GOLDEN" --pipeline "$MEAN" --allow-setting-changes --tensor-tol max-abs=0.11

# one value of frame 7 changed by 0.5 (as if the code had changed there)
rm -rf "$TMP/g7"; cp -r "$GOLDEN" "$TMP/g7"
$PERTURB "$TMP/g7" tensor tensor 7 2000 0.5
expect 1 "a change in frame 7 is found in frame 7" \
  -p "first failing frame: 7 (pts 0:00:00.700000000): sink 'tensor'" -p "max abs diff 0.5 (frame 7)" \
  -p "RESULT: REGRESSION: 1 of 31 frames fail" -p "(element 2000)" -- \
  "$TOOL" check --clip "$CLIP" --golden "$TMP/g7" --report "$TMP/r7.txt"
check 'grep -q "^ *7 .*tensor .*FAIL" "$TMP/r7.txt"' "the report marks frame 7"
check '[ "$(grep -c "FAIL" "$TMP/r7.txt")" -eq 1 ]' "the report marks only frame 7"
expect 0 "within max-abs=0.5" -p "RESULT: PASS" -- "$TOOL" check --clip "$CLIP" --golden "$TMP/g7" --tensor-tol max-abs=0.5
expect 1 "not within max-abs=0.49" -p "max abs diff 0.5 > tolerance 0.49" -- \
  "$TOOL" check --clip "$CLIP" --golden "$TMP/g7" --tensor-tol max-abs=0.49
expect 0 "within psnr=40" -- "$TOOL" check --clip "$CLIP" --golden "$TMP/g7" --tensor-tol psnr=40
expect 1 "not within psnr=70" -p "dB < tolerance 70 dB" -- "$TOOL" check --clip "$CLIP" --golden "$TMP/g7" --tensor-tol psnr=70

# a match of frame 12 moved by 0.3 px and its score changed by 0.001
rm -rf "$TMP/g12"; cp -r "$GOLDEN" "$TMP/g12"
$PERTURB "$TMP/g12" match matches 12 0.3 0.001
expect 1 "a moved match is found in frame 12" \
  -p "first failing frame: 12" -p "match position delta 0.3 px > tolerance 0" -p "max position delta 0.3 px (frame 12)" -- \
  "$TOOL" check --clip "$CLIP" --golden "$TMP/g12"
expect 1 "position within tolerance, score not" -p "match score delta 0.001 > tolerance 0.0005" -- \
  "$TOOL" check --clip "$CLIP" --golden "$TMP/g12" --match-pos-tol 0.31 --match-score-tol 0.0005
expect 0 "both within tolerance" -p "RESULT: PASS" -- \
  "$TOOL" check --clip "$CLIP" --golden "$TMP/g12" --match-pos-tol 0.31 --match-score-tol 0.0011
finish
