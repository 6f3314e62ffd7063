#!/usr/bin/env bash
# This shell script reads the largest number of a 7 MB list through a pipe:
# $(sort -n -r | head -1). bash waits in read on the pipe from head, head in read on the
# pipe from sort, and sort reads all its input and sorts it on the CPU before it writes.
. "$(dirname "$0")/../lib.sh"
need sort head
seq 1 1000000 >"$WORK/numbers.txt"
# head exits after one line and sort then dies of SIGPIPE, as it should: no pipefail here.
set +o pipefail
top=$(sort -n -r --parallel=1 "$WORK/numbers.txt" | head -1)
[ "$top" = 1000000 ] || die "sort gave '$top'"
