#!/usr/bin/env python3
"""The element pages of docs/ cannot drift from the plugin: every property gst-inspect-1.0 lists
for an element must have a row in the page's "## Properties" table with the same type, range
and default, and the table must have no row for a property the element does not have.

Row format (backquotes are ignored when comparing):
  | `width` | uint | 1 - 16384 | 640 | what it does |
  | `resize-mode` | enum | `letterbox`, `stretch`, `crop`, `ultralytics` | `letterbox` | ... |
types: int, uint, int64, uint64, double, float, boolean, string, enum, int array, double array,
array of arrays;
range: as gst-inspect prints it (whitespace collapsed), an enum's nicks in its order,
`true, false` for a boolean, - where there is none; default: as gst-inspect prints it, an enum's
nick, `empty` for an empty string or array, an array's values as <a, b, c>.

Usage: check_docs.py PLUGIN_DIR DOCS_DIR [ELEMENT...]   (default: the three elements)
       check_docs.py --print PLUGIN_DIR ELEMENT          (the rows the page needs, blank text)
GST_PLUGIN_PATH is set to PLUGIN_DIR (the build's gst/ folder).
"""
import os
import re
import subprocess
import sys

ELEMENTS = ["cudatensorize", "cudatensorbatch", "cudatemplatematch"]
SKIP = {"name", "parent"}  # every GstObject's
# The base classes' own (GstBaseTransform, GstAggregator): GStreamer documents them, and their
# set changes between versions (force-live since 1.24): a page may list them, and rows that
# exist are not compared.
BASE_CLASS = {"qos", "latency", "min-upstream-latency", "start-time", "start-time-selection", "emit-signals",
              "force-live"}
NUMBER_TYPES = {"Integer": "int", "Unsigned Integer": "uint", "Integer64": "int64",
                "Unsigned Integer64": "uint64", "Double": "double", "Float": "float"}


def norm(text):
    return " ".join(text.replace("`", "").split())


def inspect(plugin_dir, element):
    env = dict(os.environ, GST_PLUGIN_PATH=plugin_dir)
    r = subprocess.run(["gst-inspect-1.0", element], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("gst-inspect-1.0 %s failed: %s" % (element, (r.stdout + r.stderr).strip()))
    lines = r.stdout.splitlines()
    start = lines.index("Element Properties:") + 1
    props, name = {}, None
    for line in lines[start:]:
        if not line.strip():
            continue  # (1.26 prints a blank line after the heading)
        if not line.startswith("  "):
            break
        m = re.match(r"^  ([a-z][a-z0-9-]*)\s*:", line)
        if m:
            name = m.group(1)
            props[name] = []
        elif name:
            props[name].append(line.strip())
    return {n: describe(n, body) for n, body in props.items() if n not in SKIP}


def describe(name, body):
    """(type, range, default) of a property from its gst-inspect lines."""
    text = " ".join(body)
    for label, short in sorted(NUMBER_TYPES.items(), key=lambda kv: -len(kv[0])):
        m = re.search(r"(?:^|\s)%s\. Range: (\S+) - (\S+) Default: (\S+)" % re.escape(label), norm(text))
        if m:
            return short, "%s - %s" % (m.group(1), m.group(2)), m.group(3)
    m = re.search(r"Boolean\. Default: (\w+)", text)
    if m:
        return "boolean", "true, false", m.group(1)
    m = re.search(r'Enum "[^"]+" Default: -?\d+, "([^"]+)"', text)
    if m:
        nicks = re.findall(r"^\(-?\d+\): (\S+)", "\n".join(body), re.M)
        return "enum", ", ".join(nicks), m.group(1)
    m = re.search(r'String\. Default: (null|"(.*)")', text)
    if m:
        return "string", "-", "empty" if m.group(1) == "null" or m.group(2) == "" else m.group(2)
    m = re.search(r'Default: "(.*)"\s+GstValueArray of GValues of type "(\w+)"', text)
    if m:
        kind = {"gint": "int array", "gdouble": "double array", "GstValueArray": "array of arrays"}.get(
            m.group(2), m.group(2) + " array")
        values = [v.strip() for v in re.sub(r"\(\w+\)", "", m.group(1)).strip("<> ").split(",") if v.strip()]
        return kind, "-", "<%s>" % ", ".join(values) if values else "empty"
    sys.exit("%s: a property gst-inspect-1.0 describes in a way this check does not know: %s" % (name, text))


def doc_rows(path):
    """The rows of the page's "## Properties" table: name -> (type, range, default)."""
    rows, in_table = {}, False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("## "):
                in_table = line.strip() == "## Properties"
                continue
            if not in_table or not line.startswith("|"):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 5 or set(cells[0]) <= set("-: ") or cells[0] == "property":
                continue
            rows[norm(cells[0])] = tuple(norm(c) for c in cells[1:4])
    return rows


def main():
    if sys.argv[1] == "--print":
        for name, (t, r, d) in sorted(inspect(sys.argv[2], sys.argv[3]).items()):
            r = ", ".join("`%s`" % n for n in r.split(", ")) if t == "enum" else r
            print("| `%s` | %s | %s | %s |  |" % (name, t, r, "`%s`" % d if t == "enum" else d))
        return 0
    plugin_dir, docs_dir = sys.argv[1], sys.argv[2]
    failures = 0
    for element in sys.argv[3:] or ELEMENTS:
        page = os.path.join(docs_dir, element + ".md")
        props = inspect(plugin_dir, element)
        rows = doc_rows(page) if os.path.isfile(page) else {}
        if not rows:
            print("FAIL: %s: no '## Properties' table" % page)
            failures += 1
            continue
        for name, want in sorted(props.items()):
            if name in BASE_CLASS:
                continue
            got = rows.get(name)
            if got is None:
                print("FAIL: %s: property %s is not documented (gst-inspect-1.0: %s)" % (page, name, " | ".join(want)))
                failures += 1
            elif got != want:
                print("FAIL: %s: property %s says %s, gst-inspect-1.0 %s" % (page, name, " | ".join(got), " | ".join(want)))
                failures += 1
        for name in sorted(set(rows) - set(props) - BASE_CLASS):
            print("FAIL: %s: documents %s, which %s does not have" % (page, name, element))
            failures += 1
        print("%s: %s: %d properties checked" % ("ok" if not failures else "checked", page, len(props)))
    return 1 if failures else 0


sys.exit(main())
