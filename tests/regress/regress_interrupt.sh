#!/usr/bin/env bash
# SIGINT / SIGTERM during record: the partial recording (<out>.recording-<pid>) is removed, an
# existing recording is left as it was, and the tool says so and exits 2. During check: the
# frames so far are reported, exit 2.
source "$(dirname "$0")/common.sh"
# about 6 s for the 31 frames: 0.2 s a frame
SLOW=${PIPELINE/avdec_h264 !/avdec_h264 ! identity sleep-time=200000 !}
check '[ "$SLOW" != "$PIPELINE" ]' "the slow pipeline"

# interrupt SIGNAL WAIT -- command...: runs the command, sends SIGNAL once WAIT is met
# (file:GLOB, a file matches GLOB; line:TEXT, a line of its output holds TEXT), prints its output
# and exits with its status (100 when a signal killed it). Run from Python so that the signal
# reaches the tool alone, whatever the shell does with signals of its background jobs.
interrupt() {
  python3 - "$@" <<'PY'
import glob, signal, subprocess, sys, threading, time
sig, wait, cmd = sys.argv[1], sys.argv[2], sys.argv[4:]
kind, _, what = wait.partition(":")
p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
lines = []
reader = threading.Thread(target=lambda: lines.extend(iter(p.stdout.readline, b"")))
reader.start()
def ready():
    if kind == "file":
        return bool(glob.glob(what))
    return any(what.encode() in l for l in list(lines))
deadline = time.time() + 60
while time.time() < deadline and p.poll() is None and not ready():
    time.sleep(0.05)
if p.poll() is None:
    time.sleep(0.3)  # a few frames into it
    p.send_signal(getattr(signal, sig))
else:
    print("the command ended before the signal was sent")
p.wait(timeout=120)
reader.join()
sys.stdout.write(b"".join(lines).decode(errors="replace"))
print("exit status", p.returncode)
sys.exit(p.returncode if p.returncode >= 0 else 100)
PY
}

for SIG in SIGINT SIGTERM; do
  OUT=$TMP/rec-$SIG
  expect 2 "$SIG during record" -p "interrupted by $SIG after" -p "nothing recorded" -p "exit status 2" -- \
    interrupt "$SIG" "file:$OUT.recording-*/tensors/tensor-00001.f32" -- \
    "$TOOL" record --clip "$CLIP" --pipeline "$SLOW" --out "$OUT"
  check '[ -z "$(ls -d "$OUT".* 2>/dev/null)" ]' "$SIG: the partial recording is removed"
  check '[ ! -e "$OUT" ]' "$SIG: no recording"
done

# over an existing recording with --force: the old one stays when interrupted
expect 0 "record" -- "$TOOL" record --clip "$CLIP" --pipeline "$PIPELINE" --out "$TMP/old" --store digest
cp "$TMP/old/frames.jsonl" "$TMP/old-frames.jsonl"
expect 2 "SIGINT during record --force" -p "interrupted by SIGINT" -- \
  interrupt SIGINT "file:$TMP/old.recording-*/tensors/tensor-00001.f32" -- \
  "$TOOL" record --clip "$CLIP" --pipeline "$SLOW" --out "$TMP/old" --force
check 'cmp -s "$TMP/old/frames.jsonl" "$TMP/old-frames.jsonl" && [ ! -e "$TMP/old/tensors" ]' \
  "the existing recording is left as it was"
check '[ -z "$(ls -d "$TMP"/old.* 2>/dev/null)" ]' "no partial recording left"

expect 2 "SIGINT during check" -p "interrupted by SIGINT after" -p "RESULT: ERROR: interrupted by SIGINT" \
  -p "exit status 2" -- interrupt SIGINT "line:check: frame " -- \
  "$TOOL" check --clip "$CLIP" --golden "$GOLDEN" --pipeline "$SLOW" --progress
finish
