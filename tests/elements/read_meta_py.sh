#!/usr/bin/env bash
# pipelines/read_meta.py (the README's Python example: the transform meta and a batch's slots)
# runs and its boxes map back where the regions are. Skips without PyGObject. Debian's python3
# (the one python3-gi is for), not one that a PATH may put first.
set -u
py=/usr/bin/python3
[ -x "$py" ] || py=python3
"$py" -c 'import gi; gi.require_version("Gst", "1.0")' 2>/dev/null || { echo "no PyGObject for $py"; exit 77; }
exec "$py" "$1"
