#!/usr/bin/env bash
# Checks how dev/gpu/device-run.sh takes what a device call carried (no GPU needed: a stub
# nvidia-smi, fake packs, and no steps run): a warm machine keeps build/ and .gstbundle/ between
# calls, so a newly carried build must replace the kept one, and a chroot bundle's archive must unpack.
# Usage: bash dev/gpu/test-device-run-carry.sh   (exit 0: pass)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/repo/dev/gpu" "$tmp/stubs"
cp "$here/device-run.sh" "$tmp/repo/dev/gpu/"
printf '#!/bin/sh\necho stub GPU\n' >"$tmp/stubs/nvidia-smi" && chmod +x "$tmp/stubs/nvidia-smi"
cd "$tmp/repo"
fails=0
pack() {  # builddir marker: a carried build as device-pack.sh leaves it, and its bundle
  rm -rf .carry && mkdir -p ".carry/$1/gst"
  echo "$2" >".carry/$1/gst/which"
  mkdir -p .gstbundle && echo "BUNDLE=$2" >.gstbundle/env.sh
}
run_expect() {  # what: build/gst/which after a device-run call
  PATH=$tmp/stubs:$PATH bash dev/gpu/device-run.sh none >/dev/null 2>&1 || true
  local got; got=$(cat build/gst/which 2>/dev/null || echo none)
  if [ "$got" = "$1" ]; then echo "ok: build/ holds the $1 pack"; else
    echo "FAIL: build/ holds the '$got' pack, expected the $1 one"; fails=$((fails + 1)); fi
}
pack build first;            run_expect first
pack build-gpu second;       run_expect second   # a warm machine: build/ is still there
# A chroot pack: one archive in .carry (bundle and build), over a kept 1.22 bundle.
mkdir -p "$tmp/a/.carry/build-debian13-gpu/gst" "$tmp/a/.gstbundle"
echo third >"$tmp/a/.carry/build-debian13-gpu/gst/which"
echo "BUNDLE=126" >"$tmp/a/.gstbundle/env.sh"
echo "1.22-only" >.gstbundle/stale-plugin.so
rm -rf .carry && mkdir .carry && tar -C "$tmp/a" -cJf .carry/gst-chroot.tar.xz .gstbundle .carry
run_expect third
if [ "$(cat .gstbundle/env.sh)" = BUNDLE=126 ] && [ ! -e .gstbundle/stale-plugin.so ]; then
  echo "ok: the archive's bundle replaced the kept one"
else echo "FAIL: .gstbundle is not the archive's alone"; fails=$((fails + 1)); fi
[ $fails -eq 0 ] && echo PASS || { echo "FAILED: $fails"; exit 1; }
