#!/usr/bin/env bash
# N NVDEC streams in one process, each followed by a branch, against decode only: per case the
# best of R runs of the process's wall time and of its steady-state span (every decoder past its
# 30th frame to the last buffer at the sinks: bench/element_latency --span-from/--span-to, which
# leaves out what a process pays once, nvcodec's plugin loading and the decoders' set-up; the
# preroll, start, PLAYING-to-EOS and teardown times of each run are listed too), with the throughput
# ratios. The cases take turns in every round, so that a drift of the machine reaches them alike.
# For looking into what one element costs many streams (the pipeline bench keeps the cases it
# reports; this takes any branch). Run on the GPU machine with the bundle sourced and
# GST_PLUGIN_PATH set (device-run.sh does both); ELEMENT_LATENCY: the program (build/bench's).
# Usage: dev/gpu/stream-cases.sh STREAMS RUNS 'name|branch[|head]' ...
#   '%n' in a branch is the stream's number; head, once per process, is for an aggregator:
#   "batch|tb.sink_%n|cudatensorbatch name=tb ! other/tensors ! fakesink"
set -euo pipefail
set -f  # (branches are split into words, not globbed: no quoting inside them)
streams=$1 runs=$2; shift 2
clip=${CLIP:-.carry/bench/pipeline-clip-1080p.mp4}
[ -f "$clip" ] || clip=out/pipeline-clip-1080p.mp4
probe=${ELEMENT_LATENCY:-build/bench/element_latency}
runner=()  # (a bundle on a glibc of its own runs our programs through its loader: env.sh)
[ -n "${GST_BUNDLE_LOADER:-}" ] && runner=(gst-bundle-run)
cases=("decode only|fakesink" "$@")
declare -A wall span walls spans prerolls eoss inits teardowns
min() { awk -v t="$1" -v b="${2:-$1}" 'BEGIN {print (t < b) ? t : b}'; }
for ((r = 0; r < runs; r++)); do
  for c in "${cases[@]}"; do
    IFS='|' read -r name branch head <<< "$c"
    line="${head:-}"
    for ((n = 0; n < streams; n++)); do
      line+=" filesrc location=$clip ! qtdemux ! h264parse ! ${DECODER:-nvh264dec} name=dec$n"
      line+=" ! ${CAPS:-video/x-raw(memory:CUDAMemory)} ! ${branch//%n/$n}"
    done
    t0=$(date +%s.%N)
    if ! out=$("${runner[@]}" "$probe" --span-from='dec*' --span-to='fakesink*' $line 2>/tmp/stream-cases.err); then
      echo "$name: failed: $(tail -2 /tmp/stream-cases.err)"
      continue
    fi
    t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.3f", b - a}')
    s=$(echo "$out" | sed -n 's/^span_s=\([0-9.]*\).*/\1/p')
    p=$(echo "$out" | sed -n 's/.*preroll_s=\([0-9.]*\).*/\1/p')
    e=$(echo "$out" | sed -n 's/^wall_s=\([0-9.]*\).*/\1/p')
    i=$(echo "$out" | sed -n 's/.*init_s=\([0-9.]*\).*/\1/p')
    d=$(echo "$out" | sed -n 's/.*teardown_s=\([0-9.]*\).*/\1/p')
    walls[$name]+=" $t" spans[$name]+=" $s" prerolls[$name]+=" $p" eoss[$name]+=" $e" inits[$name]+=" $i" teardowns[$name]+=" $d"
    wall[$name]=$(min "$t" "${wall[$name]:-}") span[$name]=$(min "$s" "${span[$name]:-}")
  done
done
echo "$streams streams of $(basename "$clip"), best of $runs: process wall (s, ratio) | steady-state span (s, ratio)"
for c in "${cases[@]}"; do
  name=${c%%|*}
  [ -n "${wall[$name]:-}" ] || continue
  awk -v n="$name" -v w="${wall[$name]}" -v bw="${wall[decode only]}" -v s="${span[$name]}" \
    -v bs="${span[decode only]}" -v ws="${walls[$name]}" -v ss="${spans[$name]}" -v ps="${prerolls[$name]}" \
    -v es="${eoss[$name]}" -v is="${inits[$name]}" -v ds="${teardowns[$name]}" \
    'BEGIN {printf "%-28s %6.3f %.3fx | %6.3f %.3fx\n    walls:%s\n    spans:%s\n    start to PLAYING:%s\n" \
      "    prerolls:%s\n    PLAYING to EOS:%s\n    teardowns:%s\n", n, w, bw / w, s, bs / s, ws, ss, is, ps, es, ds}'
done
