#!/usr/bin/env bash
# A worker (redis-cli BLPOP) waits on redis-server for a job on the list `jobs`; the
# producer (pusher) LPUSHes it after 1.2 s of sleep, and redis-server hands it to the
# parked BLPOP at once.
. "$(dirname "$0")/../lib.sh"
need redis-server redis-cli
here=$(cd "$(dirname "$0")" && pwd)
port=$(free_port)
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK" \
  --daemonize no --logfile "$WORK/redis.log" &
PIDS+=($!)
wait_port "$port" redis-server "$WORK/redis.log"
redis-cli -p "$port" BLPOP jobs 10 >"$WORK/blpop.out" &
worker=$!
PIDS+=($worker)
# The push must find BLPOP parked (else BLPOP would find the job at once, no wait):
# wait until redis-server counts one blocked client.
parked=0
for _ in $(seq 100); do
  n=$(redis-cli -p "$port" INFO clients | tr -d '\r' | sed -n 's/^blocked_clients://p')
  if [ "$n" = 1 ]; then parked=1; break; fi
  sleep 0.05
done
[ "$parked" = 1 ] || die "redis-server has no blocked client after 5 s"
"$here/pusher" "$port" &
pusher=$!
PIDS+=($pusher)
wait "$worker" || die "redis-cli BLPOP failed: $(cat "$WORK/blpop.out")"
wait "$pusher" || die "pusher failed"
# Not a tty: redis-cli prints the list's name and the value, one a line.
[ "$(cat "$WORK/blpop.out")" = "$(printf 'jobs\nreport-42')" ] ||
  die "BLPOP returned '$(cat "$WORK/blpop.out")'"
redis-cli -p "$port" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
