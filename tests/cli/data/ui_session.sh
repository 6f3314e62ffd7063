#!/usr/bin/env bash
# tests/cli/ui.t: runs `causeway ui TRACE --no-browser --json ARGS…` in the background,
# talks to it over HTTP with bash's /dev/tcp (no curl needed), prints what it saw, and
# ends it with the page's Quit.
#   GET PATH  -> "STATUS PATH" (the token written TOKEN)
#   the state once the diagnosis waits or is done: its phase, the question and its options,
#   or the root cause and who answered
# usage: ui_session.sh TRACE [ARGS…]
set -euo pipefail
out=$(mktemp) err=$(mktemp)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -f "$out" "$err"' EXIT
causeway ui "$@" --no-browser --json --no-cache >"$out" 2>"$err" &
pid=$!
for _ in $(seq 100); do
  [ -s "$out" ] && break
  kill -0 $pid 2>/dev/null || { cat "$err"; exit 1; }
  sleep 0.1
done
port=$(jq -r .port "$out")
token=$(jq -r .url "$out" | cut -d/ -f4)

# METHOD PATH [BODY]: the response's status line and body.
request() {
  local body=${3:-}
  exec 3<>"/dev/tcp/127.0.0.1/$port"
  printf '%s %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: %s\r\n\r\n%s' \
    "$1" "$2" "$port" "${#body}" "$body" >&3
  cat <&3
  exec 3<&-
}
status() { request "$@" | head -1 | cut -d' ' -f2; }

for path in / /index.html "/${token%?}x/" "/$token" "/$token/" "/$token/api/state"; do
  echo "GET ${path//$token/TOKEN} $(status GET "$path")"
done
for _ in $(seq 100); do
  state=$(request GET "/$token/api/state" | sed '1,/^\r$/d')
  phase=$(jq -r .phase <<<"$state")
  [ "$phase" = question ] || [ "$phase" = done ] || [ "$phase" = no_hang ] || [ "$phase" = error ] && break
  sleep 0.1
done
echo "phase: $phase"
jq -r '.question // empty | "question \(.number) (\(.kind)): \(.text)", (.options[] | "  - \(.label)")' <<<"$state"
jq -r '.report // empty | .json | "root cause: \(.root_causes[0].comm) \(.root_causes[0].tid)",
  (.queries[] | "answered by \(.source): \(.chosen)")' <<<"$state" 2>/dev/null || true
jq -r '.message // empty' <<<"$state"
echo "POST quit $(status POST "/$token/api/quit" '')"
rc=0
wait $pid || rc=$?
pid=
echo "exit $rc"
