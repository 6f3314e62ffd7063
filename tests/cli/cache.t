The derived cache (docs/cache.md): a built graph is kept beside the trace, keyed by the
trace's content, the packs' content, the options and this causeway's build; a binary
trace's decoded events too, mapped back by the next run. A rule edit
loop: the cold run builds and saves; adding a rule misses and builds (the same output as
a run without the cache); changing it misses again; removing it finds the cold run's
entry, and the output is the cold one, byte for byte. A damaged entry is never trusted.

On a text trace (hashed whole), `graph --json --edges`:

  $ cp examples/server-loop.trace $TMP_DIR/s.trace && tests/cli/data/cache_edit_loop.sh $TMP_DIR/s $TMP_DIR/s.trace graph --json --edges
  cold: events read, graph built and saved; equals --no-cache: yes; equals cold: yes
  add: events read, graph cuts rebuilt and saved; equals --no-cache: yes; equals cold: no
  change: events read, graph cuts rebuilt and saved; equals --no-cache: yes; equals cold: no; equals add: no
  remove: events read, graph loaded; equals --no-cache: yes; equals cold: yes
  entries: 3
  truncated: events read, graph cuts rebuilt and saved \(entry not used: truncated \([0-9]+ payload bytes of [0-9]+\)\); equals --no-cache: yes; equals cold: yes (re)
  foreign: events read, graph built and saved (entry not used: truncated header); equals --no-cache: yes; equals cold: yes
  again: events read, graph loaded; equals --no-cache: yes; equals cold: yes
  off: files in the cache folder: 0; equals cold: yes

And `debug --json --auto` on the same edits:

  $ cp examples/server-loop.trace $TMP_DIR/d.trace && tests/cli/data/cache_edit_loop.sh $TMP_DIR/d $TMP_DIR/d.trace debug --json --auto
  cold: events read, graph built and saved, hang found, index made; equals --no-cache: yes; equals cold: yes
  add: events read, graph cuts rebuilt and saved, hang found, index made; equals --no-cache: yes; equals cold: (yes|no) (re)
  change: events read, graph cuts rebuilt and saved, hang found, index made; equals --no-cache: yes; equals cold: (yes|no); equals add: (yes|no) (re)
  remove: events read, graph loaded, hang cached, index made; equals --no-cache: yes; equals cold: yes
  entries: 3
  truncated: events read, graph cuts rebuilt and saved \(entry not used: truncated \([0-9]+ payload bytes of [0-9]+\)\), hang cached, index made; equals --no-cache: yes; equals cold: yes (re)
  foreign: events read, graph built and saved (entry not used: truncated header), hang cached, index made; equals --no-cache: yes; equals cold: yes
  again: events read, graph loaded, hang cached, index made; equals --no-cache: yes; equals cold: yes
  off: files in the cache folder: 0; equals cold: yes

