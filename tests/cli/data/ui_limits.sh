#!/usr/bin/env bash
# tests/cli/ui.t: what a client can make `causeway ui` hold. Runs `causeway ui TRACE
# --no-browser --json` in the background, talks to it with bash's /dev/tcp, and prints:
#   - the answer to a request without the token that claims a 1 GB body, and what
#     happens to the rest of that body (refused, and the server's memory stays small)
#   - the answer to an option of 2^32 + 1 (not option 1)
#   - whether Quit ends it within 2 s while other connections hold it open (one kept
#     alive, one with its head half sent, one long poll)
# usage: ui_limits.sh TRACE
set -euo pipefail
out=$(mktemp) err=$(mktemp)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -f "$out" "$err"' EXIT
causeway ui "$1" --no-browser --json --no-cache >"$out" 2>"$err" &
pid=$!
for _ in $(seq 100); do
  [ -s "$out" ] && break
  kill -0 $pid 2>/dev/null || { cat "$err"; exit 1; }
  sleep 0.1
done
port=$(jq -r .port "$out")
token=$(jq -r .url "$out" | cut -d/ -f4)
host="Host: 127.0.0.1:$port"

# METHOD PATH [BODY]: the response (status line, headers, body), on a connection of its own.
request() {
  local body=${3:-}
  exec 3<>"/dev/tcp/127.0.0.1/$port"
  printf '%s %s HTTP/1.1\r\n%s\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: %s\r\n\r\n%s' \
    "$1" "$2" "$host" "${#body}" "$body" >&3
  cat <&3
  exec 3<&-
}
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$pid/status"; }

exec 7<>"/dev/tcp/127.0.0.1/$port"
printf 'POST /api/answer HTTP/1.1\r\n%s\r\nContent-Length: 1000000000\r\n\r\n%s' "$host" \
  "$(head -c 1000 /dev/zero | tr '\0' x)" >&7
IFS= read -r -t 5 line <&7 || line="(no answer within 5 s)"
echo "no token, 1 GB body: ${line%$'\r'}"
before=$(rss_kb)
# 256 MB more without a line end: a server that reads it (as the line of a next request)
# takes it all and grows; one that closed the connection makes the writer fail at once.
rc=0
(trap '' PIPE; timeout 30 head -c $((256 << 20)) /dev/zero >&7 2>/dev/null) || rc=$?
case $rc in
  0) echo "the rest of the body: all 256 MB taken" ;;
  124) echo "the rest of the body: still being taken after 30 s" ;;
  *) echo "the rest of the body: refused" ;;
esac
grown=$(($(rss_kb) - before))
[ $grown -lt $((64 << 10)) ] && echo "memory: grew less than 64 MB" || echo "memory: grew by $((grown >> 10)) MB"
exec 7<&-

for _ in $(seq 100); do
  state=$(request GET "/$token/api/state" | sed '1,/^\r$/d')
  [ "$(jq -r .phase <<<"$state")" = question ] && break
  sleep 0.1
done
id=$(jq -r .question.id <<<"$state")
reply=$(request POST "/$token/api/answer" "{\"id\": $id, \"option\": 4294967297}")
echo "option 4294967297: $(head -1 <<<"$reply" | cut -d' ' -f2) $(sed '1,/^\r$/d' <<<"$reply" | jq -r .message)"
echo "phase after it: $(request GET "/$token/api/state" | sed '1,/^\r$/d' | jq -r .phase)"

version=$(jq -r .version <<<"$state")
exec 4<>"/dev/tcp/127.0.0.1/$port" 5<>"/dev/tcp/127.0.0.1/$port" 6<>"/dev/tcp/127.0.0.1/$port"
printf 'GET /%s/app.js HTTP/1.1\r\n%s\r\n\r\n' "$token" "$host" >&4
printf 'GET /%s/ HTTP/1.1\r\n%s\r\n' "$token" "$host" >&5
printf 'GET /%s/api/state?since=%s HTTP/1.1\r\n%s\r\n\r\n' "$token" "$version" "$host" >&6
sleep 0.5
start=$(date +%s%N)
request POST "/$token/api/quit" '' >/dev/null
rc=0
wait $pid || rc=$?
pid=
ms=$((($(date +%s%N) - start) / 1000000))
[ $ms -lt 2000 ] && echo "quit with connections held: exit $rc within 2 s" ||
  echo "quit with connections held: exit $rc after $ms ms"
