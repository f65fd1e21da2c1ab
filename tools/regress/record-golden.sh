#!/usr/bin/env bash
# Re-records the shipped golden tests/data/golden/vtest-cpu, deliberately: after a change of
# the elements' output that is intended (tools/regress/README.md, "Re-recording goldens").
#   tools/regress/record-golden.sh [OUT_DIR]      (default: tests/data/golden/vtest-cpu)
# Environment: BUILD (build folder, default build/), TOOL (default $BUILD/tools/regress/
# cudaprep-regress), PLUGIN_DIR (the plugin to record with, default $BUILD/gst).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
TOOL=${TOOL:-$BUILD/tools/regress/cudaprep-regress}
export GST_PLUGIN_PATH=${PLUGIN_DIR:-$BUILD/gst}
CLIP=$ROOT/tests/data/vtest-h264.mp4
OUT=${1:-$ROOT/tests/data/golden/vtest-cpu}

# The CPU path (backend=cpu) after libav's decoder: the reference every platform is checked
# against. 64x64 fp32 NCHW tensors (48 KiB a frame) and a template cut from frame 0 (the man
# crossing the car park, 40x80 at 496,154), up to 2 matches a frame.
PIPELINE='filesrc location={clip} ! qtdemux ! h264parse ! avdec_h264 ! tee name=t'
# chroma-site pinned: decoders may disagree on the clip's siting (avdec_h264 says mpeg2, NVDEC's
# caps may say otherwise) and tools/regress/gpu-check.sh swaps the decoder; the golden checks
# the kernels.
PIPELINE+=' t. ! queue ! cudatensorize backend=cpu width=64 height=64 chroma-site=mpeg2 ! appsink name=tensor'
PIPELINE+=' t. ! queue ! cudatemplatematch backend=cpu template-rect="<496,154,40,80>" max-matches=2'
PIPELINE+=' threshold=0.5 draw=false ! appsink name=matches'

"$TOOL" record --clip "$CLIP" --pipeline "$PIPELINE" --out "$OUT" --store full --force  # deliberately
# a golden must reproduce itself before it is committed
"$TOOL" check --clip "$CLIP" --golden "$OUT"
echo "golden recorded in $OUT: review 'git diff --stat $OUT', then commit it with the change that needs it"
