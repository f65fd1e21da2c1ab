#!/usr/bin/env bash
# A relocatable GStreamer runtime for the GPU machine, taken from a CI chroot that .ci/chroot.sh
# keeps (debian13: GStreamer 1.26.2, GCC 14, glibc 2.41; forky: GStreamer 1.28, GCC 16, glibc
# 2.43): the tools and plugin scanner, the plugins our tests and pipelines use, nvcodec, the
# analytics library and objectdetectionoverlay, libgstcheck, every library they need (libstdc++
# included), and the chroot's own loader and glibc for hosts whose glibc is older than the bundle
# needs. libcuda.so.1 always comes from the host's driver. Run it here, not in the chroot (it
# reads the chroot's files; no root needed).
# Usage: dev/gpu/make-chroot-bundle.sh debian13|forky DIR
#   GST_BUNDLE_EXTRA_BINS="build/tests/foo ..."  also the libraries these binaries need
#   GST_BUNDLE_PLUGINS="libav ..."               more plugins
# Then: source DIR/env.sh (see the comments there); GST_PLUGIN_PATH at our plugin.
set -euo pipefail
usage="usage: make-chroot-bundle.sh debian13|forky DIR"
name=${1:?$usage}
out=${2:?$usage}
case $name in debian13 | forky) ;; *) echo "$usage" >&2; exit 2 ;; esac
root=${CUDAPREP_CHROOT_CACHE:-/var/cache/cudaprep}/$name-chroot
sys=$root/usr/lib/x86_64-linux-gnu
loader=$root/usr/lib64/ld-linux-x86-64.so.2
die() { echo "make-chroot-bundle: $*" >&2; exit 1; }
[ -x "$loader" ] && [ -x "$root/usr/bin/gst-launch-1.0" ] ||
  die "no $name chroot with GStreamer in $root: make it with 'bash .ci/chroot.sh $name --prepare'"

# (videocrop, videobox, videofilter's videoflip, compositor: the 1.28 transform-matrix tests)
plugins="coreelements videotestsrc videoconvertscale app isomp4 matroska videoparsersbad playback
 typefindfunctions png pnm multifile rawparse videorate debug openh264 jpeg coretracers nvcodec
 analyticsoverlay videocrop videobox videofilter compositor ${GST_BUNDLE_PLUGINS:-}"
tools="$root/usr/bin/gst-launch-1.0 $root/usr/bin/gst-inspect-1.0
 $sys/gstreamer1.0/gstreamer-1.0/gst-plugin-scanner"
# Libraries our binaries may need that nothing above links (the element tests, the analytics meta).
libs="$sys/libgstcheck-1.0.so.0 $sys/libgstanalytics-1.0.so.0 $sys/libgstapp-1.0.so.0"
# glibc's own libraries: a loader and its libc only work together, so they live apart (glibc/)
# and are used only through that loader. The stubs (libdl, libpthread, librt) are for the
# host libraries a process loads (libcuda.so.1 links them).
glibc_libs="libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1 libresolv.so.2"

rm -rf "$out"
mkdir -p "$out/bin" "$out/libexec" "$out/lib" "$out/glibc" "$out/plugins" "$out/gio-modules"
elfs=()
for n in $plugins; do
  f=$sys/gstreamer-1.0/libgst$n.so
  [ -f "$f" ] || die "no plugin $n in the chroot ($f)"
  cp -L "$f" "$out/plugins/"; elfs+=("$f")
done
for f in $tools; do cp -L "$f" "$out/libexec/"; elfs+=("$f"); done
for f in $libs; do cp -L "$f" "$out/lib/"; elfs+=("$f"); done
cp -L "$loader" "$out/glibc/"
for l in $glibc_libs; do cp -L "$sys/$l" "$out/glibc/"; done

# The dependency closure, resolved by the chroot's own loader among the chroot's libraries only.
is_glibc() { case " $glibc_libs ld-linux-x86-64.so.2 " in *" $1 "*) return 0 ;; esac; return 1; }
for f in "${elfs[@]}" ${GST_BUNDLE_EXTRA_BINS:-}; do
  "$loader" --library-path "$sys" --list "$(realpath "$f")" ||
    die "the chroot's loader cannot list what $f needs"
done | awk '$2 == "=>" { print $1, ($3 == "not" ? "(not-found)" : $3) }' |
  sort -u | while read -r name path; do
    name=${name##*/}  # (the loader is listed by its path)
    is_glibc "$name" && continue
    case $(realpath "$path" 2>/dev/null) in
      "$root"/*) cp -L "$path" "$out/lib/$name" ;;
      "$PWD"/*) ;;  # our build's own libraries travel with it
      *) die "$name: not in the chroot ($path); install its package there" ;;
    esac
  done

# The newest glibc symbol version anything here asks for (env.sh compares the host's with it).
glibc_needed=$(find "$out/lib" "$out/plugins" "$out/libexec" -type f -print0 |
  xargs -0 objdump -p ${GST_BUNDLE_EXTRA_BINS:-} 2>/dev/null | grep -oE '\bGLIBC_2\.[0-9]+' |
  sed 's/GLIBC_//' | sort -uV | tail -1)
[ -n "$glibc_needed" ] || die "objdump found no glibc versions in what was bundled"
package_version() {
  awk -v p="$1" '$1 == "Package:" { name = $2 } name == p && $1 == "Version:" { print $2; exit }' \
    "$root/var/lib/dpkg/status"
}
gst_version=$(package_version libgstreamer1.0-0)
glibc_version=$(package_version libc6)

dir=$(dirname "$0")
cp "$dir/chroot-bundle-run.sh" "$out/bin/gst-bundle-run"
for t in $tools; do  # (wrappers used when the bundle's glibc runs things; see env.sh)
  printf '#!/bin/sh\nexec "${0%%/*}/gst-bundle-run" "${0%%/*}/../libexec/%s" "$@"\n' "${t##*/}" \
    >"$out/bin/${t##*/}"
done
chmod +x "$out"/bin/*
sed -e "s/@GLIBC_NEEDED@/$glibc_needed/" -e "s/@GST_VERSION@/$gst_version/" \
  -e "s/@GLIBC_VERSION@/$glibc_version/" -e "s/@CHROOT@/$name/" "$dir/chroot-bundle-env.sh" >"$out/env.sh"
echo "GStreamer $gst_version ($name), needs glibc >= $glibc_needed or its own ($glibc_version)"
du -sh "$out"
