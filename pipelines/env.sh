# Sourced by the pipeline scripts: makes the freshly built plugin visible and picks an H.264
# decoder: NVDEC (zero-copy NV12 in CUDA memory) where a GPU is usable, else libav's.
CUDAPREP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export GST_PLUGIN_PATH=$CUDAPREP_ROOT/build/gst${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}
CLIP=${CLIP:-$CUDAPREP_ROOT/tests/data/vtest-h264.mp4}
if gst-inspect-1.0 nvh264dec >/dev/null 2>&1; then
  H264DEC=nvh264dec
else
  H264DEC=avdec_h264
fi
OUTDIR=${OUTDIR:-$CUDAPREP_ROOT/out}
mkdir -p "$OUTDIR"
