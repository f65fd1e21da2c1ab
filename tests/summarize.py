#!/usr/bin/env python3
"""Prints 'N passed, N failed, N skipped' from Meson's test log and gtest's JSON reports."""
import json
import os
import sys

testlog, results_dir = sys.argv[1], sys.argv[2]
passed = failed = skipped = 0
reported = set()
for name in os.listdir(results_dir) if os.path.isdir(results_dir) else []:
    if not name.endswith(".json"):
        continue
    with open(os.path.join(results_dir, name)) as f:
        report = json.load(f)
    reported.add(name[:-5])
    for suite in report.get("testsuites", []):
        for case in suite.get("testsuite", []):
            if case.get("result") == "SKIPPED" or case.get("status") == "NOTRUN":
                skipped += 1
            elif case.get("failures"):
                failed += 1
            else:
                passed += 1

# Executables that wrote no gtest report: skipped GPU binaries, crashes, non-gtest tests.
with open(testlog) as f:
    for line in f:
        t = json.loads(line)
        exe = os.path.basename(t["command"][0]) if t.get("command") else t["name"]
        if exe in reported:
            if t["result"] in ("FAIL", "TIMEOUT", "ERROR") and t.get("returncode", 0) not in (0, 1):
                failed += 1  # crashed after writing a partial report
            continue
        if t["result"] == "SKIP":
            skipped += 1
        elif t["result"] in ("OK", "EXPECTEDFAIL"):
            passed += 1
        else:
            failed += 1
print(f"{passed} passed, {failed} failed, {skipped} skipped")
