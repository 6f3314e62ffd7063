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
# Everything nginx writes goes to $WORK: its prefix (-p), its error log from the start
# (-e: before the configuration is read), its pid file and temp dirs. The worker runs as
# root so that it can use the root-owned temp dirs.
cat >"$WORK/nginx.conf" <<CONF
daemon off;
master_process on;
worker_processes 1;
user root;
pid $WORK/nginx.pid;
error_log $WORK/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $WORK/body;
  proxy_temp_path $WORK/proxy;
  fastcgi_temp_path $WORK/fastcgi;
  uwsgi_temp_path $WORK/uwsgi;
  scgi_temp_path $WORK/scgi;
  server {
    listen 127.0.0.1:$port;
    location / { proxy_pass http://127.0.0.1:$up; }
  }
}
CONF
nginx -p "$WORK" -e "$WORK/error.log" -c "$WORK/nginx.conf" &
PIDS+=($!)
wait_port "$port" nginx "$WORK/error.log"
out=$(curl -sS --max-time 10 "http://127.0.0.1:$port/report")
[ "$out" = "report ready" ] || die "curl got '$out'"
