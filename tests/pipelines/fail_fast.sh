#!/usr/bin/env bash
# The examples fail fast: every script in pipelines/ and both consumers end at once (no hang),
# with a non-zero status and one line naming the missing file or the bad argument; --help
# prints the usage and exits 0; the consumers refuse a stream that is not a tensor.
# Usage: fail_fast.sh SOURCE_ROOT BUILD_DIR
set -u
root=$1
export CUDAPREP_BUILD_DIR=$2 OUTDIR=$(mktemp -d)
export GST_PLUGIN_PATH=$CUDAPREP_BUILD_DIR/gst
trap 'rm -rf "$OUTDIR"' EXIT
T=$CUDAPREP_BUILD_DIR/pipelines/tensor_consumer
B=$CUDAPREP_BUILD_DIR/pipelines/batch_consumer
fail=0
# expect RC TEXT COMMAND...: exits with RC within 30 s; with RC 0 the output contains TEXT, else
# the output is one line containing TEXT.
expect() {
  local want_rc=$1 want=$2 out rc lines
  shift 2
  out=$(timeout 30 "$@" 2>&1 </dev/null); rc=$?
  lines=$(printf '%s\n' "$out" | wc -l)
  if [ $rc -ne "$want_rc" ] || ! grep -qF -- "$want" <<<"$out" || { [ "$want_rc" -ne 0 ] && [ "$lines" -ne 1 ]; }; then
    echo "FAIL: $*: rc=$rc (want $want_rc), $lines lines, want '$want' in: $out"
    fail=1
  else
    echo "ok: $*: rc=$rc: $(head -1 <<<"$out")"
  fi
}
P=$root/pipelines
missing=/nonexistent/clip.mp4
for s in "$P"/*.sh; do
  [ "$(basename "$s")" = env.sh ] && continue
  expect 0 "pipelines/$(basename "$s")" bash "$s" --help
done
for s in file.sh preview.sh dump-tensors.sh templatematch.sh; do
  expect 2 "no such file: $missing" bash "$P/$s" "$missing"
  expect 2 "not an element property (name=value): 'oops'" bash "$P/$s" "$root/tests/data/vtest-h264.mp4" oops
done
for s in main.sh batch.sh two_stage.sh multi_camera.sh; do
  expect 2 "no such file: $missing" env CLIP=$missing bash "$P/$s"
done
expect 2 "takes no arguments" bash "$P/main.sh" extra
for s in batch.sh two_stage.sh regions.sh; do
  expect 2 "not an element property (name=value): 'oops'" bash "$P/$s" oops
done
expect 2 "the number of cameras must be 1 to 99, not 'oops'" bash "$P/multi_camera.sh" oops
expect 2 "the number of cameras must be 1 to 99, not '0'" bash "$P/multi_camera.sh" --all 0
expect 2 "takes at most one number of cameras" bash "$P/multi_camera.sh" 2 3
expect 2 "an appsink name must follow '--detector'" "$B" --detector
expect 2 "the pipeline needs an 'appsink name=det'" "$B" --detector det "videotestsrc num-buffers=3 ! cudatensorize ! appsink name=sink"
expect 2 "no such camera device: /dev/nonexistent-video" bash "$P/camera.sh" /dev/nonexistent-video
expect 2 "is not built: run bash pipelines/main.sh first" env CUDAPREP_BUILD_DIR=/nonexistent bash "$P/file.sh"
# a setting refused when the element starts: gst-launch-1.0's first error line
expect 2 "channels 2 is not supported" bash "$P/dump-tensors.sh" "$root/tests/data/vtest-h264.mp4" channels=2
expect 2 "is not inside the 768x576 frame" bash "$P/templatematch.sh" "$root/tests/data/vtest-h264.mp4" template-rect="<0,0,5000,5000>"
# a file that is not a video: the decoder's error, one line
expect 1 "error from decodebin0: This appears to be a text file" bash "$P/file.sh" "$root/README.md"
expect 1 "error from qtdemux0" bash "$P/preview.sh" "$root/README.md"

for prog in "$T" "$B"; do
  expect 0 "usage:" "$prog" --help
  expect 2 "no pipeline given" "$prog"
  expect 2 "unknown option" "$prog" --oops "videotestsrc ! appsink name=sink"
  expect 2 "No such file \"$missing\"" "$prog" "filesrc location=$missing ! qtdemux ! h264parse ! avdec_h264 ! cudatensorize ! appsink name=sink"
  expect 2 "is video/x-raw, not a tensor (other/tensors)" "$prog" "videotestsrc num-buffers=3 ! appsink name=sink"
  expect 2 "no property \"oops\" in element \"cudatensorize\"" "$prog" "videotestsrc num-buffers=3 ! cudatensorize oops=1 ! appsink name=sink"
done
expect 2 "--mean takes a number, not 'abc'" "$T" --mean abc "videotestsrc ! appsink name=sink"
expect 2 "--preview needs a value" "$T" --preview
exit $fail
