#!/usr/bin/env bash
# Builds this checkout for the GPU machine's GStreamer of a CI chroot (make-chroot-bundle.sh):
# in the chroot of .ci/chroot.sh NAME (debian13: GStreamer 1.26; forky: 1.28), device code for
# sm_90, -Werror, into BUILDDIR (default build-NAME-gpu). Inside, the checkout is also bound at its
# path here (in a private mount namespace), so that the paths compiled into the tests
# (tests/data) hold on the GPU machine, whose copy of the repository sits at the same path as here.
# forky: nvcc's host compiler is .ci/cuda-host/g++ (as in CI; see there).
# Usage: dev/gpu/build-in-chroot.sh debian13|forky [builddir [target...]]   (default: everything)
set -euo pipefail
cd "$(dirname "$0")/../.."
name=${1:-}
case $name in
  debian13) ccbin= ;;
  forky) ccbin=-Dcuda_ccbindir=$PWD/.ci/cuda-host/g++ ;;
  *) echo "usage: build-in-chroot.sh debian13|forky [builddir]" >&2; exit 2 ;;
esac
build=${2:-build-$name-gpu}
shift $(($# < 2 ? $# : 2))
case $build in /* | *..*) echo "build-in-chroot: give a build folder inside the checkout" >&2; exit 2 ;; esac
# (the mount point is made for the build and removed after it: the chroot keeps nothing)
unshare --mount --propagation private bash .ci/chroot.sh "$name" sh -c '
  repo=$1 build=$2 ccbin=$3
  shift 3
  mkdir -p "$repo" && mount --bind /src "$repo" || exit 1
  cd "$repo" && export PATH=/usr/local/cuda/bin:$PATH
  { [ -f "$build/build.ninja" ] || meson setup "$build" -Dgpu_archs=90 -Dwerror=true $ccbin; } &&
    ninja -C "$build" -j2 "$@"
  rc=$?
  cd / && umount "$repo" && rmdir -p "$repo" 2>/dev/null
  exit $rc' sh "$PWD" "$build" "$ccbin" "$@"
