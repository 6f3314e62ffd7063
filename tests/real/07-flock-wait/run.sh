#!/usr/bin/env bash
# util-linux flock waits in flock(2) for an exclusive lock that lock-holder holds 1.5 s.
. "$(dirname "$0")/../lib.sh"
need flock
here=$(cd "$(dirname "$0")" && pwd)
"$here/lock-holder" "$WORK/lock" "$WORK/READY" &
PIDS+=($!)
wait_file "$WORK/READY" lock-holder
flock -w 10 "$WORK/lock" true || die "flock did not get the lock"
