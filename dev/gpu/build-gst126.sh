#!/usr/bin/env bash
# Builds this checkout for the GPU machine's GStreamer 1.26 runtime (make-gst126-bundle.sh): in
# the Debian 13 chroot (.ci/debian13.sh), device code for sm_90, -Werror, into BUILDDIR (default
# build-debian13-gpu). Inside, the checkout is also bound at its path here (in a private mount
# namespace), so that the paths compiled into the tests (tests/data) hold on the GPU machine,
# whose copy of the repository sits at the same path as here.
# Usage: dev/gpu/build-gst126.sh [builddir]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-debian13-gpu}
case $build in /* | *..*) echo "build-gst126: give a build folder inside the checkout" >&2; exit 2 ;; esac
# (the mount point is made for the build and removed after it: the chroot keeps nothing)
unshare --mount --propagation private bash .ci/debian13.sh sh -c '
  repo=$1 build=$2
  mkdir -p "$repo" && mount --bind /src "$repo" || exit 1
  cd "$repo" && export PATH=/usr/local/cuda/bin:$PATH
  { [ -f "$build/build.ninja" ] || meson setup "$build" -Dgpu_archs=90 -Dwerror=true; } &&
    ninja -C "$build" -j2
  rc=$?
  cd / && umount "$repo" && rmdir -p "$repo" 2>/dev/null
  exit $rc' sh "$PWD" "$build"
