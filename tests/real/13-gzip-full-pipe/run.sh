#!/usr/bin/env bash
# gzip -c compresses a 4 MB file into a pipe whose reader (slow-reader) sleeps 1.2 s
# before it reads: gzip's output fills the pipe (64 KB) and gzip blocks in write until
# the reader starts draining it.
. "$(dirname "$0")/../lib.sh"
need gzip sha256sum
here=$(cd "$(dirname "$0")" && pwd)
# Random bytes do not compress: gzip's output is as big as its input, far more than the
# pipe holds.
head -c 4194304 /dev/urandom >"$WORK/big.bin"
want="4194304 $(sha256sum <"$WORK/big.bin" | cut -d' ' -f1)"
got=$(gzip -c "$WORK/big.bin" | "$here/slow-reader") || die "gzip or slow-reader failed"
[ "$got" = "$want" ] || die "slow-reader got '$got', expected '$want'"
