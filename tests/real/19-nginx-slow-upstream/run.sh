#!/usr/bin/env bash
# nginx (a master and one worker) proxies /report to busy-upstream, whose handler computes
# on the CPU for 1.2 s before it answers: curl waits for nginx's worker, the worker's
# epoll loop waits for the upstream.
. "$(dirname "$0")/../lib.sh"
need nginx curl
here=$(cd "$(dirname "$0")" && pwd)
up=$(free_port)
port=$(free_port)
"$here/busy-upstream" "$up" &
PIDS+=($!)
wait_port "$up" busy-upstream
nginx_conf "$port" "" "" "location / { proxy_pass http://127.0.0.1:$up; }"
nginx -p "$WORK" -e "$WORK/error.log" -c "$WORK/nginx.conf" &
PIDS+=($!)
wait_port "$port" nginx "$WORK/error.log"
out=$(curl -sS --max-time 10 "http://127.0.0.1:$port/report")
[ "$out" = "report ready" ] || die "curl got '$out'"
