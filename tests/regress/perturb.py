#!/usr/bin/env python3
"""Edits a cudaprep-regress recording in place, keeping it self-consistent (file, SHA-256 and
stats in frames.jsonl), so that a test can make a known change:
  perturb.py DIR tensor SINK FRAME INDEX DELTA   adds DELTA to float32 element INDEX
  perturb.py DIR match SINK FRAME DX DSCORE      moves the first match by DX px, changes its score
  perturb.py DIR truncate FRAMES                 keeps the first FRAMES frames
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


def main():
    d, what = sys.argv[1], sys.argv[2]
    manifest, frames = load(d)
    if what == "tensor":
        sink, frame, index, delta = sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
        entry = frames[frame][sink]
        path = os.path.join(d, entry["file"])
        with open(path, "rb") as f:
            data = bytearray(f.read())
        n = len(data) // 4
        values = list(struct.unpack("<%df" % n, data))
        values[index] = struct.unpack("<f", struct.pack("<f", values[index] + delta))[0]
        data = struct.pack("<%df" % n, *values)
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
    elif what == "match":
        sink, frame, dx, dscore = sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
        m = frames[frame][sink]["matches"][0]
        m["x"] += dx
        m["score"] += dscore
    elif what == "truncate":
        keep = int(sys.argv[3])
        frames = frames[:keep]
        manifest["frames"] = keep
        for s in manifest["sinks"]:
            s["frames"] = min(s["frames"], keep)
    else:
        sys.exit("unknown edit " + what)
    save(d, manifest, frames)


if __name__ == "__main__":
    main()
