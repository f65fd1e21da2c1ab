#!/usr/bin/env bash
# Any video file -> tensors. decodebin picks NVDEC where present (CUDA memory, zero copy).
#   pipelines/file.sh [clip] [cudatensorize properties...]
set -euo pipefail
source "$(dirname "$0")/env.sh"
FILE=${1:-$CLIP}; shift || true
need_file "$FILE"
need_props "$@"
need_built pipelines/tensor_consumer
exec "$BUILD/pipelines/tensor_consumer" \
  "filesrc location=$FILE ! decodebin ! cudatensorize $* ! appsink name=sink"
