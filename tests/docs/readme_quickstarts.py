#!/usr/bin/env python3
"""Runs README.md's quick starts as written and compares their output with what README shows.

A quick start is a ```sh block after a `<!-- quickstart: NAME -->` line, followed by a ```text
block: the output. Each line of the output block must match a line of what the commands print,
in that order; `...` in a line stands for any text. The block after `<!-- quickstart-env -->` runs
first in each. They run in a scratch directory where tests/ and pipelines/ are this checkout's
and build-main/ is the build under test, so the commands run unchanged and write nothing into
the checkout. Fails when any of the README's four quick starts (the three elements and
cudaprep-regress) is missing.

Usage: readme_quickstarts.py SOURCE_ROOT BUILD_DIR
"""
import os
import re
import subprocess
import sys
import tempfile

REQUIRED = {"cudatensorize", "cudatensorbatch", "cudatemplatematch", "cudaprep-regress"}


def blocks(readme):
    """(env script, [(name, script, expected lines)])"""
    text = open(readme, encoding="utf-8").read()
    fence = r"```(\w+)\n(.*?)```"
    env = re.search(r"<!-- quickstart-env -->\s*" + fence, text, re.S)
    found = []
    for m in re.finditer(r"<!-- quickstart: ([\w-]+) -->\s*```sh\n(.*?)```\s*```text\n(.*?)```", text, re.S):
        found.append((m.group(1), m.group(2), m.group(3).rstrip("\n").split("\n")))
    return (env.group(2) if env else ""), found


def matches(expected, output):
    """Whether every expected line matches an output line, in order; else the first that does not."""
    lines = output.split("\n")
    i = 0
    for want in expected:
        pattern = re.compile(".*".join(re.escape(p) for p in want.split("...")))
        while i < len(lines) and not pattern.fullmatch(lines[i].rstrip()):
            i += 1
        if i == len(lines):
            return want
        i += 1
    return None


def main():
    root, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    env_script, quickstarts = blocks(os.path.join(root, "README.md"))
    failures = []
    missing = REQUIRED - {name for name, _, _ in quickstarts}
    if missing:
        failures.append("README.md has no quick start for " + ", ".join(sorted(missing)))
    with tempfile.TemporaryDirectory() as scratch:
        for d in ("tests", "pipelines"):
            os.symlink(os.path.join(root, d), os.path.join(scratch, d))
        os.symlink(build, os.path.join(scratch, "build-main"))
        env = dict(os.environ, GST_REGISTRY=os.path.join(scratch, "registry.bin"))
        env.pop("GST_PLUGIN_PATH", None)
        for name, script, expected in quickstarts:
            try:
                r = subprocess.run(["bash", "-e", "-c", env_script + script], cwd=scratch, env=env,
                                   capture_output=True, text=True, timeout=180)
                out, rc = r.stdout + r.stderr, r.returncode
            except subprocess.TimeoutExpired as e:
                out, rc = str(e.stdout or "") + str(e.stderr or ""), "timeout"
            bad = matches(expected, out) if rc == 0 else "exit status %s" % rc
            if bad is None:
                print("ok: quick start %s" % name)
            else:
                failures.append("quick start %s: %s not in its output:\n%s" % (name, bad, out.strip()))
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


sys.exit(main())
