#!/usr/bin/env bash
# The pipeline benchmark on the GPU machine (bench/README.md, "Inside a pipeline"): the elements
# behind nvh264dec on a 1080p clip of real footage, against the decode-only pipeline, in one run.
# Usage, with the GStreamer bundle sourced:  bash bench/pipeline_bench.sh [clip.mp4] [pipeline_bench.py options]
# The clip defaults to the one dev/gpu/device-pack.sh made (.carry/bench/pipeline-clip-1080p.mp4).
set -euo pipefail
cd "$(dirname "$0")/.."
clip=.carry/bench/pipeline-clip-1080p.mp4
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then clip=$1; shift; fi
[ -r "$clip" ] || [ ! -r out/pipeline-clip-1080p.mp4 ] || clip=out/pipeline-clip-1080p.mp4
[ -r "$clip" ] || { echo "no clip at $clip: run bench/make_pipeline_clip.sh $clip where gst has openh264enc" >&2; exit 2; }
command -v gst-launch-1.0 >/dev/null || { echo "gst-launch-1.0 not found: source .gstbundle/env.sh" >&2; exit 2; }
export GST_PLUGIN_PATH=${GST_PLUGIN_PATH:-$PWD/build/gst}
exec python3 bench/pipeline_bench.py --clip "$clip" "$@"
