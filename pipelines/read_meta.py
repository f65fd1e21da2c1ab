#!/usr/bin/env python3
"""Reads cudatensorize's transform meta from Python (PyGObject: Debian's python3-gi and
gir1.2-gstreamer-1.0) and maps a box from tensor pixels back to the frame.

    GST_PLUGIN_PATH=build/gst /usr/bin/python3 pipelines/read_meta.py
"""
import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

Gst.init(None)
pipeline = Gst.parse_launch(
    "videotestsrc num-buffers=1 ! video/x-raw,format=NV12,width=1280,height=720 ! "
    "cudatensorize width=640 height=640 ! appsink name=sink")
sink = pipeline.get_by_name("sink")
pipeline.set_state(Gst.State.PLAYING)
buffer = sink.emit("pull-sample").get_buffer()

meta = buffer.get_custom_meta("GstCudaPrepTransformMeta")
s = meta.get_structure()
ok, arr = s.get_array("tensor-to-src")  # 6 doubles, row-major 2x3, pixel i centred at i
m = [arr.get_nth(i) for i in range(arr.n_values)]
ok, arr = s.get_array("active-rect")
active = [arr.get_nth(i) for i in range(arr.n_values)]


def to_frame(x, y):
    """A point in tensor pixel-edge coordinates -> frame pixel-edge coordinates."""
    x, y = x - 0.5, y - 0.5
    return (m[0] * x + m[1] * y + m[2] + 0.5, m[3] * x + m[4] * y + m[5] + 0.5)


box = (100.0, 200.0, 50.0, 25.0)  # x, y, w, h in the tensor
x0, y0 = to_frame(box[0], box[1])
x1, y1 = to_frame(box[0] + box[2], box[1] + box[3])
print("source %dx%d, active rect %s" % (s.get_value("source-width"), s.get_value("source-height"), active))
print("tensor box %s -> frame box (%.1f, %.1f, %.1f x %.1f)" % (box, x0, y0, x1 - x0, y1 - y0))
pipeline.set_state(Gst.State.NULL)
