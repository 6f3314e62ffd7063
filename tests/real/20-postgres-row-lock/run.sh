#!/usr/bin/env bash
# PostgreSQL row lock: lock-session's transaction holds account 1's row (SELECT ... FOR
# UPDATE) through a 1.2 s pg_sleep; psql's UPDATE of the same row waits in its backend for
# the row lock until that transaction commits.
. "$(dirname "$0")/../lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
postgres_cluster
"${psql[@]}" -c "CREATE TABLE accounts(id int PRIMARY KEY, balance int);
  INSERT INTO accounts VALUES (1, 100)" || die "cannot create the table"
"$here/lock-session" "$pg" "$port" "$pg/READY" &
a=$!
PIDS+=($a)
wait_file "$pg/READY" lock-session
# Session B: blocks on the row lock until session A commits.
t0=$(date +%s%N)
out=$("${psql[@]}" -c "UPDATE accounts SET balance = balance + 1 WHERE id = 1 RETURNING balance")
t1=$(date +%s%N)
wait "$a" || die "lock-session failed"
[ $(((t1 - t0) / 1000000)) -ge 600 ] || die "psql's UPDATE took $(((t1 - t0) / 1000000)) ms: it did not wait for the lock"
[ "$out" = 101 ] || die "psql's UPDATE returned '$out', not 101"
