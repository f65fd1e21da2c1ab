#!/usr/bin/env bash
# On the GPU machine: the kernel benchmarks and the pipeline benchmark of two builds in one run,
# alternating old, new, old, new, so that both see the same host and the same clocks.
#   dev/gpu/before-after.sh OLD_DIR [pipeline_bench.py options]
# OLD_DIR holds the baseline's gst/libgstcudaprep.so and bench/ programs; the new ones are
# build/'s. Prints the fused kernels' rows and the pipeline tables; all logs in
# $OUT/before-after-logs.tgz (or /tmp).
set -u
cd "$(dirname "$0")/../.."
old=$1
shift
out=${OUT:-/tmp}
source .gstbundle/env.sh
export XDG_RUNTIME_DIR=/tmp
clip=.carry/bench/pipeline-clip-1080p.mp4
for round in 1 2; do
  for side in old new; do
    dir=$old
    [ $side = new ] && dir=build
    for b in tensorize_bench templatematch_bench; do
      timeout 120 "$dir/bench/$b" >"/tmp/ba-$b-$side-$round.log" 2>&1
      echo "$b $side round $round: rc=$?"
    done
    # the fused kernels' rows (us) and the matcher's default column (ms)
    grep -E "\| tensorize_(cuda|batch_cuda) \(" "/tmp/ba-tensorize_bench-$side-$round.log" |
      awk -F'|' -v s="$side$round" '{printf "%s | %s | %s | %s\n", s, $2, $3, $4}'
    grep -E "^\| (1920x1080|256x256 region)" "/tmp/ba-templatematch_bench-$side-$round.log" |
      awk -F'|' -v s="$side$round" '{printf "%s | match %s | %s\n", s, $2, $3}'

  done
done
for side in old new new-again; do
  dir=$old
  [ $side != old ] && dir=build
  GST_PLUGIN_PATH=$PWD/$dir/gst GST_REGISTRY=/tmp/ba-$side.bin timeout 200 python3 bench/pipeline_bench.py \
    --clip "$clip" --probe-bin "$dir/bench/element_latency" --floor-bin "$dir/bench/host_floor" "$@" \
    >"/tmp/ba-pipeline-$side.log" 2>&1
  echo "pipeline_bench $side: rc=$?"
  tail -22 "/tmp/ba-pipeline-$side.log"
done
tar -C /tmp -czf "$out/before-after-logs.tgz" $(cd /tmp && ls ba-*.log)
