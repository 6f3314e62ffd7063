#!/usr/bin/env bash
# ctest's `tutorial`: runs docs/tutorial.md as written. Its ```console blocks, in order,
# are a cram-style test (tests/cli/run.sh: `$` commands, their output, `(re)` lines), run
# with the causeway in BIN_DIR. It records, which needs root: as another user it is
# skipped (exit 77).
#
# usage: tests/tutorial.sh BIN_DIR
set -euo pipefail
bin_dir=${1:?usage: tutorial.sh BIN_DIR}
src=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" -ne 0 ]; then
  echo "skipped: the tutorial records, which needs root"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The fenced blocks' lines, as a .t file: the text around them becomes comments (lines
# that do not start with two spaces).
awk '/^```console$/ { inside = 1; next } /^```$/ { inside = 0; next } inside { print }' \
  "$src/docs/tutorial.md" >"$work/tutorial.t"
[ -s "$work/tutorial.t" ] || { echo "FAIL: docs/tutorial.md has no console blocks"; exit 1; }
"$src/tests/cli/run.sh" "$bin_dir" "$work/tutorial.t"