On a synthetic binary trace (hashed by its chunk headers), both commands:

  $ $(dirname $(command -v causeway))/../bench/cw-gen-trace -o $TMP_DIR/g.cwt --events 30000 --seed 3 >/dev/null 2>&1 && tests/cli/data/cache_edit_loop.sh $TMP_DIR/g $TMP_DIR/g.cwt graph --json --edges
  cold: events read and saved, graph built and saved; equals --no-cache: yes; equals cold: yes
  add: events mapped, graph cuts rebuilt and saved; equals --no-cache: yes; equals cold: no
  change: events mapped, graph cuts rebuilt and saved; equals --no-cache: yes; equals cold: no; equals add: no
  remove: events mapped, graph loaded; equals --no-cache: yes; equals cold: yes
  entries: 3
  truncated: events mapped, graph cuts rebuilt and saved \(entry not used: truncated \([0-9]+ payload bytes of [0-9]+\)\); equals --no-cache: yes; equals cold: yes (re)
  foreign: events mapped, graph built and saved (entry not used: truncated header); equals --no-cache: yes; equals cold: yes
  again: events mapped, graph loaded; equals --no-cache: yes; equals cold: yes
  events-truncated: events read and saved, graph loaded; equals --no-cache: yes; equals cold: yes
  trace.cwa not used \(truncated \([0-9]+ payload bytes of [0-9]+\)\); reading the trace (re)
  events-again: events mapped, graph loaded; equals --no-cache: yes; equals cold: yes
  off: files in the cache folder: 0; equals cold: yes

  $ cp $TMP_DIR/g.cwt $TMP_DIR/h.cwt && tests/cli/data/cache_edit_loop.sh $TMP_DIR/h $TMP_DIR/h.cwt debug --json --auto
  cold: events read and saved, graph built and saved, hang found, index made and saved; equals --no-cache: yes; equals cold: yes
  add: events mapped, graph cuts rebuilt and saved, hang found, index mapped; equals --no-cache: yes; equals cold: (yes|no) (re)
  change: events mapped, graph cuts rebuilt and saved, hang found, index mapped; equals --no-cache: yes; equals cold: (yes|no); equals add: (yes|no) (re)
  remove: events mapped, graph loaded, hang cached, index mapped; equals --no-cache: yes; equals cold: yes
  entries: 3
  truncated: events mapped, graph cuts rebuilt and saved \(entry not used: truncated \([0-9]+ payload bytes of [0-9]+\)\), hang cached, index mapped; equals --no-cache: yes; equals cold: yes (re)
  foreign: events mapped, graph built and saved (entry not used: truncated header), hang cached, index mapped; equals --no-cache: yes; equals cold: yes
  again: events mapped, graph loaded, hang cached, index mapped; equals --no-cache: yes; equals cold: yes
  events-truncated: events read and saved, graph loaded, hang cached, index mapped; equals --no-cache: yes; equals cold: yes
  trace.cwa not used \(truncated \([0-9]+ payload bytes of [0-9]+\)\); reading the trace (re)
  events-again: events mapped, graph loaded, hang cached, index mapped; equals --no-cache: yes; equals cold: yes
  index-truncated: events mapped, graph loaded, hang cached, index made and saved; equals --no-cache: yes; equals cold: yes
  threads.cwa not used \(truncated \([0-9]+ payload bytes of [0-9]+\)\); indexing the trace (re)
  hang-damaged: events mapped, graph loaded, hang found, index mapped; equals --no-cache: yes; equals cold: yes
  hang entry not used (truncated header)
  off: files in the cache folder: 0; equals cold: yes

The cache folder is beside the trace. A changed trace is another key: the same packs miss.

  $ cp examples/server-loop.trace $TMP_DIR/t.trace && CAUSEWAY_CACHE=verbose causeway graph $TMP_DIR/t.trace 2>&1 >/dev/null | sed "s|$TMP_DIR/||; s|graph-[0-9a-f]*|graph-KEY|"
  causeway: cache: graph saved to t.trace.cwcache/graph-KEY.cwg
  $ CAUSEWAY_CACHE=verbose causeway graph $TMP_DIR/t.trace 2>&1 >/dev/null | sed "s|$TMP_DIR/||; s|graph-[0-9a-f]*|graph-KEY|"
  causeway: cache: graph loaded from t.trace.cwcache/graph-KEY.cwg
  $ sed -i 's/^2.2ms  11 switch_in/2.25ms 11 switch_in/' $TMP_DIR/t.trace && CAUSEWAY_CACHE=verbose causeway graph $TMP_DIR/t.trace 2>&1 >/dev/null | sed "s|$TMP_DIR/||; s|graph-[0-9a-f]*|graph-KEY|"
  causeway: cache: graph saved to t.trace.cwcache/graph-KEY.cwg

A trace whose folder cannot hold the cache folder keeps it under $XDG_CACHE_HOME/causeway.

  $ mkdir -p $TMP_DIR/ro && cp examples/server-loop.trace $TMP_DIR/ro/r.trace && touch $TMP_DIR/ro/r.trace.cwcache && XDG_CACHE_HOME=$TMP_DIR/xdg CAUSEWAY_CACHE=verbose causeway graph $TMP_DIR/ro/r.trace 2>&1 >/dev/null | sed "s|$TMP_DIR/||; s|graph-[0-9a-f]*|graph-KEY|; s|causeway/[0-9a-f]*/|causeway/HASH/|"
  causeway: cache: graph saved to xdg/causeway/HASH/graph-KEY.cwg
