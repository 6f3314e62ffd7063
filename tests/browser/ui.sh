#!/usr/bin/env bash
# `causeway ui` end to end in a real browser: Playwright (tests/browser/node_modules, from
# `npm ci --prefix tests/browser`) drives Debian's headless chromium through a diagnosis
# that asks questions (ui.test.mjs): answered by clicking the first option, the page must
# show the root cause `causeway debug --json --auto` finds; the answers saved from the page
# must replay with no question asked and the same root cause. Also: the server listens on
# 127.0.0.1 only, and requests without the token (or for another host name) get 403.
# Screenshots go to BIN_DIR/../tests/browser/ (the build tree).
#
# usage: ui.sh BIN_DIR   (exit 77, skipped, when chromium, node or node_modules is missing)
set -euo pipefail
bin_dir=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/tests/browser"
export PATH="$bin_dir:$PATH"
for tool in chromium node; do
  if ! command -v $tool >/dev/null; then
    echo "$tool is not installed (scripts/setup.sh test installs it): skipped"
    exit 77
  fi
done
if [ ! -d "$here/node_modules/playwright-core" ]; then
  echo "playwright-core is not installed (npm ci --prefix tests/browser): skipped"
  exit 77
fi
shots="$bin_dir/../tests/browser"
mkdir -p "$shots"
tmp=$(mktemp -d)
ui_pid=
cleanup() {
  [ -n "$ui_pid" ] && kill "$ui_pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

# $1: name; $2: the trace; $3: --hang; the rest: packs (--rules) the diagnosis needs.
check_ui() {
  local name=$1 trace=$2 hang=$3; shift 3
  local rules=(--hang "$hang")
  for p in "$@"; do rules+=(--rules "$p"); done
  causeway debug "$trace" "${rules[@]}" --json --auto --no-cache >"$tmp/$name.expected.json"
  jq -e '.root_causes | length > 0' "$tmp/$name.expected.json" >/dev/null ||
    fail "$name: debug --auto finds no root cause"
  jq -e '[.queries[] | select(.source == "auto")] | length > 0' "$tmp/$name.expected.json" >/dev/null ||
    fail "$name: debug asks no question on this trace: nothing to answer by click"

  causeway ui "$trace" "${rules[@]}" --port 0 --no-browser --json --no-cache \
    --save-answers "$tmp/$name-saved" >"$tmp/$name.out" 2>"$tmp/$name.err" &
  ui_pid=$!
  local url=""
  for _ in $(seq 100); do
    url=$(jq -r '.url // empty' "$tmp/$name.out" 2>/dev/null || true)
    [ -n "$url" ] && break
    kill -0 "$ui_pid" 2>/dev/null || { cat "$tmp/$name.err"; fail "$name: causeway ui ended"; }
    sleep 0.2
  done
  [ -n "$url" ] || fail "$name: causeway ui printed no address"
  local port
  port=$(jq -r .port "$tmp/$name.out")
  [[ "$url" =~ ^http://127\.0\.0\.1:$port/[0-9a-f]{32}/$ ]] || fail "$name: address $url"

  # Listening on loopback only: every socket of this port is 127.0.0.1's.
  local listening
  listening=$(ss -Hltn "sport = :$port" | awk '{print $4}')
  [ "$listening" = "127.0.0.1:$port" ] || fail "$name: listens on '$listening', not 127.0.0.1:$port only"
  echo "ok $name: listens on $listening only"
  # The right token asked for under another host name (a DNS-rebinding page) gets 403.
  local code
  code=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: attacker.example:$port" "$url")
  [ "$code" = 403 ] || fail "$name: another Host header got $code"
  code=$(curl -s -o /dev/null -w '%{http_code}' "$url")
  [ "$code" = 200 ] || fail "$name: the address itself got $code"
  echo "ok $name: the address gets 200, another host name 403"

  UI_URL=$url EXPECTED="$tmp/$name.expected.json" SHOTS="$shots" NAME="$name" \
    DOWNLOAD="$tmp/$name-download.cw" timeout 300 node "$here/ui.test.mjs" ||
    { cat "$tmp/$name.err"; fail "$name: the browser test failed"; }
  # Quit ends the server.
  for _ in $(seq 50); do kill -0 "$ui_pid" 2>/dev/null || break; sleep 0.2; done
  kill -0 "$ui_pid" 2>/dev/null && fail "$name: causeway ui still runs after Quit"
  wait "$ui_pid" || fail "$name: causeway ui exited $?"
  ui_pid=

  # The saved pack, and the downloaded one put in a folder, replay the diagnosis: no
  # question is asked (every query is answered by a rule) and the root cause is the same.
  mkdir -p "$tmp/$name-downloaded"
  mv "$tmp/$name-download.cw" "$tmp/$name-downloaded/pack.cw"
  for pack in "$tmp/$name-saved" "$tmp/$name-downloaded"; do
    causeway rules test "$pack" >"$tmp/replay.txt" 2>&1 || { cat "$tmp/replay.txt"; fail "$name: $pack's test"; }
    causeway debug "$trace" "${rules[@]}" --rules "$pack" --json --no-cache </dev/null >"$tmp/$name.replay.json"
    jq -e '[.queries[] | select(.source != "rule")] | length == 0' "$tmp/$name.replay.json" >/dev/null ||
      fail "$name: with $(basename "$pack") a question is still asked"
    diff <(jq -S .root_causes "$tmp/$name.expected.json") <(jq -S .root_causes "$tmp/$name.replay.json") ||
      fail "$name: with $(basename "$pack") another root cause"
    echo "ok $name: $(basename "$pack") replays: no question asked, the same root cause"
  done
}

# The bundled demo (a recurse question), and a recording of a real server holding a
# client's request until another client acts (tests/real/16-redis-blpop: an edge question,
# three processes).
cp "$root/examples/slow-server.trace" "$tmp/slow-server.trace"
check_ui slow-server "$tmp/slow-server.trace" auto
cp "$root/tests/real/traces/16-redis-blpop.cwt" "$tmp/blpop.cwt"
check_ui blpop "$tmp/blpop.cwt" redis-cli
# Names with markup (a thread's, a function's) stay text in every part of the page.
markup='<img src=x onerror=alert(1)><b>w</b>'
sed -e "s|comm=cw-srv-worker|comm=\"$markup\"|" \
  -e 's|stack=main;serve;recvfrom|stack=main;<b>x</b><script>document.title=1</script>;recvfrom|' \
  "$root/examples/slow-server.trace" >"$tmp/markup.trace"
MARKUP=$markup check_ui markup "$tmp/markup.trace" auto
echo "screenshots: $(ls "$shots"/*.png | tr '\n' ' ')"
