#!/usr/bin/env bash
# A golden is data to judge, not to trust: one that contradicts itself (a dtype its caps and
# files do not have), that nests JSON deeper than the tool reads, or whose tensor files lie
# outside its directory is a setup error (exit 2) naming the field, and is never compared.
source "$(dirname "$0")/common.sh"

# dtype edited to float64 while the caps and the files are float32: reading the f32 files as
# f64 hid a +0.5 change at max-abs=0.01
g=$(copy_golden dtype)
$PERTURB "$g" tensor tensor 7 2000 0.5
$PERTURB "$g" sink-field tensor dtype float64
expect 2 "a dtype that contradicts the caps is refused, not compared" \
  -p 'field "dtype" is "float64" but its field "caps"' -p "contradicts itself" -- \
  "$TOOL" check --clip "$CLIP" --golden "$g" --tensor-tol max-abs=0.01
check '! grep -q "RESULT: PASS" "$LAST"' "no PASS for the edited golden"
expect 2 "compare refuses it too" -p "A: " -p 'field "dtype"' -- "$TOOL" compare "$g" "$GOLDEN" --tensor-tol max-abs=0.01
# dtype and the caps' types both edited: the frame size the caps give is not the files'
g=$(copy_golden dtypecaps)
$PERTURB "$g" sink-field tensor dtype float64
sed -i 's/types=(string)float32/types=(string)float64/' "$g/manifest.json"
expect 2 "dtype and caps edited together: the frame size contradicts them" \
  -p 'field "bytes" is 49152 but the manifest'"'"'s field "caps"' -p "makes 98304 bytes a frame" -- \
  "$TOOL" check --clip "$CLIP" --golden "$g" --tensor-tol max-abs=0.01
# a tensor file whose extension is not the dtype's
g=$(copy_golden ext)
mv "$g/tensors/tensor-00003.f32" "$g/tensors/tensor-00003.f64"
$PERTURB "$g" frame-field tensor 3 file tensors/tensor-00003.f64
expect 2 "a tensor file named for another type" -p 'field "file" "tensors/tensor-00003.f64" is not a float32 file (.f32)' -- \
  "$TOOL" check --clip "$CLIP" --golden "$g"

# JSON nested deeper than 64 levels: json-glib recursed into a stack overflow (exit 139)
g=$(copy_golden deepframes)
$PERTURB "$g" nest frames 2 200000
expect 2 "frames.jsonl nested 200000 deep" -p "frames.jsonl line 3: corrupt" -p "nested more than 64 levels" -- \
  "$TOOL" check --clip "$CLIP" --golden "$g"
g=$(copy_golden deepmanifest)
$PERTURB "$g" nest manifest 0 200000
expect 2 "manifest.json nested 200000 deep" -p "manifest.json: corrupt" -p "nested more than 64 levels" -- \
  "$TOOL" compare "$GOLDEN" "$g"
g=$(copy_golden deep65)
$PERTURB "$g" nest frames 0 62  # 62 arrays in the first sink's object: 64 levels, still read
expect 0 "64 levels are read" -p "RESULT: PASS" -- "$TOOL" compare "$GOLDEN" "$g"
$PERTURB "$g" nest frames 1 63
expect 2 "65 levels are not" -p "frames.jsonl line 2: corrupt" -- "$TOOL" compare "$GOLDEN" "$g"

# tensor files outside the golden: never read
cp "$GOLDEN/tensors/tensor-00000.f32" "$TMP/outside.f32"  # the right bytes, in the wrong place
g=$(copy_golden dotdot)
$PERTURB "$g" frame-field tensor 0 file ../outside.f32
expect 2 "file with a '..' component" -p 'field "file" "../outside.f32" has a '"'"'..'"'"' component' -p "refused" -- \
  "$TOOL" check --clip "$CLIP" --golden "$g"
$PERTURB "$g" frame-field tensor 0 file tensors/../../../../../../../../etc/passwd
expect 2 "file pointing at /etc/passwd" -p "etc/passwd\" has a '..' component" -- "$TOOL" compare "$g" "$GOLDEN"
check '! grep -q "root:" "$LAST"' "nothing of /etc/passwd is shown"
g=$(copy_golden absolute)
$PERTURB "$g" frame-field tensor 0 file "$TMP/outside.f32"
expect 2 "absolute file path" -p "is an absolute path" -- "$TOOL" check --clip "$CLIP" --golden "$g"
g=$(copy_golden symlink)
ln -sf "$TMP/outside.f32" "$g/tensors/tensor-00000.f32"
expect 2 "tensor file that is a symlink to outside the golden" -p "resolves (through a symlink) to $TMP/outside.f32" -- \
  "$TOOL" check --clip "$CLIP" --golden "$g"
# a symlink that stays inside the golden is fine (git may store a golden's files that way)
g=$(copy_golden symlinkinside)
mkdir "$g/store" && mv "$g/tensors/tensor-00000.f32" "$g/store/"
ln -s ../store/tensor-00000.f32 "$g/tensors/tensor-00000.f32"
expect 0 "a symlink inside the golden is followed" -p "RESULT: PASS: 31 frames" -- "$TOOL" check --clip "$CLIP" --golden "$g"
finish
