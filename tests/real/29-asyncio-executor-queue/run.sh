#!/usr/bin/env bash
# report-app (asyncio) runs each request's blocking call in a thread pool of one worker.
# stats-client asks for /stats (0.3 s in the worker); report-client, 0.1 s later, for
# /report (1.5 s), queued behind it; item-client, 0.3 s after that, for /item (10 ms),
# queued behind /report. All three are Debian's curl, run through links of their own names.
. "$(dirname "$0")/../lib.sh"
need curl
here=$(cd "$(dirname "$0")" && pwd)
port=$(free_port)
"$here/report-app" "$port" &
PIDS+=($!)
wait_port "$port" report-app
url="http://127.0.0.1:$port"
staggered_clients stats-client "$url/stats" "/stats: ok" 0.1 \
  report-client "$url/report" "/report: ok" 0.3 \
  item-client "$url/item" "/item: ok"
