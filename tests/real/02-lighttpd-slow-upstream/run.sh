#!/usr/bin/env bash
# lighttpd proxies /report to a slow upstream (slow-backend sleeps 1.2 s in its handler);
# curl waits for lighttpd, lighttpd's event loop waits for the upstream.
. "$(dirname "$0")/../lib.sh"
need lighttpd curl
here=$(cd "$(dirname "$0")" && pwd)
up=$(free_port)
port=$(free_port)
"$here/slow-backend" "$up" &
PIDS+=($!)
wait_port "$up" slow-backend
cat >"$WORK/lighttpd.conf" <<CONF
server.modules = ("mod_proxy")
server.document-root = "$WORK"
server.bind = "127.0.0.1"
server.port = $port
server.errorlog = "$WORK/error.log"
server.pid-file = "$WORK/lighttpd.pid"
proxy.server = ("" => (("host" => "127.0.0.1", "port" => $up)))
CONF
lighttpd -D -f "$WORK/lighttpd.conf" &
PIDS+=($!)
wait_port "$port" lighttpd "$WORK/error.log"
out=$(curl -sS --max-time 10 "http://127.0.0.1:$port/report")
[ "$out" = "report ready" ] || die "curl got '$out'"
