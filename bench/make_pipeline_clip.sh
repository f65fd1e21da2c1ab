#!/usr/bin/env bash
# Makes the pipeline benchmark's clip here (the GPU machine has no H.264 encoder): the first 540
# frames of OpenCV's vtest.avi (real street footage, Debian package opencv-doc), scaled to 1920x1080
# and encoded with openh264enc at 1 Mbit/s (10 fps: about 12 KB a frame, 7 MB). Usage: make_pipeline_clip.sh OUT.mp4
set -euo pipefail
out=${1:?usage: make_pipeline_clip.sh OUT.mp4}
src=/usr/share/doc/opencv-doc/examples/data/vtest.avi
[ -r "$src" ] || { echo "missing $src: apt-get install opencv-doc" >&2; exit 2; }
mkdir -p "$(dirname "$out")"
gst-launch-1.0 -q filesrc location="$src" ! decodebin ! identity eos-after=540 ! videoconvert ! \
    videoscale method=bilinear ! video/x-raw,format=I420,width=1920,height=1080 ! \
    openh264enc bitrate=1000000 complexity=low gop-size=30 ! h264parse ! \
    video/x-h264,stream-format=avc ! mp4mux ! filesink location="$out.part"
mv "$out.part" "$out"
ls -l "$out"
