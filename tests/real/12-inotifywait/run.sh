#!/usr/bin/env bash
# inotifywait waits for a file to be created in a spool directory; slow-creator creates it
# after 1.2 s of sleep. inotifywait waits in pselect on its inotify descriptor until the
# create.
. "$(dirname "$0")/../lib.sh"
need inotifywait
here=$(cd "$(dirname "$0")" && pwd)
mkdir "$WORK/spool"
# -t 10 bounds the wait; the answer comes long before.
inotifywait -t 10 -e create "$WORK/spool" >"$WORK/iw.out" 2>"$WORK/iw.err" &
iw=$!
PIDS+=($iw)
# The file must be created after the watch is set (else nothing reports it):
# inotifywait says "Watches established." just before it waits.
ready=0
for _ in $(seq 100); do
  if grep -qs '^Watches established' "$WORK/iw.err"; then ready=1; break; fi
  sleep 0.05
done
[ "$ready" = 1 ] || die "inotifywait set no watch within 5 s ($(cat "$WORK/iw.err"))"
"$here/slow-creator" "$WORK/spool/report.txt" &
creator=$!
PIDS+=($creator)
wait "$iw" || die "inotifywait failed or timed out: $(cat "$WORK/iw.out" "$WORK/iw.err")"
wait "$creator" || die "slow-creator failed"
[ "$(cat "$WORK/iw.out")" = "$WORK/spool/ CREATE report.txt" ] ||
  die "inotifywait reported '$(cat "$WORK/iw.out")'"
