#!/usr/bin/env python3
"""Checks a cudaprep-regress HTML report (--html DIR) against the text report of the same run
(--report FILE), with the standard library only:
  - index.html parses (html.parser), every element it opens is closed in order, and it loads
    nothing from outside DIR (no scripts, no links, no remote URLs);
  - every <img> names a PNG in DIR that decodes (chunk CRCs, zlib, row filters, size);
  - every plotted point (svg.plot circles: data-frame, data-value, class "fail") equals the
    text report's figure for that frame and sink, and every frame the text report gives a
    figure for is plotted;
  - every row of a batch's slot table (tr data-slot: data-frame, data-sink, data-max-abs,
    class "fail") equals the text report's row for that slot of that frame;
  - every row of a bank's template table (tr data-template: data-sink, data-ref, data-run,
    data-failing, class "fail") equals the text report's summary line of that template, and
    every template the summary has a line for has a row.
  check_html_report.py DIR TEXT_REPORT [--pixel PNG X Y R,G,B]... [--same PNG_A PNG_B X Y]...
                      [--identical PNG_A PNG_B]...
(--pixel: that pixel has that colour; --same: the two images agree at that pixel; --identical:
the two images are the same picture)
Prints what it checked; exits 1 with every problem listed otherwise.
"""
import html.parser
import math
import os
import re
import struct
import sys
import zlib


VOID = {"meta", "img", "br", "hr", "input", "link", "source", "wbr"}


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.images, self.points, self.external, self.text, self.slots = [], [], [], [], []
        self.templates = {}
        self.series = None
        self.open, self.unbalanced = [], []

    def handle_startendtag(self, tag, attrs):  # <rect .../>: opens and closes
        self.handle_starttag(tag, attrs, closed=True)

    def handle_starttag(self, tag, attrs, closed=False):
        if tag not in VOID and not closed:
            self.open.append((tag, self.getpos()[0]))
        a = dict(attrs)
        if tag in ("script", "link", "iframe", "object", "embed"):
            self.external.append(tag)
        for k in ("src", "href"):
            v = a.get(k, "")
            if re.match(r"^[a-z]+:", v) or v.startswith("//"):
                self.external.append("%s=%s" % (k, v))
        if tag == "tr" and "data-slot" in a:
            self.slots.append(((a["data-sink"], int(a["data-frame"]), int(a["data-slot"])),
                               a["data-max-abs"], "fail" in a.get("class", "").split()))
        if tag == "tr" and "data-template" in a:
            self.templates[(a["data-sink"], a["data-template"])] = (
                int(a["data-ref"]), int(a["data-run"]), int(a["data-failing"]), "fail" in a.get("class", "").split())
        if tag == "img":
            self.images.append(a.get("src", ""))
        if tag == "svg" and "plot" in a.get("class", "").split():
            self.series = a.get("data-series")
        if tag == "circle" and self.series and "data-frame" in a:
            self.points.append((self.series, int(a["data-frame"]), float(a["data-value"]),
                                "fail" in a.get("class", "").split()))

    def handle_endtag(self, tag):
        if tag == "svg":
            self.series = None
        if not self.open or self.open[-1][0] != tag:
            self.unbalanced.append("</%s> on line %d closes %s" % (
                tag, self.getpos()[0], "<%s> of line %d" % self.open[-1] if self.open else "nothing"))
        else:
            self.open.pop()

    def handle_data(self, data):
        self.text.append(data)


