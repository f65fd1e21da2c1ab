#!/usr/bin/env bash
# A detections sink (name starting with detect) records the detections of a detector that is not
# ours: regressdetect (detect_producer.c) adds three detections a frame at known boxes. A golden
# of it checks against itself; shifting a box by 3 px, dropping one, changing a class or lowering
# a confidence is each caught with a message naming the frame's box, and each is accepted under
# the tolerance that allows it (and only that one).
#   regress_detections.sh TOOL SOURCE_ROOT PRODUCER_DIR roi|analytics HAVE_ANALYTICS HAVE_TENSOR_META
# roi: ROI metas (any GStreamer); analytics: GstAnalyticsODMtds with their ClsMtds and the
# buffer's ClsMtd (GStreamer >= 1.24; exit 77, skipped, without it), and a GstTensorMeta's
# tensor (GStreamer >= 1.26).
source "$(dirname "$0")/common.sh"
PRODUCER_DIR=${3:?producer dir}
MODE=${4:-roi}
HAVE_ANALYTICS=${5:-false}
HAVE_TENSOR_META=${6:-false}
if [ "$MODE" = analytics ] && [ "$HAVE_ANALYTICS" != true ]; then
  echo "skipped: built without GStreamer's analytics library (>= 1.24)"
  exit 77
fi
export GST_PLUGIN_PATH="$PRODUCER_DIR${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
export GST_REGISTRY="$TMP/registry.bin"

HEAD='filesrc location={clip} ! qtdemux ! h264parse ! avdec_h264'
if [ "$MODE" = roi ]; then
  DET='regressdetect analytics=false'
  OD=''
else
  DET='regressdetect roi=false'
  OD=' (ODMtd)'
fi
P="$HEAD ! $DET ! appsink name=detections"
G=$TMP/golden
# check_with 'what' KNOBS CODE [-p PATTERN]... [-- TOLERANCE OPTIONS...]
check_with() {
  local what=$1 knobs=$2 code=$3; shift 3
  local patterns=()
  while [ "${1:-}" = "-p" ]; do patterns+=("$1" "$2"); shift 2; done
  [ "${1:-}" = "--" ] && shift
  expect "$code" "$what" "${patterns[@]}" -- "$TOOL" check --clip "$CLIP" --golden "$G" --allow-setting-changes \
    --pipeline "$HEAD ! $DET $knobs ! appsink name=detections" "$@"
}

expect 0 "record the detections" -p "sink 'detections' (detections): 31 frames" -- \
  "$TOOL" record --clip "$CLIP" --out "$G" --pipeline "$P"
if [ "$MODE" = roi ]; then
  check 'grep -qF "detections: 93 (car 31, person 62)" "$LAST"' "record counts the detections per class"
  check '[ "$(grep -c "\"source\":\"roi\"" "$G/frames.jsonl")" -eq 31 ]' "ROI metas recorded in every frame"
  check 'head -1 "$G/frames.jsonl" | grep -qF "{\"source\":\"roi\",\"class\":\"person\",\"box\":[100,200,60,120],\"confidence\":0.9,"' \
    "a ROI meta: class, box, confidence from its parameter structure"
  check 'head -1 "$G/frames.jsonl" | grep -qF "\"params\":[\"detection, confidence=(double)0.9"' \
    "its parameter structures, serialised"
  check '! grep -q "\"source\":\"od\"" "$G/frames.jsonl"' "no ODMtd where the producer adds none"
else
  check 'grep -qF "detections: 93 (od:car 31, od:person 62)" "$LAST"' "record counts the ODMtds per class"
  check 'head -1 "$G/frames.jsonl" | grep -qF "{\"source\":\"od\",\"class\":\"person\",\"box\":[100,200,60,120],\"confidence\":0.9"' \
    "an ODMtd: type, box, confidence"
  check 'head -1 "$G/frames.jsonl" | grep -qF "\"classes\":[{\"class\":\"adult\",\"confidence\":0.7"' \
    "the ClsMtd related to it"
  check 'head -1 "$G/frames.jsonl" | grep -qF "\"classifications\":[{\"id\":"' "the buffer's own ClsMtd"
  check 'head -1 "$G/frames.jsonl" | grep -qF "{\"class\":\"outdoor\",\"confidence\":0.95"' "with its classes"
fi
expect 0 "the golden checks against itself" -p "RESULT: PASS: 31 frames" \
  -p "sink 'detections' (detections): 31 frames compared, 0 failing; detections golden 93, this run 93; 93 paired" -- \
  "$TOOL" check --clip "$CLIP" --golden "$G"

