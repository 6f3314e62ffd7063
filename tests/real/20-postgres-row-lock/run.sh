#!/usr/bin/env bash
# PostgreSQL row lock: lock-session's transaction holds account 1's row (SELECT ... FOR
# UPDATE) through a 1.2 s pg_sleep; psql's UPDATE of the same row waits in its backend for
# the row lock until that transaction commits.
. "$(dirname "$0")/../lib.sh"
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$pgbin/postgres" ] || die "postgresql is not installed: run tests/real/install.sh"
here=$(cd "$(dirname "$0")" && pwd)
port=$(free_port)
# A private cluster owned by postgres (the server refuses to run as root); setpriv execs
# the server itself, so its pid is the postmaster's and cleanup stops it.
pg="$WORK/pg"
chmod 711 "$WORK" # postgres must get through the root-owned temp dir
mkdir "$pg" && chown postgres: "$pg"
asuser=(setpriv --reuid=postgres --regid=postgres --init-groups)
"${asuser[@]}" "$pgbin/initdb" -D "$pg/data" -A trust -U postgres -N --no-instructions \
  >"$WORK/initdb.log" 2>&1 || die "initdb failed: $(tail -3 "$WORK/initdb.log")"
# Unix socket only, in $WORK; no fsync (a scratch cluster).
"${asuser[@]}" "$pgbin/postgres" -D "$pg/data" -k "$pg" -p "$port" -c listen_addresses= \
  -c fsync=off >"$WORK/postgres.log" 2>&1 &
PIDS+=($!)
psql=("$pgbin/psql" -h "$pg" -p "$port" -U postgres -d postgres -X -q -A -t -v ON_ERROR_STOP=1)
for i in $(seq 100); do
  "$pgbin/pg_isready" -q -h "$pg" -p "$port" && break
  [ "$i" = 100 ] && die "postgres did not accept connections within 5 s: $(tail -3 "$WORK/postgres.log")"
  sleep 0.05
done
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
