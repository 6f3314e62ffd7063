#!/usr/bin/env bash
# The classic: membership tests against a list, short (base) or long (slow).
. "$(dirname "$0")/../lib.sh"
need /usr/bin/python3
case "$MODE" in
  prepare) ;;
  base | slow)
    n=30
    [ "$MODE" = slow ] && n=3000
    /usr/bin/python3 -c "
import sys
haystack = list(range(0, 2 * $n, 2))
found = 0
for i in range(60000):
    found += (i % (2 * $n)) in haystack
print(found)" >"$WORK/out" || die "python3 failed" ;;
esac