# a box shifted by 3 px from frame 12 on
SHIFTED="box person [148,200,60,120]$OD moved 3 px to [151,200,60,120] (tolerance 0)"
check_with "a box shifted by 3 px" "shift=3 from-frame=12" 1 -p "first failing frame: 12" -p "$SHIFTED" \
  -p "REGRESSION: 19 of 31 frames fail"
check_with "accepted under --det-pos-tol 3" "shift=3 from-frame=12" 0 -p "RESULT: PASS" -- --det-pos-tol 3
check_with "not under --det-pos-tol 2.9" "shift=3 from-frame=12" 1 -p "moved 3 px to [151,200,60,120] (tolerance 2.9)" \
  -- --det-pos-tol 2.9
# shifted beyond the IoU threshold: a missed and an extra detection, unless --det-iou pairs them
check_with "a box shifted by 40 px: IoU 0.2" "shift=40" 1 -p "missed detection person [100,200,60,120]$OD" \
  -p "extra detection person [140,200,60,120]$OD"
check_with "paired under --det-iou 0.1" "shift=40" 1 -p "box person [100,200,60,120]$OD moved 40 px" -- --det-iou 0.1
# one box dropped
check_with "a box dropped" "drop=true target=1" 1 -p "missed detection person [400,150,50,100]$OD" \
  -p "first failing frame: 0" -p "31 missed, 0 extra"
check_with "accepted under --det-missed 1" "drop=true target=1" 0 -p "RESULT: PASS" -- --det-missed 1
check_with "not under --det-extra 1" "drop=true target=1" 1 -p "missed detection person" -- --det-extra 1
# a class changed: the golden's box missed, the new class's extra
check_with "a class changed" "relabel=car" 1 -p "missed detection person [100,200,60,120]$OD" \
  -p "extra detection car [100,200,60,120]$OD"
check_with "accepted under --det-missed 1 --det-extra 1" "relabel=car" 0 -p "RESULT: PASS" -- --det-missed 1 --det-extra 1
check_with "not under --det-missed 1 alone" "relabel=car" 1 -p "extra detection car [100,200,60,120]$OD" \
  -- --det-missed 1
# a confidence lowered
check_with "a confidence lowered" "confidence=0.8" 1 -p "person [100,200,60,120]$OD confidence 0.9 -> 0.8 (tolerance 0)"
check_with "accepted under --det-conf-tol 0.11" "confidence=0.8" 0 -p "RESULT: PASS" -- --det-conf-tol 0.11
check_with "not under --det-conf-tol 0.05" "confidence=0.8" 1 -p "confidence 0.9 -> 0.8 (tolerance 0.05)" \
  -- --det-conf-tol 0.05
if [ "$MODE" = analytics ]; then
  check_with "a related class's confidence lowered" "cls-delta=-0.2" 1 \
    -p "person [100,200,60,120] (ODMtd): class adult confidence 0.7 -> 0.5 (tolerance 0)"
  check_with "accepted under --det-conf-tol 0.21" "cls-delta=-0.2" 0 -p "RESULT: PASS" -- --det-conf-tol 0.21
  # ROI metas and ODMtds on the same frames: each paired within its own source
  expect 0 "ROI metas and ODMtds together" -p "detections: 186 (car 31, od:car 31, od:person 62, person 62)" -- \
    "$TOOL" record --clip "$CLIP" --out "$TMP/both" --pipeline "$HEAD ! regressdetect ! appsink name=detections"
  expect 0 "check against itself" -p "RESULT: PASS" -- "$TOOL" check --clip "$CLIP" --golden "$TMP/both"
  expect 1 "an ODMtd and a ROI meta shifted" -p "box person [148,200,60,120] moved 3 px" \
    -p "box person [148,200,60,120] (ODMtd) moved 3 px" -- \
    "$TOOL" check --clip "$CLIP" --golden "$TMP/both" --allow-setting-changes \
    --pipeline "$HEAD ! regressdetect shift=3 from-frame=12 ! appsink name=detections"
  if [ "$HAVE_TENSOR_META" = true ]; then
    # a GstTensorMeta's tensor, by id, its values within --tensor-tol
    G=$TMP/tensor-meta
    DET='regressdetect roi=false tensor=true'
    expect 0 "record a GstTensorMeta" -- "$TOOL" record --clip "$CLIP" --out "$G" \
      --pipeline "$HEAD ! $DET ! appsink name=detections"
    check 'head -1 "$G/frames.jsonl" | grep -qF "\"tensor_metas\":[{\"id\":\"scores\",\"dtype\":\"float32\",\"dims\":[1,3],\"bytes\":12,"' \
      "the tensor recorded by id, type, dimensions and size"
    expect 0 "checks against itself" -p "RESULT: PASS" -- "$TOOL" check --clip "$CLIP" --golden "$G"
    check_with "a score changed" "confidence=0.8" 1 \
      -p "tensor meta 'scores': tensor differs (max abs diff 0.1, tolerance exact)"
    check_with "not under --det-conf-tol alone" "confidence=0.8" 1 -p "tensor meta 'scores'" -- --det-conf-tol 0.11
    check_with "accepted under --tensor-tol max-abs=0.11" "confidence=0.8" 0 -p "RESULT: PASS" -- \
      --det-conf-tol 0.11 --tensor-tol max-abs=0.11
  fi
  finish
