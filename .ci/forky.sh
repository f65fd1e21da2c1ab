#!/usr/bin/env bash
# bash .ci/forky.sh COMMAND...: COMMAND in the Debian forky (testing: GStreamer 1.28) chroot (.ci/chroot.sh).
exec bash "$(dirname "$0")/chroot.sh" forky "$@"
