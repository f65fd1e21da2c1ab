#!/usr/bin/env bash
# The regression suite's throughput on the GPU machine (bench/README.md, "The regression suite"):
# `cudaprep-regress suite check` over 8 clips of 1080p H.264 (540 frames each; NVDEC and
# cudatensorize, digests of every frame) at -j 1, -j 4 and, with two GPUs, --gpus 0,1, against the
# same clips' decode-only pipelines 4 at a time. Prints one markdown table last.
# Usage, with the GStreamer bundle sourced:  bash bench/regress_suite_bench.sh [clip.mp4] [regress_suite_bench.py options]
# The clip defaults to the one dev/gpu/device-pack.sh carried (.carry/bench/pipeline-clip-1080p.mp4).
# Without a GPU (the CPU path, any short clip): DECODER=avdec_h264 FRAMES=0 bash bench/regress_suite_bench.sh CLIP
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/bench_clip.sh
exec python3 bench/regress_suite_bench.py --clip "$clip" --decoder "${DECODER:-nvh264dec}" \
    --frames "${FRAMES:-540}" "$@"
