#!/usr/bin/env bash
# A Node.js server (the installed node, package nodejs, running our file-server.js) with a
# pool of one worker thread (UV_THREADPOOL_SIZE=1, as a small container sets it). client-a
# asks for /check (a short crypto.pbkdf2 hash on the pool), client-b 50 ms later for
# /report (a long hash, queued behind client-a's), client-c 0.6 s after that for /page,
# whose fs.readFile is queued behind client-b's hash: client-c waits although the event
# loop is idle. The worker goes from one hash to the next without waiting. The clients are
# Debian's curl, run through links with their own names.
. "$(dirname "$0")/../lib.sh"
need node curl
here=$(cd "$(dirname "$0")" && pwd)
port=$(free_port)
echo "static page" >"$WORK/index.html"
echo '{"host": "127.0.0.1"}' >"$WORK/config.json"
UV_THREADPOOL_SIZE=1 node "$here/file-server.js" "$port" "$WORK" &
PIDS+=($!)
wait_port "$port" file-server
url="http://127.0.0.1:$port"
staggered_clients client-a "$url/check" checked 0.05 \
  client-b "$url/report" "busy done" 0.6 \
  client-c "$url/page" "static page"
