#!/usr/bin/env bash
# Fields of json documents read with ->>: small documents (base) or large ones (slow).
. "$(dirname "$0")/../lib.sh"
need psql
make_docs() { # TABLE KEYS
  psql_q "CREATE TABLE $1 AS SELECT g AS id, (SELECT json_object_agg('k' || i, i * g)
            FROM generate_series(1, $2) i) AS doc FROM generate_series(1, 3000) g" ||
    die "cannot create $1"
}
case "$MODE" in
  prepare)
    pg_prepare
    pg_start
    make_docs small 10
    make_docs large 300 ;;
  base | slow)
    table=small
    [ "$MODE" = slow ] && table=large
    pg_start
    sum=$(psql_q "SELECT sum((doc->>'k1')::bigint + (doc->>'k7')::bigint)
                  FROM $table, generate_series(1, 4)") || die "the query failed"
    [ "$sum" = 144048000 ] || die "expected 144048000, got $sum" ;;
esac
