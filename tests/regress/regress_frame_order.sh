#!/usr/bin/env bash
# Frames digested by the capture's worker queue reach the recording complete and in frame order:
# each frame's digest and stats in frames.jsonl are those of the same frame written out by a
# plain gst-launch of the pipeline (one file a buffer, in the order the pipeline made them).
source "$(dirname "$0")/common.sh"
# a tensor large enough that the workers' digests overlap; every frame of the clip differs
TENSORIZE="cudatensorize backend=cpu width=320 height=320"
DECODE="qtdemux ! h264parse ! avdec_h264"
expect 0 "record" -p "recorded 31 frames" -- "$TOOL" record --clip "$CLIP" --store digest --out "$TMP/rec" \
  --pipeline "filesrc location={clip} ! $DECODE ! $TENSORIZE ! appsink name=tensor"
mkdir -p "$TMP/serial"
expect 0 "the same pipeline to one file a buffer" -- gst-launch-1.0 -q filesrc location="$CLIP" ! $DECODE ! \
  $TENSORIZE ! multifilesink sync=false location="$TMP/serial/%05d.bin"
expect 0 "frame by frame, the recording holds the serial digests in order" -p "31 frames agree" -- \
  python3 - "$TMP/rec/frames.jsonl" "$TMP/serial" <<'PY'
import glob, hashlib, json, math, struct, sys
frames = [json.loads(line) for line in open(sys.argv[1])]
files = sorted(glob.glob(sys.argv[2] + "/*.bin"))
bad = []
if len(frames) != len(files):
    bad.append("%d frames recorded, %d buffers written" % (len(frames), len(files)))
digests = set()
last_pts = -1
for i, (f, path) in enumerate(zip(frames, files)):
    data = open(path, "rb").read()
    t = f["tensor"]
    digest = hashlib.sha256(data).hexdigest()
    digests.add(digest)
    if f["frame"] != i or t["sha256"] != digest or t["bytes"] != len(data):
        bad.append("frame %d: recorded %s, serial %s" % (i, t["sha256"], digest))
    values = struct.unpack("<%df" % (len(data) // 4), data)
    mean = math.fsum(values) / len(values)
    if abs(t["mean"] - mean) > 1e-9 or t["min"] != min(values) or t["max"] != max(values):
        bad.append("frame %d: stats %s, serial mean %r" % (i, (t["min"], t["max"], t["mean"]), mean))
    if t["pts"] <= last_pts:
        bad.append("frame %d: pts %d after %d" % (i, t["pts"], last_pts))
    last_pts = t["pts"]
if len(digests) < len(files) // 2:
    bad.append("only %d distinct frames: the clip cannot show a reordering" % len(digests))
print("\n".join(bad) if bad else "%d frames agree" % len(frames))
sys.exit(1 if bad else 0)
PY
finish
