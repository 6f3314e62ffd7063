# Shared by the real-program suite's drivers (tests/real/README.md): a temp dir removed on
# exit, servers killed on exit even when the driver fails, free loopback ports, and waits
# that are bounded and say what they waited for when they give up.
set -euo pipefail

WORK=$(mktemp -d /tmp/cw-real.XXXXXX)
PIDS=()

cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$WORK" ${LOAD_DIR:+"$LOAD_DIR"}
}
trap cleanup EXIT

# Under load (run-suite.sh --load sets CW_REAL_LOAD=1): two CPU hogs and a disk writer
# (cw-load) run beside the scenario from before it starts until it ends, so that the
# diagnosis must tell the scenario's own cause from contention. The disk writer works in
# /var/tmp (a disk, where $WORK may be a tmpfs).
if [ "${CW_REAL_LOAD:-0}" = 1 ]; then
  LOAD_DIR=$(mktemp -d /var/tmp/cw-real-load.XXXXXX)
  for kind in hog hog disk; do
    "$(dirname "${BASH_SOURCE[0]}")/cw-load" "$kind" "$LOAD_DIR" &
    PIDS+=($!)
  done
  sleep 0.2  # the load is under way before the scenario begins
fi

die() {
  echo "driver $(basename "$0"): $*" >&2
  exit 1
}

# need PROGRAM...: each must be installed (tests/real/install.sh installs them).
need() {
  local p
  for p in "$@"; do
    command -v "$p" >/dev/null || die "$p is not installed: run tests/real/install.sh"
  done
}

# A free TCP port on 127.0.0.1 (asked of the kernel, not guessed).
free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# wait_port PORT WHAT: until something listens on 127.0.0.1:PORT, at most 5 s.
wait_port() {
  local i
  for i in $(seq 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  die "$2 did not listen on 127.0.0.1:$1 within 5 s${3:+ (log: $(tail -3 "$3" 2>/dev/null | tr '\n' ' '))}"
}

# wait_file FILE WHAT: until FILE exists, at most 5 s.
wait_file() {
  local i
  for i in $(seq 100); do
    [ -e "$1" ] && return 0
    sleep 0.05
  done
  die "$2: $1 did not appear within 5 s"
}

# nginx_conf PORT MAIN HTTP SERVER: $WORK/nginx.conf for nginx in the foreground with one
# worker process (running as root, so that it can use the root-owned temp dirs), everything
# it writes in $WORK (its prefix, error log, pid file, temp dirs), listening on
# 127.0.0.1:PORT; MAIN, HTTP and SERVER are added to the main, http and server blocks.
# Start it with `nginx -p "$WORK" -e "$WORK/error.log" -c "$WORK/nginx.conf"` (-e: the error
# log before the configuration is read).
nginx_conf() {
  cat >"$WORK/nginx.conf" <<CONF
$2
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
  $3
  server {
    listen 127.0.0.1:$1;
    $4
  }
}
CONF
}

# busy_then_static BUSY_URL STATIC_URL: two clients of a server with one event loop, both
# Debian's curl run through links named client-a and client-b (so their threads can be
# told apart): client-a asks for BUSY_URL (answered "busy done" after the server computed),
# client-b for STATIC_URL ("static page") 0.3 s later, and waits behind it.
busy_then_static() {
  ln -s "$(command -v curl)" "$WORK/client-a"
  ln -s "$(command -v curl)" "$WORK/client-b"
  "$WORK/client-a" -sS --max-time 10 "$1" >"$WORK/a.out" &
  local a=$!
  sleep 0.3
  local out
  out=$("$WORK/client-b" -sS --max-time 10 "$2")
  wait "$a" || die "client-a failed: $(cat "$WORK/a.out")"
  [ "$(cat "$WORK/a.out")" = "busy done" ] || die "client-a got '$(cat "$WORK/a.out")'"
  [ "$out" = "static page" ] || die "client-b got '$out'"
}

