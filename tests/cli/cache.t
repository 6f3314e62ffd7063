The derived cache (docs/cache.md): a built graph is kept beside the trace, keyed by the
trace's content, the packs' content, the options and this causeway's build; a binary
trace's decoded events too, mapped back by the next run. A rule edit
loop: the cold run builds and saves; adding a rule misses and builds (the same output as
a run without the cache); changing it misses again; removing it finds the cold run's
entry, and the output is the cold one, byte for byte. A damaged entry is never trusted.

On a text trace (hashed whole), `graph --json --edges`:

  $ cp examples/server-loop.trace $TMP_DIR/s.trace && tests/cli/data/cache_edit_loop.sh $TMP_DIR/s $TMP_DIR/s.trace graph --json --edges
  cold: events read, graph built and saved; equals --no-cache: yes; equals cold: yes
  add: events read, graph cuts replayed and saved; equals --no-cache: yes; equals cold: no
  change: events read, graph cuts replayed and saved; equals --no-cache: yes; equals cold: no; equals add: no
  remove: events read, graph loaded; equals --no-cache: yes; equals cold: yes
  entries: 3
  truncated: events read, graph cuts replayed and saved \(entry not used: truncated \([0-9]+ payload bytes of [0-9]+\)\); equals --no-cache: yes; equals cold: yes (re)
  foreign: events read, graph built and saved (entry not used: truncated header); equals --no-cache: yes; equals cold: yes
  again: events read, graph loaded; equals --no-cache: yes; equals cold: yes
  matches-truncated: events read, graph cuts rebuilt and saved; equals --no-cache: yes; equals cold: (yes|no) (re)
  matches.cwm not used \(truncated \([0-9]+ payload bytes of [0-9]+\)\) (re)
  matches-again: events read, graph cuts replayed and saved; equals --no-cache: yes; equals cold: (yes|no) (re)
  off: files in the cache folder: 0; equals cold: yes

And `debug --json --auto` on the same edits:

  $ cp examples/server-loop.trace $TMP_DIR/d.trace && tests/cli/data/cache_edit_loop.sh $TMP_DIR/d $TMP_DIR/d.trace debug --json --auto
  cold: events read, graph built and saved, hang found, index made; equals --no-cache: yes; equals cold: yes
  add: events read, graph cuts replayed and saved, hang found \([0-9]+ of [0-9]+ threads as before\), index made; equals --no-cache: yes; equals cold: (yes|no) (re)
  change: events read, graph cuts replayed and saved, hang found \([0-9]+ of [0-9]+ threads as before\), index made; equals --no-cache: yes; equals cold: (yes|no); equals add: (yes|no) (re)
  remove: events read, graph loaded, hang cached, index made; equals --no-cache: yes; equals cold: yes
  entries: 3
  truncated: events read, graph cuts replayed and saved \(entry not used: truncated \([0-9]+ payload bytes of [0-9]+\)\), hang cached, index made; equals --no-cache: yes; equals cold: yes (re)
  foreign: events read, graph built and saved (entry not used: truncated header), hang cached, index made; equals --no-cache: yes; equals cold: yes
  again: events read, graph loaded, hang cached, index made; equals --no-cache: yes; equals cold: yes
  matches-truncated: events read, graph cuts rebuilt and saved, hang found \([0-9]+ of [0-9]+ threads as before\), index made; equals --no-cache: yes; equals cold: (yes|no) (re)
  matches.cwm not used \(truncated \([0-9]+ payload bytes of [0-9]+\)\) (re)
  matches-again: events read, graph cuts replayed and saved, hang found \([0-9]+ of [0-9]+ threads as before\), index made; equals --no-cache: yes; equals cold: (yes|no) (re)
  off: files in the cache folder: 0; equals cold: yes

