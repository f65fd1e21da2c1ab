#!/usr/bin/env bash
# A V4L2 camera -> tensors. The camera's raw format (YUY2, UYVY, NV12, ...) goes to cudatensorize
# as it is, uploaded once and converted on the GPU: videoconvert stays in passthrough and works
# only for a format cudatensorize does not take (a 4:2:2 MJPEG decoded to Y42B, say).
#   pipelines/camera.sh [/dev/video0] [cudatensorize properties...]
set -euo pipefail
source "$(dirname "$0")/env.sh"
DEV=${1:-/dev/video0}; shift || true
need_props "$@"
[ -e "$DEV" ] || die "no such camera device: $DEV"
need_built pipelines/tensor_consumer
exec "$BUILD/pipelines/tensor_consumer" \
  "v4l2src device=$DEV ! decodebin ! videoconvert ! cudatensorize $* ! appsink name=sink"
