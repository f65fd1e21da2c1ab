# Sourced by the pipeline scripts (after `set -euo pipefail`, with the script's arguments):
# --help prints the script's header comment; makes the built plugin visible (build-main/, the
# build pipelines/main.sh makes, or $CUDAPREP_BUILD_DIR) and picks an H.264 decoder: NVDEC
# (zero-copy NV12 in CUDA memory) where a GPU is usable, else libav's. Every mistake ends the
# script at once with one line naming it (exit status 2).
CUDAPREP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SCRIPT=$(basename "$0")

die() {
  echo "$SCRIPT: $*" >&2
  exit 2
}

if [ "${1:-}" = --help ] || [ "${1:-}" = -h ]; then
  sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
  exit 0
fi

BUILD=${CUDAPREP_BUILD_DIR:-build-main}
case $BUILD in /*) ;; *) BUILD=$CUDAPREP_ROOT/$BUILD ;; esac
export GST_PLUGIN_PATH=$BUILD/gst${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}
CLIP=${CLIP:-$CUDAPREP_ROOT/tests/data/vtest-h264.mp4}
OUTDIR=${OUTDIR:-$CUDAPREP_ROOT/out}

# need_built PROGRAM...: the plugin and these programs (paths in the build) are there.
need_built() {
  local f
  for f in gst/libgstcudaprep.so "$@"; do
    [ -e "$BUILD/$f" ] || die "$BUILD/$f is not built: run bash pipelines/main.sh first (or set CUDAPREP_BUILD_DIR to a build of yours)"
  done
}
# need_file PATH: a readable file (a clip, a template).
need_file() {
  [ -f "$1" ] && [ -r "$1" ] || die "no such file: $1"
}
# need_props ARG...: element properties, each name=value.
need_props() {
  local a
  for a in "$@"; do
    [[ $a == [a-z]*=* ]] || die "not an element property (name=value): '$a' (--help: usage)"
  done
}
# run_launch ARG...: gst-launch-1.0 with these arguments, its output kept in $OUTDIR/launch.log;
# on failure one line: its first error.
run_launch() {
  local log=$OUTDIR/launch.log
  if ! gst-launch-1.0 "$@" >"$log" 2>&1; then
    die "$(grep -m1 -E '^(ERROR|WARNING: erroneous)' "$log" || tail -1 "$log")"
  fi
}

if gst-inspect-1.0 nvh264dec >/dev/null 2>&1; then
  H264DEC=nvh264dec
else
  H264DEC=avdec_h264
fi
mkdir -p "$OUTDIR"
