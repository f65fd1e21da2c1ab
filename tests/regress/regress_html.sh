#!/usr/bin/env bash
# (6) --html DIR: a report a person can look at. For perturbed runs of the shipped clip, the
# HTML parses, every PNG it shows decodes, its plots carry the text report's figures, the
# pictures are the tensors de-normalised (the letterbox in the pad value); a digest-only
# recording gives plots and says why there are no pictures; bad --html targets are refused.
source "$(dirname "$0")/common.sh"
CHECK_HTML="python3 $ROOT/tests/regress/check_html_report.py"
copy() { rm -rf "$TMP/$1"; cp -r "$GOLDEN" "$TMP/$1"; echo "$TMP/$1"; }

# a golden with one changed value in frame 7 and a moved match in frame 12
G=$(copy g)
$PERTURB "$G" tensor tensor 7 2000 0.5
$PERTURB "$G" match matches 12 0.3 0.001
expect 1 "check --html on a perturbed golden" -p "HTML report: $TMP/h1/index.html" -p "first failing frame 7" -- \
  "$TOOL" check --clip "$CLIP" --golden "$G" --report "$TMP/h1.txt" --html "$TMP/h1"
expect 0 "its HTML parses, its PNGs decode, its plots are the text report's figures" \
  -p "series: plot-matches-position-delta plot-matches-score-delta plot-tensor-max-abs plot-tensor-psnr" \
  -p "images: frame-00007-clip-frame.png frame-00007-tensor-diff.png frame-00007-tensor-ref.png frame-00007-tensor-run.png frame-00012-clip-frame.png frame-00012-tensor-diff.png" \
  -p "124 points in 4 series" -- \
  $CHECK_HTML "$TMP/h1" "$TMP/h1.txt" --pixel frame-00007-tensor-ref.png 0 0 114,114,114 \
  --pixel frame-00007-tensor-diff.png 0 0 0,0,0
H="$TMP/h1/index.html"
check 'grep -q "Frame 7: first failing frame; the worst of sink &apos;tensor&apos;: largest max abs diff, 0.5<" "$H"' \
  "frame 7 is pictured as the first failing frame and the tensor sink's worst"
check 'grep -q "Frame 12: the worst of sink &apos;matches&apos;: largest match position delta, 0.3 px<" "$H"' \
  "frame 12 is pictured as the matches' worst"
check 'grep -q "RESULT: REGRESSION: 2 of 31 frames fail, first failing frame 7 (exit 1)" "$H"' "the RESULT line"
check 'grep -q "sink &apos;tensor&apos; (tensor): 31 frames compared, 30 identical, 1 failing; max abs diff 0.5 (frame 7)" "$H"' \
  "the text report's summary lines"
check 'grep -q "ring: the largest, at pixel (16, 31)" "$H"' "the heat map points at element 2000 (x 16, y 31)"
check 'grep -q "tolerance exact: any difference fails" "$H"' "the tolerance is drawn"
# (cells are marked class="diff" where the golden's GStreamer differs from this run's, as on Debian 13)
check 'grep -qE "<th>GStreamer</th><td( class=\"diff\")?>GStreamer 1\." "$H"' "versions of both sides"
check 'grep -qE "<th>avdec_h264-0</th><td( class=\"diff\")?>avdec_h264 \(libav 1\.[0-9.]*\)</td>" "$H"' \
  "every element's plugin version"

# a changed pad value, compared anyway: the settings diff, and the letterbox in the pictures
PAD="${PIPELINE/cudatensorize backend=cpu/cudatensorize backend=cpu pad-value=0}"
check '[ "$PAD" != "$PIPELINE" ]' "the test pipeline sets pad-value=0"
expect 1 "check --html with pad-value=0" -p "RESULT: REGRESSION: 31 of 31 frames fail" -- \
  "$TOOL" check --clip "$CLIP" --golden "$GOLDEN" --pipeline "$PAD" --allow-setting-changes \
  --tensor-tol max-abs=0.3 --report "$TMP/h2.txt" --html "$TMP/h2"
expect 0 "pad-value=0: golden pads with 114, this run with 0, the picture alike; figures as in the text report" \
  -p "images: frame-00000-clip-frame.png frame-00000-tensor-diff.png" -- \
  $CHECK_HTML "$TMP/h2" "$TMP/h2.txt" --pixel frame-00000-tensor-ref.png 5 2 114,114,114 \
  --pixel frame-00000-tensor-run.png 5 2 0,0,0 --same frame-00000-tensor-ref.png frame-00000-tensor-run.png 32 32 \
  --pixel frame-00000-tensor-diff.png 5 2 255,255,170 --pixel frame-00000-tensor-diff.png 32 32 0,0,0
H="$TMP/h2/index.html"
check 'grep -q "<td>pad-value</td><td class=\"diff\">114</td><td class=\"diff\">0</td>" "$H"' "the settings diff names pad-value"
check 'grep -q "tolerance max-abs=0.3" "$H"' "the max-abs tolerance is drawn"

# the same frame as NHWC with BGR channels: each side drawn with its own settings, the same picture
NHWC="${PIPELINE/cudatensorize backend=cpu/cudatensorize backend=cpu layout=nhwc channel-order=bgr}"
expect 1 "check --html with layout=nhwc channel-order=bgr" -- \
  "$TOOL" check --clip "$CLIP" --golden "$GOLDEN" --pipeline "$NHWC" --allow-setting-changes --html "$TMP/h6" \
  --report "$TMP/h6.txt"
expect 0 "NHWC BGR de-normalised is the golden's picture" -- \
  $CHECK_HTML "$TMP/h6" "$TMP/h6.txt" --identical frame-00000-tensor-ref.png frame-00000-tensor-run.png

