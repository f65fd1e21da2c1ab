#!/usr/bin/env bash
# (5) compare: identical sets pass; a perturbed set reports the right max abs diff, frame and
# figures; digest-only sets compare exactly and say so when a tolerance is asked for.
source "$(dirname "$0")/common.sh"
rm -rf "$TMP/a" && cp -r "$GOLDEN" "$TMP/a"
expect 0 "identical sets" -p "RESULT: PASS: 31 frames" -p "max abs diff 0, PSNR inf dB" -- "$TOOL" compare "$GOLDEN" "$TMP/a"
$PERTURB "$TMP/a" tensor tensor 3 100 0.25
$PERTURB "$TMP/a" tensor tensor 20 5 -0.125
expect 1 "perturbed set" -p "max abs diff 0.25 (frame 3)" -p "first failing frame: 3" \
  -p "RESULT: REGRESSION: 2 of 31 frames fail" -p "29 identical, 2 failing" -- \
  "$TOOL" compare "$GOLDEN" "$TMP/a" --report "$TMP/report.txt"
check 'grep -q "^ *20 .*max-abs 0.125 (element 5)" "$TMP/report.txt"' "frame 20's own max abs diff in the report"
expect 0 "perturbed set within max-abs=0.25" -p "RESULT: PASS" -- "$TOOL" compare "$GOLDEN" "$TMP/a" --tensor-tol max-abs=0.25
expect 1 "perturbed set, other way round" -p "max abs diff 0.25 (frame 3)" -- "$TOOL" compare "$TMP/a" "$GOLDEN"
# digest-only
expect 0 "record digest-only" -- "$TOOL" record --clip "$CLIP" --pipeline "$PIPELINE" --out "$TMP/d" --store digest
expect 0 "golden vs digest-only" -p "RESULT: PASS" -- "$TOOL" compare "$GOLDEN" "$TMP/d"
expect 1 "perturbed vs digest-only: exact only, and it says so" \
  -p "TOLERANCE NOT APPLIED" -p "digests only" -p "SHA-256 differs" -p "first failing frame: 3" -- \
  "$TOOL" compare "$TMP/a" "$TMP/d" --tensor-tol max-abs=1
expect 1 "check against a digest-only golden with a tolerance warns" \
  -p "warning: the golden stores tensor digests only" -p "TOLERANCE NOT APPLIED" -- \
  "$TOOL" check --clip "$CLIP" --golden "$TMP/d" --tensor-tol max-abs=1 --pipeline "${PIPELINE/cudatensorize backend=cpu/cudatensorize backend=cpu mean=<0.1>}" --allow-setting-changes
finish
