#!/usr/bin/env bash
# A perl one-liner sums the lines of a named pipe (FIFO) that slow-producer writes only
# after 1.2 s of computing: perl waits in read(2) on the FIFO for the first line.
. "$(dirname "$0")/../lib.sh"
need perl
here=$(cd "$(dirname "$0")" && pwd)
mkfifo "$WORK/results"
"$here/slow-producer" "$WORK/results" &
producer=$!
PIDS+=($producer)
sum=$(timeout 10 perl -lne '$s += $_; END { print $s }' "$WORK/results") || die "perl failed"
wait "$producer" || die "slow-producer failed"
[ "$sum" = 42 ] || die "perl summed '$sum', not 42"
