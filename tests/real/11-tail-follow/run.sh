#!/usr/bin/env bash
# tail -f follows a job's log; the job (slow-writer) appends its result line after 1.2 s
# of sleep. tail waits in poll on its inotify descriptor until that write; the driver
# stops tail once the line is in tail's output (tail -f never ends by itself).
. "$(dirname "$0")/../lib.sh"
need tail
here=$(cd "$(dirname "$0")" && pwd)
: >"$WORK/job.log"
tail -n 0 -f "$WORK/job.log" >"$WORK/tail.out" &
tailpid=$!
PIDS+=($tailpid)
# The write must come after tail's watch is in place (else tail reads it at start, no
# wait): wait for the inotify watch in tail's descriptors. Also proves tail uses inotify
# here, not its sleep-and-stat polling.
watching=0
for _ in $(seq 100); do
  if grep -qs '^inotify wd:' /proc/"$tailpid"/fdinfo/*; then watching=1; break; fi
  sleep 0.05
done
[ "$watching" = 1 ] || die "tail set no inotify watch within 5 s"
"$here/slow-writer" "$WORK/job.log" || die "slow-writer failed"
# tail copies the line as soon as inotify reports the write; give it at most 5 s.
got=0
for _ in $(seq 100); do
  if grep -qx 'job done' "$WORK/tail.out"; then got=1; break; fi
  sleep 0.05
done
[ "$got" = 1 ] || die "tail did not print the appended line within 5 s (got '$(cat "$WORK/tail.out")')"
kill "$tailpid"
wait "$tailpid" 2>/dev/null || true
