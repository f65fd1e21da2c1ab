#!/usr/bin/env bash
# Here (no GPU): gathers what a GPU-machine run needs into ignored folders that the device tool
# carries: .carry/ (the build's executables and plugin, same relative paths) and .gstbundle/
# (a relocatable GStreamer from ../shared/gpu/make-gst-bundle.sh, plus the libraries our
# binaries need). Usage: dev/gpu/device-pack.sh [builddir]   (default: build)
# GST_CHROOT=debian13 (GStreamer 1.26: output=video-meta, the 1.24+ stream-ordered handoff) or
# forky (1.28: model-info, the tensors caps field) instead: the build made (or brought up to
# date) in that CI chroot by build-in-chroot.sh (default: build-NAME-gpu) and the bundle of
# make-chroot-bundle.sh. Only what device-run.sh runs is built there (BENCH=1: the benchmarks too).
set -euo pipefail
cd "$(dirname "$0")/../.."
GST_CHROOT=${GST_CHROOT:-}
if [ -n "$GST_CHROOT" ]; then
  B=${1:-build-$GST_CHROOT-gpu}
  pack_pattern='^(gst/libgstcudaprep\.so|pipelines/[a-z_]+|tools/regress/cudaprep-regress|tests/.*gpu[^/]*'
  pack_pattern+='|tests/[^/]+/test_[^/]*element|tests/elements/test_(tensorize_regions|tensors_caps|transform_matrix|model_info_upstream)'
  [ "${BENCH:-0}" = 1 ] && pack_pattern+='|bench/.*'
  pack_pattern+=')$'
  # What device-run.sh runs (the GPU suites, the element tests, the consumers, the regress
  # tool; benchmarks with BENCH=1), not the CPU suites that stay here.
  targets=$(sed -n 's/^build \([^ :]*\): cpp_LINKER.*/\1/p; s/^build \([^ :]*\): cuda_LINKER.*/\1/p' \
    "$B/build.ninja" 2>/dev/null | grep -E "$pack_pattern" || true)
  log=$(bash dev/gpu/build-in-chroot.sh "$GST_CHROOT" "$B" $targets 2>&1) ||
    { echo "$log" | tail -30 >&2; echo "device-pack: the $GST_CHROOT build of $B failed" >&2; exit 1; }
else
  B=${1:-build}
fi
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
  # (and, built on 1.28 only, its own tests: they then run against the GPU machine's driver)
  case "$f" in
    */tests/*gpu* | */tests/*/test_*element | */tests/*/test_tensorize_regions) ;;
    */tests/*/test_tensors_caps | */tests/*/test_transform_matrix | */tests/*/test_model_info_upstream) ;;
    */tests/*) continue ;;
  esac
  mkdir -p ".carry/$(dirname "$f")"
  cp "$f" ".carry/$f"
  strip --strip-debug ".carry/$f" 2>/dev/null || true  # (the carry limit is 64 MiB in all)
  extra="$extra $f"
done
# The benchmarks' clip (bench/pipeline_bench.sh, bench/regress_suite_bench.sh: 1080p, 540 frames,
# 6.5 MB; the GPU machine has no H.264 encoder), encoded once into out/ and carried along; a clip
# of another frame count there (an older one) is made again.
# (CARRY_CLIP=0 leaves it out: the tests do not need it, and the carry limit is 64 MiB in all.)
if [ "${CARRY_CLIP:-1}" = 1 ]; then
  clip_frames=$(python3 -c 'import sys; sys.path.insert(0, "bench"); import regress_suite_bench as b
print(b.mp4_frames(sys.argv[1]))' out/pipeline-clip-1080p.mp4 2>/dev/null || echo none)
  [ "$clip_frames" = 540 ] || rm -f out/pipeline-clip-1080p.mp4
  [ -s out/pipeline-clip-1080p.mp4 ] || bash bench/make_pipeline_clip.sh out/pipeline-clip-1080p.mp4 >/dev/null
  mkdir -p .carry/bench && cp out/pipeline-clip-1080p.mp4 .carry/bench/
fi
# OPENCV=1: the OpenCV CPU anchor of the template benchmarks and its libraries (.carry/opencv/;
# the GPU machine has no OpenCV; device-run.sh bank runs it with them).
if [ "${OPENCV:-0}" = 1 ] && [ -x "$B/bench/template_mask_cpu_bench" ]; then
  mkdir -p .carry/opencv ".carry/$B/bench"
  cp "$B/bench/template_mask_cpu_bench" ".carry/$B/bench/"
  for l in $(ldd "$B/bench/template_mask_cpu_bench" | awk '/=> \// {print $3}' |
             grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so'); do
    cp -L "$l" .carry/opencv/
  done
fi
if [ -n "$GST_CHROOT" ]; then
  GST_BUNDLE_EXTRA_BINS="$extra" bash dev/gpu/make-chroot-bundle.sh "$GST_CHROOT" .gstbundle >/dev/null
  du -sh .carry .gstbundle
  # Together over the 64 MiB a call carries (the bundle has libstdc++, glibc, the overlay's
  # cairo/pango): one xz archive in .carry (about a third), unpacked by device-run.sh.
  packed=$(ls -d .carry/* .carry/.[!.]* 2>/dev/null || true)
  tar -cf - .gstbundle $packed | xz -T2 -6 >.carry/gst-chroot.tar.xz.part
  rm -rf $packed && mv .carry/gst-chroot.tar.xz.part .carry/gst-chroot.tar.xz
  carried=".carry"
else
  GST_BUNDLE_EXTRA_BINS="$extra" GST_BUNDLE_PLUGINS="pnm ${GST_BUNDLE_PLUGINS:-}" \
    bash ../shared/gpu/make-gst-bundle.sh .gstbundle >/dev/null
  carried=".carry .gstbundle"
fi
du -sh $carried
echo "carry: $carried; with the tracked files: $(du -scm $carried $(git ls-files) | tail -1 | cut -f1) MiB (the limit: 64)"
