#!/usr/bin/env bash
# The regression check of the GPU path, for the GPU machine (no Debian, no GStreamer packages
# there: a relocatable bundle instead). Here, first: dev/gpu/device-pack.sh (carries the build,
# this tool and the libraries it needs, json-glib included, in .carry/ and .gstbundle/; add
# GST_BUNDLE_PLUGINS=libav to also get avdec_h264 there). There:
#   source .gstbundle/env.sh; export GST_PLUGIN_PATH=$PWD/build/gst     (dev/gpu/device-run.sh
#   bash tools/regress/gpu-check.sh [OUTDIR]                              does both, then this)
#
# 1. the GPU path (backend=cuda, nvh264dec's NV12 in CUDA memory, zero copy) against the shipped
#    CPU golden tests/data/golden/vtest-cpu: exactly (reported), and within the tolerance
#    TENSOR_TOL (default max-abs=1e-5), MATCH_POS_TOL px and MATCH_SCORE_TOL (default 1e-6)
#    (pass/fail);
# 2. the GPU path fed from system memory (avdec_h264, frames uploaded), where avdec_h264 exists;
# 3. a GPU recording and a CPU recording of the clip made here, compared with `compare`;
# 4. two GPU recordings compared exactly (the GPU path is deterministic);
# 5. batches: three regions of each frame with batch-size 2 (two tensors a frame, one slot
#    empty) on the GPU path, checked slot by slot against a CPU recording made here.
# Reports and recordings go to OUTDIR (default /tmp/regress-gpu-check). A summary is printed last.
# Exit status: 0 when every check passes, 1 when one fails, 2 when the setup is not usable.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
BUILD=${BUILD:-build}
TOOL=${TOOL:-$ROOT/$BUILD/tools/regress/cudaprep-regress}
OUTDIR=${1:-${TMPDIR:-/tmp}/regress-gpu-check}
TENSOR_TOL=${TENSOR_TOL:-max-abs=1e-5}
MATCH_POS_TOL=${MATCH_POS_TOL:-1e-6}
MATCH_SCORE_TOL=${MATCH_SCORE_TOL:-1e-6}
CLIP=$ROOT/tests/data/vtest-h264.mp4
GOLDEN=$ROOT/tests/data/golden/vtest-cpu
TOLS=(--tensor-tol "$TENSOR_TOL" --match-pos-tol "$MATCH_POS_TOL" --match-score-tol "$MATCH_SCORE_TOL")

if ! command -v gst-inspect-1.0 >/dev/null 2>&1 && [ -f "$ROOT/.gstbundle/env.sh" ]; then
  source "$ROOT/.gstbundle/env.sh"
fi
export GST_PLUGIN_PATH=${GST_PLUGIN_PATH:-$ROOT/$BUILD/gst}
export GST_REGISTRY=${GST_REGISTRY:-${TMPDIR:-/tmp}/regress-gpu-check-registry.bin}
mkdir -p "$OUTDIR"

die() { echo "gpu-check: $*" >&2; echo "RESULT: SETUP ERROR: $*"; exit 2; }
[ -x "$TOOL" ] || die "no $TOOL: build first (or set TOOL=...)"
# A bundle on its own glibc (env.sh: the host's is older) runs the tool through its loader.
tool_run=()
list_libs() { ldd "$TOOL"; }
if [ -n "${GST_BUNDLE_LOADER:-}" ]; then
  tool_run=(gst-bundle-run)
  list_libs() { "$GST_BUNDLE_LOADER" --library-path "$GST_BUNDLE_LIBRARY_PATH" --list "$TOOL"; }
