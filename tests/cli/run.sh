#!/usr/bin/env bash
# Runs the command-line tests: cram-style files tests/cli/*.t, readable without the code.
#
#   Unindented lines are comments.
#     $ causeway rules check bad.cw       a command, run from the repository root
#     > continued                         ... continued on the next line
#     bad.cw:3:7: error: ...              its output (stdout and stderr together)
#     took \d+ms (re)                     a line matched as an extended regular expression
#     [1]                                 its exit status, when not 0
#
#   A command that exits 77 when 77 is not its expected status skips the rest of its file:
#   the machine cannot run it (its output, e.g. "skip: no cpu-clock perf events", says
#   why). The file is reported SKIP with that output, and counted apart.
#
# usage: run.sh BIN_DIR [TEST.t...]   (BIN_DIR holds the causeway binary)
set -u
bin_dir=$(cd "$1" && pwd); shift
root=$(cd "$(dirname "$0")/../.." && pwd)
export PATH="$bin_dir:$PATH"
export CAUSEWAY_RULES_PATH=
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export TMP_DIR="$tmp"

tests=("$@")
[ ${#tests[@]} -eq 0 ] && tests=("$root"/tests/cli/*.t)
pass=0 fail=0 skipped=0

# Compares expected (file $1) with actual (file $2) line by line, honouring "(re)".
matches() {
  local -a exp act
  mapfile -t exp <"$1"; mapfile -t act <"$2"
  [ ${#exp[@]} -eq ${#act[@]} ] || return 1
  local i
  for ((i = 0; i < ${#exp[@]}; i++)); do
    local e=${exp[i]} a=${act[i]}
    if [[ "$e" == *" (re)" ]]; then
      [[ "$a" =~ ^${e% (re)}$ ]] || return 1
    else
      [ "$e" == "$a" ] || return 1
    fi
  done
}

run_case() {  # $1 test file, $2 line, $3 command, $4 expected output file, $5 expected rc
  local out="$tmp/actual" rc
  (cd "$root" && bash -c "$3") >"$out" 2>&1
  rc=$?
  if [ "$rc" = 77 ] && [ "$5" != 77 ]; then
    skip_why=$(tr '\n' ' ' <"$out")
    return 2
  fi
  if matches "$4" "$out" && [ "$rc" = "$5" ]; then
    return 0
  fi
  echo "FAIL $1:$2: \$ $3"
  echo "--- expected (exit $5)"; cat "$4"
  echo "+++ actual (exit $rc)"; cat "$out"
  return 1
}

for t in "${tests[@]}"; do
  name=${t#"$root"/}
  cmd="" cmd_line=0 rc=0 ok=1
  : >"$tmp/expected"
  skip_why=""
  flush() {
    [ -z "$cmd" ] && return
    if [ -z "$skip_why" ]; then
      run_case "$name" "$cmd_line" "$cmd" "$tmp/expected" "$rc"
      case $? in 0 | 2) ;; *) ok=0 ;; esac
    fi
    cmd="" rc=0
    : >"$tmp/expected"
  }
  n=0
  while IFS= read -r line || [ -n "$line" ]; do
    n=$((n + 1))
    if [[ "$line" == "  \$ "* ]]; then
      flush; cmd=${line:4}; cmd_line=$n
    elif [[ "$line" == "  > "* && -n "$cmd" ]]; then
      cmd+=$'\n'${line:4}
    elif [[ "$line" =~ ^\ \ \[([0-9]+)\]$ && -n "$cmd" ]]; then
      rc=${BASH_REMATCH[1]}
    elif [[ "$line" == "  "* && -n "$cmd" ]]; then
      printf '%s\n' "${line:2}" >>"$tmp/expected"
    elif [[ "$line" == "" && -n "$cmd" ]]; then
      flush
    else
      flush
    fi
  done <"$t"
  flush
  if [ $ok = 0 ]; then
    fail=$((fail + 1))
  elif [ -n "$skip_why" ]; then
    skipped=$((skipped + 1)); echo "SKIP $name: $skip_why"
  else
    pass=$((pass + 1)); echo "PASS $name"
  fi
done
echo "$pass passed, $fail failed$([ $skipped -gt 0 ] && echo ", $skipped skipped")"
[ $fail -eq 0 ]