A `debug` leaves the graph's over-connection counts (which only the graph report shows) to
the copy of the process that saves it; `graph --json` then loads them, equal to a build's:

  $ cp examples/server-loop.trace $TMP_DIR/o.trace && causeway debug --auto $TMP_DIR/o.trace >/dev/null 2>&1 && CAUSEWAY_CACHE=verbose causeway graph --json $TMP_DIR/o.trace 2>$TMP_DIR/o.err >$TMP_DIR/o.json && grep -c "graph loaded" $TMP_DIR/o.err && causeway graph --json --no-cache $TMP_DIR/o.trace | cmp - $TMP_DIR/o.json && grep -o '"over_connections": [0-9]*' $TMP_DIR/o.json
  1
  "over_connections": 1

A real recording whose packs have Lua hooks (python.asyncio's edge rules call them): the
cut rules call none, so the hooks are called in the same order whatever the cuts are, and
the cuts are rebuilt as on any trace:

  $ cp tests/real/traces/09-asyncio-blocked-loop.cwt $TMP_DIR/a.cwt && tests/cli/data/cache_edit_loop.sh $TMP_DIR/a $TMP_DIR/a.cwt debug --json --auto 2>&1 | sed -n '1,4p'
  cold: events read, graph built and saved, hang found, index made; equals --no-cache: yes; equals cold: yes
  add: events read, graph cuts replayed and saved, hang found \([0-9]+ of [0-9]+ threads as before\), index made; equals --no-cache: yes; equals cold: yes (re)
  change: events read, graph cuts replayed and saved, hang found \([0-9]+ of [0-9]+ threads as before\), index made; equals --no-cache: yes; equals cold: yes; equals add: yes (re)
  remove: events read, graph loaded, hang cached, index made; equals --no-cache: yes; equals cold: yes

On a synthetic binary trace (hashed by its chunk headers), both commands. Its events are
kept at any size here (CAUSEWAY_CACHE_EVENTS_MIN=0), as a large trace's are (below):

  $ $(dirname $(command -v causeway))/../bench/cw-gen-trace -o $TMP_DIR/g.cwt --events 30000 --seed 3 >/dev/null 2>&1 && CAUSEWAY_CACHE_EVENTS_MIN=0 tests/cli/data/cache_edit_loop.sh $TMP_DIR/g $TMP_DIR/g.cwt graph --json --edges
  cold: events read and saved, graph built and saved; equals --no-cache: yes; equals cold: yes
  add: events mapped, checked before, graph cuts replayed and saved; equals --no-cache: yes; equals cold: no
  change: events mapped, checked before, graph cuts replayed and saved; equals --no-cache: yes; equals cold: no; equals add: no
  remove: events mapped, checked before, graph loaded; equals --no-cache: yes; equals cold: yes
  entries: 3
  truncated: events mapped, checked before, graph cuts replayed and saved \(entry not used: truncated \([0-9]+ payload bytes of [0-9]+\)\); equals --no-cache: yes; equals cold: yes (re)
  foreign: events mapped, checked before, graph built and saved (entry not used: truncated header); equals --no-cache: yes; equals cold: yes
  again: events mapped, checked before, graph loaded; equals --no-cache: yes; equals cold: yes
  matches-truncated: events mapped, checked before, graph cuts rebuilt and saved; equals --no-cache: yes; equals cold: (yes|no) (re)
  matches.cwm not used \(truncated \([0-9]+ payload bytes of [0-9]+\)\) (re)
  matches-again: events mapped, checked before, graph cuts replayed and saved; equals --no-cache: yes; equals cold: (yes|no) (re)
  events-flipped: events read and saved, graph loaded; equals --no-cache: yes; equals cold: yes
  trace.cwa not used (checksum mismatch); reading the trace
  events-truncated: events read and saved, graph loaded; equals --no-cache: yes; equals cold: yes
  trace.cwa not used \(truncated \([0-9]+ payload bytes of [0-9]+\)\); reading the trace (re)
  events-again: events mapped, checked before, graph loaded; equals --no-cache: yes; equals cold: yes
  off: files in the cache folder: 0; equals cold: yes

`debug` keeps the thread index too (`threads.cwa`): with it, each rebuild of the cuts
makes its segments from the base graph's and each thread's events, with no pass over the
events ("segments from the base"), and still equals a run without the cache:

  $ cp $TMP_DIR/g.cwt $TMP_DIR/h.cwt && CAUSEWAY_CACHE_EVENTS_MIN=0 tests/cli/data/cache_edit_loop.sh $TMP_DIR/h $TMP_DIR/h.cwt debug --json --auto
  cold: events read and saved, graph built and saved, hang found, index made and saved; equals --no-cache: yes; equals cold: yes
  add: events mapped, checked before, graph cuts replayed and saved, segments from the base, hang found \([0-9]+ of [0-9]+ threads as before\), index mapped; equals --no-cache: yes; equals cold: (yes|no) (re)
  change: events mapped, checked before, graph cuts replayed and saved, segments from the base, hang found \([0-9]+ of [0-9]+ threads as before\), index mapped; equals --no-cache: yes; equals cold: (yes|no); equals add: (yes|no) (re)
  remove: events mapped, checked before, graph loaded, hang cached, index mapped; equals --no-cache: yes; equals cold: yes
  entries: 3
  truncated: events mapped, checked before, graph cuts replayed and saved, segments from the base \(entry not used: truncated \([0-9]+ payload bytes of [0-9]+\)\), hang cached, index mapped; equals --no-cache: yes; equals cold: yes (re)
  foreign: events mapped, checked before, graph built and saved (entry not used: truncated header), hang cached, index mapped; equals --no-cache: yes; equals cold: yes
  again: events mapped, checked before, graph loaded, hang cached, index mapped; equals --no-cache: yes; equals cold: yes
  matches-truncated: events mapped, checked before, graph cuts rebuilt and saved, segments from the base, hang found \([0-9]+ of [0-9]+ threads as before\), index mapped; equals --no-cache: yes; equals cold: (yes|no) (re)
  matches.cwm not used \(truncated \([0-9]+ payload bytes of [0-9]+\)\) (re)
  matches-again: events mapped, checked before, graph cuts replayed and saved, segments from the base, hang found \([0-9]+ of [0-9]+ threads as before\), index mapped; equals --no-cache: yes; equals cold: (yes|no) (re)
  events-flipped: events read and saved, graph loaded, hang cached, index mapped; equals --no-cache: yes; equals cold: yes
  trace.cwa not used (checksum mismatch); reading the trace
  events-truncated: events read and saved, graph loaded, hang cached, index mapped; equals --no-cache: yes; equals cold: yes
  trace.cwa not used \(truncated \([0-9]+ payload bytes of [0-9]+\)\); reading the trace (re)
  events-again: events mapped, checked before, graph loaded, hang cached, index mapped; equals --no-cache: yes; equals cold: yes
  index-truncated: events mapped, checked before, graph loaded, hang cached, index made and saved; equals --no-cache: yes; equals cold: yes
  threads.cwa not used \(truncated \([0-9]+ payload bytes of [0-9]+\)\); indexing the trace (re)
  hang-damaged: events mapped, checked before, graph loaded, hang found, index mapped; equals --no-cache: yes; equals cold: yes
  hang entry not used (truncated header)
  off: files in the cache folder: 0; equals cold: yes

By default the events entry and the thread index are kept only for a trace whose events
and values take 64 MiB or more in memory (docs/cache.md, "Size"): a smaller one's warm run
takes a few tenths of a second longer without them, and the entry would be 4.5 to 6.6
times the trace's size. Its
graph and hang are kept as any trace's. The 30 000 events above take 1.4 MiB: the same
edits, with nothing of the events saved.

  $ cp $TMP_DIR/g.cwt $TMP_DIR/k.cwt && tests/cli/data/cache_edit_loop.sh $TMP_DIR/k $TMP_DIR/k.cwt debug --json --auto
  cold: events read, graph built and saved, hang found, index made; equals --no-cache: yes; equals cold: yes
  add: events read, graph cuts replayed and saved, hang found \([0-9]+ of [0-9]+ threads as before\), index made; equals --no-cache: yes; equals cold: (yes|no) (re)
  change: events read, graph cuts replayed and saved, hang found \([0-9]+ of [0-9]+ threads as before\), index made; equals --no-cache: yes; equals cold: (yes|no); equals add: (yes|no) (re)
  remove: events read, graph loaded, hang cached, index made; equals --no-cache: yes; equals cold: yes
  entries: 3
  truncated: events read, graph cuts replayed and saved \(entry not used: truncated \([0-9]+ payload bytes of [0-9]+\)\), hang cached, index made; equals --no-cache: yes; equals cold: yes (re)
  foreign: events read, graph built and saved (entry not used: truncated header), hang cached, index made; equals --no-cache: yes; equals cold: yes
  again: events read, graph loaded, hang cached, index made; equals --no-cache: yes; equals cold: yes
  matches-truncated: events read, graph cuts rebuilt and saved, hang found \([0-9]+ of [0-9]+ threads as before\), index made; equals --no-cache: yes; equals cold: (yes|no) (re)
  matches.cwm not used \(truncated \([0-9]+ payload bytes of [0-9]+\)\) (re)
  matches-again: events read, graph cuts replayed and saved, hang found \([0-9]+ of [0-9]+ threads as before\), index made; equals --no-cache: yes; equals cold: (yes|no) (re)
  off: files in the cache folder: 0; equals cold: yes
  $ CAUSEWAY_CACHE=verbose causeway debug $TMP_DIR/k.cwt --auto 2>&1 >/dev/null | grep 'not saved' | sed "s|$TMP_DIR/||"
  causeway: cache: events not saved: 1.5 MiB of events decoded, under the 64.0 MiB from which they are kept (CAUSEWAY_CACHE_EVENTS_MIN)
  causeway: cache: events by kind and name not saved: 1.5 MiB of events decoded, under the 64.0 MiB from which they are kept (CAUSEWAY_CACHE_EVENTS_MIN)
  causeway: cache: thread index not saved: 1.5 MiB of events decoded, under the 64.0 MiB from which they are kept (CAUSEWAY_CACHE_EVENTS_MIN)
  $ ls $TMP_DIR/k.cwt.cwcache | sed 's/[0-9a-f]\{16\}/KEY/g'
  base-KEY.cwb
  graph-KEY.cwg
  hang-KEY-KEY.cwh
  matches.cwm

Entries of the events that a run cannot use (another content's or build's: here damaged)
and would not replace go; valid ones, made with a lower CAUSEWAY_CACHE_EVENTS_MIN, are used.
A value that is not a size leaves the default.

  $ CAUSEWAY_CACHE=verbose CAUSEWAY_CACHE_EVENTS_MIN=1K causeway debug $TMP_DIR/k.cwt --auto >/dev/null 2>&1; ls $TMP_DIR/k.cwt.cwcache | grep -c 'cwa$'
  2
  $ CAUSEWAY_CACHE=verbose causeway debug $TMP_DIR/k.cwt --auto 2>&1 >/dev/null | grep -e mapped -e removed | sed "s|$TMP_DIR/||"
  causeway: cache: events mapped from k.cwt.cwcache/trace.cwa (checked in full before, unchanged since)
  causeway: cache: thread index mapped from k.cwt.cwcache/threads.cwa
  $ truncate -s -1 $TMP_DIR/k.cwt.cwcache/trace.cwa $TMP_DIR/k.cwt.cwcache/threads.cwa && CAUSEWAY_CACHE_EVENTS_MIN=lots CAUSEWAY_CACHE=verbose causeway debug $TMP_DIR/k.cwt --auto 2>&1 >/dev/null | grep -e EVENTS_MIN= -e removed | sed "s|$TMP_DIR/||"
  causeway: cache: CAUSEWAY_CACHE_EVENTS_MIN=lots is not a size (bytes, or a number with K, M, G or T); events are kept from the default, 64 MiB
  causeway: cache: k.cwt.cwcache/trace.cwa removed
  causeway: cache: k.cwt.cwcache/threads.cwa removed
  $ ls $TMP_DIR/k.cwt.cwcache | grep -c 'cwa$'
  0
  [1]

Under `debug --watch` the first run makes the thread index and saves it; the runs after
it map the saved one instead of holding the one made (about 100 MB at 19 M events), so
only the lists a diagnosis reads count in the process's memory, as in a run of its own.

  $ cp $TMP_DIR/g.cwt $TMP_DIR/w.cwt && printf 'pack watch.cache {\n  version "0.1.0"\n  requires linux.kernel\n}\n' > $TMP_DIR/wpack.cw
  > (CAUSEWAY_CACHE=verbose CAUSEWAY_CACHE_EVENTS_MIN=1K causeway debug $TMP_DIR/w.cwt --rules $TMP_DIR/wpack.cw --watch >$TMP_DIR/wout 2>&1 &
  >  echo $! >$TMP_DIR/wpid; wait $!) &
  > for i in $(seq 100); do grep -q 'thread index saved' $TMP_DIR/wout 2>/dev/null && break; sleep 0.1; done
  > printf '\nsplit watch.cache.cut {\n  at syscall_enter\n  where name == "recvmsg"\n}\n' >> $TMP_DIR/wpack.cw
  > for i in $(seq 100); do [ "$(grep -c '^hang:' $TMP_DIR/wout)" -ge 2 ] && break; sleep 0.1; done
  > kill -INT $(cat $TMP_DIR/wpid); sleep 0.3
  > grep -e 'thread index' -e '=== ' $TMP_DIR/wout | sed -E "s|$TMP_DIR/||; s/[0-9]{2}:[0-9]{2}:[0-9]{2}/T/"
  causeway: cache: thread index saved to w.cwt.cwcache/threads.cwa
  === T wpack.cw changed: run 2 ===
  causeway: cache: thread index mapped from w.cwt.cwcache/threads.cwa

A run that starts while another run's copy is still saving its graph waits for the save
(at most 20 s) and loads it, rather than building the graph again; a temporary file left
by a writer that is gone is not waited for.

  $ mkdir -p $TMP_DIR/w && cp examples/server-loop.trace $TMP_DIR/w/t.trace && causeway graph $TMP_DIR/w/t.trace >/dev/null 2>&1; sleep 2 & touch $TMP_DIR/w/t.trace.cwcache/graph-0123456789abcdef.cwg.tmp-$!-1; start=$(date +%s); CAUSEWAY_CACHE=verbose causeway graph $TMP_DIR/w/t.trace 2>&1 >/dev/null | sed "s|$TMP_DIR/||; s|graph-[0-9a-f]*\.cwg$|graph-KEY.cwg|"; echo "waited: $(( $(date +%s) - start >= 1 ))"
  causeway: cache: waiting for another run's graph save to end (at most 20 s)
  causeway: cache: graph loaded from w/t.trace.cwcache/graph-KEY.cwg
  waited: 1
  $ true & wait $!; touch $TMP_DIR/w/t.trace.cwcache/graph-0123456789abcdef.cwg.tmp-$!-2; CAUSEWAY_CACHE=verbose causeway graph $TMP_DIR/w/t.trace 2>&1 >/dev/null | sed "s|$TMP_DIR/||; s|graph-[0-9a-f]*\.cwg$|graph-KEY.cwg|"
  causeway: cache: graph loaded from w/t.trace.cwcache/graph-KEY.cwg

The events are waited for in the same way: the copy that saves them runs after the graph's
build and search, so the run right after a cold one may start before they are written.

  $ mkdir -p $TMP_DIR/e && cp $TMP_DIR/g.cwt $TMP_DIR/e/t.cwt && CAUSEWAY_CACHE=verbose CAUSEWAY_CACHE_EVENTS_MIN=1K causeway graph $TMP_DIR/e/t.cwt 2>&1 >/dev/null | grep -c 'events saved'; sleep 2 & touch $TMP_DIR/e/t.cwt.cwcache/trace.cwa.tmp-$!-1; start=$(date +%s); CAUSEWAY_CACHE=verbose CAUSEWAY_CACHE_EVENTS_MIN=1K causeway graph $TMP_DIR/e/t.cwt 2>&1 >/dev/null | grep events | sed "s|$TMP_DIR/||"; echo "waited: $(( $(date +%s) - start >= 1 ))"
  1
  causeway: cache: waiting for another run's events save to end (at most 20 s)
  causeway: cache: events mapped from e/t.cwt.cwcache/trace.cwa (checked in full before, unchanged since)
  waited: 1

The cache folder is beside the trace. A changed trace is another key: the same packs miss.

  $ cp examples/server-loop.trace $TMP_DIR/t.trace && CAUSEWAY_CACHE=verbose causeway graph $TMP_DIR/t.trace 2>&1 >/dev/null | sed "s|$TMP_DIR/||; s|graph-[0-9a-f]*|graph-KEY|"
  causeway: cache: graph saved to t.trace.cwcache/graph-KEY.cwg
  $ CAUSEWAY_CACHE=verbose causeway graph $TMP_DIR/t.trace 2>&1 >/dev/null | sed "s|$TMP_DIR/||; s|graph-[0-9a-f]*|graph-KEY|"
  causeway: cache: graph loaded from t.trace.cwcache/graph-KEY.cwg
  $ sed -i 's/^2.2ms  11 switch_in/2.25ms 11 switch_in/' $TMP_DIR/t.trace && CAUSEWAY_CACHE=verbose causeway graph $TMP_DIR/t.trace 2>&1 >/dev/null | sed "s|$TMP_DIR/||; s|graph-[0-9a-f]*|graph-KEY|"
  causeway: cache: graph saved to t.trace.cwcache/graph-KEY.cwg

A run that fails to read its trace leaves no cache folder behind, beside the trace or in
the user's cache.

  $ mkdir -p $TMP_DIR/bad && echo hello > $TMP_DIR/bad/notes.txt && XDG_CACHE_HOME=$TMP_DIR/bad-xdg causeway graph $TMP_DIR/bad/notes.txt 2>/dev/null; ls -A $TMP_DIR/bad
  notes.txt
  $ mkdir -p $TMP_DIR/bad2 && echo hello > $TMP_DIR/bad2/notes.txt && chmod 0777 $TMP_DIR/bad2 && XDG_CACHE_HOME=$TMP_DIR/bad-xdg causeway graph $TMP_DIR/bad2/notes.txt 2>/dev/null; ls -A $TMP_DIR/bad-xdg/causeway 2>/dev/null | wc -l
  0

A trace whose folder cannot hold the cache folder keeps it under $XDG_CACHE_HOME/causeway.

  $ mkdir -p $TMP_DIR/ro && cp examples/server-loop.trace $TMP_DIR/ro/r.trace && touch $TMP_DIR/ro/r.trace.cwcache && XDG_CACHE_HOME=$TMP_DIR/xdg CAUSEWAY_CACHE=verbose causeway graph $TMP_DIR/ro/r.trace 2>&1 >/dev/null | sed "s|$TMP_DIR/||; s|graph-[0-9a-f]*|graph-KEY|; s|causeway/[0-9a-f]*/|causeway/HASH/|"
  causeway: cache: graph saved to xdg/causeway/HASH/graph-KEY.cwg

The user's cache folder as `causeway cache size` shows it: its total, entries and cap,
and each trace folder in it (here the one above: its graph and base entries); with a
trace, that trace's folders too (none beside it: the name is a file's).

  $ XDG_CACHE_HOME=$TMP_DIR/xdg causeway cache size | sed "s|$TMP_DIR/||"
  xdg/causeway: [0-9.]+ KiB, 3 entries in 1 trace folder \(cap 4.0 GiB\) (re)
    [0-9a-f]{16} +[0-9.]+ KiB +3 entries  last used [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2} UTC (re)
  $ XDG_CACHE_HOME=$TMP_DIR/xdg CAUSEWAY_CACHE_MAX=1G causeway cache size --json $TMP_DIR/ro/r.trace | jq -c '[.schema_version, .cap_bytes, .entries, (.traces | length), .traces[0].entries, .bytes == .traces[0].bytes, .trace.beside, .trace.user.entries]'
  [1,1073741824,3,1,3,true,null,3]
  $ XDG_CACHE_HOME=$TMP_DIR/xdg CAUSEWAY_CACHE_MAX=lots causeway cache size 2>&1 >/dev/null
  causeway: CAUSEWAY_CACHE_MAX=lots is not a size (bytes, or a number with K, M, G or T); the cap is the default, 4.0 GiB

