#!/usr/bin/env bash
# (2) Determinism: the same clip, build and device record bit-identical tensors and matches.
source "$(dirname "$0")/common.sh"
expect 0 "record #1" -p "recorded 31 frames" -- "$TOOL" record --clip "$CLIP" --pipeline "$PIPELINE" --out "$TMP/r1"
expect 0 "record #2" -p "recorded 31 frames" -- "$TOOL" record --clip "$CLIP" --pipeline "$PIPELINE" --out "$TMP/r2"
expect 0 "record #3, digests only" -- "$TOOL" record --clip "$CLIP" --pipeline "$PIPELINE" --out "$TMP/r3" --store digest
check 'cmp -s "$TMP/r1/frames.jsonl" "$TMP/r2/frames.jsonl"' "frames.jsonl identical byte for byte"
check 'diff -r -q "$TMP/r1/tensors" "$TMP/r2/tensors" >/dev/null' "tensor files identical byte for byte"
check '[ "$(ls "$TMP/r1/tensors" | wc -l)" -eq 31 ]' "31 tensor files"
check '[ ! -e "$TMP/r3/tensors" ]' "no tensor files in a digest recording"
expect 0 "compare #1 #2 exactly" -p "RESULT: PASS" -p "31 identical" -- "$TOOL" compare "$TMP/r1" "$TMP/r2"
expect 0 "compare #1 with the digest recording" -p "RESULT: PASS" -- "$TOOL" compare "$TMP/r1" "$TMP/r3"
# re-recording over an existing recording replaces it (with --force: regress_options tests the refusal)
expect 0 "record over #2" -- "$TOOL" record --clip "$CLIP" --pipeline "$PIPELINE" --out "$TMP/r2" --force
check 'cmp -s "$TMP/r1/frames.jsonl" "$TMP/r2/frames.jsonl"' "re-recorded frames.jsonl identical"
finish
