#!/usr/bin/env bash
# ninja -j3 builds four outputs: three are copies that take milliseconds, one is gzip -9 of
# a 7 MB text, which takes the CPU for a while; ninja waits for it before it can finish.
. "$(dirname "$0")/../lib.sh"
need ninja gzip
cd "$WORK"
seq 1 1000000 >big.txt
echo small >a.txt
cat >build.ninja <<'NINJA'
rule cp
  command = cp $in $out
rule gz
  command = gzip -9 -c $in > $out
build a1: cp a.txt
build a2: cp a.txt
build a3: cp a.txt
build big.gz: gz big.txt
NINJA
ninja -j3 >ninja.log 2>&1 || die "ninja failed: $(tail -3 ninja.log)"
[ -s big.gz ] || die "ninja did not build big.gz"
