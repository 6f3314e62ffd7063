#!/usr/bin/env bash
# util-linux flock waits in flock(2) for an exclusive lock that exiting-holder holds 1.2 s
# and never unlocks: the lock is released by the holder's exit (the kernel closing its
# descriptor), which wakes flock.
. "$(dirname "$0")/../lib.sh"
need flock
here=$(cd "$(dirname "$0")" && pwd)
"$here/exiting-holder" "$WORK/lock" "$WORK/READY" &
holder=$!
PIDS+=($holder)
wait_file "$WORK/READY" exiting-holder
t0=$(date +%s%N)
flock -w 10 "$WORK/lock" true || die "flock did not get the lock"
t1=$(date +%s%N)
wait "$holder" || die "exiting-holder failed"
[ $(((t1 - t0) / 1000000)) -ge 600 ] || die "flock got the lock after $(((t1 - t0) / 1000000)) ms: it did not wait"
