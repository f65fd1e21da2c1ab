#!/usr/bin/env bash
# A V4L2 camera -> tensors. The camera's format (often YUY2 or MJPEG) is converted to NV12 on
# the CPU, uploaded once, and tensorized on the GPU.
#   pipelines/camera.sh [/dev/video0] [cudatensorize properties...]
set -euo pipefail
source "$(dirname "$0")/env.sh"
DEV=${1:-/dev/video0}; shift || true
exec "$CUDAPREP_ROOT/build/pipelines/tensor_consumer" \
  "v4l2src device=$DEV ! decodebin ! videoconvert ! video/x-raw,format=NV12 ! cudatensorize $* ! appsink name=sink"
