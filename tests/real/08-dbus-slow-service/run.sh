#!/usr/bin/env bash
# A private dbus-daemon (a unix socket in a temp dir) routes dbus-send's method call to
# slow-service, whose handler sleeps 1.2 s; dbus-send waits for the reply.
. "$(dirname "$0")/../lib.sh"
need dbus-daemon dbus-send
here=$(cd "$(dirname "$0")" && pwd)
private_bus
"$here/slow-service" "$WORK/READY" 2>"$WORK/service.log" &
PIDS+=($!)
wait_file "$WORK/READY" "slow-service ($(cat "$WORK/service.log" 2>/dev/null | tail -1))"
out=$(dbus-send --session --print-reply=literal --reply-timeout=10000 --dest=org.example.Slow \
  /org/example/Slow org.example.Slow.Report) || die "dbus-send failed"
[ "$(echo $out)" = "report ready" ] || die "dbus-send got '$out'"
