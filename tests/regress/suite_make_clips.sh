#!/usr/bin/env bash
# Makes the clips and the manifest of the suite tests from the shipped clip, in DIR:
#   suite_make_clips.sh SOURCE_ROOT DIR
# DIR/clips/: the clip (mp4), remuxed into Matroska and MPEG-TS, re-encoded as Motion JPEG in AVI
# (and as H.264 with x264enc where it is installed), and one that does not decode (a slice of
# the file's middle); DIR/suite.ini: the manifest of the clips that decode (crops and other
# pixel formats in the pipeline). Prints the names of the manifest's clips.
set -euo pipefail
ROOT=$1 DIR=$2
C=$ROOT/tests/data/vtest-h264.mp4
mkdir -p "$DIR/clips"
cd "$DIR/clips"
cp "$C" vtest.mp4
gst-launch-1.0 -q filesrc location="$C" ! qtdemux ! h264parse ! matroskamux ! filesink location=vtest.mkv
gst-launch-1.0 -q filesrc location="$C" ! qtdemux ! h264parse ! mpegtsmux ! filesink location=vtest.ts
gst-launch-1.0 -q filesrc location="$C" ! qtdemux ! h264parse ! avdec_h264 ! videoscale ! video/x-raw,width=384,height=288 \
  ! jpegenc quality=60 ! avimux ! filesink location=mjpeg.avi
head -c 20000 "$C" | tail -c 15000 >broken.mp4
T='cudatensorize backend=cpu width=32 height=32 ! appsink name=tensor'
MP4='filesrc location={clip} ! qtdemux ! h264parse ! avdec_h264'
cat >"$DIR/suite.ini" <<INI
# the suite of the CI tests (tests/regress/regress_suite.sh)
[suite]
name=vtest-variants
pipeline=$MP4 ! $T
clips=clips
goldens=goldens
store=full
timeout=120

[clip vtest]
file=vtest.mp4

[clip containers/mkv]
file=vtest.mkv
pipeline=filesrc location={clip} ! matroskademux ! h264parse ! avdec_h264 ! $T

[clip containers/ts]
file=vtest.ts
pipeline=filesrc location={clip} ! tsdemux ! h264parse ! avdec_h264 ! $T

[clip crop]
file=vtest.mp4
pipeline=$MP4 ! videocrop left=100 top=50 right=60 bottom=20 ! $T

[clip rgba-nhwc]
file=vtest.mp4
pipeline=$MP4 ! videoconvert ! video/x-raw,format=RGBA ! cudatensorize backend=cpu width=48 height=24 layout=nhwc ! appsink name=tensor
tensor-tol=max-abs=1e-6

[clip mjpeg]
file=mjpeg.avi
pipeline=filesrc location={clip} ! avidemux ! jpegdec ! $T
INI
if gst-inspect-1.0 x264enc >/dev/null 2>&1; then
  gst-launch-1.0 -q filesrc location="$C" ! qtdemux ! h264parse ! avdec_h264 ! x264enc ! h264parse ! mp4mux \
    ! filesink location=x264.mp4
  printf '\n[clip x264]\nfile=x264.mp4\n' >>"$DIR/suite.ini"
fi
