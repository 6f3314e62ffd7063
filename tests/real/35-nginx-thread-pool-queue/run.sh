#!/usr/bin/env bash
# nginx (a master and one worker) reads files through a thread pool of one thread
# (`aio threads`): the worker's event loop opens each file, posts its read to the pool, and
# sends the page when the pool thread says the read is done. The site's /files/ folder is
# slow-fs, a FUSE file system whose reads compute for 1.2 s. client-a asks for
# /files/report.txt; client-b, 0.3 s later, asks for /index.html, an ordinary file in the
# temp dir. The worker reads client-b's request and opens its file at once and posts the
# read, but the pool's only thread is still waiting for client-a's read: client-b's read
# waits in the pool's queue until slow-fs has answered. Both clients are Debian's curl,
# run through links with their own names.
. "$(dirname "$0")/../lib.sh"
need nginx curl
here=$(cd "$(dirname "$0")" && pwd)
/usr/bin/python3 -c 'import fusepy' 2>/dev/null || die "python3-fusepy is not installed: run tests/real/install.sh"
[ -e /dev/fuse ] || die "no /dev/fuse: FUSE is not available here"
mkdir -p "$WORK/html/files"
echo "static page" >"$WORK/html/index.html"
mnt="$WORK/html/files"
# Unmount before lib.sh's cleanup stops slow-fs and removes the temp dir.
trap 'umount -l "$mnt" 2>/dev/null || true; cleanup' EXIT
"$here/slow-fs" "$mnt" 2>"$WORK/slow-fs.log" &
PIDS+=($!)
wait_file "$mnt/report.txt" slow-fs
port=$(free_port)
nginx_conf "$port" "thread_pool disk threads=1;" "" \
  "root $WORK/html; sendfile off; aio threads=disk;"
nginx -p "$WORK" -e "$WORK/error.log" -c "$WORK/nginx.conf" &
PIDS+=($!)
wait_port "$port" nginx "$WORK/error.log"
ln -s "$(command -v curl)" "$WORK/client-a"
ln -s "$(command -v curl)" "$WORK/client-b"
"$WORK/client-a" -sS --max-time 10 "http://127.0.0.1:$port/files/report.txt" >"$WORK/a.out" &
a=$!
sleep 0.3
out=$("$WORK/client-b" -sS --max-time 10 "http://127.0.0.1:$port/index.html")
wait "$a" || die "client-a failed: $(cat "$WORK/a.out")"
[ "$(cat "$WORK/a.out")" = "report ready" ] || die "client-a got '$(cat "$WORK/a.out")'"
[ "$out" = "static page" ] || die "client-b got '$out'"
