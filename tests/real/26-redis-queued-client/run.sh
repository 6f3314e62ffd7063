#!/usr/bin/env bash
# redis-server serves every client from one event loop on its main thread. busy-client's
# EVAL spins for 1.5 s in that loop; ping-client's PING, sent 0.3 s later, waits until the
# loop has finished the script and reaches it. Both clients are Debian's redis-cli, run
# through links with their own names so that their threads can be told apart.
. "$(dirname "$0")/../lib.sh"
need redis-server redis-cli
ln -s "$(command -v redis-cli)" "$WORK/busy-client"
ln -s "$(command -v redis-cli)" "$WORK/ping-client"
port=$(free_port)
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK" \
  --daemonize no --logfile "$WORK/redis.log" &
PIDS+=($!)
wait_port "$port" redis-server "$WORK/redis.log"
"$WORK/busy-client" -p "$port" EVAL 'local t=redis.call("TIME"); local s=t[1]+t[2]/1e6; local n=0
repeat n=n+1; t=redis.call("TIME") until t[1]+t[2]/1e6 - s > 1.5
return n' 0 >"$WORK/busy.out" &
busy=$!
sleep 0.3
out=$("$WORK/ping-client" -p "$port" PING)
wait "$busy" || die "busy-client's script failed: $(cat "$WORK/busy.out")"
[ "$out" = PONG ] || die "ping-client got '$out', not PONG"
"$WORK/ping-client" -p "$port" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