A trace's hang entries are capped: 30 `--min-hang` values leave 16, the least recently
used gone.

  $ for i in $(seq 1 30); do XDG_CACHE_HOME=$TMP_DIR/xdg causeway debug $TMP_DIR/ro/r.trace --auto --min-hang 0.0$i >/dev/null 2>&1; done; ls $TMP_DIR/xdg/causeway/*/ | grep -c '\.cwh$'
  16

The user's cache folder is capped as a whole (CAUSEWAY_CACHE_MAX): three traces' graphs
under a cap that holds two, the least recently used trace's entries go, and its folder.

  $ mkdir -p $TMP_DIR/many && for i in 1 2 3; do cp examples/server-loop.trace $TMP_DIR/many/m$i.trace; touch $TMP_DIR/many/m$i.trace.cwcache; done
  $ XDG_CACHE_HOME=$TMP_DIR/capped causeway graph $TMP_DIR/many/m1.trace >/dev/null && XDG_CACHE_HOME=$TMP_DIR/capped causeway cache size --json | jq '.bytes' > $TMP_DIR/one && echo $(( $(cat $TMP_DIR/one) * 2 )) > $TMP_DIR/cap
  $ for i in 2 3; do sleep 0.1; XDG_CACHE_HOME=$TMP_DIR/capped CAUSEWAY_CACHE_MAX=$(cat $TMP_DIR/cap) causeway graph $TMP_DIR/many/m$i.trace >/dev/null; done; XDG_CACHE_HOME=$TMP_DIR/capped causeway cache size --json | jq -c '[.bytes <= '$(cat $TMP_DIR/cap)', (.traces | length)]'; for i in 1 2 3; do XDG_CACHE_HOME=$TMP_DIR/capped causeway cache size --json $TMP_DIR/many/m$i.trace | jq -c '.trace.user.entries'; done
  [true,2]
  null
  3
  3

`causeway cache clean` removes entries by age (--older DAYS) or all (--all), and only the
cache's own files: a file of another name in a trace folder stays, and so does the folder.

  $ XDG_CACHE_HOME=$TMP_DIR/xdg causeway cache clean
  causeway cache clean: say which entries: --all, or --older DAYS
  [1]
  $ XDG_CACHE_HOME=$TMP_DIR/xdg causeway cache clean --older 1
  removed 0 entries, 0 B
  $ touch -d '3 days ago' $TMP_DIR/xdg/causeway/*/graph-*.cwg && XDG_CACHE_HOME=$TMP_DIR/xdg causeway cache clean --older 2 | sed "s|$TMP_DIR/||; s|causeway/[0-9a-f]*|causeway/HASH|; s|, [0-9.]* [KMG]*i*B$|, SIZE|"
  xdg/causeway/HASH: removed 1 entry, SIZE
  removed 1 entry, SIZE
  $ for d in $TMP_DIR/xdg/causeway/*/; do touch $d/notes; done; XDG_CACHE_HOME=$TMP_DIR/xdg causeway cache clean --all | sed "s|$TMP_DIR/||; s|causeway/[0-9a-f]*|causeway/HASH|; s|, [0-9.]* [KMG]*i*B$|, SIZE|"
  xdg/causeway/HASH: removed 18 entries, SIZE
  removed 18 entries, SIZE
  $ ls $TMP_DIR/xdg/causeway/*/; XDG_CACHE_HOME=$TMP_DIR/xdg causeway cache size | head -1 | sed "s|$TMP_DIR/||"
  notes
  xdg/causeway: 0 B, 0 entries in 1 trace folder (cap 4.0 GiB)

