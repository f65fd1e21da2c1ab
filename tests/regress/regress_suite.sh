#!/usr/bin/env bash
# cudaprep-regress suite over clips made from the shipped clip (tests/regress/suite_make_clips.sh:
# the mp4, Matroska and MPEG-TS remuxes, a Motion JPEG re-encode, crops and other pixel formats
# in the pipeline, one clip that does not decode): recorded and checked with -j 2, all pass; a
# perturbed golden fails exactly its clip; the undecodable clip is a setup error, a crash and a
# timeout (through --wrapper) are their clip's result, a clip that fails once is flaky under
# --retry-failed, and the rest still run. JUnit and the HTML index are parsed and checked;
# --parts splits by name (each clip once, stable), and suite merge of the parts equals the
# unsharded results. --gpus gives each clip's pipeline its GPU as device-id.
source "$(dirname "$0")/common.sh"
S=$TMP/s
bash "$ROOT/tests/regress/suite_make_clips.sh" "$ROOT" "$S" || { echo "FAIL: cannot make the clips"; exit 1; }
NAMES=$(sed -n 's/^\[clip \(.*\)\]$/\1/p' "$S/suite.ini" | sort)
NCLIPS=$(echo "$NAMES" | wc -l)
check '[ "$NCLIPS" -ge 6 ]' "the suite has at least 6 clips ($NCLIPS)"

# ---- record and check, 2 at a time over two GPU indices
expect 0 "suite record -j 2 --gpus 0,1" -p "SUITE vtest-variants (record): $NCLIPS clips: $NCLIPS pass" -p "[$NCLIPS/$NCLIPS]" \
  -p "clips/min" -p "left" -- "$TOOL" suite record --suite "$S/suite.ini" --out "$S/rec" -j 2 --gpus 0,1
check "python3 - '$S' <<'PY'
import json, glob, os, sys
s = sys.argv[1]
res = {c['name']: c for c in json.load(open(os.path.join(s, 'rec/results.json')))['clips']}
used = set()
for name, c in res.items():
    m = json.load(open(os.path.join(s, 'goldens', name, 'manifest.json')))
    dev = [e['properties']['device-id'] for e in m['elements'] if e['factory'] == 'cudatensorize']
    assert dev == [str(c['gpu'])], (name, dev, c['gpu'])
    used.add(c['gpu'])
assert used == {0, 1}, used
PY" "each clip's cudatensorize ran with device-id set to its GPU, both GPUs used"
expect 0 "suite check -j 2: all pass" -p "$NCLIPS clips: $NCLIPS pass, 0 regression" -- \
  "$TOOL" suite check --suite "$S/suite.ini" --out "$S/chk" -j 2 --junit "$S/chk.xml"
# started through the dynamic loader (a relocated install on an older glibc): the clips run the
# tool, not the loader (/proc/self/exe), the same way through --wrapper
LOADER=$(ldd "$TOOL" | awk '/ld-linux/ {print $1}')
if [ -x "$LOADER" ]; then
  expect 0 "suite check started through the dynamic loader, clips through it as --wrapper" \
    -p "$NCLIPS clips: $NCLIPS pass, 0 regression" -- \
    "$LOADER" "$TOOL" suite check --suite "$S/suite.ini" --out "$S/chkld" -j 2 --wrapper "$LOADER" --quiet
fi
# the goldens' directory as the suite: each golden's own pipeline, its clip found by name under --clips
expect 0 "suite check over the directory of goldens" -p "SUITE goldens (check): $NCLIPS clips: $NCLIPS pass" -- \
  "$TOOL" suite check --suite "$S/goldens" --clips "$S/clips" --out "$S/chkdir" -j 2
check '[ -f "$S/chkdir/clips/containers/mkv/html/index.html" ]' "a nested golden's clip report is in its own folder"
expect 0 "suite record --force over the directory of goldens re-records each with its own pipeline" \
  -p "SUITE goldens (record): $NCLIPS clips: $NCLIPS pass" -- \
  "$TOOL" suite record --suite "$S/goldens" --clips "$S/clips" --out "$S/recdir" -j 2 --force
check '[ -z "$(find "$S/goldens" -maxdepth 2 -name "*.recording-*" -o -maxdepth 2 -name "*.old-*")" ]' \
  "nothing left beside the goldens"
