#!/usr/bin/env bash
# The consumer examples end with one clear error, at once, on a pipeline that cannot be built: a
# missing element (a recoverable parse error: gst_parse_launch returns the partial pipeline) and a
# syntax error. Usage: consumer_errors.sh TENSOR_CONSUMER BATCH_CONSUMER
set -u
fail=0
check() {  # expected message part, program, pipeline
  local want=$1 prog=$2 desc=$3 out rc
  out=$(timeout 20 "$prog" "$desc" 2>&1); rc=$?
  if [ $rc -ne 2 ] || ! grep -q "$want" <<<"$out"; then
    echo "FAIL: $(basename "$prog") '$desc': rc=$rc (want 2), output: $out"; fail=1
  else
    echo "ok: $(basename "$prog") '$desc': $out"
  fi
}
for prog in "$1" "$2"; do
  check "no element \"nosuchelement\"" "$prog" "videotestsrc num-buffers=3 ! nosuchelement ! appsink name=sink"
  check "could not parse the pipeline" "$prog" "videotestsrc ! ! appsink name=sink"
done
exit $fail
