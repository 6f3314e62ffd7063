#!/usr/bin/env bash
# `causeway latency --html` opened in Debian's headless Chromium: the page's script draws
# the heat map from the embedded data, and what it drew must be what `--json` says (each
# context's rank, and each cell's function and distance from the costliest), the
# screenshot must not be blank, and a function name holding markup stays text.
#
# usage: latency_html.sh BIN_DIR   (exit 77, skipped, when chromium is not installed)
set -euo pipefail
bin_dir=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
export PATH="$bin_dir:$PATH"
if ! command -v chromium >/dev/null; then
  echo "chromium is not installed (apt-get install chromium): skipped"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Root cannot run Chromium's sandbox; nothing here is untrusted beyond the page itself.
browser=(timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars
         --user-data-dir="$tmp/profile" --window-size=1000,700)
fail() { echo "FAIL: $*"; exit 1; }

check_page() {  # $1: name; the rest: causeway latency arguments
  local name=$1; shift
  causeway latency "$@" --json >"$tmp/$name.json"
  causeway latency "$@" --html "$tmp/$name.html" >/dev/null 2>&1
  "${browser[@]}" --dump-dom "file://$tmp/$name.html" >"$tmp/$name.dom" 2>/dev/null
  # "RANK DISTANCE FUNCTION" per cell, from the JSON and from the drawn table, hot first:
  # the costliest frame, its callers outwards, then its callees.
  jq -r '.contexts[] | .rank as $r | .costliest as $k
         | ((.frames[0:$k+1] | reverse) + .frames[$k+1:])[] | "\($r) \(.distance) \(.function)"' \
    "$tmp/$name.json" >"$tmp/$name.expected"
  tr '\n' ' ' <"$tmp/$name.dom" | sed 's/<tr class="context"/\n&/g' | { grep '^<tr class="context"' || true; } |
    while IFS= read -r row; do
      rank=$(sed -E 's/^<tr class="context" data-rank="([0-9]+)".*/\1/' <<<"$row")
      grep -oE 'data-function="[^"]*" data-distance="[0-9]+"' <<<"$row" |
        sed -E "s/data-function=\"([^\"]*)\" data-distance=\"([0-9]+)\"/$rank \2 \1/" |
        sed 's/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g; s/&amp;/\&/g'
    done >"$tmp/$name.drawn"
  [ -s "$tmp/$name.expected" ] || fail "$name: the ranking is empty"
  diff -u "$tmp/$name.expected" "$tmp/$name.drawn" || fail "$name: the page drew another ranking"
  "${browser[@]}" --screenshot="$tmp/$name.png" "file://$tmp/$name.html" >/dev/null 2>&1
  "${browser[@]}" --screenshot="$tmp/blank.png" about:blank >/dev/null 2>&1
  local page blank
  page=$(stat -c %s "$tmp/$name.png")
  blank=$(stat -c %s "$tmp/blank.png")
  # A blank page compresses to a few KB; the drawn table and tree to many times that.
  [ "$page" -gt $((5 * blank)) ] || fail "$name: the screenshot looks blank ($page bytes, blank $blank)"
  echo "ok $name: $(wc -l <"$tmp/$name.expected") cells as --json says; screenshot $page bytes (blank $blank)"
}

check_page one "$root/tests/cli/data/figure3.trace"
check_page differential --base "$root/tests/cli/data/figure3.trace" \
  --buggy "$root/tests/cli/data/figure3-slow.trace"

# A function named with markup is shown as text, not run.
sed 's|stack=A;C;D|stack=A;<b>x</b><script>document.title=1</script>;D|' \
  "$root/tests/cli/data/figure3.trace" >"$tmp/markup.trace"
check_page markup "$tmp/markup.trace"
grep -qE '<b>x|<script>document' "$tmp/markup.dom" && fail "markup: a function name became an element"
echo "ok markup: the name stayed text"
