#!/usr/bin/env bash
# coreutils timeout runs a job (slow-child) under a 10 s limit; the job sleeps 1.2 s and
# exits. timeout waits in sigsuspend for a signal: the job's SIGCHLD, not its own alarm.
. "$(dirname "$0")/../lib.sh"
need timeout
here=$(cd "$(dirname "$0")" && pwd)
status=0
got=$(timeout 10 "$here/slow-child") || status=$?
# 124 would be timeout's own limit firing: not this story.
[ "$status" = 0 ] || die "timeout exited $status"
[ "$got" = "job done" ] || die "slow-child printed '$got'"
