#!/usr/bin/env bash
# sqlite3 with a loadable extension whose SQL function waits in the slow run.
. "$(dirname "$0")/../lib.sh"
need sqlite3
case "$MODE" in
  prepare) build_plugin cwlag_sqlite.c "$PAIR_DIR/cwlag_sqlite.so" ;;
  base | slow)
    [ "$MODE" = slow ] && export CW_LAG=sleep:2000
    out=$(sqlite3 :memory: ".load $PAIR_DIR/cwlag_sqlite" "
      CREATE TABLE t AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
        SELECT i, printf('row-%08d-%s', i, hex(i * 7919)) AS s FROM n;
      SELECT count(*) FROM (SELECT i % 97 AS k, max(s) FROM t GROUP BY k ORDER BY 2 DESC);
      SELECT count(*) FROM t WHERE i % 500 = 0 AND cw_digest(s) % 7 = 0;") || die "sqlite3 failed"
    [ "$(echo "$out" | head -1)" = 97 ] || die "expected 97 groups, got: $out" ;;
esac