expect 0 "the re-recorded goldens check" -p "$NCLIPS clips: $NCLIPS pass" -- \
  "$TOOL" suite check --suite "$S/suite.ini" --out "$S/chk3" -j 2 --quiet
expect 2 "a directory of goldens needs --clips" -p "needs --clips ROOT" -- \
  "$TOOL" suite check --suite "$S/goldens" --out "$S/chkdir2"
expect 2 "record again without --force: every golden is refused, none replaced" -p "$NCLIPS setup error" -- \
  "$TOOL" suite record --suite "$S/suite.ini" --out "$S/rec2" -j 2
check 'grep -q "holds a recording already" "$S/rec2/clips/vtest/log.txt"' "the clip's log says why"

# ---- a suite with failures: a perturbed golden, an undecodable clip, a crash, a timeout, a flaky clip
cp "$S/suite.ini" "$S/suite2.ini"
for n in broken crashy slow flaky; do cp -r "$S/goldens/vtest" "$S/goldens/$n"; done
cat >>"$S/suite2.ini" <<'INI'

[clip broken]
file=broken.mp4

[clip crashy]
file=vtest.mp4

[clip slow]
file=vtest.mp4
timeout=3

[clip flaky]
file=vtest.mp4
INI
$PERTURB "$S/goldens/crop" tensor tensor 7 100 0.5
cat >"$S/wrapper.sh" <<WRAP
#!/bin/sh
case "\$*" in
  *goldens/crashy*) kill -SEGV \$\$ ;;
  *goldens/slow*) exec sleep 60 ;;
  *goldens/flaky*) if [ ! -e "$S/flaky-once" ]; then touch "$S/flaky-once"; exit 3; fi ;;
esac
exec "\$@"
WRAP
chmod +x "$S/wrapper.sh"
N2=$((NCLIPS + 4))
expect 2 "suite check with failures: every clip has its result" \
  -p "$N2 clips: $NCLIPS pass (1 flaky), 1 regression, 1 setup error, 1 timeout, 1 crash" \
  -p "regression  crop: first failing frame: 7" -p "setup-error  broken" -p "timeout  slow: timed out after 3 s" \
  -p "crash  crashy: crashed: killed by signal 11" -p "pass (flaky)  flaky" -- \
  "$TOOL" suite check --suite "$S/suite2.ini" --out "$S/chk2" -j 2 --wrapper "$S/wrapper.sh" --retry-failed 1 \
  --junit "$S/junit/chk2.xml"
check '[ $(grep -c "^suite check: again" "$LAST") = 5 ]' "the five failures ran again, one at a time"

# JUnit: the schema's required elements and attributes, counts, messages, links
check "python3 - '$S/junit/chk2.xml' '$N2' <<'PY'
import os, sys, xml.etree.ElementTree as ET
path, n = sys.argv[1], int(sys.argv[2])
root = ET.parse(path).getroot()
assert root.tag == 'testsuites'
suites = root.findall('testsuite')
assert len(suites) == 1
ts = suites[0]
cases = ts.findall('testcase')
assert ts.get('name') == 'vtest-variants' and int(ts.get('tests')) == n == len(cases)
assert int(ts.get('failures')) == 1 and int(ts.get('errors')) == 3 and int(ts.get('skipped')) == 0
assert int(root.get('tests')) == n and int(root.get('failures')) == 1 and int(root.get('errors')) == 3
float(ts.get('time'))
by = {}
for c in cases:
    assert c.get('classname') == 'vtest-variants' and c.get('name') and float(c.get('time')) >= 0
    by[c.get('name')] = c
fails = [c for c in cases if c.find('failure') is not None]
errs = [c for c in cases if c.find('error') is not None]
assert [c.get('name') for c in fails] == ['crop'], fails
assert sorted(c.get('name') for c in errs) == ['broken', 'crashy', 'slow']
f = by['crop'].find('failure')
assert f.get('type') == 'regression'
assert 'first failing frame: 7' in f.get('message') and 'max abs diff 0.5' in f.get('message'), f.get('message')
assert by['broken'].find('error').get('type') == 'setup-error'
assert 'does not decode' in by['broken'].find('error').get('message')
assert by['slow'].find('error').get('type') == 'timeout' and by['crashy'].find('error').get('type') == 'crash'
assert 'flaky' in by['flaky'].find('system-out').text
base = os.path.dirname(path)
for c in cases:
    links = [l.split(': ', 1)[1] for l in c.find('system-out').text.splitlines() if l.startswith(('report: ', 'log: '))]
    assert links, c.get('name')
    for l in links:
        assert os.path.isfile(os.path.join(base, l)), l
