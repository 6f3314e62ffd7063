#!/bin/bash
# A hang that crosses hosts, on one machine: two network namespaces joined by a veth
# pair stand in for two hosts. In B a server (cw-slow-server) answers its third request
# only after slow_lookup() has slept 800 ms; in A a client (cw-client) blocks in read()
# for that reply. Each side is recorded by its own `causeway record`, as it would be on
# its own host, giving OUTDIR/A.cwt and OUTDIR/B.cwt: the input for joining two traces
# by their TCP messages. The script then shows each trace's single-trace diagnosis and
# the TCP send/recv events of both sides, whose object= (the hash of the directed
# 4-tuple) and offset= (the TCP sequence number) must agree for the same bytes.
#
# Then B's clock is moved 5 s ahead (`convert --shift-clock`) and `causeway debug A.cwt
# B.cwt` must recover the offset within 1 ms from the messages and find the server's
# slow_lookup as the root cause of the client's hang (docs/fleet.md, "Hangs across hosts").
#
# Usage: tests/hosts/two_hosts.sh CAUSEWAY OUTDIR
# Needs root, iproute2 (ip, ss), network namespaces with veth, a C compiler, jq, eBPF.
# Exit status: 0 done (the send/recv pairs matched), 1 a failure, 77 skipped.
#
# Environment: CW_HOSTS_SYSTEM_WIDE=1 records system-wide, as a plain
# `causeway record -- CMD` does (each trace then also holds the other side's events and
# the other recorder); by default each recorder records only its own command.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 CAUSEWAY OUTDIR" >&2
  exit 1
fi
# Namespaces, veth pairs and eBPF all need root: without it this is a skip, not a failure.
if [[ $(id -u) -ne 0 ]]; then
  echo "skipped: needs root (network namespaces and eBPF)"
  exit 77