# staggered_clients NAME URL ANSWER [GAP NAME URL ANSWER]...: clients of one server, each
# Debian's curl run through a link of its own NAME (so their threads can be told apart),
# started GAP seconds after the one before; all but the last run in the background. Each
# must get ANSWER; the last one is the one that waits.
staggered_clients() {
  local names=() outs=() pids=() answers=() i
  while :; do
    ln -s "$(command -v curl)" "$WORK/$1"
    names+=("$1")
    answers+=("$3")
    outs+=("$WORK/$1.out")
    if [ $# -le 3 ]; then
      "$WORK/$1" -sS --max-time 10 "$2" >"$WORK/$1.out" || die "$1 failed: $(cat "$WORK/$1.out")"
      break
    fi
    "$WORK/$1" -sS --max-time 10 "$2" >"$WORK/$1.out" &
    pids+=($!)
    sleep "$4"
    shift 4
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || die "${names[$i]} failed: $(cat "${outs[$i]}")"
  done
  for i in "${!names[@]}"; do
    [ "$(cat "${outs[$i]}")" = "${answers[$i]}" ] || die "${names[$i]} got '$(cat "${outs[$i]}")'"
  done
}

# private_bus: a private dbus-daemon on a unix socket in $WORK, as the session bus of what
# runs next (DBUS_SESSION_BUS_ADDRESS exported).
private_bus() {
  need dbus-daemon
  export DBUS_SESSION_BUS_ADDRESS="unix:path=$WORK/bus"
  dbus-daemon --session --nofork --nopidfile --address="$DBUS_SESSION_BUS_ADDRESS" \
    2>"$WORK/dbus.log" &
  PIDS+=($!)
  wait_file "$WORK/bus" dbus-daemon
}

# postgres_cluster: a private PostgreSQL cluster in $WORK/pg, owned by postgres (the server
# refuses to run as root), on a unix socket only, without fsync (a scratch cluster), up and
# accepting connections. Sets pgbin, port, pg (the socket folder) and psql (an array: the
# client as the postgres user, quiet, unaligned, stopping on errors). setpriv execs the
# server itself, so its pid is the postmaster's and cleanup stops it.
postgres_cluster() {
  pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -x "${pgbin:-}/postgres" ] || die "postgresql is not installed: run tests/real/install.sh"
  port=$(free_port)
  pg="$WORK/pg"
  chmod 711 "$WORK" # postgres must get through the root-owned temp dir
  mkdir "$pg" && chown postgres: "$pg"
  local asuser=(setpriv --reuid=postgres --regid=postgres --init-groups)
  "${asuser[@]}" "$pgbin/initdb" -D "$pg/data" -A trust -U postgres -N --no-instructions \
    >"$WORK/initdb.log" 2>&1 || die "initdb failed: $(tail -3 "$WORK/initdb.log")"
  "${asuser[@]}" "$pgbin/postgres" -D "$pg/data" -k "$pg" -p "$port" -c listen_addresses= \
    -c fsync=off >"$WORK/postgres.log" 2>&1 &
  PIDS+=($!)
  psql=("$pgbin/psql" -h "$pg" -p "$port" -U postgres -d postgres -X -q -A -t -v ON_ERROR_STOP=1)
  local i
  for i in $(seq 100); do
    "$pgbin/pg_isready" -q -h "$pg" -p "$port" && return 0
    sleep 0.05
  done
  die "postgres did not accept connections within 5 s: $(tail -3 "$WORK/postgres.log")"
}

# pgbench_database: a cluster (postgres_cluster) with pgbench's tables at scale 10 (a
# million accounts, 150 MB, in the cache; without fsync, read-write runs measure the
# server's CPU, not the disk), and `pgbench` (an array) the client as the postgres user.
# The overhead benches' database (bench/overhead/).
pgbench_database() {
  need pgbench
  postgres_cluster
  pgbench=(setpriv --reuid=postgres --regid=postgres --init-groups pgbench -h "$pg" -p "$port"
    -U postgres)
  "${pgbench[@]}" -i -q -s 10 postgres >"$WORK/pgbench-init.log" 2>&1 ||
    die "pgbench -i failed: $(tail -3 "$WORK/pgbench-init.log")"
}
