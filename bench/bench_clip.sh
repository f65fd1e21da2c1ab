# Sourced by the pipeline benchmarks' wrappers (pipeline_bench.sh, regress_suite_bench.sh), in the
# repository root: the clip is the first argument unless it is an option (taken off the
# arguments), else the one dev/gpu/device-pack.sh carries, else out/'s; checks it and
# gst-launch-1.0, and points GST_PLUGIN_PATH at the build's plugin unless it is set.
clip=.carry/bench/pipeline-clip-1080p.mp4
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then clip=$1; shift; fi
[ -r "$clip" ] || [ ! -r out/pipeline-clip-1080p.mp4 ] || clip=out/pipeline-clip-1080p.mp4
[ -r "$clip" ] || { echo "no clip at $clip: run bench/make_pipeline_clip.sh $clip where gst has openh264enc" >&2; exit 2; }
command -v gst-launch-1.0 >/dev/null || { echo "gst-launch-1.0 not found: source .gstbundle/env.sh" >&2; exit 2; }
export GST_PLUGIN_PATH=${GST_PLUGIN_PATH:-$PWD/build/gst}