assert any(l.startswith('report: ') for l in f.text.splitlines())
PY" "JUnit: one testcase per clip, counts, the failing frame and figure, types, links to existing reports"

# the HTML index: parses, worst first, links every clip's report
check "python3 - '$S/chk2' <<'PY'
import json, os, sys
from html.parser import HTMLParser
d = sys.argv[1]
class P(HTMLParser):
    def __init__(self):
        super().__init__(); self.rows = []; self.links = []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == 'tr' and 'data-clip' in a: self.rows.append((a['data-clip'], a['data-verdict']))
        if tag == 'a': self.links.append(a['href'])
p = P(); p.feed(open(os.path.join(d, 'index.html')).read()); p.close()
res = json.load(open(os.path.join(d, 'results.json')))
sev = {'crash': 4, 'timeout': 3, 'setup-error': 2, 'regression': 1, 'pass': 0}
assert len(p.rows) == len(res['clips'])
s = [sev[v] for _, v in p.rows]
assert s == sorted(s, reverse=True), p.rows
assert p.rows[0] == ('crashy', 'crash') and p.rows[3] == ('crop', 'regression'), p.rows
for c in res['clips']:
    if c['verdict'] in ('pass', 'regression'):
        assert c['html'] in p.links and os.path.isfile(os.path.join(d, c['html'])), c['name']
for l in p.links:
    assert os.path.isfile(os.path.join(d, l)), l
PY" "HTML index: every clip, sorted by severity, each report linked and present"

# SIGINT to the suite: no further clip starts, the running ones are stopped, the results say so
cat >"$S/sleeper.sh" <<WRAP
#!/bin/sh
echo \$\$ >>"$S/sleepers"
exec sleep 60
WRAP
chmod +x "$S/sleeper.sh"
"$TOOL" suite check --suite "$S/suite.ini" --out "$S/int" -j 2 --wrapper "$S/sleeper.sh" >"$TMP/int.out" 2>&1 &
spid=$!
for _ in $(seq 200); do [ "$(wc -l <"$S/sleepers" 2>/dev/null)" = 2 ] && break; sleep 0.05; done
kill -INT $spid
wait $spid
rc=$?
check '[ $rc = 2 ]' "an interrupted suite exits 2 (exit $rc)"
check 'grep -q "interrupted by SIGINT (exit 2)" "$TMP/int.out"' "and says so"
check 'grep -q "not run: the suite was interrupted" "$S/int/results.json"' "clips not started are reported as not run"
check '! kill -0 $(cat "$S/sleepers") 2>/dev/null' "the running clips were stopped"

# ---- parts: a stable split by name
for n in 1 2 3 4; do
  : >"$TMP/union"
  for i in $(seq 0 $((n - 1))); do
    "$TOOL" suite list --suite "$S/suite2.ini" --parts $n --part-index $i | cut -f1 >"$TMP/part$n.$i"
    "$TOOL" suite list --suite "$S/suite2.ini" --parts $n --part-index $i | cut -f1 | cmp -s - "$TMP/part$n.$i" ||
      echo "unstable" >>"$TMP/union"
    cat "$TMP/part$n.$i" >>"$TMP/union"
  done
  check '[ "$(sort "$TMP/union")" = "$("$TOOL" suite list --suite "$S/suite2.ini" | cut -f1 | sort)" ]' \
    "--parts $n: the parts' union is the suite, each clip once, the same on two runs"
done
check '[ -s "$TMP/part4.0" ] && [ -s "$TMP/part4.1" ] && [ -s "$TMP/part4.2" ] && [ -s "$TMP/part4.3" ]' \
  "--parts 4: no part of the 10 clips is empty"
