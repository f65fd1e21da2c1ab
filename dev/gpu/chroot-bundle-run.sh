#!/bin/sh
# gst-bundle-run PROGRAM [ARG...] (bin/ of a chroot's GStreamer bundle): runs a program of the
# bundle or one built against it (our tests) with the bundle's libraries. When env.sh chose the
# bundle's own glibc (GST_BUNDLE_LOADER set: the host's is too old), that loader runs it, which
# takes an ELF executable only; otherwise env.sh's LD_LIBRARY_PATH is enough and it just runs.
[ -n "${GST_BUNDLE_LOADER:-}" ] || exec "$@"
name=$1; shift
case $name in
  */*) prog=$name ;;
  *) prog=$(command -v "$name") || { echo "gst-bundle-run: no program $name" >&2; exit 127; } ;;
esac
exec "$GST_BUNDLE_LOADER" --library-path "$GST_BUNDLE_LIBRARY_PATH" --argv0 "$prog" "$prog" "$@"