With a trace, its folder beside it is cleaned too.

  $ ls $TMP_DIR/t.trace.cwcache | wc -l; XDG_CACHE_HOME=$TMP_DIR/xdg causeway cache clean --all $TMP_DIR/t.trace | sed "s|$TMP_DIR/||; s|, [0-9.]* [KMG]*i*B$|, SIZE|"; ls $TMP_DIR/t.trace.cwcache | wc -l
  5
  t.trace.cwcache: removed 5 entries, SIZE
  removed 5 entries, SIZE
  0

Where a run's time goes: with CAUSEWAY_TIMINGS set, each message, each long work's start,
phases and end is one line on stderr with the seconds since the start and the process's
memory (resident MiB, the part no file backs, the peak so far; the cache's notes are said
among them). The report on stdout is the same.

  $ cp examples/server-loop.trace $TMP_DIR/timed.trace && causeway debug $TMP_DIR/timed.trace --auto --min-hang 0 --no-cache > $TMP_DIR/untimed.out 2>/dev/null
  $ CAUSEWAY_TIMINGS=1 causeway debug $TMP_DIR/timed.trace --auto --min-hang 0 2>$TMP_DIR/timed.err | cmp - $TMP_DIR/untimed.out && echo "same report"
  same report
  $ sed -E "s|$TMP_DIR/||g; s/^causeway: timing: +[0-9]+\.[0-9]{3} s +[0-9]+ MiB \( *[0-9]+ anon, peak +[0-9]+\)  /T  /" $TMP_DIR/timed.err | grep -E '^T  (timed.trace|building graph|diagnosing)' | sort -u
  T  building graph: begins
  T  building graph: done
  T  building graph: edges
  T  building graph: events
  T  building graph: graph
  T  building graph: links
  T  building graph: peers
  T  building graph: segments
  T  diagnosing: begins
  T  diagnosing: done
  T  diagnosing: finding the hang
  T  diagnosing: search
  T  timed.trace: begins
  T  timed.trace: done
  T  timed.trace: reading
  $ grep -vc '^causeway: timing: ' $TMP_DIR/timed.err
  0
  [1]

Memory the graph fills: where the machine gives transparent huge pages on request, a
command that builds a graph starts itself again with glibc's huge-page malloc (docs/cache.md,
"Memory the graph fills"), and says so among its timings; CAUSEWAY_NO_HUGE_PAGES=1 keeps it
as it is. The report is the same either way.

  $ want=$(grep -qs '\[madvise\]' /sys/kernel/mm/transparent_hugepage/enabled && echo 1 || echo 0); got=$(CAUSEWAY_TIMINGS=1 causeway debug $TMP_DIR/timed.trace --auto --min-hang 0 --no-cache 2>&1 >$TMP_DIR/huge.out | grep -c 'memory: .*huge pages'); [ "$got" = "$want" ] && echo "as the machine gives them"; cmp $TMP_DIR/huge.out $TMP_DIR/untimed.out && echo "same report"
  as the machine gives them
  same report
  $ CAUSEWAY_NO_HUGE_PAGES=1 CAUSEWAY_TIMINGS=1 causeway debug $TMP_DIR/timed.trace --auto --min-hang 0 --no-cache 2>&1 >/dev/null | grep -c 'huge pages'
  0
  [1]
