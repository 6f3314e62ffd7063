#!/usr/bin/env bash
# The rule edit loop against the graph cache (docs/cache.md), for tests/cli/cache.t:
# `causeway CMD TRACE --rules WORK/edit ARGS...` with a pack of no rules (cold), after
# adding a rule, after changing it, after removing it again, then with the entry damaged.
# Each run's cache use comes from its stderr (CAUSEWAY_CACHE=verbose); its stdout is
# compared byte for byte with a --no-cache run of the same packs, and with the cold run's.
#
#   cache_edit_loop.sh WORK TRACE CMD [ARGS...]
set -u
work=$1 trace=$2 cmd=$3
shift 3
pack=$work/edit/pack.cw
mkdir -p "$work/edit"
header='pack test.edit {
  version "0.1.0"
  requires linux.kernel
}
'
rule='
split recvmsg.idle {
  at syscall_enter
  where name == "recvmsg"
  neighbour weak
  loop
}
'

run() {  # NAME: the cached run, then the same with --no-cache
  CAUSEWAY_CACHE=verbose causeway "$cmd" "$trace" --rules "$work/edit" "$@" \
    >"$work/$name.out" 2>"$work/$name.err"
  causeway "$cmd" "$trace" --rules "$work/edit" --no-cache "$@" >"$work/$name.fresh" 2>/dev/null
}
cache_use() {
  if grep -q 'cache: graph loaded from' "$work/$name.err"; then
    echo -n "loaded"
  elif grep -q 'cache: cuts replayed from' "$work/$name.err" &&
    grep -q 'cache: graph saved to' "$work/$name.err"; then
    echo -n "cuts replayed and saved"
  elif grep -q 'cache: rebuilding the cuts of' "$work/$name.err" &&
    grep -q 'cache: graph saved to' "$work/$name.err"; then
    echo -n "cuts rebuilt and saved"
  elif grep -q 'cache: graph saved to' "$work/$name.err"; then
    echo -n "built and saved"
  else
    echo -n "not cached"
  fi
  # The segments made from the base graph's with the thread index (docs/cache.md).
  grep -q 'cache: segments kept for [0-9]* of [0-9]* threads' "$work/$name.err" &&
    echo -n ", segments from the base"
  local why
  why=$(sed -n 's/.*cache: .* not used (\(.*\)); building the graph again/\1/p' "$work/$name.err")
  [ -n "$why" ] && echo -n " (entry not used: $why)"
  return 0
}
events_use() {
  if grep -q 'cache: events mapped from .* (checked in full before' "$work/$name.err"; then
    echo -n "events mapped, checked before"
  elif grep -q 'cache: events mapped from' "$work/$name.err"; then
    echo -n "events mapped"
  elif grep -q 'cache: events saved to' "$work/$name.err"; then
    echo -n "events read and saved"
  else
    echo -n "events read"
  fi
}
# debug only: whether the hang came from the cache, and the thread index.
diagnosis_use() {
  [ "$cmd" = debug ] || return 0
  local ranked
  ranked=$(sed -n 's/.*cache: \([0-9]* of [0-9]*\) candidate threads ranked as on the graph rebuilt.*/\1/p' "$work/$name.err")
  if grep -q 'cache: hang found before on this graph' "$work/$name.err"; then
    echo -n ", hang cached"
  elif [ -n "$ranked" ]; then
    echo -n ", hang found ($ranked threads as before)"
  else
    echo -n ", hang found"
  fi
  if grep -q 'cache: thread index mapped from' "$work/$name.err"; then
    echo -n ", index mapped"
  elif grep -q 'cache: thread index saved to' "$work/$name.err"; then
    echo -n ", index made and saved"
  else
    echo -n ", index made"
  fi
}
same() { cmp -s "$1" "$2" && echo yes || echo no; }
report() {  # NAME [PREVIOUS]
  echo -n "$name: $(events_use), graph $(cache_use)$(diagnosis_use); equals --no-cache: $(same "$work/$name.out" "$work/$name.fresh")"
  echo -n "; equals cold: $(same "$work/$name.out" "$work/cold.out")"
  [ $# -gt 1 ] && echo -n "; equals $2: $(same "$work/$name.out" "$work/$2.out")"
  echo
}
entries() { find "$trace.cwcache" -name 'graph-*.cwg' | wc -l; }

printf '%s' "$header" >"$pack"
name=cold; run "$@"; report cold
printf '%s%s' "$header" "$rule" >"$pack"
name=add; run "$@"; report add
changed=${rule/neighbour weak/neighbour none}
printf '%s%s' "$header" "${changed/\"recvmsg\"/\"recvmsg\" and fd != 5}" >"$pack"
name=change; run "$@"; report change add
printf '%s' "$header" >"$pack"
name=remove; run "$@"; report remove
echo "entries: $(entries)"

# The cold run's entry, damaged: never trusted, rebuilt, and the result is the same.
entry=$(sed -n 's/.*cache: graph saved to //p' "$work/cold.err")
truncate -s -1 "$entry"
name=truncated; run "$@"; report truncated
printf 'junk' >"$entry"
name=foreign; run "$@"; report foreign
name=again; run "$@"; report again

# The cut rules' matches, damaged: never trusted; a new rule's cuts come from a scan of
# the events, which keeps every rule's matches again, and the next new rule's are replayed.
if [ -f "$trace.cwcache/matches.cwm" ]; then
  truncate -s -1 "$trace.cwcache/matches.cwm"
  printf '%s%s' "$header" "${rule/\"recvmsg\"/\"sendmsg\"}" >"$pack"
  name=matches-truncated; run "$@"; report matches-truncated
  grep -o 'matches.cwm not used (.*)' "$work/$name.err"
  printf '%s%s' "$header" "${rule/\"recvmsg\"/\"write\"}" >"$pack"
  name=matches-again; run "$@"; report matches-again
  printf '%s' "$header" >"$pack"
fi

# The events entry, damaged (a binary trace's): read from the trace again, and saved. A
# byte changed in place after a run recorded the entry checked (docs/cache.md, "Checked
# once") changes the file's change time: checked in full again, and not used.
if [ -f "$trace.cwcache/trace.cwa" ]; then
  size=$(stat -c %s "$trace.cwcache/trace.cwa")
  printf '\377' | dd of="$trace.cwcache/trace.cwa" bs=1 seek=$((size - 3)) conv=notrunc status=none
  name=events-flipped; run "$@"; report events-flipped
  grep -o 'trace.cwa not used (.*); reading the trace' "$work/$name.err"
  truncate -s -1 "$trace.cwcache/trace.cwa"
  name=events-truncated; run "$@"; report events-truncated
  grep -o 'trace.cwa not used (.*); reading the trace' "$work/$name.err"
  name=events-again; run "$@"; report events-again
fi

# The thread index and a hang entry, damaged: made again, and the result is the same.
if [ -f "$trace.cwcache/threads.cwa" ]; then
  truncate -s -1 "$trace.cwcache/threads.cwa"
  name=index-truncated; run "$@"; report index-truncated
  grep -o 'threads.cwa not used (.*); indexing the trace' "$work/$name.err"
  for h in "$trace.cwcache"/hang-*.cwh; do printf 'junk' >"$h"; done
  name=hang-damaged; run "$@"; report hang-damaged
  grep -o 'hang entry not used (.*)' "$work/$name.err"
fi

# Off: neither read nor written.
rm -rf "$trace.cwcache"
CAUSEWAY_CACHE=off causeway "$cmd" "$trace" --rules "$work/edit" "$@" >"$work/off.out" 2>"$work/off.err"
causeway "$cmd" "$trace" --rules "$work/edit" --no-cache "$@" >"$work/nocache.out" 2>&1
echo "off: files in the cache folder: $(find "$trace.cwcache" -type f 2>/dev/null | wc -l); equals cold: $(same "$work/off.out" "$work/cold.out")"
