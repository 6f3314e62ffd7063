#!/usr/bin/env bash
# lighttpd serves every connection from one event loop in one process. A mod_magnet Lua
# script answers /busy after computing for 1.5 s inside that loop; client-b's request for a
# static file, sent 0.3 s after client-a's /busy, waits until the loop is free. Both
# clients are Debian's curl, run through links with their own names.
. "$(dirname "$0")/../lib.sh"
need lighttpd curl
[ -e /usr/lib/lighttpd/mod_magnet.so ] || die "mod_magnet is not installed: run tests/real/install.sh"
port=$(free_port)
mkdir "$WORK/html"
echo "static page" >"$WORK/html/index.html"
cat >"$WORK/busy.lua" <<'LUA'
local start = os.clock()
local n = 0
while os.clock() - start < 1.5 do n = n + 1 end
lighty.r.resp_header["Content-Type"] = "text/plain"
lighty.r.resp_body:set({"busy done\n"})
return 200
LUA
cat >"$WORK/lighttpd.conf" <<CONF
server.modules = ("mod_magnet")
server.document-root = "$WORK/html"
server.bind = "127.0.0.1"
server.port = $port
server.errorlog = "$WORK/error.log"
server.pid-file = "$WORK/lighttpd.pid"
\$HTTP["url"] == "/busy" { magnet.attract-raw-url-to = ("$WORK/busy.lua") }
CONF
lighttpd -D -f "$WORK/lighttpd.conf" &
PIDS+=($!)
wait_port "$port" lighttpd "$WORK/error.log"
busy_then_static "http://127.0.0.1:$port/busy" "http://127.0.0.1:$port/index.html"
