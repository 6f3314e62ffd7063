#!/usr/bin/env bash
# bzip2 on random text (base) or on a short pattern repeated (slow): same size.
. "$(dirname "$0")/../lib.sh"
need bzip2 /usr/bin/python3
case "$MODE" in
  prepare)
    head -c 3000000 /dev/urandom | base64 -w 76 >"$PAIR_DIR/random.txt"
    /usr/bin/python3 -c 'import random, sys; random.seed(1)
p = bytes(random.randrange(97, 123) for _ in range(37))
sys.stdout.buffer.write(p * (4052632 // 37))' >"$PAIR_DIR/repeated.txt" ;;
  base) bzip2 -c "$PAIR_DIR/random.txt" >"$WORK/out.bz2" ;;
  slow) bzip2 -c "$PAIR_DIR/repeated.txt" >"$WORK/out.bz2" ;;
esac
