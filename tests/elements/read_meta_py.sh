#!/usr/bin/env bash
# Runs a Python example of pipelines/ (read_meta.py: the transform meta and a batch's slots, its
# boxes mapped back where the regions are; read_tensor.py: the tensor as a numpy array), which
# exits non-zero when what it reads is wrong. Skips without PyGObject. Debian's python3
# (the one python3-gi is for), not one that a PATH may put first.
set -u
py=/usr/bin/python3
[ -x "$py" ] || py=python3
"$py" -c 'import gi; gi.require_version("Gst", "1.0")' 2>/dev/null || { echo "no PyGObject for $py"; exit 77; }
exec "$py" "$1"
