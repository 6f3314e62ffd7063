#!/usr/bin/env bash
# xargs -P 3 runs five sleep jobs, three at a time; one of them sleeps 1.5 s, the others
# 50 ms: xargs waits in wait4 for the slow one once the rest are done.
. "$(dirname "$0")/../lib.sh"
need xargs sleep
printf '0.05\n0.05\n1.5\n0.05\n0.05\n' | xargs -P 3 -n 1 sleep || die "xargs failed"
