#!/usr/bin/env bash
# Catastrophic backtracking in Ruby's regex engine: a short subject (base), a long one (slow).
. "$(dirname "$0")/../lib.sh"
need ruby
case "$MODE" in
  prepare) ;;
  base | slow)
    n=12
    [ "$MODE" = slow ] && n=22
    out=$(ruby -e "s = 'a' * $n + 'b'; m = 0; 3.times { m += 1 if s =~ /^(a|a)*\$/ }; p m") ||
      die "ruby failed"
    [ "$out" = 0 ] || die "expected no match, got $out" ;;
esac
