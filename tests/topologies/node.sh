#!/bin/bash
# One node of a generated topology played in bash (tests/topologies/README.md). The
# generator copies this file under the node's name (t12n3sh), so that the process's comm is
# that name, and gives it the node's spec file (node.c's format, one node):
#
#   NODE SPEC_FILE
#
# Only builtins run once the node is set up (a `sleep` or `cat` would be another process
# with another comm): FIFO reads, `read -t` in a loop as a timed wait, `wait` for a child
# it forked, a busy loop on $EPOCHREALTIME. times/NAME gets the barrier's, the inputs' and
# the stage's end (µs × 1000: only differences are compared).
set -uo pipefail
NAME=${0##*/}
fail() {
  echo "$NAME: $*" >&2
  exit 1
}
[ $# -eq 1 ] || fail "usage: NODE SPEC_FILE"

total=0 stage=none
ins=() outs=()
while read -r word a b c d; do
  case $word in
  total) total=$a ;;
  node) ;;
  stage) stage=$a ;;
  in) ins+=("$a $b ${c:-} ${d:-}") ;;
  out) outs+=("$a $b") ;;
  '' | '#'*) ;;
  *) fail "$1: cannot read '$word $a $b'" ;;
  esac
done <"$1"
echo $$ >"pids/$NAME"

# A FIFO nobody writes, for `read -t` as a sleep between looks during setup.
exec {idle}<>"idle.$NAME" || fail "no idle.$NAME"
nap() { read -r -t "$1" -u "$idle" _ || true; }

declare -A fd child
for e in "${ins[@]}"; do
  read -r mech chan exe spec <<<"$e"
  case $mech in
  pipe | readt) exec {f}<>"$chan" && fd[in.$chan]=$f || fail "open $chan" ;;
  wait4)
    "$exe" "$spec" &
    child[$chan]=$!
    ;;
  *) fail "unknown input mechanism $mech" ;;
  esac
done
for e in "${outs[@]}"; do
  read -r mech chan <<<"$e"
  case $mech in
  pipe | readt | poll* | select* | epoll*) exec {f}<>"$chan" && fd[out.$chan]=$f || fail "open $chan" ;;
  eof-*)
    for ((i = 0; i < 500; i++)); do [ -e "$chan.ok" ] && break; nap 0.01; done
    [ -e "$chan.ok" ] || fail "$chan.ok did not appear within 5 s"
    exec {f}>"$chan" && fd[out.$chan]=$f || fail "open $chan"
    ;;
  esac
done

echo ready >"ready/$NAME"
shopt -s nullglob
for ((i = 0; ; i++)); do
  r=(ready/*)
  n=0
  for x in "${r[@]}"; do [[ $x == *.tmp ]] || n=$((n + 1)); done
  [ "$n" -ge "$total" ] && break
  [ $i -lt 5000 ] || fail "only $n of $total nodes ready after 5 s"
  nap 0.001
done
t_barrier=${EPOCHREALTIME/./}000

for e in "${ins[@]}"; do
  read -r mech chan exe spec <<<"$e"
  case $mech in
  pipe) read -r -N 1 -u "${fd[in.$chan]}" _ || fail "read $chan" ;;
  readt) until read -r -N 1 -t 0.05 -u "${fd[in.$chan]}" _; do :; done ;;
  wait4)
    wait "${child[$chan]}"
    rc=$?
    [ $rc -eq 0 ] || fail "child ${child[$chan]} failed (exit $rc)"
    ;;
  esac
done
t_inputs=${EPOCHREALTIME/./}000

case $stage in
none) ;;
busy)
  end=$((${EPOCHREALTIME/./} + 1200000))
  while [ "${EPOCHREALTIME/./}" -lt $end ]; do :; done
  ;;
*) fail "unknown stage $stage" ;;
esac
t_stage=${EPOCHREALTIME/./}000

for e in "${outs[@]}"; do
  read -r mech chan <<<"$e"
  case $mech in
  pipe | poll* | select* | epoll*) printf x >&"${fd[out.$chan]}" || fail "write $chan" ;;
  # `read -t` can drop a byte it read as its timeout expires: spares, for that reader only.
  readt) printf xxxxxxxxxxxxxxxx >&"${fd[out.$chan]}" || fail "write $chan" ;;
  eof-close)
    f=${fd[out.$chan]}
    exec {f}>&-
    ;;
  inotify) : >"$chan.dir/$NAME" ;;
  esac
  # eof-exit, wait4, waitid, pidfd: the process's exit.
done
echo "$t_barrier $t_inputs $t_stage" >"times/$NAME"
