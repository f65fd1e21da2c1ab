#!/usr/bin/env bash
# The pipeline benchmark on the GPU machine (bench/README.md, "Inside a pipeline"): the elements
# behind nvh264dec on a 1080p clip of real footage, against the decode-only pipeline, in one run.
# Usage, with the GStreamer bundle sourced:  bash bench/pipeline_bench.sh [clip.mp4] [pipeline_bench.py options]
# The clip defaults to the one dev/gpu/device-pack.sh made (.carry/bench/pipeline-clip-1080p.mp4).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/bench_clip.sh
exec python3 bench/pipeline_bench.py --clip "$clip" "$@"
