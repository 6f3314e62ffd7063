#!/usr/bin/env bash
# GNU parallel -j2 runs four jobs two at a time; three end at once, the one named "slow"
# sleeps 1.2 s. parallel's loop polls for its children (wait4 WNOHANG, then a select
# timeout growing 1.1 times a turn) until it reaps the slow job (whose SIGCHLD cuts a
# select short when it lands in one).
. "$(dirname "$0")/../lib.sh"
need parallel
here=$(cd "$(dirname "$0")" && pwd)
# parallel keeps its state (~/.parallel) and buffered job output ($TMPDIR) in the temp dir;
# it runs each job with $SHELL -c, which execs the job (one process, comm slow-job);
# --will-cite: no citation notice.
out=$(HOME="$WORK" TMPDIR="$WORK" SHELL=/bin/sh timeout 20 \
  parallel --will-cite -j2 -k "$here/slow-job" ::: a slow b c </dev/null) ||
  die "parallel failed: $out"
[ "$out" = "done a
done slow
done b
done c" ] || die "parallel printed '$out'"