def decode_png(path):
    """Returns (width, height, rows of RGB(A) bytes); raises ValueError when it does not decode."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG signature")
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        if zlib.crc32(kind + body) != crc:
            raise ValueError("bad CRC in chunk %r" % kind)
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        pos += 12 + n
    if not ihdr:
        raise ValueError("no IHDR")
    w, h, depth, colour, _, _, interlace = ihdr
    if depth != 8 or colour not in (0, 2, 6) or interlace:
        raise ValueError("unexpected PNG format %r" % (ihdr,))
    bpp = {0: 1, 2: 3, 6: 4}[colour]
    raw = zlib.decompress(idat)
    stride = w * bpp
    if len(raw) != h * (stride + 1):
        raise ValueError("image data is %d bytes, expected %d" % (len(raw), h * (stride + 1)))
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            elif f != 0:
                raise ValueError("bad filter %d in row %d" % (f, y))
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


LINE = re.compile(r"^\s*(\d+)\s+\S+\s+(\S+)\s+(ok|FAIL)\s+(.*)$")
SLOT_LINE = re.compile(r"^ {10}(\S.*?)\s+(ok|FAIL)\s+(.*)$")


def text_slots(report):
    """{(sink, frame, slot): (max abs text or "", failing)} from the slot rows of a full text report."""
    out, where, slot = {}, None, 0
    for line in open(report):
        m = LINE.match(line)
        if m:
            where, slot = (m.group(2), int(m.group(1))), 0
            continue
        m = SLOT_LINE.match(line)
        if not m or where is None:
            continue
        rest = m.group(3).split("  <- ")[0]
        value = "0" if rest == "identical" else (re.search(r"max-abs (\S+)", rest).group(1)
                                                  if rest.startswith("max-abs ") else "")
        out[(where[0], where[1], slot)] = (value, m.group(2) == "FAIL")
        slot += 1
    return out


REFERENCE_LABELS = ("golden", "A")  # how check and compare name the reference side
SINK_SUMMARY = re.compile(r"^  sink '(.*?)' \((tensor|matches)\): ")
TEMPLATE_SUMMARY = re.compile(r"^    template '(.*?)': (.*); (\d+) failing(, first frame \d+)?$")


def text_templates(report):
    """{(sink, template): (matches in reference, in the other side, failing frames, failing)} from
    the summary lines per template."""
    out, sink = {}, None
    for line in open(report):
        m = SINK_SUMMARY.match(line)
        if m:
            sink = m.group(1)
            continue
        m = TEMPLATE_SUMMARY.match(line)
        if not m or sink is None:
            continue
        body, failing = m.group(2), int(m.group(3))
        counts = re.match(r"matches .+? (\d+), .+? (\d+)(;| \()", body)
        if counts:
            n_ref, n_run = int(counts.group(1)), int(counts.group(2))
        else:  # "only in golden (62 matches in 31 frames, none in this run)"
            only = re.match(r"only in (.*) \((\d+) matches in \d+ frames, none in (.*)\)$", body)
            n = int(only.group(2))
            n_ref, n_run = (n, 0) if only.group(1) in REFERENCE_LABELS else (0, n)
        out[(sink, m.group(1))] = (n_ref, n_run, failing, failing > 0)
    return out


def text_figures(report):
    """{(series, frame): (value, failing)} from the per-frame lines of a full text report."""
    out = {}
    for line in open(report):
        m = LINE.match(line)
        if not m:
            continue
        frame, sink, failing, rest = int(m.group(1)), m.group(2), m.group(3) == "FAIL", m.group(4)
        rest = rest.split("  <- ")[0]

        def put(series, value):
            out[("plot-%s-%s" % (sink, series), frame)] = (value, failing)

        if rest == "identical":
            put("max-abs", 0.0)
            put("psnr", math.inf)
            put("mean-delta", 0.0)
            put("l2-delta", 0.0)
        elif rest.startswith("max-abs "):
            put("max-abs", float(re.search(r"max-abs (\S+)", rest).group(1)))
            put("psnr", float(re.search(r"PSNR (\S+) dB", rest).group(1)))
        elif rest.startswith("SHA-256 differs"):
            put("mean-delta", float(re.search(r"mean (\S+?),", rest).group(1)))
            put("l2-delta", float(re.search(r"L2 (\S+)$", rest).group(1)))
        elif "matches" in rest and "max dpos" in rest:
            put("position-delta", float(re.search(r"max dpos (\S+) px", rest).group(1)))
            put("score-delta", float(re.search(r"max dscore (\S+)", rest).group(1)))
    return out


def same(a, b):
    if math.isinf(a) or math.isinf(b) or math.isnan(a) or math.isnan(b):
        return str(a) == str(b)
    return abs(a - b) <= 6e-6 * max(abs(a), abs(b)) + 1e-300  # the text has 6 significant digits


def main():
    d, report = sys.argv[1], sys.argv[2]
    pixels = sys.argv[3:]
    problems = []
    page = Page()
    page.feed(open(os.path.join(d, "index.html"), encoding="utf-8").read())
    page.close()
    problems += page.unbalanced
    problems += ["<%s> of line %d is never closed" % t for t in page.open]
    if page.external:
        problems.append("loads from outside the report: %s" % page.external)
    decoded = {}
    for src in page.images:
        path = os.path.join(d, src)
        if "/" in src or not src.endswith(".png") or not os.path.isfile(path):
            problems.append("image %r is not a PNG file in %s" % (src, d))
            continue
        try:
            decoded[src] = decode_png(path)
        except (ValueError, zlib.error, struct.error) as e:
            problems.append("%s does not decode: %s" % (src, e))
    expected = text_figures(report)
    plotted = {(s, f): (v, fail) for s, f, v, fail in page.points}
    series_plotted = {s for s, _ in plotted}
    for key, (v, fail) in sorted(plotted.items()):
        if key not in expected:
            problems.append("%s frame %d is plotted (%r) but has no figure in the text report" % (key[0], key[1], v))
        elif not same(v, expected[key][0]) or fail != expected[key][1]:
            problems.append("%s frame %d: plotted %r%s, text report %r%s" % (
                key[0], key[1], v, " (fail)" if fail else "", expected[key][0], " (fail)" if expected[key][1] else ""))
    for key in sorted(expected):
        if key[0] in series_plotted and key not in plotted:
            problems.append("%s frame %d is in the text report but not plotted" % key)
    slot_rows = text_slots(report)
    for key, value, fail in page.slots:
        if key not in slot_rows:
            problems.append("slot row %s is not in the text report" % (key,))
            continue
        want, want_fail = slot_rows[key]
        if (want == "") != (value == "") or (want and not same(float(value), float(want))) or fail != want_fail:
            problems.append("slot row %s: HTML %r%s, text report %r%s" % (
                key, value, " (fail)" if fail else "", want, " (fail)" if want_fail else ""))

    template_lines = text_templates(report)
    for key, row in sorted(page.templates.items()):
        if key not in template_lines:
            problems.append("template row %s is not in the text report's summary" % (key,))
        elif row != template_lines[key]:
            problems.append("template row %s: HTML %r, text report %r" % (key, row, template_lines[key]))
    for key in sorted(template_lines):
        if key not in page.templates:
            problems.append("template %s has a summary line but no row in the HTML table" % (key,))

    def pixel(name, x, y):
        if name not in decoded:
            problems.append("%s is not an image of the report" % name)
            return None
        _, _, bpp, rows = decoded[name]
        return list(rows[y][x * bpp:x * bpp + 3])

    while pixels:
        if pixels[0] == "--pixel":
            name, x, y, rgb = pixels[1], int(pixels[2]), int(pixels[3]), [int(c) for c in pixels[4].split(",")]
            pixels = pixels[5:]
            got = pixel(name, x, y)
            if got is not None and got != rgb:
                problems.append("%s pixel (%d, %d) is %s, expected %s" % (name, x, y, got, rgb))
        elif pixels[0] == "--same":
            a, b, x, y = pixels[1], pixels[2], int(pixels[3]), int(pixels[4])
            pixels = pixels[5:]
            pa, pb = pixel(a, x, y), pixel(b, x, y)
            if pa is not None and pb is not None and pa != pb:
                problems.append("pixel (%d, %d): %s has %s, %s has %s" % (x, y, a, pa, b, pb))
        elif pixels[0] == "--identical":
            a, b = pixels[1], pixels[2]
            pixels = pixels[3:]
            if a not in decoded or b not in decoded or decoded[a] != decoded[b]:
                problems.append("%s and %s are not the same picture" % (a, b))
        else:
            problems.append("unknown argument %s" % pixels[0])
            break
    print("html: %d images decoded, %d points in %d series and %d slot rows compared with %s" % (
        len(decoded), len(plotted), len(series_plotted), len(page.slots), os.path.basename(report)))
    print("templates: %d rows compared with the summary" % len(page.templates))
    print("series: " + " ".join(sorted(series_plotted)))
    print("images: " + " ".join(sorted(decoded)))
    for p in problems:
        print("PROBLEM: " + p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
