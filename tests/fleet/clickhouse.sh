# shellcheck shell=bash
# Throwaway ClickHouse server for fleet tests.  Source it, don't run it:
#
#   . tests/fleet/clickhouse.sh
#   clickhouse_start "$tmpdir/ch"          # exports CLICKHOUSE_URL
#   clickhouse_query 'SELECT 1'
#   clickhouse_query 'INSERT INTO hangs FORMAT JSONEachRow' rows.jsonl
#
# The server is stopped by an EXIT trap that clickhouse_start chains in front
# of whatever EXIT trap the caller already had.  If the caller sets its own
# EXIT trap *after* clickhouse_start, it must call clickhouse_stop itself.
# Safe under `set -euo pipefail`.  Tested with Debian's clickhouse-server
# 18.16.1 (packages clickhouse-server + clickhouse-common; the client package
# is not needed because everything goes through the HTTP interface).
#
# Env knobs: CLICKHOUSE_SERVER (binary, default /usr/sbin/clickhouse-server),
# CLICKHOUSE_RUN_AS (user to drop to when root; default: stay as the caller,
# 18.16 does not refuse to run as root), CLICKHOUSE_PARAMS (extra URL
# parameters for clickhouse_query, e.g. output_format_json_quote_64bit_integers=0).

CLICKHOUSE_PID=''

clickhouse_start() {
  local dir=${1:?usage: clickhouse_start DIR} port="" i
  local bin=${CLICKHOUSE_SERVER:-/usr/sbin/clickhouse-server}
  [[ -x $bin ]] || { echo "clickhouse_start: $bin not found (apt-get install clickhouse-server)" >&2; return 1; }
  mkdir -p "$dir"/{data,tmp,user_files,format_schemas,log}
  dir=$(cd "$dir" && pwd)   # the server resolves relative paths against its cwd, so use absolute ones

  # Chain our cleanup in front of any existing EXIT trap instead of replacing
  # it (`trap -p` output is shell-quoted, so eval splits it back safely).
  local prev=''
  if [[ -n $(trap -p EXIT) ]]; then eval "set -- $(trap -p EXIT)"; prev=$3; fi
  # shellcheck disable=SC2064  # expand $prev now, on purpose
  trap "clickhouse_stop; $prev" EXIT

  # Port 0 is not supported by the server config, so pick a random port that
  # nothing answers on and retry if we lose the race for it (bind failure).
  for _ in 1 2 3 4 5; do
    port=$((20000 + RANDOM % 40000))
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue   # in use

    # Minimal config: HTTP only (no tcp_port / interserver port => those
    # listeners are not opened), loopback only, everything under $dir.
    cat > "$dir/config.xml" <<EOF
<?xml version="1.0"?>
<yandex>
  <logger><level>information</level><log>$dir/log/server.log</log>
    <errorlog>$dir/log/server.err.log</errorlog><size>10M</size><count>1</count></logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>$port</http_port>
  <path>$dir/data/</path>
  <tmp_path>$dir/tmp/</tmp_path>
  <user_files_path>$dir/user_files/</user_files_path>
  <format_schema_path>$dir/format_schemas/</format_schema_path>
  <users_config>$dir/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mark_cache_size>67108864</mark_cache_size>
</yandex>
EOF
    cat > "$dir/users.xml" <<'EOF'
<?xml version="1.0"?>
<yandex>
  <profiles><default/></profiles>
  <users><default><password/><networks><ip>127.0.0.1</ip></networks>
    <profile>default</profile><quota>default</quota></default></users>
  <quotas><default/></quotas>
</yandex>
EOF
    # pdeathsig: if the test script is SIGKILLed (EXIT trap never runs), the
    # kernel still terminates the server instead of leaking it.
    local -a priv=(setpriv --pdeathsig TERM)
    if [[ -n ${CLICKHOUSE_RUN_AS:-} && $EUID -eq 0 ]]; then
      chown -R "$CLICKHOUSE_RUN_AS:" "$dir"
      priv+=(--reuid="$CLICKHOUSE_RUN_AS" --regid="$(id -g "$CLICKHOUSE_RUN_AS")" --init-groups)
    fi
    # cd: the server may write stray files (status, preprocessed configs) to cwd.
    (cd "$dir" && exec "${priv[@]}" -- "$bin" --config-file="$dir/config.xml") \
      > "$dir/log/stdout.log" 2>&1 < /dev/null &
    CLICKHOUSE_PID=$!

    for ((i = 0; i < 600; i++)); do   # 600 x 0.1 s = 60 s
      if [[ $(curl -s --max-time 1 "http://127.0.0.1:$port/ping" 2>/dev/null || true) == Ok. ]]; then
        export CLICKHOUSE_URL="http://127.0.0.1:$port" CLICKHOUSE_PID
        return 0
      fi
      kill -0 "$CLICKHOUSE_PID" 2>/dev/null || break   # died: don't wait 60 s
      sleep 0.1
    done
    local died=0; kill -0 "$CLICKHOUSE_PID" 2>/dev/null || died=1
    clickhouse_stop
    if ((died)) && grep -qs 'Address already in use' "$dir/log/server.err.log" "$dir/log/stdout.log"; then
      continue   # lost the port race: try another port
    fi
    if ((died)); then echo "clickhouse_start: server exited during startup (port $port); log tail:" >&2
    else echo "clickhouse_start: server on port $port did not answer /ping within 60 s; log tail:" >&2; fi
    tail -n 30 "$dir/log/stdout.log" "$dir/log/server.err.log" "$dir/log/server.log" >&2 2>/dev/null || true
    return 1
  done
  echo "clickhouse_start: no free port after 5 tries" >&2
  return 1
}

clickhouse_stop() {
  [[ -n ${CLICKHOUSE_PID:-} ]] || return 0
  local pid=$CLICKHOUSE_PID i
  CLICKHOUSE_PID=''
  kill "$pid" 2>/dev/null || return 0
  # SIGTERM shuts down cleanly in about a second; escalate after 10 s.
  for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# clickhouse_query SQL [DATAFILE]: POST SQL (followed by DATAFILE's contents,
# which is how ClickHouse takes INSERT ... FORMAT data in one body) and print
# the reply.  On a non-200 reply print the server's error text and fail.
# wait_end_of_query=1 makes the server buffer the whole result: otherwise a
# result over ~1 MB is already streaming with status 200 when an error hits,
# and the error text just gets appended to the data.
clickhouse_query() {
  local sql=${1:?usage: clickhouse_query SQL [DATAFILE]} data=${2:-/dev/null} out code
  # The status code goes after a final newline so the body (including its
  # trailing newlines) survives the command substitution intact.
  out=$({ printf '%s\n' "$sql"; cat "$data"; } |
        curl -sS --data-binary @- -w '\n%{http_code}' \
          "${CLICKHOUSE_URL:?clickhouse_start first}/?wait_end_of_query=1&${CLICKHOUSE_PARAMS:-}") || return 1
  code=${out##*$'\n'}
  out=${out%$'\n'*}
  if [[ $code != 200 ]]; then
    printf 'clickhouse_query: HTTP %s: %s\n' "$code" "$out" >&2
    return 1
  fi
  printf '%s' "$out"
}
