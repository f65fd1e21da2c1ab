#!/usr/bin/env bash
# The main job. Installs what is missing, builds only what it runs (the plugin and the example
# consumers, in build-main/), then runs the shipped street clip through cudatensorize (640x640
# letterbox, RGB, fp32 NCHW) into the example consumer, which prints the tensor and transform
# and writes the first tensor back as out/letterbox.png.
# On a machine with a GPU the clip is decoded by NVDEC and tensorized on the GPU, with device
# code built for that GPU only (nvidia-smi's compute capability); otherwise device code is built
# for sm_75 plus PTX, libav decodes the clip and the CPU path computes the same tensor.
# CUDAPREP_BUILD_DIR picks another build directory, CUDAPREP_MESON_ARGS adds options to its setup
# (-Dgpu_archs=... there wins over the detected GPU). The full build (every GPU architecture, the
# tests) is tests/run.sh's, in build/.
#   pipelines/main.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source pipelines/env.sh
[ $# -eq 0 ] || die "takes no arguments (--help: usage)"
need_file "$CLIP"
scripts/bootstrap.sh --install-only
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
if [ ! -f "$BUILD/build.ninja" ]; then
  args="-Dtests=disabled -Dbench=disabled"
  if [[ " ${CUDAPREP_MESON_ARGS:-} " != *" -Dgpu_archs="* ]]; then
    # The GPUs present (compute capability 8.9 -> 89), else one architecture plus its PTX,
    # which the driver compiles for any newer GPU.
    archs=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null |
      grep -E '^[0-9]+\.[0-9]+$' | tr -d . | sort -un | paste -sd, || true)
    args+=" -Dgpu_archs=${archs:-75}"
  fi
  meson setup "$BUILD" $args ${CUDAPREP_MESON_ARGS:-}
fi
ninja -C "$BUILD" gst/libgstcudaprep.so pipelines/tensor_consumer pipelines/batch_consumer
echo "decoder: $H264DEC"
"$BUILD/pipelines/tensor_consumer" --preview "$OUTDIR/letterbox.png" \
  "filesrc location=$CLIP ! qtdemux ! h264parse ! $H264DEC ! cudatensorize width=640 height=640 ! appsink name=sink"
