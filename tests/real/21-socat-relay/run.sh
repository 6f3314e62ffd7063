#!/usr/bin/env bash
# socat relays one TCP connection from curl to slow-server, whose handler sleeps 1.2 s
# before it answers: curl waits for socat, socat (poll loop, copying both ways) waits
# for slow-server.
. "$(dirname "$0")/../lib.sh"
need socat curl
here=$(cd "$(dirname "$0")" && pwd)
up=$(free_port)
port=$(free_port)
"$here/slow-server" "$up" &
PIDS+=($!)
wait_port "$up" slow-server
# socat without fork serves exactly one connection, so it is not probed with a connection
# (wait_port): its listening socket is looked for in /proc/net/tcp (state 0A) instead.
socat TCP-LISTEN:"$port",bind=127.0.0.1,reuseaddr TCP:127.0.0.1:"$up" 2>"$WORK/socat.log" &
relay=$!
PIDS+=($relay)
hex=$(printf '%04X' "$port")
for i in $(seq 100); do
  grep -q "^ *[0-9]*: 0100007F:$hex 00000000:0000 0A" /proc/net/tcp && break
  [ "$i" = 100 ] && die "socat did not listen on 127.0.0.1:$port within 5 s: $(cat "$WORK/socat.log")"
  sleep 0.05
done
out=$(curl -sS --max-time 10 "http://127.0.0.1:$port/status")
[ "$out" = "status: ok" ] || die "curl got '$out'"
# The connection closed, socat ends by itself.
wait "$relay" || die "socat failed: $(cat "$WORK/socat.log")"
