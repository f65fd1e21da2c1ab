#!/usr/bin/env python3
"""meson install puts the plugin where GStreamer looks, and the rest where users find it.

Installs the build into a DESTDIR (nothing outside it is touched) and checks the paths:
- the plugin: GStreamer's pluginsdir (pkg-config gstreamer-1.0) when the build's prefix is
  GStreamer's (meson setup --prefix=/usr on Debian), else <prefix>/<libdir>/gstreamer-1.0;
- the header gstreamer-1.0/gst/cudaprep/gstcudaprepmeta.h, the pkg-config file
  gst-cudaprep-1.0.pc, the cudaprep-regress tool;
then that GStreamer, told to scan only the installed plugin directory, finds cudatensorize there.
Usage: install_check.py BUILD_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

build = sys.argv[1]
opts = {o["name"]: o["value"] for o in json.loads(subprocess.run(
    ["meson", "introspect", "--buildoptions", build], check=True, capture_output=True, text=True).stdout)}
prefix, libdir = opts["prefix"], opts["libdir"]
gst_prefix = subprocess.run(["pkg-config", "--variable=prefix", "gstreamer-1.0"],
                            check=True, capture_output=True, text=True).stdout.strip()
gst_plugins = subprocess.run(["pkg-config", "--variable=pluginsdir", "gstreamer-1.0"],
                             check=True, capture_output=True, text=True).stdout.strip()
if prefix == gst_prefix:
    plugin_dir = gst_plugins
else:
    plugin_dir = os.path.join(prefix, libdir, "gstreamer-1.0")
    print(f"note: prefix {prefix} is not GStreamer's ({gst_prefix}): the plugin goes to "
          f"{plugin_dir}, which GStreamer scans only through GST_PLUGIN_PATH")

failures = []
with tempfile.TemporaryDirectory() as destdir:
    r = subprocess.run(["meson", "install", "-C", build, "--no-rebuild", "--quiet", "--destdir", destdir],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAIL: meson install exited {r.returncode}:\n{r.stdout}{r.stderr}")
        sys.exit(1)
    want = {
        "plugin": os.path.join(plugin_dir, "libgstcudaprep.so"),
        "header": os.path.join(prefix, opts["includedir"], "gstreamer-1.0/gst/cudaprep/gstcudaprepmeta.h"),
        "pkg-config file": os.path.join(prefix, libdir, "pkgconfig/gst-cudaprep-1.0.pc"),
        "cudaprep-regress": os.path.join(prefix, opts["bindir"], "cudaprep-regress"),
    }
    for what, path in want.items():
        if os.path.isfile(destdir + path):
            print(f"ok: {what} at {path}")
        else:
            failures.append(f"{what} not at {path}")
    if not failures:
        env = dict(os.environ, GST_PLUGIN_SYSTEM_PATH_1_0=destdir + plugin_dir,
                   GST_REGISTRY_1_0=os.path.join(destdir, "registry.bin"))
        env.pop("GST_PLUGIN_PATH", None)
        env.pop("GST_PLUGIN_PATH_1_0", None)
        env.pop("GST_REGISTRY", None)
        r = subprocess.run(["gst-inspect-1.0", "cudatensorize"], env=env, capture_output=True, text=True)
        if r.returncode == 0 and "libgstcudaprep.so" in r.stdout:
            print(f"ok: gst-inspect-1.0 cudatensorize finds the plugin in {plugin_dir}")
        else:
            failures.append(f"gst-inspect-1.0 cudatensorize with only {plugin_dir} scanned: "
                            f"exit {r.returncode}: {(r.stdout + r.stderr).strip()[-300:]}")
for f in failures:
    print("FAIL: " + f)
sys.exit(1 if failures else 0)
