#!/usr/bin/env bash
# Here (no GPU): gathers what a GPU-machine run needs into ignored folders that the device tool
# carries: .carry/ (the build's executables and plugin, same relative paths) and .gstbundle/
# (a relocatable GStreamer from ../shared/gpu/make-gst-bundle.sh, plus the libraries our
# binaries need). Usage: dev/gpu/device-pack.sh [builddir]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build}
exclude=$(git rev-parse --git-common-dir)/info/exclude  # (a worktree's .git is a file)
grep -qx '/.carry/' "$exclude" 2>/dev/null || echo '/.carry/' >> "$exclude"
grep -qx '/.gstbundle/' "$exclude" 2>/dev/null || echo '/.gstbundle/' >> "$exclude"
rm -rf .carry && mkdir -p .carry
bins=$(find "$B" -type f \( -perm -u+x -o -name '*.so' \) ! -path '*meson-*' ! -path '*.p/*' ! -name '*.o' \
       ! -name '*.a' ! -name 'build.ninja' | grep -v -E 'sanitycheck|\.sh$' || true)
extra=""
for f in $bins; do
  # OpenCV-linked binaries (the CPU reference suites) stay here: imgcodecs pulls in ~170 MiB.
  # (grep reads all of ldd's output: with -q, ldd could die of SIGPIPE and pipefail fail the test)
  if ldd "$f" 2>/dev/null | grep libopencv >/dev/null; then continue; fi
  # (the rest of the CPU suite runs in CI: left out for the 64 MiB carry limit)
  # Tests: only what device-run.sh runs (the GPU suites and the element tests).
  case "$f" in */tests/*gpu*|*/tests/*/test_*element|*/tests/*/test_tensorize_regions) ;; */tests/*) continue ;; esac
  mkdir -p ".carry/$(dirname "$f")"
  cp "$f" ".carry/$f"
  strip --strip-debug ".carry/$f" 2>/dev/null || true  # (the carry limit is 64 MiB in all)
  extra="$extra $f"
done
# The pipeline benchmark's clip (bench/pipeline_bench.sh; the GPU machine has no H.264 encoder),
# encoded once into out/ and carried along.
# (CARRY_CLIP=0 leaves it out: the tests do not need it, and the carry limit is 64 MiB in all.)
if [ "${CARRY_CLIP:-1}" = 1 ]; then
  [ -s out/pipeline-clip-1080p.mp4 ] || bash bench/make_pipeline_clip.sh out/pipeline-clip-1080p.mp4 >/dev/null
  mkdir -p .carry/bench && cp out/pipeline-clip-1080p.mp4 .carry/bench/
fi
GST_BUNDLE_EXTRA_BINS="$extra" GST_BUNDLE_PLUGINS="pnm ${GST_BUNDLE_PLUGINS:-}" \
  bash ../shared/gpu/make-gst-bundle.sh .gstbundle >/dev/null
du -sh .carry .gstbundle