fi

# compare: two recordings, the same rule and options
expect 0 "record a shifted run" -- "$TOOL" record --clip "$CLIP" --out "$TMP/shifted" \
  --pipeline "$HEAD ! $DET shift=3 from-frame=12 ! appsink name=detections"
expect 1 "compare finds the shift" -p "$SHIFTED" -p "first failing frame: 12" -- \
  "$TOOL" compare "$G" "$TMP/shifted" --allow-setting-changes
expect 0 "compare accepts it under --det-pos-tol 3" -p "RESULT: PASS" -- \
  "$TOOL" compare "$G" "$TMP/shifted" --allow-setting-changes --det-pos-tol 3

# the HTML report: both sides' boxes on the frame, the pairs, the counts per class over time
expect 1 "HTML report of the dropped box" -- "$TOOL" check --clip "$CLIP" --golden "$G" --allow-setting-changes \
  --pipeline "$HEAD ! $DET drop=true target=1 from-frame=5 ! appsink name=detections" --html "$TMP/html"
check 'python3 - "$TMP/html/index.html" <<EOF
import sys, html.parser
text = open(sys.argv[1]).read()
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(); self.rects = {}; self.rows = []; self.counts = {}
    def handle_starttag(self, tag, a):
        a = dict(a)
        if tag == "rect" and a.get("class") in ("mref", "mrun"):
            self.rects[a["class"]] = self.rects.get(a["class"], 0) + 1
        if tag == "tr" and "data-det" in a: self.rows.append(a["data-det"])
        if tag == "circle" and a.get("class", "").startswith("pt"): self.counts.setdefault("pt", []).append(a)
p = P(); p.feed(text)
assert p.rects.get("mref") == 3 and p.rects.get("mrun") == 2, p.rects
assert p.rows.count("pair") == 2 and p.rows.count("missed") == 1, p.rows
assert "plot-detections-count-person" in text and "plot-detections-count-car" in text
assert "refline" in text
EOF' "HTML: 3 golden and 2 run boxes on frame 5, 2 pairs and 1 missed row, count plots per class"
check 'ls "$TMP/html"/frame-00005-clip-frame.png >/dev/null 2>&1 || ls "$TMP/html"/*.png >/dev/null' "HTML: the frame's picture"

# suite check passes the detection tolerances on to each clip's check
mkdir -p "$TMP/suite" && cp -r "$G" "$TMP/suite/det"
expect 0 "suite check with --det-missed 1 --det-pos-tol 2" -- "$TOOL" suite check --suite "$TMP/suite" \
  --clips "$ROOT/tests/data" --out "$TMP/suite-results" -j 1 --quiet --det-missed 1 --det-pos-tol 2
check 'grep -qF "detections IoU 0.5, box 2 px, confidence 0, missed 1, extra 0 a frame" "$TMP/suite-results/clips/det/report.txt"' \
  "the clip's check got the tolerances"
expect 2 "suite: a malformed --det-iou" -p "--det-iou 2" -- "$TOOL" suite check --suite "$TMP/suite" \
  --clips "$ROOT/tests/data" --out "$TMP/suite-results2" --det-iou 2

# malformed options are usage errors naming the option
for bad in "--det-iou 0" "--det-iou 1.5" "--det-iou x" "--det-pos-tol -1" "--det-conf-tol nan" "--det-missed -1" \
  "--det-missed 1.5" "--det-extra x"; do
  opt=${bad%% *}
  # shellcheck disable=SC2086
  expect 2 "usage error: $bad" -p "$opt ${bad#* }" -- "$TOOL" check --clip "$CLIP" --golden "$G" $bad
done
finish
