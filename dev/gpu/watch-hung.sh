#!/usr/bin/env bash
# Runs a command (e.g. dev/gpu/device-run.sh sanitize-pipelines) and watches it: any
# gst-launch-1.0 process alive for more than HUNG_S seconds (default 30) gets its process
# states (ps) and every thread's state, wait channel and CPU ticks printed once, twice 2 s
# apart, for telling a deadlock from a spin or a stopped process. Usage: watch-hung.sh COMMAND...
set -u
"$@" &
job=$!
seen=" "
while kill -0 $job 2>/dev/null; do
  sleep 2
  for p in $(pgrep -f 'gst-launch-1.0' || true); do
    case "$seen" in *" $p "*) continue ;; esac
    age=$(ps -o etimes= -p "$p" 2>/dev/null | tr -d ' ')
    [ -n "$age" ] && [ "$age" -gt "${HUNG_S:-30}" ] || continue
    seen="$seen$p "
    echo "=== watch-hung: pid $p alive for $age s"
    ps -eo pid,ppid,pgid,tpgid,stat,etimes,wchan:24,args | grep -E 'PID|gst-launch|sanitizer|timeout' | grep -v grep | cut -c1-200
    for pass in 1 2; do
      for t in /proc/$p/task/*; do
        read -r -a st < "$t/stat" 2>/dev/null || continue
        printf '  %-16s %s wchan=%-24s ticks=%s\n' "$(cat "$t/comm" 2>/dev/null)" "${st[2]}" \
          "$(cat "$t/wchan" 2>/dev/null)" "$(( ${st[13]} + ${st[14]} ))"
      done
      [ $pass = 1 ] && { sleep 2; echo "  -- 2 s later:"; }
    done
  done
done
wait $job
