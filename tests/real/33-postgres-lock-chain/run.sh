#!/usr/bin/env bash
# PostgreSQL advisory locks, a chain of waiting sessions: lock-holder's session takes
# advisory lock 42, then its client works for 1.5 s before it releases it. batch-session's
# transaction takes lock 7 and then queues for 42; psql's SELECT pg_advisory_lock(7) queues
# behind it. Each backend sleeps in the lock manager (ProcSleep) until the one ahead
# releases its lock and wakes it (SetLatch: kill SIGURG): lock-holder's backend on its
# client's unlock, batch-session's at its COMMIT.
. "$(dirname "$0")/../lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
postgres_cluster
"$here/lock-holder" "$pg" "$port" "$pg/HOLDING" &
a=$!
PIDS+=($a)
wait_file "$pg/HOLDING" lock-holder
"$here/batch-session" "$pg" "$port" "$pg/READY" &
b=$!
PIDS+=($b)
wait_file "$pg/READY" batch-session
# psql's session asks for lock 7 and waits until batch-session's transaction ends.
t0=$(date +%s%N)
out=$("${psql[@]}" -c "SELECT 'locked' FROM pg_advisory_lock(7)")
t1=$(date +%s%N)
wait "$a" || die "lock-holder failed"
wait "$b" || die "batch-session failed"
[ $(((t1 - t0) / 1000000)) -ge 500 ] || die "psql's pg_advisory_lock took $(((t1 - t0) / 1000000)) ms: it did not wait for the lock"
[ "$out" = locked ] || die "psql's pg_advisory_lock returned '$out', not 'locked'"
