#!/usr/bin/env python3
"""Reads cudatensorize's transform meta from Python (PyGObject: Debian's python3-gi and
gir1.2-gstreamer-1.0) and maps boxes from tensor pixels back to the frame: for a single tensor,
then for each slot of a batch of regions (rois, batch-size), then for the slots of the regions
of two cameras batched by cudatensorbatch (source pad, region, which of the batch's tensors).

    GST_PLUGIN_PATH=build/gst /usr/bin/python3 pipelines/read_meta.py

Exits non-zero when a mapped box is not where the regions say it must be (the test suite runs it).
"""
import sys
import warnings

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

Gst.init(None)
# GObject.ValueArray.get_nth is deprecated, but Gst.Structure.get_array returns a ValueArray.
warnings.filterwarnings("ignore", category=DeprecationWarning)


def first_buffers(description, n):
    pipeline = Gst.parse_launch(description)
    pipeline.set_state(Gst.State.PLAYING)
    out = []
    for _ in range(n):
        sample = pipeline.get_by_name("sink").emit("try-pull-sample", 10 * Gst.SECOND)
        if sample is None:
            sys.exit("no tensor came out of: " + description)
        out.append(sample.get_buffer())
    pipeline.set_state(Gst.State.NULL)
    return out


def first_buffer(description):
    return first_buffers(description, 1)[0]


def doubles(structure, name):
    ok, arr = structure.get_array(name)
    return [arr.get_nth(i) for i in range(arr.n_values)]


def to_frame(m, x, y):
    """A point in tensor pixel-edge coordinates -> frame pixel-edge coordinates (m: tensor-to-src)."""
    x, y = x - 0.5, y - 0.5
    return (m[0] * x + m[1] * y + m[2] + 0.5, m[3] * x + m[4] * y + m[5] + 0.5)


def box_to_frame(m, box):
    x0, y0 = to_frame(m, box[0], box[1])
    x1, y1 = to_frame(m, box[0] + box[2], box[1] + box[3])
    return (x0, y0, x1 - x0, y1 - y0)


def expect_close(what, got, want):
    if any(abs(g - w) > 1e-6 * max(1.0, abs(w)) for g, w in zip(got, want)):
        sys.exit("%s: got %s, expected %s" % (what, got, want))


# One frame, one tensor: the meta's top-level fields.
buffer = first_buffer("videotestsrc num-buffers=1 ! video/x-raw,format=NV12,width=1280,height=720 ! "
                      "cudatensorize width=640 height=640 ! appsink name=sink")
s = buffer.get_custom_meta("GstCudaPrepTransformMeta").get_structure()
m = doubles(s, "tensor-to-src")  # 6 doubles, row-major 2x3, pixel i centred at i
active = doubles(s, "active-rect")
print("source %dx%d, active rect %s" % (s.get_value("source-width"), s.get_value("source-height"), active))
box = (100.0, 200.0, 50.0, 25.0)  # x, y, w, h in the tensor
print("tensor box %s -> frame box (%.1f, %.1f, %.1f x %.1f)" % ((box,) + box_to_frame(m, box)))
expect_close("the active rect mapped back", box_to_frame(m, active), (0, 0, 1280, 720))

# Regions of one frame as a batch: slot i's transform maps that slot back to the frame. Two regions
# in three slots: the last slot is empty (pad value).
regions = [(0, 0, 320, 180), (640, 360, 640, 360)]
rois = "<" + ",".join("<%d,%d,%d,%d>" % r for r in regions) + ">"
buffer = first_buffer("videotestsrc num-buffers=1 ! video/x-raw,format=BGR,width=1280,height=720 ! "
                      "cudatensorize width=224 height=224 batch-size=3 rois=\"%s\" ! appsink name=sink" % rois)
s = buffer.get_custom_meta("GstCudaPrepTransformMeta").get_structure()
ok, slots = s.get_array("slots")
if not ok or slots.n_values != 3:
    sys.exit("expected 3 slots")
for i in range(slots.n_values):
    slot = slots.get_nth(i)  # a Gst.Structure "cudaprep/slot"
    if slot.get_value("empty"):
        print("slot %d: empty" % i)
        if i < len(regions):
            sys.exit("slot %d is empty but region %d exists" % (i, i))
        continue
    frame_box = box_to_frame(doubles(slot, "tensor-to-src"), doubles(slot, "active-rect"))
    print("slot %d: region %d -> frame box (%.1f, %.1f, %.1f x %.1f)" %
          ((i, slot.get_value("region-index")) + frame_box))
    expect_close("slot %d's active rect mapped back" % i, frame_box, regions[slot.get_value("region-index")])

# cudatensorbatch: camera 0's two regions and camera 1's whole frame in batches of two slots: two
# tensors for the one batch window, the second with one empty slot. Each slot says its camera
# (source-pad), its region and its transform back to that camera's frame.
cameras = {"sink_0": [(0, 0, 320, 180), (640, 360, 640, 360)], "sink_1": [(0, 0, 640, 480)]}
rois = "<" + ",".join("<%d,%d,%d,%d>" % r for r in cameras["sink_0"]) + ">"
tensors = first_buffers(
    "cudatensorbatch name=b width=224 height=224 batch-size=2 sink_0::rois=\"%s\" ! appsink name=sink "
    "videotestsrc num-buffers=1 ! video/x-raw,format=BGR,width=1280,height=720 ! b.sink_0 "
    "videotestsrc num-buffers=1 ! video/x-raw,format=NV12,width=640,height=480 ! b.sink_1" % rois, 2)
seen = []
for k, buffer in enumerate(tensors):
    s = buffer.get_custom_meta("GstCudaPrepTransformMeta").get_structure()
    if s.get_value("tensor-index") != k or s.get_value("tensors") != 2:
        sys.exit("tensor %d: tensor-index %s of %s" % (k, s.get_value("tensor-index"), s.get_value("tensors")))
    ok, slots = s.get_array("slots")
    for i in range(slots.n_values):
        slot = slots.get_nth(i)
        if slot.get_value("empty"):
            print("tensor %d slot %d: empty" % (k, i))
            continue
        pad, index = slot.get_value("source-pad"), slot.get_value("region-index")
        frame_box = box_to_frame(doubles(slot, "tensor-to-src"), doubles(slot, "active-rect"))
        print("tensor %d slot %d: %s region %d -> frame box (%.1f, %.1f, %.1f x %.1f)" %
              ((k, i, pad, index) + frame_box))
        expect_close("tensor %d slot %d mapped back" % (k, i), frame_box, cameras[pad][max(index, 0)])
        seen.append((pad, index))
if seen != [("sink_0", 0), ("sink_0", 1), ("sink_1", -1)]:
    sys.exit("slots in the wrong order: %s" % seen)
print("read_meta: ok")