# the part follows the name, not the position: more clips leave the others where they were
cp "$S/suite2.ini" "$S/suite3.ini"
for k in 1 2 3 4 5; do printf '\n[clip aaa-extra-%s]\nfile=vtest.mp4\n' $k >>"$S/suite3.ini"; done
for i in 0 1 2; do
  "$TOOL" suite list --suite "$S/suite3.ini" --parts 3 --part-index $i | cut -f1 | grep -v '^aaa-extra' >"$TMP/p3.$i"
done
check 'cmp -s "$TMP/p3.0" "$TMP/part3.0" && cmp -s "$TMP/p3.1" "$TMP/part3.1" && cmp -s "$TMP/p3.2" "$TMP/part3.2"' \
  "clips added before the others in name order keep the others in their parts"
expect 2 "--parts without --part-index" -p "go together" -- "$TOOL" suite list --suite "$S/suite2.ini" --parts 2
expect 2 "--part-index out of range" -p "from 0 to 1" -- "$TOOL" suite list --suite "$S/suite2.ini" --parts 2 --part-index 2
expect 0 "--gpus without -j: --jobs-per-gpu clips a GPU at once" -p "2 at a time over GPUs 0,1" -- \
  "$TOOL" suite check --suite "$S/suite.ini" --out "$TMP/jpg" --gpus 0,1 --jobs-per-gpu 1 --parts 100 --part-index 0
expect 0 "--gpus without -j: 4 a GPU by default" -p "12 at a time over GPUs 0,1,2" -- \
  "$TOOL" suite check --suite "$S/suite.ini" --out "$TMP/jpg" --gpus 0,1,2 --parts 100 --part-index 0
expect 2 "--jobs-per-gpu with -j" -p "without -j" -- \
  "$TOOL" suite check --suite "$S/suite.ini" --out "$TMP/jpg" --gpus 0,1 --jobs-per-gpu 1 -j 3
expect 2 "--gpus with a GPU twice" -p "each once" -- "$TOOL" suite check --suite "$S/suite2.ini" --out "$TMP/x" --gpus 0,0

# ---- merge of parts equals the unsharded run
rm -f "$S/flaky-once"
for i in 0 1 2; do
  "$TOOL" suite check --suite "$S/suite2.ini" --out "$S/part$i" -j 2 --wrapper "$S/wrapper.sh" --retry-failed 1 \
    --parts 3 --part-index $i --quiet >"$TMP/part$i.out" 2>&1
done
expect 2 "suite merge of the three parts" -p "$N2 clips (3 of 3 parts): $NCLIPS pass (1 flaky), 1 regression, 1 setup error" -- \
  "$TOOL" suite merge --out "$S/merged" --junit "$S/merged/junit.xml" "$S/part0" "$S/part1/results.json" "$S/part2"
check "python3 - '$S/chk2/results.json' '$S/merged/results.json' <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a['counts'] == b['counts'], (a['counts'], b['counts'])
assert a['exit_status'] == b['exit_status'] == 2
va = {c['name']: (c['verdict'], c['flaky']) for c in a['clips']}
vb = {c['name']: (c['verdict'], c['flaky']) for c in b['clips']}
assert va == vb, (va, vb)
assert b['parts'] == 3 and b['part_indices'] == [0, 1, 2]
PY" "the merged results equal the unsharded run (counts, each clip's verdict)"
check "python3 - '$S/merged' <<'PY'
import json, os, sys, xml.etree.ElementTree as ET
d = sys.argv[1]
ts = ET.parse(os.path.join(d, 'junit.xml')).getroot().find('testsuite')
res = json.load(open(os.path.join(d, 'results.json')))
assert int(ts.get('tests')) == len(res['clips']) == len(ts.findall('testcase'))
for c in res['clips']:
    for k in ('log', 'html'):
        if c[k]: assert os.path.isfile(os.path.join(d, c[k])) and c[k].startswith('../part'), c[k]
PY" "the merged JUnit has every clip; the merged links reach the parts' reports (relative: ../partN/...)"
expect 2 "merge refuses a part given twice" -p "given twice" -- "$TOOL" suite merge --out "$TMP/m2" "$S/part0" "$S/part0"
expect 2 "merge says which parts are missing" -p "parts missing: 2 of 3" -- "$TOOL" suite merge --out "$TMP/m3" "$S/part0" "$S/part1"
finish
