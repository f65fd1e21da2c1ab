#!/usr/bin/env bash
# Any video file -> tensors. decodebin picks NVDEC where present (CUDA memory, zero copy).
#   pipelines/file.sh clip.mp4 [cudatensorize properties...]
set -euo pipefail
source "$(dirname "$0")/env.sh"
FILE=${1:-$CLIP}; shift || true
exec "$CUDAPREP_ROOT/build/pipelines/tensor_consumer" \
  "filesrc location=$FILE ! decodebin ! cudatensorize $* ! appsink name=sink"
