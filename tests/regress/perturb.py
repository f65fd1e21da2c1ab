#!/usr/bin/env python3
"""Edits a cudaprep-regress recording in place, keeping it self-consistent (file, SHA-256 and
stats in frames.jsonl), so that a test can make a known change:
  perturb.py DIR tensor SINK FRAME INDEX DELTA   adds DELTA to element INDEX (of the frame's
                                                 tensors one after the other; a batch's slot
                                                 digests follow) of a float32, uint8 or int8 sink
  perturb.py DIR match SINK FRAME DX DSCORE [TEMPLATE]
                                                 moves the first match (of TEMPLATE: its label)
                                                 by DX px, changes its score
  perturb.py DIR match-field SINK FRAME TEMPLATE KEY JSON
                                                 sets KEY of TEMPLATE's first match in FRAME to
                                                 the JSON value (scale 1.25, full_search false,
                                                 template '"other"')
  perturb.py DIR drop-template SINK TEMPLATE     removes TEMPLATE's matches from every frame
  perturb.py DIR truncate FRAMES                 keeps the first FRAMES frames
and, to make a recording that contradicts itself or is malformed on purpose:
  perturb.py DIR sink-field SINK KEY VALUE       sets a field of the manifest's sink SINK
  perturb.py DIR sink-int SINK KEY N             sets it to the integer N
  perturb.py DIR frame-field SINK FRAME KEY VALUE  sets a field of SINK in frame FRAME
  perturb.py DIR nest FILE FRAME DEPTH           adds a member DEPTH arrays deep to the first sink
                                                 of frame FRAME (FILE frames: 2 + DEPTH levels)
                                                 or to the manifest (FILE manifest: 1 + DEPTH;
                                                 FRAME is ignored)
"""
import hashlib
import json
import math
import os
import struct
import sys


def load(d):
    with open(os.path.join(d, "frames.jsonl")) as f:
        frames = [json.loads(line) for line in f if line.strip()]
    with open(os.path.join(d, "manifest.json")) as f:
        manifest = json.load(f)
    return manifest, frames


def save(d, manifest, frames):
    with open(os.path.join(d, "frames.jsonl"), "w") as f:
        for fr in frames:
            f.write(json.dumps(fr, separators=(",", ":")) + "\n")
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")


def first_match(entry, label):
    """The first match of the entry, or of the template with this label."""
    for m in entry["matches"]:
        if label is None or m.get("template") == label:
            return m
    sys.exit("no match%s in the frame" % ("" if label is None else " of template " + label))


def main():
    d, what = sys.argv[1], sys.argv[2]
    manifest, frames = load(d)
    if what == "tensor":
        sink, frame, index, delta = sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
        entry = frames[frame][sink]
        dtype = next(s.get("dtype", "float32") for s in manifest["sinks"] if s["name"] == sink)
        code, size = {"float32": ("f", 4), "uint8": ("B", 1), "int8": ("b", 1)}[dtype]
        path = os.path.join(d, entry["file"])
        with open(path, "rb") as f:
            data = bytearray(f.read())
        n = len(data) // size
        values = list(struct.unpack("<%d%s" % (n, code), data))
        changed = values[index] + (delta if code == "f" else int(delta))
        values[index] = struct.unpack("<" + code, struct.pack("<" + code, changed))[0]
        data = struct.pack("<%d%s" % (n, code), *values)
        with open(path, "wb") as f:
            f.write(data)
        finite = [v for v in values if math.isfinite(v)]
        s = 0.0
        sq = 0.0
        for v in finite:
            s += v
            sq += v * v
        entry["sha256"] = hashlib.sha256(data).hexdigest()
        entry["min"], entry["max"] = min(finite), max(finite)
        entry["mean"], entry["l2"] = s / len(finite), math.sqrt(sq)
        slots = entry.get("slots", [])
        for i, slot in enumerate(slots):
            each = len(data) // len(slots)
            slot["sha256"] = hashlib.sha256(data[i * each:(i + 1) * each]).hexdigest()
    elif what == "match":
        sink, frame, dx, dscore = sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
        label = sys.argv[7] if len(sys.argv) > 7 else None
        m = first_match(frames[frame][sink], label)
        m["x"] += dx
        m["score"] += dscore
    elif what == "match-field":
        sink, frame, label, key, value = sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6], sys.argv[7]
        first_match(frames[frame][sink], label)[key] = json.loads(value)
    elif what == "drop-template":
        sink, label = sys.argv[3], sys.argv[4]
        for fr in frames:
            fr[sink]["matches"] = [m for m in fr[sink]["matches"] if m.get("template") != label]
    elif what == "truncate":
        keep = int(sys.argv[3])
        frames = frames[:keep]
        manifest["frames"] = keep
        for s in manifest["sinks"]:
            s["frames"] = min(s["frames"], keep)
    elif what == "sink-field":
        sink, key, value = sys.argv[3], sys.argv[4], sys.argv[5]
        for s in manifest["sinks"]:
            if s["name"] == sink:
                s[key] = value
    elif what == "sink-int":
        sink, key, value = sys.argv[3], sys.argv[4], int(sys.argv[5])
        for s in manifest["sinks"]:
            if s["name"] == sink:
                s[key] = value
    elif what == "frame-field":
        sink, frame, key, value = sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6]
        frames[frame][sink][key] = value
    elif what == "nest":
        # written as text: Python's own json module refuses to nest this deep
        where, frame, depth = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
        save(d, manifest, frames)
        name = "frames.jsonl" if where == "frames" else "manifest.json"
        path = os.path.join(d, name)
        with open(path) as f:
            text = f.read()
        deep = '"deep":' + "[" * depth + "]" * depth + ","
        if where == "frames":
            lines = text.split("\n")
            at = lines[frame].index(":{") + 2  # into the first sink's object
            lines[frame] = lines[frame][:at] + deep + lines[frame][at:]
            text = "\n".join(lines)
        else:
            text = "{" + deep + text.lstrip()[1:]
        with open(path, "w") as f:
            f.write(text)
        return
    else:
        sys.exit("unknown edit " + what)
    save(d, manifest, frames)


if __name__ == "__main__":
    main()
