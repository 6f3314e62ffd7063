#!/usr/bin/env bash
# sort reads its input to end of file before it can sort: slow-producer writes three
# lines, sleeps 1.2 s and exits, and only its exit (the kernel closing its end of the
# pipe) gives sort the end of file it waits for in read.
. "$(dirname "$0")/../lib.sh"
need sort
here=$(cd "$(dirname "$0")" && pwd)
got=$("$here/slow-producer" | sort) || die "slow-producer or sort failed"
[ "$got" = "$(printf 'apple\nbanana\ncherry')" ] || die "sort gave '$got'"
