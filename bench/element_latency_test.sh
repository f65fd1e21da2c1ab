#!/usr/bin/env bash
# element_latency (bench/element_latency.cpp) on the CPU: a known per-buffer delay is measured as
# such, an aggregator's output buffers are counted and timed from their last input, and a
# steady-state span leaves the warm-up out.
# Usage: element_latency_test.sh path/to/element_latency
set -euo pipefail
bin=$1
fail() { echo "FAIL: $*" >&2; exit 1; }

# field NAME KEY < output: the value of KEY= on the line starting with NAME.
field() { awk -v name="$1" -v key="$2=" '$1 == name { for (i = 2; i <= NF; i++) if (index($i, key) == 1) print substr($i, length(key) + 1) }'; }

# identity sleeps 2000 us per buffer between its sink pad and its push.
out=$("$bin" --timeout=60 --element=id 'videotestsrc num-buffers=50 ! identity name=id sleep-time=2000 ! fakesink')
echo "$out"
[ "$(field id n <<<"$out")" = 50 ] || fail "identity: n is not 50"
awk -v m="$(field id median_us <<<"$out")" 'BEGIN { exit !(m >= 2000 && m < 20000) }' ||
  fail "identity: median not in [2000, 20000) us"
# Sleeping is no CPU: the thread's CPU in the element stays far below its latency.
awk -v c="$(field id cpu_median_us <<<"$out")" 'BEGIN { exit !(c >= 0 && c < 1000) }' ||
  fail "identity: thread CPU of a sleep not in [0, 1000) us"
# Converting 1080p frames is CPU (over 1 ms a frame on one thread), and no more than the latency
# (which a loaded machine stretches beyond it).
conv='videotestsrc num-buffers=20 ! video/x-raw,format=I420,width=1920,height=1080'
out=$("$bin" --timeout=60 --element=conv "$conv ! videoconvert name=conv n-threads=1 ! video/x-raw,format=BGRx ! fakesink")
echo "$out"
awk -v c="$(field conv cpu_median_us <<<"$out")" -v m="$(field conv median_us <<<"$out")" \
  'BEGIN { exit !(c > 500 && c <= m * 1.05 + 50) }' ||
  fail "videoconvert: thread CPU not over 500 us, or over its latency"
grep -q '^rusage user_s=[0-9.]* sys_s=[0-9.]*$' <<<"$out" || fail "no rusage line"
grep -q '^wall_s=[0-9.]* preroll_s=[0-9.]* init_s=[0-9.]* teardown_s=[0-9.]*$' <<<"$out" || fail "no wall_s line"

# Two streams into one cudatensorbatch (CPU backend): 30 frames each make 30 batches, each timed
# from the later of its two frames; a tensor comes out per batch.
out=$("$bin" --timeout=60 --element=tb "cudatensorbatch name=tb backend=cpu width=64 height=64 ! fakesink \
  videotestsrc num-buffers=30 ! video/x-raw,format=RGB,width=160,height=120 ! tb.sink_0 \
  videotestsrc num-buffers=30 pattern=ball ! video/x-raw,format=RGB,width=160,height=120 ! tb.sink_1")
echo "$out"
[ "$(field tb n <<<"$out")" = 30 ] || fail "cudatensorbatch: n is not 30 (one per batch)"
# Its batches leave from its own thread: no thread CPU to give.
[ "$(field tb cpu_median_us <<<"$out")" = nan ] || fail "cudatensorbatch: thread CPU across threads"

# A name prefix pools elements; the description also goes as gst-launch's words (quotes, as the
# shell leaves them); an unknown name, an ERROR and a hang are one clear error each.
out=$("$bin" --timeout=60 '--element=a*' videotestsrc num-buffers=10 ! 'video/x-raw(memory:SystemMemory),width=64' \
  ! identity name=a0 ! identity name=a1 ! fakesink)
echo "$out"
[ "$(field 'a*' n <<<"$out")" = 20 ] || fail "prefix: n is not 20"
if err=$("$bin" --element=nosuch 'videotestsrc num-buffers=1 ! fakesink' 2>&1); then fail "unknown name accepted"; fi
grep -q 'no element named nosuch' <<<"$err" || fail "unknown name: $err"
if err=$("$bin" --element=id 'videotestsrc num-buffers=5 ! identity name=id error-after=2 ! fakesink' 2>&1); then
  fail "ERROR message ignored"
fi
grep -q 'ERROR from id' <<<"$err" || fail "error: $err"
if err=$("$bin" --timeout=1 --element=id 'videotestsrc is-live=true ! identity name=id ! fakesink' 2>&1); then
  fail "timeout ignored"
fi
grep -q 'no EOS within 1 s' <<<"$err" || fail "timeout: $err"
# The steady-state span: from the 30th buffer out of every FROM pad (the later of the two) to
# the last buffer into the sinks. Two streams of 60 buffers, 5 ms each: 30 buffers each after
# the warm-up, in 30 x 5 ms (the later stream's; a loaded machine stretches it, not shortens it).
out=$("$bin" --timeout=60 --span-from='src*' --span-to='sink*' \
  "videotestsrc name=src0 num-buffers=60 ! identity sleep-time=5000 ! fakesink name=sink0 \
   videotestsrc name=src1 num-buffers=60 ! identity sleep-time=5000 ! fakesink name=sink1")
echo "$out"
grep -q '^span_s=[0-9.]* span_buffers=60$' <<<"$out" || fail "span: not 60 buffers after the warm-up"
awk -v s="$(sed -n 's/^span_s=\([0-9.]*\).*/\1/p' <<<"$out")" 'BEGIN { exit !(s >= 0.145 && s < 2) }' ||
  fail "span: not in [0.145, 2) s for 30 buffers of 5 ms"
if err=$("$bin" --span-from='src*' --span-to=sink 'videotestsrc name=src num-buffers=10 ! fakesink name=sink' 2>&1); then
  fail "a warm-up longer than the stream accepted"
fi
grep -q 'pushed 10 buffers, not more than --span-warmup' <<<"$err" || fail "short stream: $err"
if err=$("$bin" --span-from=src 'videotestsrc name=src num-buffers=1 ! fakesink' 2>&1); then fail "--span-from alone accepted"; fi
grep -q -- '--span-from and --span-to go together' <<<"$err" || fail "span-from alone: $err"
echo "element_latency: all checks passed"
