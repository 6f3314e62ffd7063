#!/usr/bin/env bash
# A Node.js server (the installed node, package nodejs, running our file-server.js) answers /report by hashing
# four passwords with crypto.pbkdf2 on libuv's pool of 4 worker threads. client-b's /page,
# sent 0.3 s after client-a's /report, reads a small file with fs.readFile, whose work is
# queued behind the hashes in the pool's queue: client-b waits although the event loop is
# idle. Both clients are Debian's curl, run through links with their own names.
. "$(dirname "$0")/../lib.sh"
need node curl
here=$(cd "$(dirname "$0")" && pwd)
port=$(free_port)
echo "static page" >"$WORK/index.html"
echo '{"host": "127.0.0.1"}' >"$WORK/config.json"
node "$here/file-server.js" "$port" "$WORK" &
PIDS+=($!)
wait_port "$port" file-server
busy_then_static "http://127.0.0.1:$port/report" "http://127.0.0.1:$port/page"
