#!/usr/bin/env python3
"""pipelines/multi_camera.sh with 3 cameras on the CPU path, checked against the stand-in
detectors' own results: the same pipeline run again by gst-launch-1.0 -m gives every
cudatemplatematch's matches per frame (its bus messages, not the metas the batch reads). Then:
every match of every camera is one classifier slot, and no slot is anything else; each slot names
the camera whose matcher found it (cameras 0 and 1 look for objects of other sizes, camera 2 is a
640x360 test pattern) and a frame of that camera that is in the detector's batches; its crop,
mapped back by the slot's transform, lands on the match's rectangle grown by the pipeline's
roi-margin (10%, outward to whole pixels, clipped to the frame) within 1 px; the detector's
batches have one slot per camera, each naming its own pad.
Usage: multi_camera.py SOURCE_ROOT BUILD_DIR
"""
import math
import os
import re
import subprocess
import sys
import tempfile

root, build = sys.argv[1], sys.argv[2]
CAMERAS = 3
MARGIN = 0.1
failures = []


def fail(what):
    failures.append(what)
    print("FAIL: " + what)


def ns(text):
    h, m, s = text.split(":")
    return round((int(h) * 3600 + int(m) * 60 + float(s)) * 1e9)


env = dict(os.environ, CUDAPREP_BUILD_DIR=build, GST_PLUGIN_PATH=os.path.join(build, "gst"))
with tempfile.TemporaryDirectory() as out:
    env["OUTDIR"] = out
    run = subprocess.run(["bash", os.path.join(root, "pipelines/multi_camera.sh"), "--all", str(CAMERAS)],
                         env=env, capture_output=True, text=True, timeout=400)
text = run.stdout + run.stderr
if run.returncode != 0:
    sys.exit("multi_camera.sh exited %d:\n%s" % (run.returncode, text[-3000:]))
pipeline = re.search(r"^pipeline: (.*)$", text, re.M).group(1)

# The matchers' own results: the same pipeline, its appsinks replaced by fakesinks.
truth_pipeline = re.sub(r"appsink name=\w+", "fakesink", pipeline)
launch = subprocess.run("gst-launch-1.0 -m " + truth_pipeline, shell=True, env=env, capture_output=True, text=True,
                        timeout=400)
if launch.returncode != 0:
    sys.exit("gst-launch-1.0 -m exited %d:\n%s" % (launch.returncode, launch.stdout[-3000:] + launch.stderr[-3000:]))
matches = {}  # (camera, pts) -> [(x, y, w, h)] in the matcher's order
msg = re.compile(r'from element "detect(\d+)" \(element\): template-match, timestamp=\(guint64\)(\d+),.*')
box = re.compile(r"x\\=\\\(int\\\)(\d+)\\,\\ y\\=\\\(int\\\)(\d+)\\,\\ width\\=\\\(int\\\)(\d+)\\,\\ "
                 r"height\\=\\\(int\\\)(\d+)")
for line in launch.stdout.splitlines():
    m = msg.search(line)
    if m:
        matches[(int(m.group(1)), int(m.group(2)))] = [tuple(map(int, b)) for b in box.findall(line)]
frames = {c: sum(1 for k in matches if k[0] == c) for c in range(CAMERAS)}
detections = sum(len(v) for v in matches.values())
print("matchers: %s frames per camera, %d detections" % (frames, detections))
if any(n == 0 for n in frames.values()) or any(not any(matches[k] for k in matches if k[0] == c)
                                               for c in range(CAMERAS)):
    sys.exit("a camera's matcher posted no frame or found nothing: nothing to check")

# The detector's batches: one slot per camera, slot i from sink_i; each camera's frame size.
number = r"(-?[\d.]+)"
rect = r"\(%s, %s, %s x %s\)" % (number, number, number, number)
det_line = re.compile(r"^detector batch (\d+) slot (\d+): (sink_\d+) pts (\S+) frame (\d+)x(\d+): ")
size = {}
detector_frames = set()
for line in text.splitlines():
    m = det_line.match(line)
    if not m:
        continue
    slot, pad = int(m.group(2)), m.group(3)
    if pad != "sink_%d" % slot:
        fail("detector batch %s slot %d names %s" % (m.group(1), slot, pad))
    size.setdefault(slot, set()).add((int(m.group(5)), int(m.group(6))))
    detector_frames.add((slot, ns(m.group(4))))
if sorted(size) != list(range(CAMERAS)) or any(len(s) != 1 for s in size.values()):
    fail("the detector's batches give cameras and frame sizes %s" % size)
if len(detector_frames) != sum(frames.values()):
    fail("the detector's batches hold %d camera frames, the matchers saw %d" %
         (len(detector_frames), sum(frames.values())))

# The classifier's slots.
cls_line = re.compile(r"^batch (\d+) (?:tensor (\d+) )?slot (\d+): sink_(\d+) region (\d+) \(id (-?\d+)\) pts (\S+) "
                      r"frame (\d+)x(\d+): tensor box %s -> frame box %s$" % (rect, rect))
seen = {}
slots = 0
for line in text.splitlines():
    m = cls_line.match(line)
    if not m:
        continue
    slots += 1
    cam, region, pts = int(m.group(4)), int(m.group(5)), ns(m.group(7))
    fw, fh = int(m.group(8)), int(m.group(9))
    got = [float(v) for v in m.groups()[13:17]]
    where = "camera %d pts %d region %d" % (cam, pts, region)
    found = matches.get((cam, pts))
    if found is None or region >= len(found):
        fail("%s: its matcher found no such detection (%s)" % (where, found))
        continue
    if (fw, fh) not in size.get(cam, set()):
        fail("%s: frame %dx%d, camera %d's is %s" % (where, fw, fh, cam, size.get(cam)))
    if (cam, pts) not in detector_frames:
        fail("%s: the frame is in none of the detector's batches" % where)
    x, y, w, h = found[region]
    x0 = max(0, math.floor(x - MARGIN * w))
    y0 = max(0, math.floor(y - MARGIN * h))
    x1 = min(fw, math.ceil(x + w + MARGIN * w))
    y1 = min(fh, math.ceil(y + h + MARGIN * h))
    want = [x0, y0, x1 - x0, y1 - y0]
    if any(abs(g - e) > 1 for g, e in zip(got, want)):
        fail("%s: the crop maps back to %s, the match %s grown by %g is %s" % (where, got, found[region], MARGIN, want))
    seen.setdefault((cam, pts), []).append(region)
for key, found in matches.items():
    if sorted(seen.get(key, [])) != list(range(len(found))):
        fail("camera %d pts %d: %d detections, classifier slots for regions %s" %
             (key[0], key[1], len(found), sorted(seen.get(key, []))))

summary = re.search(r"^\d+ batches received(?: \(\d+ tensors\))?, (\d+) slots filled", text, re.M)
crops = re.search(r"^(\d+) of (\d+) crops from frames of the detector's batches$", text, re.M)
if slots != detections or not summary or int(summary.group(1)) != detections:
    fail("%d classifier slots printed, %s filled, %d detections" % (slots, summary and summary.group(1), detections))
if not crops or crops.group(1) != crops.group(2) or int(crops.group(2)) != detections:
    fail("the consumer relates %s crops to the detector's frames, of %d detections" %
         (crops and crops.group(0), detections))
print("%d classifier slots checked against %d detections of %d cameras" % (slots, detections, CAMERAS))
sys.exit(1 if failures else 0)
