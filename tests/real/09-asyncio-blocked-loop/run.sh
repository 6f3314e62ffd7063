#!/usr/bin/env bash
# Client B asks async-server for /report, whose handler keeps the event loop busy 1.2 s;
# client A's /ping, sent 0.3 s later, waits for the loop.
. "$(dirname "$0")/../lib.sh"
need curl
here=$(cd "$(dirname "$0")" && pwd)
port=$(free_port)
"$here/async-server" "$port" &
PIDS+=($!)
wait_port "$port" async-server
curl -sS --max-time 10 "http://127.0.0.1:$port/report" >"$WORK/b.out" &
b=$!
sleep 0.3
a=$(curl -sS --max-time 10 "http://127.0.0.1:$port/ping")
wait "$b" || die "client B failed"
[ "$a" = pong ] || die "client A got '$a'"
