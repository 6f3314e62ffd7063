#!/usr/bin/env bash
# A regex with back references over short strings (base) or long ones (slow).
. "$(dirname "$0")/../lib.sh"
need psql
case "$MODE" in
  prepare)
    pg_prepare
    pg_start
    psql_q "CREATE TABLE subjects AS SELECT g AS id, md5(g::text) || repeat(md5((g * 7)::text), 8) AS long,
              left(md5(g::text) || md5((g * 7)::text), 40) AS short FROM generate_series(1, 12) g" ||
      die "cannot create the table" ;;
  base | slow)
    column=short
    [ "$MODE" = slow ] && column=long
    pg_start
    psql_q "SELECT count(*) FROM subjects WHERE $column ~ '(a[0-9a-f]*)\1\1'" >"$WORK/out" ||
      die "the query failed" ;;
esac
