# Shared by the latency pairs' drivers (README.md): the real suite's helpers (a temp dir
# removed on exit, die, need), the pair's own folder kept between its three steps, and
# the plug-ins and the PostgreSQL server some pairs use.
. "$(dirname "$0")/../../real/lib.sh"

MODE="${1:-}"
case "$MODE" in prepare | base | slow) ;; *) die "usage: run.sh prepare|base|slow" ;; esac
# `causeway eval --latency` gives each pair a folder that lives from `prepare` to the
# slow run; the inputs made by `prepare` wait there.
PAIR_DIR="${CW_PAIR_DIR:?run by causeway eval --latency, which sets CW_PAIR_DIR}"
HERE=$(cd "$(dirname "$0")" && pwd)
PLUGINS="$HERE/../plugins"

# build_plugin SOURCE OUTPUT [CFLAGS...]: a plug-in as its users would build it: -O2, with
# debug information (the names a fix would touch), no frame pointers.
build_plugin() {
  local src="$1" out="$2"
  shift 2
  cc -O2 -g -fomit-frame-pointer -fPIC -shared -o "$out" "$PLUGINS/$src" "$@" ||
    die "cannot build $src (is build-essential installed?)"
}

PG_BIN=/usr/lib/postgresql/15/bin
# pg_prepare: a fresh cluster in PAIR_DIR/pg, owned by postgres (it refuses root).
pg_prepare() {
  [ -x "$PG_BIN/initdb" ] || die "PostgreSQL 15 is not installed: run tests/real/install.sh"
  mkdir -p "$PAIR_DIR/pg"
  chmod 755 "$PAIR_DIR"
  chown postgres "$PAIR_DIR/pg"
  runuser -u postgres -- "$PG_BIN/initdb" -D "$PAIR_DIR/pg/data" -A trust --no-sync \
    >"$PAIR_DIR/pg/initdb.log" 2>&1 || die "initdb failed: $(tail -2 "$PAIR_DIR/pg/initdb.log")"
}
# pg_start: the server on a unix socket in PAIR_DIR/pg only (no TCP); stopped on exit.
# It returns once the server's background processes are all running: the server accepts
# connections before its launchers have started, and a short base run would otherwise
# end before they began to wait while a slow run holds their waits, two runs differing in
# more than their input.
pg_start() {
  runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$PAIR_DIR/pg/data" -l "$PAIR_DIR/pg/log" -w \
    -o "-c listen_addresses='' -k $PAIR_DIR/pg -c fsync=off" start >/dev/null ||
    die "postgres did not start: $(tail -2 "$PAIR_DIR/pg/log")"
  trap 'pg_stop; cleanup' EXIT
  local tries=0
  until [ "$(psql_q "SELECT count(*) FROM pg_stat_activity WHERE backend_type IN
                     ('autovacuum launcher', 'logical replication launcher')")" = 2 ]; do
    tries=$((tries + 1))
    [ $tries -lt 100 ] || die "postgres's launchers did not start within 5 s"
    sleep 0.05
  done
}
pg_stop() {
  runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$PAIR_DIR/pg/data" -m fast -w stop >/dev/null 2>&1 || true
}
# psql_q SQL: runs SQL, prints the rows unaligned.
psql_q() {
  runuser -u postgres -- psql -h "$PAIR_DIR/pg" -d postgres -qAtX -v ON_ERROR_STOP=1 -c "$1"
}
