#!/usr/bin/env bash
# redis-server is single-threaded: while it runs client B's Lua script (a 1.5 s busy loop),
# client A's PING waits in the socket.
. "$(dirname "$0")/../lib.sh"
need redis-server redis-cli
port=$(free_port)
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK" \
  --daemonize no --logfile "$WORK/redis.log" &
PIDS+=($!)
wait_port "$port" redis-server "$WORK/redis.log"
# Client B: a script that spins for 1.5 s on the server's only thread.
redis-cli -p "$port" EVAL 'local t=redis.call("TIME"); local s=t[1]+t[2]/1e6; local n=0
repeat n=n+1; t=redis.call("TIME") until t[1]+t[2]/1e6 - s > 1.5
return n' 0 >"$WORK/b.out" &
b=$!
sleep 0.3
# Client A: one PING, answered only once the script is done.
a_out=$(redis-cli -p "$port" PING)
wait "$b" || die "client B's script failed: $(cat "$WORK/b.out")"
[ "$a_out" = PONG ] || die "client A got '$a_out', not PONG"
redis-cli -p "$port" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
