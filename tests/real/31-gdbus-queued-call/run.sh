#!/usr/bin/env bash
# A private dbus-daemon (a unix socket in a temp dir) routes two clients' calls to
# report-service, a GDBus service on GLib's main loop. busy-client asks for Summarize, whose
# handler computes 1.5 s on the service's main thread; ping-client's Ping, sent 0.3 s later,
# waits until the main loop is free. Both clients are GLib's `gdbus call`, run through links
# with their own names so that their threads can be told apart.
. "$(dirname "$0")/../lib.sh"
need dbus-daemon gdbus
here=$(cd "$(dirname "$0")" && pwd)
private_bus
"$here/report-service" "$WORK/READY" 2>"$WORK/service.log" &
PIDS+=($!)
wait_file "$WORK/READY" "report-service ($(tail -1 "$WORK/service.log" 2>/dev/null))"
ln -s "$(command -v gdbus)" "$WORK/busy-client"
ln -s "$(command -v gdbus)" "$WORK/ping-client"
call() {
  "$WORK/$1" call --session --timeout 10 --dest org.example.Report \
    --object-path /org/example/Report --method "org.example.Report.$2"
}
call busy-client Summarize >"$WORK/busy.out" 2>&1 &
busy=$!
sleep 0.3
out=$(call ping-client Ping) || die "ping-client failed: $out"
wait "$busy" || die "busy-client failed: $(cat "$WORK/busy.out")"
[ "$(cat "$WORK/busy.out")" = "('report ready',)" ] || die "busy-client got '$(cat "$WORK/busy.out")'"
[ "$out" = "('pong',)" ] || die "ping-client got '$out'"
