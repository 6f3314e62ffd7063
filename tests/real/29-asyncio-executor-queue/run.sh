#!/usr/bin/env bash
# report-app (asyncio) runs each request's blocking call in a thread pool of one worker.
# stats-client asks for /stats (0.3 s in the worker); report-client, 0.1 s later, for
# /report (1.5 s), queued behind it; item-client, 0.3 s after that, for /item (10 ms),
# queued behind /report. All three are Debian's curl, run through links of their own names.
. "$(dirname "$0")/../lib.sh"
need curl
here=$(cd "$(dirname "$0")" && pwd)
for c in stats-client report-client item-client; do ln -s "$(command -v curl)" "$WORK/$c"; done
port=$(free_port)
"$here/report-app" "$port" &
PIDS+=($!)
wait_port "$port" report-app
"$WORK/stats-client" -sS --max-time 10 "http://127.0.0.1:$port/stats" >"$WORK/stats.out" &
s=$!
sleep 0.1
"$WORK/report-client" -sS --max-time 10 "http://127.0.0.1:$port/report" >"$WORK/report.out" &
r=$!
sleep 0.3
out=$("$WORK/item-client" -sS --max-time 10 "http://127.0.0.1:$port/item")
wait "$s" || die "stats-client failed: $(cat "$WORK/stats.out")"
wait "$r" || die "report-client failed: $(cat "$WORK/report.out")"
[ "$(cat "$WORK/stats.out")" = "/stats: ok" ] || die "stats-client got '$(cat "$WORK/stats.out")'"
[ "$(cat "$WORK/report.out")" = "/report: ok" ] || die "report-client got '$(cat "$WORK/report.out")'"
[ "$out" = "/item: ok" ] || die "item-client got '$out'"
