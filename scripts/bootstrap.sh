#!/usr/bin/env bash
# Installs what gst-cudaprep needs from Debian's packages (when run as root and something is
# missing), then configures and builds it in build/ (or $CUDAPREP_BUILD_DIR, set up with
# $CUDAPREP_MESON_ARGS). Idempotent: a second run only rebuilds.
# The CUDA path is built when nvcc is found (PATH or /usr/local/cuda/bin); otherwise CPU only.
# Works on Debian 12 and 13 (the package names are the same in both).
# --list-packages prints the package list; --install-only installs without building.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS="meson ninja-build g++ pkg-config python3
 libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev libgstreamer-plugins-bad1.0-dev
 gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad
 gstreamer1.0-libav libgtest-dev libopencv-dev opencv-doc libjson-glib-dev libssl-dev
 python3-gi gir1.2-gstreamer-1.0 python3-numpy"
if [ "${1:-}" = --list-packages ]; then
  echo $PKGS
  exit 0
fi
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "bootstrap: missing packages:$missing (run as root, or install them)" >&2
    exit 1
  fi
  echo "bootstrap: installing$missing"
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >/dev/null
fi
if [ "${1:-}" = --install-only ]; then
  exit 0
fi

if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
build=${CUDAPREP_BUILD_DIR:-build}
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" ${CUDAPREP_MESON_ARGS:-}
fi
ninja -C "$build"
