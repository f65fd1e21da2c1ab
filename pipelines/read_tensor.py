#!/usr/bin/env python3
"""Reads cudatensorize's tensor from Python as a numpy array (PyGObject: Debian's python3-gi and
gir1.2-gstreamer-1.0; numpy: python3-numpy): the shape and element type from the caps, the data
from a system-memory buffer (appsink's caps ask for system memory, so a GPU tensor arrives there
too), and the transform that maps it back to the frame from the meta.

    GST_PLUGIN_PATH=build-main/gst /usr/bin/python3 pipelines/read_tensor.py

The source is a solid colour (R, G, B = 32, 64, 96) letterboxed into the tensor, so the values
are known: exits non-zero when the array is not what the caps and the meta say (the test suite
runs it).
"""
import sys
import warnings

import gi
import numpy as np

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

Gst.init(None)
# GObject.ValueArray.get_nth is deprecated, but Gst.Structure.get_array returns a ValueArray.
warnings.filterwarnings("ignore", category=DeprecationWarning)

NUMPY_TYPES = {"float32": np.float32, "float16": np.float16, "uint8": np.uint8, "int8": np.int8}


def first_sample(description):
    pipeline = Gst.parse_launch(description)
    pipeline.set_state(Gst.State.PLAYING)
    sample = pipeline.get_by_name("sink").emit("try-pull-sample", 10 * Gst.SECOND)
    pipeline.set_state(Gst.State.NULL)
    if sample is None:
        sys.exit("no tensor came out of: " + description)
    return sample


def tensor_of(sample):
    """The sample's tensor as a numpy array, its shape from the caps' dimensions."""
    caps = sample.get_caps().get_structure(0)
    if caps.get_name() != "other/tensors":
        sys.exit("not a tensor: " + caps.get_name())
    # Innermost first (W:H:C:B for nchw, C:W:H:B for nhwc): numpy's shape is the reverse.
    shape = tuple(int(d) for d in reversed(caps.get_string("dimensions").split(":")))
    dtype = NUMPY_TYPES[caps.get_string("types")]
    buffer = sample.get_buffer()
    ok, info = buffer.map(Gst.MapFlags.READ)
    if not ok:
        sys.exit("could not map the tensor")
    try:
        return np.frombuffer(info.data, dtype=dtype).reshape(shape).copy()
    finally:
        buffer.unmap(info)


def doubles(structure, name):
    ok, arr = structure.get_array(name)
    return [arr.get_nth(i) for i in range(arr.n_values)]


SOURCE = ("videotestsrc num-buffers=1 pattern=solid-color foreground-color=0xff204060 ! "
          "video/x-raw,format=BGR,width=1280,height=720 ! ")
RGB = np.array([32, 64, 96])

for props, scale in (("", 1 / 255), ("layout=nhwc dtype=uint8", 1)):
    sample = first_sample(SOURCE + "cudatensorize width=320 height=320 %s ! "
                          "appsink name=sink caps=other/tensors" % props)
    t = tensor_of(sample)
    meta = sample.get_buffer().get_custom_meta("GstCudaPrepTransformMeta").get_structure()
    x, y, w, h = (int(v) for v in doubles(meta, "active-rect"))  # the image, in tensor pixels
    m = doubles(meta, "tensor-to-src")  # tensor pixel -> frame pixel, row-major 2x3
    nchw = t.shape[1] == 3
    image = t[0, :, y:y + h, x:x + w] if nchw else t[0, y:y + h, x:x + w, :].transpose(2, 0, 1)
    band = t[0, :, :y, :] if nchw else t[0, :y, :, :].transpose(2, 0, 1)
    print("cudatensorize %s: %s %s, active rect %d,%d %dx%d, tensor (0, 0) is frame (%.1f, %.1f)" %
          (props or "(defaults)", t.dtype, t.shape, x, y, w, h, m[2], m[5]))
    print("  image mean per channel %s, padding band %s" %
          (image.reshape(3, -1).mean(axis=1).astype(float).round(4), np.unique(band).astype(float).round(4)))
    if not np.allclose(image.reshape(3, -1).T, RGB * scale, atol=1e-6):
        sys.exit("the image is not R, G, B = 32, 64, 96 scaled by %g" % scale)
    if not np.allclose(band, 114 * scale, atol=1e-6):
        sys.exit("the padding is not the pad value 114 scaled by %g" % scale)
    if (w, h) != (320, 180) or abs(m[0] * 320 - 1280) > 1e-6:
        sys.exit("the meta's transform is not 1280x720 letterboxed into 320x320")
print("read_tensor: ok")