fi
missing=$(list_libs 2>/dev/null | awk '/not found/ {print $1}' | tr '\n' ' ')
[ -z "$missing" ] || die "$TOOL cannot load: $missing- build the bundle with the tool in GST_BUNDLE_EXTRA_BINS (dev/gpu/device-pack.sh does)"
command -v gst-inspect-1.0 >/dev/null 2>&1 || die "no GStreamer: source .gstbundle/env.sh first"
gst-inspect-1.0 cudatensorize >/dev/null 2>&1 || die "the cudaprep plugin is not found in GST_PLUGIN_PATH=$GST_PLUGIN_PATH"
GPU_NAME=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
[ -n "$GPU_NAME" ] || die "no GPU (nvidia-smi lists none)"
has() { gst-inspect-1.0 "$1" >/dev/null 2>&1; }

# the golden's pipeline, and its GPU twin: NVDEC where there is one, backend=cuda
GOLDEN_PIPELINE=$(sed -n 's/^  "pipeline": "\(.*\)",$/\1/p' "$GOLDEN/manifest.json" | sed 's/\\"/"/g')
[ -n "$GOLDEN_PIPELINE" ] || die "cannot read the pipeline from $GOLDEN/manifest.json"
CPU_SIDE=${GOLDEN_PIPELINE}
GPU_SIDE=${GOLDEN_PIPELINE//backend=cpu/backend=cuda}
if has nvh264dec; then
  DEC=nvh264dec
  GPU_PIPELINE=${GPU_SIDE/avdec_h264/nvh264dec}
else
  DEC="avdec_h264 (no nvh264dec here)"
  GPU_PIPELINE=$GPU_SIDE
fi
if has avdec_h264; then
  CPU_PIPELINE=$CPU_SIDE
  CPU_DEC=avdec_h264
  SYSMEM_PIPELINE=$GPU_SIDE
else
  # no libav in the bundle: NVDEC decodes, the frames come down to system memory for the CPU path
  # (the caps filter keeps them there: the elements would otherwise negotiate CUDA memory)
  CPU_PIPELINE=${CPU_SIDE/avdec_h264/nvh264dec ! cudadownload ! video/x-raw}
  CPU_DEC="nvh264dec ! cudadownload (no avdec_h264 here)"
  SYSMEM_PIPELINE=""
fi

# 5: batches, from the same decoders; the CPU side's decoder as for CPU_PIPELINE
BATCH_TAIL='cudatensorize backend=cpu width=64 height=64 batch-size=2 rois="<<0,0,300,200>,<400,100,200,300>,<100,300,250,250>>" ! appsink name=tensor'
BATCH_CPU_SIDE="filesrc location={clip} ! qtdemux ! h264parse ! avdec_h264 ! $BATCH_TAIL"
BATCH_GPU_PIPELINE=${BATCH_CPU_SIDE//backend=cpu/backend=cuda}
has nvh264dec && BATCH_GPU_PIPELINE=${BATCH_GPU_PIPELINE/avdec_h264/nvh264dec}
BATCH_CPU_PIPELINE=$BATCH_CPU_SIDE
has avdec_h264 || BATCH_CPU_PIPELINE=${BATCH_CPU_SIDE/avdec_h264/nvh264dec ! cudadownload ! video/x-raw}

summary=()
failed=0
step() {  # name, must-pass (yes/no), command...
  local name=$1 must=$2; shift 2
  local log="$OUTDIR/$name.log"
  local t0=$(date +%s)
  "$@" >"$log" 2>&1
  local rc=$?
  local verdict="ok"
  if [ $rc -ne 0 ]; then
    if [ "$must" = yes ]; then verdict="FAILED"; failed=1; else verdict="(info)"; fi
    tail -40 "$log"
  fi
  local result=$(grep -E '^RESULT|^recorded|^cudaprep-regress: error' "$log" | tail -1 | cut -c1-150)
  local figures=$(grep -E "^  sink '.*' \((tensor|matches)\): [0-9]+ frames compared" "$log" | sed -E 's/^  //' | cut -c1-150 | tr '\n' '|' | sed 's/|$//; s/|/\n      /g')
  summary+=("$(printf '%-24s %-7s rc=%s %3ss  %s' "$name" "$verdict" "$rc" "$(( $(date +%s) - t0 ))" "$result")")
  [ -n "$figures" ] && summary+=("      $figures")
  return $rc
}

echo "gpu-check: $GPU_NAME; GPU path decoder: $DEC; CPU path decoder: $CPU_DEC; reports in $OUTDIR"
step gpu-vs-golden-exact no "${tool_run[@]}" "$TOOL" check --clip "$CLIP" --golden "$GOLDEN" --pipeline "$GPU_PIPELINE" \
  --report "$OUTDIR/gpu-vs-golden-exact.txt"
EXACT=$?
step gpu-vs-golden yes "${tool_run[@]}" "$TOOL" check --clip "$CLIP" --golden "$GOLDEN" --pipeline "$GPU_PIPELINE" "${TOLS[@]}" \
  --report "$OUTDIR/gpu-vs-golden.txt"
if [ -n "$SYSMEM_PIPELINE" ]; then
  step gpu-sysmem-vs-golden yes "${tool_run[@]}" "$TOOL" check --clip "$CLIP" --golden "$GOLDEN" --pipeline "$SYSMEM_PIPELINE" \
    "${TOLS[@]}" --report "$OUTDIR/gpu-sysmem-vs-golden.txt"
fi
step record-gpu yes "${tool_run[@]}" "$TOOL" record --clip "$CLIP" --pipeline "$GPU_PIPELINE" --out "$OUTDIR/gpu" --force
step record-gpu-again yes "${tool_run[@]}" "$TOOL" record --clip "$CLIP" --pipeline "$GPU_PIPELINE" --out "$OUTDIR/gpu2" --force
step record-cpu yes "${tool_run[@]}" "$TOOL" record --clip "$CLIP" --pipeline "$CPU_PIPELINE" --out "$OUTDIR/cpu" --force
step compare-cpu-gpu yes "${tool_run[@]}" "$TOOL" compare "$OUTDIR/cpu" "$OUTDIR/gpu" "${TOLS[@]}" --report "$OUTDIR/compare-cpu-gpu.txt"
step compare-gpu-gpu yes "${tool_run[@]}" "$TOOL" compare "$OUTDIR/gpu" "$OUTDIR/gpu2" --report "$OUTDIR/compare-gpu-gpu.txt"
step record-batch-cpu yes "${tool_run[@]}" "$TOOL" record --clip "$CLIP" --pipeline "$BATCH_CPU_PIPELINE" --out "$OUTDIR/batch-cpu" --force
step batch-gpu-vs-cpu yes "${tool_run[@]}" "$TOOL" check --clip "$CLIP" --golden "$OUTDIR/batch-cpu" --pipeline "$BATCH_GPU_PIPELINE" \
  "${TOLS[@]}" --report "$OUTDIR/batch-gpu-vs-cpu.txt"

echo
echo "================ regress gpu-check summary"
echo "device:     $GPU_NAME"
echo "pipelines:  GPU: $GPU_PIPELINE"
echo "            CPU: $CPU_PIPELINE"
echo "            batches: GPU: $BATCH_GPU_PIPELINE"
echo "                     CPU: $BATCH_CPU_PIPELINE"
echo "tolerance:  tensors $TENSOR_TOL, match position $MATCH_POS_TOL px, match score $MATCH_SCORE_TOL"
printf '%s\n' "${summary[@]}"
if [ $EXACT -eq 0 ]; then
  echo "the GPU path is bit-identical to the CPU golden"
else
  echo "the GPU path is NOT bit-identical to the CPU golden (see gpu-vs-golden-exact.txt)"
fi
if [ $failed -eq 0 ]; then
  echo "RESULT: PASS (GPU path within $TENSOR_TOL of the CPU golden, GPU runs deterministic)"
  exit 0
fi
echo "RESULT: FAIL (see the failed steps above and $OUTDIR)"
exit 1
