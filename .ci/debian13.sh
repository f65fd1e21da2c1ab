#!/usr/bin/env bash
# bash .ci/debian13.sh COMMAND...: COMMAND in the Debian 13 ("trixie": GStreamer 1.26) chroot (.ci/chroot.sh).
exec bash "$(dirname "$0")/chroot.sh" debian13 "$@"