# digest-only: plots of the stats, no pictures, and the report says why
expect 0 "record digest-only" -- "$TOOL" record --clip "$CLIP" --pipeline "$PIPELINE" --out "$TMP/d" --store digest
expect 1 "compare --html against a digest-only recording" -- \
  "$TOOL" compare "$G" "$TMP/d" --report "$TMP/h3.txt" --html "$TMP/h3" --clip "$CLIP"
expect 0 "digest-only: plots of the stat differences, as in the text report; only the clip's frame as a picture" \
  -p "series: plot-matches-position-delta plot-matches-score-delta plot-tensor-l2-delta plot-tensor-mean-delta" \
  -p "images: frame-00007-clip-frame.png frame-00012-clip-frame.png" -- $CHECK_HTML "$TMP/h3" "$TMP/h3.txt"
check 'grep -q "No tensor pictures: they need the tensors of both sides, and B ($TMP/d) stores tensor digests only" "$TMP/h3/index.html"' \
  "it says why there are no tensor pictures"
check '! ls "$TMP/h3" | grep -q tensor' "no tensor PNG is written"
expect 1 "compare --html against a digest-only recording, no clip" -- \
  "$TOOL" compare "$G" "$TMP/d" --report "$TMP/h3b.txt" --html "$TMP/h3b"
expect 0 "... plots only, no image at all" -p "0 images decoded, 124 points in 4 series" -- \
  $CHECK_HTML "$TMP/h3b" "$TMP/h3b.txt"
check 'grep -q "No frame image: compare draws the matches over the clip&apos;s frames when given --clip FILE" "$TMP/h3b/index.html"' \
  "it says why there is no frame image"
expect 1 "check --html against a digest-only golden" -- \
  "$TOOL" check --clip "$CLIP" --golden "$TMP/d" --pipeline "$PAD" --allow-setting-changes --report "$TMP/h3c.txt" \
  --html "$TMP/h3c"
expect 0 "... plots of the stat differences, as in the text report" \
  -p "series: plot-matches-position-delta plot-matches-score-delta plot-tensor-l2-delta plot-tensor-mean-delta" -- \
  $CHECK_HTML "$TMP/h3c" "$TMP/h3c.txt"
check 'grep -q "No tensor pictures: they need the tensors of both sides, and golden ($TMP/d) stores tensor digests only" "$TMP/h3c/index.html"' \
  "it says why there are no tensor pictures"

# a clip that does not decode: the report is written, without the frame, saying why
head -c 20000 /dev/urandom >"$TMP/noise.mp4"
expect 1 "compare --html --clip with a clip that does not decode" -p "HTML report: $TMP/h5/index.html" -- \
  "$TOOL" compare "$GOLDEN" "$G" --html "$TMP/h5" --clip "$TMP/noise.mp4"
check 'grep -q "No frame image: the clip $TMP/noise.mp4 does not decode" "$TMP/h5/index.html"' "it says the clip does not decode"
check '! ls "$TMP/h5" | grep -q clip-frame' "no frame PNG is written"

# settings that differ stop check before playing: the report shows the settings alone
MEAN="${PIPELINE/cudatensorize backend=cpu/cudatensorize backend=cpu mean=<0.1>}"
expect 2 "check --html stopped at the settings" -p "HTML report: $TMP/h4/index.html" -- \
  "$TOOL" check --clip "$CLIP" --golden "$GOLDEN" --pipeline "$MEAN" --html "$TMP/h4"
check 'grep -q "The clip was not played" "$TMP/h4/index.html" && grep -q "<td>mean</td>" "$TMP/h4/index.html"' \
  "the settings diff, and why there are no plots"
check 'grep -q "re-record it if the change is intended" "$TMP/h4/index.html"' "the hint of the text report"
expect 0 "... and it parses" -p "0 images decoded, 0 points" -- $CHECK_HTML "$TMP/h4" /dev/null

# a second report replaces the first; other directories are not overwritten
expect 1 "--html into an earlier report" -- "$TOOL" compare "$GOLDEN" "$G" --html "$TMP/h1"
check '[ ! -e "$TMP/h1/frame-00007-clip-frame.png" ] && [ -e "$TMP/h1/frame-00007-tensor-ref.png" ]' \
  "the earlier report's pictures are replaced"
mkdir -p "$TMP/other" && touch "$TMP/other/keep.txt"
expect 2 "--html into a directory that holds something else" -p "refusing to overwrite it" -- \
  "$TOOL" compare "$GOLDEN" "$G" --html "$TMP/other"
check '[ -e "$TMP/other/keep.txt" ]' "that directory is left alone"
touch "$TMP/afile"
expect 2 "check --html naming a file fails before the clip is played" -p "--html $TMP/afile exists and is not a directory" -- \
  "$TOOL" check --clip "$CLIP" --golden "$GOLDEN" --html "$TMP/afile"
OUT="$TMP/out.$N"  # the output of the expect above
check '[ -s "$OUT" ] && ! grep -q "RESULT" "$OUT"' "... with no report"
expect 2 "--html with no directory" -p "--html needs a directory" -- "$TOOL" compare "$GOLDEN" "$G" --html ""
expect 2 "compare --clip without --html" -p "compare takes --clip only with --html" -- \
  "$TOOL" compare "$GOLDEN" "$G" --clip "$CLIP"

# --progress: frames done, rate and time left
expect 0 "--progress shows the time left" -p "check: frame 31/31 (100%)" -p " fps, 0 s left" -- \
  "$TOOL" check --clip "$CLIP" --golden "$GOLDEN" --progress
finish
