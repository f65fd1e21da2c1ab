#!/usr/bin/env bash
# (1) CI: the CPU path on the shipped clip against the shipped golden, exactly (the CPU path is
# deterministic, so any difference is a change of behaviour: if intended, re-record the golden,
# tools/regress/README.md says how).
source "$(dirname "$0")/common.sh"
check '[ -f "$GOLDEN/manifest.json" ]' "the golden is shipped"
check 'grep -q "\"backend\": \"cpu\"" "$GOLDEN/manifest.json"' "the golden was recorded with backend=cpu"
check 'grep -q "avdec_h264" "$GOLDEN/manifest.json"' "the golden was recorded with avdec_h264"
expect 0 "check against the shipped golden (exact)" \
  -p "RESULT: PASS: 31 frames" -p "sink 'tensor' (tensor): 31 frames compared, 31 identical, 0 failing" \
  -p "sink 'matches' (matches): 31 frames compared, 0 failing" \
  -- "$TOOL" check --clip "$CLIP" --golden "$GOLDEN" --report "$TMP/report.txt"
check '[ "$(grep -c " identical$" "$TMP/report.txt")" -eq 31 ]' "the report lists 31 identical tensors"
check 'grep -q "RESULT: PASS" "$TMP/report.txt"' "the report ends with the result"
finish
