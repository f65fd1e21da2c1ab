# Shared by the regress_*.sh tests: sourced with the tool's path and the source root as $1 $2.
# Each test counts its failed expectations and exits 1 if there is any, 0 otherwise.
set -uo pipefail
TOOL=${1:?usage: $0 TOOL SOURCE_ROOT}
ROOT=${2:?usage: $0 TOOL SOURCE_ROOT}
CLIP=$ROOT/tests/data/vtest-h264.mp4
GOLDEN=$ROOT/tests/data/golden/vtest-cpu
PERTURB="python3 $ROOT/tests/regress/perturb.py"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/regress-test-XXXXXX")
trap 'rm -rf "$TMP"' EXIT
FAILED=0
N=0
# the golden's own pipeline description
golden_pipeline() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pipeline"])' "$1/manifest.json"; }
PIPELINE=$(golden_pipeline "$GOLDEN")

# expect CODE 'what' [-p PATTERN]... -- command...
# Runs the command, checks its exit status and that its output (stdout+stderr) holds every PATTERN.
# The output stays in $LAST.
expect() {
  local code=$1 what=$2; shift 2
  local patterns=()
  while [ "$1" = "-p" ]; do patterns+=("$2"); shift 2; done
  [ "$1" = "--" ] && shift
  N=$((N + 1))
  local out="$TMP/out.$N"
  LAST=$out  # for checks on the output that follow
  "$@" >"$out" 2>&1
  local rc=$?
  local ok=1
  if [ "$rc" -ne "$code" ]; then
    echo "FAIL: $what: exit $rc, expected $code"; ok=0
  fi
  for p in "${patterns[@]}"; do
    if ! grep -qF -- "$p" "$out"; then echo "FAIL: $what: output lacks: $p"; ok=0; fi
  done
  if [ $ok = 1 ]; then
    echo "ok: $what"
  else
    FAILED=$((FAILED + 1))
    echo "---- output of: $*"; sed -n '1,80p' "$out"; echo "----"
  fi
}

# check CONDITION 'what'
check() {
  N=$((N + 1))
  if eval "$1"; then echo "ok: $2"; else echo "FAIL: $2 ($1)"; FAILED=$((FAILED + 1)); fi
}

finish() {
  echo "$((N - FAILED)) of $N expectations met"
  [ "$FAILED" -eq 0 ]
  exit $?
}

# copy_golden NAME: a writable copy of the shipped golden at $TMP/NAME (printed)
copy_golden() { rm -rf "${TMP:?}/$1"; cp -r "$GOLDEN" "$TMP/$1"; echo "$TMP/$1"; }
