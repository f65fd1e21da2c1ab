#!/usr/bin/env python3
"""Checks the CI examples of tools/regress/ci: they parse as YAML (with PyYAML, python3-yaml, when
it is installed; otherwise a minimal structural check: no tabs, indentation, balanced quotes and
brackets), they shard with --parts / --part-index from the engine's index, merge the parts, and
every option they pass to cudaprep-regress is one that `cudaprep-regress suite --help` names; the
README's manifest example loads.
  check_ci_examples.py TOOL SOURCE_ROOT"""
import os
import re
import subprocess
import sys

tool, root = sys.argv[1], sys.argv[2]
ci = os.path.join(root, "tools", "regress", "ci")
failed = 0


def expect(cond, what):
    global failed
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failed += 1


try:
    import yaml  # python3-yaml
except ImportError:
    yaml = None
print("YAML parsed with " + ("PyYAML " + yaml.__version__ if yaml else "the minimal structural check (no PyYAML)"))


def minimal_check(text):
    """A structural check for when PyYAML is missing: returns a list of problems."""
    problems = []
    for n, line in enumerate(text.splitlines(), 1):
        if "\t" in line:
            problems.append("line %d: a tab" % n)
        body = line.split(" #")[0] if not line.lstrip().startswith("#") else ""
        indent = len(line) - len(line.lstrip(" "))
        if body.strip() and indent % 2:
            problems.append("line %d: odd indentation" % n)
        for a, b in ("[]", "{}"):
            if body.count(a) != body.count(b):
                problems.append("line %d: unbalanced %s%s" % (n, a, b))
        if body.count('"') % 2:
            problems.append("line %d: unbalanced quotes" % n)
    return problems


def load(name):
    path = os.path.join(ci, name)
    text = open(path).read()
    if yaml:
        try:
            docs = list(yaml.safe_load_all(text))
            expect(all(isinstance(d, dict) for d in docs), name + " parses as YAML mappings")
            return text, docs
        except yaml.YAMLError as e:
            expect(False, name + " parses as YAML: %s" % e)
            return text, None
    problems = minimal_check(text)
    expect(not problems, name + " passes the minimal YAML check %s" % problems)
    return text, None


help_text = subprocess.run([tool, "suite", "--help"], capture_output=True, text=True).stdout
known = set(re.findall(r"--[a-z][a-z-]*", help_text)) | ({"-j"} if re.search(r"\[-j N\]", help_text) else set())


def commands(text):
    """The cudaprep-regress command lines of a file (folded lines joined)."""
    joined = re.sub(r"\n\s+(?=--|-j )", " ", text)
    return [l[l.index("cudaprep-regress"):] for l in joined.splitlines() if "cudaprep-regress suite" in l
            and not l.lstrip().startswith("#")]


def check_options(name, text):
    cmds = commands(text)
    expect(len(cmds) >= 2, name + ": a suite check and a suite merge command (%d commands)" % len(cmds))
    for c in cmds:
        sub = c.split()[2]
        expect(sub in ("check", "record", "merge"), name + ": cudaprep-regress suite " + sub + " exists")
        for opt in re.findall(r"(?<![\w-])(--[a-z][a-z-]*|-j)(?=[\s=])", c):
            expect(opt in known, name + ": option " + opt + " is one of cudaprep-regress suite's")


# GitLab CI
text, docs = load("gitlab-ci-suite.yml")
check_options("gitlab-ci-suite.yml", text)
if docs:
    d = docs[0]
    job, report = d.get("regress-suite", {}), d.get("regress-suite-report", {})
    script = "\n".join(job.get("script", []))
    expect(isinstance(job.get("parallel"), int) and job["parallel"] > 1, "GitLab: the suite job runs in parallel")
    expect('--parts "$CI_NODE_TOTAL"' in script and '--part-index "$((CI_NODE_INDEX - 1))"' in script,
           "GitLab: parts from CI_NODE_TOTAL, the part index from CI_NODE_INDEX (counted from 1)")
    expect(job.get("artifacts", {}).get("reports", {}).get("junit"), "GitLab: each part's JUnit is a report")
    expect(any("suite merge" in s for s in report.get("script", [])) and
           report.get("needs", [{}])[0].get("job") == "regress-suite", "GitLab: the report job merges the parts")
    expect(set(d.get("stages", [])) >= {job.get("stage"), report.get("stage")}, "GitLab: the jobs' stages exist")

# Kubernetes Indexed Job
text, docs = load("k8s-indexed-job.yaml")
check_options("k8s-indexed-job.yaml", text)
if docs:
    expect(len(docs) == 2 and all(x.get("kind") == "Job" and x.get("apiVersion") == "batch/v1" for x in docs),
           "Kubernetes: two batch/v1 Jobs")
    spec = docs[0]["spec"]
    c = spec["template"]["spec"]["containers"][0]
    args = " ".join(c.get("args", []))
    n = spec.get("completions")
    expect(spec.get("completionMode") == "Indexed" and n == spec.get("parallelism"),
           "Kubernetes: an Indexed Job, all parts at once")
    expect(("--parts %s " % n) in args and '--part-index "$JOB_COMPLETION_INDEX"' in args,
           "Kubernetes: as many parts as completions, the part index from JOB_COMPLETION_INDEX")
    expect(spec["template"]["spec"].get("restartPolicy") == "Never", "Kubernetes: restartPolicy Never")
    merge = " ".join(docs[1]["spec"]["template"]["spec"]["containers"][0].get("args", []))
    expect("suite merge" in merge and "/results/part-*" in merge, "Kubernetes: the second Job merges the parts")

# the manifest example of the README loads
import tempfile
readme = open(os.path.join(root, "tools", "regress", "README.md")).read()
m = re.search(r"```ini\n(.*?)```", readme, re.S)
expect(m is not None, "README: a manifest example")
if m:
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "suite.ini")
        open(path, "w").write(m.group(1))
        r = subprocess.run([tool, "suite", "list", "--suite", path], capture_output=True, text=True)
        names = [l.split("\t")[0] for l in r.stdout.splitlines()]
        expect(r.returncode == 0 and names == ["highway/drive-0042", "night/drive-0107"],
               "README: its manifest example loads (suite list: %s %s)" % (names, r.stderr.strip()))

print("%s" % ("all met" if not failed else "%d failed" % failed))
sys.exit(1 if failed else 0)