fi
# Absolute paths: the commands run under `ip netns exec`, and a relative CAUSEWAY found
# through PATH must still be the one meant.
causeway=$(command -v "$1") || { echo "$0: no such program: $1" >&2; exit 1; }
[[ $causeway == /* ]] || causeway=$PWD/$causeway
mkdir -p "$2"
outdir=$(cd "$2" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

for tool in ip ss cc jq; do
  if ! command -v "$tool" >/dev/null; then
    echo "skipped: needs $tool (iproute2 for ip and ss; a C compiler for cc)"
    exit 77
  fi
done

# $$ in every name, so that runs side by side do not clash.
ns_a=cw-a-$$
ns_b=cw-b-$$
addr_a=10.231.0.1
addr_b=10.231.0.2
port=7431
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cw-hosts.XXXXXX")
pid_a=""
pid_b=""

# Always undone, on success, failure, Ctrl-C or SIGTERM: a recorder still running is
# stopped (SIGTERM makes it write its trace and leave its command running; SIGKILL after
# 5 s), whatever still runs in the namespaces (our server or client) is killed, then the
# namespaces (and with them the veth pair) and the temporary folder are removed.
cleanup() {
  local pid ns alive
  for pid in $pid_a $pid_b; do kill -TERM "$pid" 2>/dev/null || true; done
  for _ in $(seq 50); do
    alive=""
    for pid in $pid_a $pid_b; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [[ -n $alive ]] || break
    sleep 0.1
  done
  for pid in $pid_a $pid_b; do
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  for ns in "$ns_a" "$ns_b"; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done
  rm -rf -- "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

started=$(date +%s.%N)
elapsed() { awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f s", b - a }'; }

# The programs, built here with frame pointers (their own frames walk either way; libc's
# do not, see record_args below) and debug info for file:line in the stacks.
cc -O1 -g -fno-omit-frame-pointer -Wall -o "$outdir/cw-slow-server" "$here/slow_server.c"
cc -O1 -g -fno-omit-frame-pointer -Wall -o "$outdir/cw-client" "$here/client.c"

# The two "hosts". A kernel or container without network namespaces (or veth) is a skip.
if ! err=$(ip netns add "$ns_a" 2>&1); then
  echo "skipped: cannot make a network namespace (ip netns add: $err)"
  exit 77
fi
ip netns add "$ns_b"
# The veth ends are made inside the namespaces at once, so their names never meet in
# the root namespace (nor another run's).
if ! err=$(ip link add veth-a netns "$ns_a" type veth peer name veth-b netns "$ns_b" 2>&1); then
  echo "skipped: cannot make a veth pair (ip link add type veth: $err)"
  exit 77
fi
ip -n "$ns_a" addr add "$addr_a/24" dev veth-a
ip -n "$ns_b" addr add "$addr_b/24" dev veth-b
for ns in "$ns_a" "$ns_b"; do
  ip -n "$ns" link set lo up
done
ip -n "$ns_a" link set veth-a up
ip -n "$ns_b" link set veth-b up

# Each recorder gets a folder of its own (0700, as `record --dir` demands), so that the
# marker socket of one is not the other's: with the default /var/lib/causeway the second
# recorder would find the first's socket live and silently record without markers, and a
# `causeway mark` would reach whichever recorder bound it first.
mkdir -m 0700 "$tmp/dir-a" "$tmp/dir-b"

# How the stacks are taken: by default `--call-graph dwarf`, since Debian's libc has no
# frame pointers and a frame-pointer walk from inside read() or nanosleep() skips their
# caller: the server's root cause would read main, not slow_lookup (the ground truth),
# and the client's read would have no main. CW_HOSTS_RECORD_ARGS replaces these options
# (empty: causeway's defaults).
read -ra record_args <<<"${CW_HOSTS_RECORD_ARGS---call-graph dwarf}"

# record_in NS LETTER CMD...: `causeway record` of CMD in namespace NS, into
# OUTDIR/LETTER.cwt, its messages in OUTDIR/LETTER.record.log. Run it in the background:
# the background shell execs `ip netns exec`, which execs causeway, so $! is the
# recorder's pid and $BASHPID here is it too. `record` is system-wide unless given
# --pid; `--pid $BASHPID` names the recorder itself, which never records itself, and
# `record` adds its command to the pids given: only the command and its children are
# recorded, as on a host of its own. (System-wide, A.cwt would also hold the server's
# sends and recvs and B.cwt the client's, and each recorder the other's work.)
record_in() {
  local ns=$1 letter=$2
  shift 2
  local scope=(--pid "$BASHPID")
  [[ ${CW_HOSTS_SYSTEM_WIDE:-0} == 1 ]] && scope=()
  exec ip netns exec "$ns" "$causeway" record "${scope[@]}" "${record_args[@]}" \
    --dir "$tmp/dir-$letter" -o "$outdir/$letter.cwt" -- "$@" \
    >"$outdir/$letter.out" 2>"$outdir/$letter.record.log"
}

rm -f "$outdir/A.cwt" "$outdir/B.cwt"
rm -rf "$outdir/A.cwt.cwcache" "$outdir/B.cwt.cwcache"

# The server first: its recorder attaches its probes before it runs the server, so once
# the port listens, B is being recorded.
record_in "$ns_b" B "$outdir/cw-slow-server" "$addr_b" "$port" &
pid_b=$!
for _ in $(seq 100); do
  if ip netns exec "$ns_b" ss -ltnH "sport = :$port" | grep -q .; then break; fi
  if ! kill -0 "$pid_b" 2>/dev/null; then
    echo "FAIL: the server's recorder ended before the server listened:" >&2
    cat "$outdir/B.record.log" >&2
    exit 1
  fi
  sleep 0.1
done
if ! ip netns exec "$ns_b" ss -ltnH "sport = :$port" | grep -q .; then
  echo "FAIL: nothing listens on $addr_b:$port after 10 s" >&2
  cat "$outdir/B.record.log" >&2
  exit 1
fi
echo "server listening in $ns_b at $addr_b:$port after $(elapsed)"

record_in "$ns_a" A "$outdir/cw-client" "$addr_b" "$port" &
pid_a=$!

# Both recorders end with their commands, in about a second; 30 s means something hung.
for _ in $(seq 300); do
  kill -0 "$pid_a" 2>/dev/null || kill -0 "$pid_b" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$pid_a" 2>/dev/null || kill -0 "$pid_b" 2>/dev/null; then
  echo "FAIL: the recordings did not end within 30 s (the cleanup stops them)" >&2
  exit 1
fi
rc_a=0 rc_b=0
wait "$pid_a" || rc_a=$?
wait "$pid_b" || rc_b=$?
pid_a="" pid_b=""
echo "both recorders done after $(elapsed)"
echo "--- recorder B (exit $rc_b):"
cat "$outdir/B.record.log"
echo "--- recorder A (exit $rc_a), and the client's output:"
cat "$outdir/A.record.log" "$outdir/A.out"
[[ $rc_a -eq 0 && $rc_b -eq 0 ]] || { echo "FAIL: a recorder failed" >&2; exit 1; }
# `record` exits 0 whatever its command did, and says a non-zero status on its last line.
if grep -q "the command exited with status" "$outdir/A.record.log" "$outdir/B.record.log"; then
  echo "FAIL: the client or the server failed" >&2
  exit 1
fi

echo "--- traces:"
for letter in A B; do
  echo "$outdir/$letter.cwt: $(stat -c %s "$outdir/$letter.cwt") bytes"
done

# The TCP transfers. In the text form an event is "TS TID KIND field=value ...", and a
# thread's name is on its "thread TID ... comm=NAME" (or process) line.
for letter in A B; do
  "$causeway" convert "$outdir/$letter.cwt" -o "$outdir/$letter.txt" --to text
done
# tids_of TEXT COMM: the tids that bore COMM in a text trace.
tids_of() {
  sed -n 's/^\(update \)\{0,1\}\(thread\|process\) \([0-9]*\) .*comm=\([^ ]*\).*/\3 \4/p' "$1" |
    awk -v comm="$2" '$2 == comm { print $1 }' | sort -u
}
# xfers_of TEXT COMM: that thread's send and recv events.
xfers_of() {
  local tid
  for tid in $(tids_of "$1" "$2"); do
    grep -E "^[0-9]+ $tid (send|recv) " "$1" || true
  done
}
xfers_of "$outdir/A.txt" cw-client >"$outdir/A.xfers"
xfers_of "$outdir/B.txt" cw-slow-server >"$outdir/B.xfers"
echo "--- A (cw-client) send/recv:"
cat "$outdir/A.xfers"
echo "--- B (cw-slow-server) send/recv:"
cat "$outdir/B.xfers"

# Each of A's sends must be one of B's recvs with the same object and offset, and each
# of B's sends one of A's recvs: 3 requests and 3 replies. (Lengths agree here because
# every line is read whole; a join in general goes by byte ranges.)
key() { sed -n 's/^[0-9]* [0-9]* \(send\|recv\) .*\(object=[^ ]*\).*\(offset=[^ ]*\).*\(len=[^ ]*\).*/\1 \2 \3 \4/p' "$1"; }
pairs=0 unmatched=0
while read -r kind object offset len; do
  other=$([[ $kind == send ]] && echo recv || echo send)
  if key "$outdir/B.xfers" | grep -qxF "$other $object $offset $len"; then
    pairs=$((pairs + 1))
  else
    unmatched=$((unmatched + 1))
    echo "unmatched: A $kind $object $offset $len"
  fi
done < <(key "$outdir/A.xfers")
echo "--- $pairs of A's transfers have their counterpart in B with the same object and offset;" \
  "$unmatched do not"
[[ $pairs -eq 6 && $unmatched -eq 0 ]] || { echo "FAIL: expected 6 matching pairs" >&2; exit 1; }

# The join. B's clock is put 5 s ahead (as another host's would be: both "hosts" here
# share one clock), then `debug A.cwt B.cwt` must find the offset from the messages alone,
# within 1 ms, and walk from the client's blocked read into the server's slow step.
shift_ns=5000000000
"$causeway" convert "$outdir/B.cwt" -o "$outdir/B-ahead.cwt" --to binary --shift-clock "$shift_ns" \
  2>/dev/null
"$causeway" debug "$outdir/A.cwt" "$outdir/B-ahead.cwt" --auto --hang cw-client --json \
  >"$outdir/joined.json" 2>"$outdir/joined.log"
cat "$outdir/joined.log"
offset=$(jq '.join[1].offset_ns' "$outdir/joined.json")
error_us=$(awk -v o="$offset" -v s="$shift_ns" 'BEGIN { e = o + s; if (e < 0) e = -e; printf "%.1f", e / 1000 }')
root=$(jq -r '.root_causes[0].comm' "$outdir/joined.json")
what=$(jq -r '.root_causes[0].what' "$outdir/joined.json")
frames=$(jq -r '.root_causes[0].stack | join(" <- ")' "$outdir/joined.json")
path=$(jq -r '[.path[].comm] | join(" -> ")' "$outdir/joined.json")
echo "--- joined: B's clock estimated at A's $offset ns (shifted by -$shift_ns: off by $error_us µs)"
echo "    root cause: $root: $what"
echo "    its stack: $frames"
echo "    path: $path"
fail=0
awk -v e="$error_us" 'BEGIN { exit !(e <= 1000) }' ||
  { echo "FAIL: the offset is off by more than 1 ms" >&2; fail=1; }
[[ $root == cw-slow-server && $what == *clock_nanosleep* ]] ||
  { echo "FAIL: the root cause is not the server's sleep" >&2; fail=1; }
# With frame pointers only (CW_HOSTS_RECORD_ARGS=), libc's nanosleep hides its caller.
if [[ ${CW_HOSTS_RECORD_ARGS---call-graph dwarf} == *dwarf* && $frames != *slow_lookup* ]]; then
  echo "FAIL: the root cause's stack has no slow_lookup" >&2
  fail=1
fi
[[ $path == "cw-slow-server -> cw-client" ]] ||
  { echo "FAIL: the path does not go from the server to the client" >&2; fail=1; }
echo "total $(elapsed)"
((fail == 0)) || exit 1
echo "ok"
