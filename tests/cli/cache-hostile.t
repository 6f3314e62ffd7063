The derived cache against another user (docs/cache.md, "What is trusted, and why"): root
runs causeway on a trace in a folder that a second user, cwtest2, can write. She could
swap TRACE.cwcache for a link to a folder of hers at any moment, so root never keeps its
entries there: they go to root's own cache folder, and a TRACE.cwcache she planted as a
link is never written through, nor are the entries she put behind it loaded.

Needs root and a second local user (made here when missing); skipped otherwise.

  $ [ "$(id -u)" = 0 ] || { echo "skip: needs root to act as two users"; exit 77; }
  $ id -u cwtest2 >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin cwtest2 || { echo "skip: cannot add the user cwtest2"; exit 77; }

A folder both can write (as /tmp: mode 1777), reachable by her, with a trace of root's in it.

  $ chmod 711 $TMP_DIR && mkdir -m 1777 $TMP_DIR/shared && cp examples/server-loop.trace $TMP_DIR/shared/t.trace && mkdir -m 700 $TMP_DIR/safe && cp examples/server-loop.trace $TMP_DIR/safe/t.trace

Root's runs there use root's cache folder, not TRACE.cwcache beside the trace, and load
from it the next time.

  $ XDG_CACHE_HOME=$TMP_DIR/root-cache CAUSEWAY_CACHE=verbose causeway graph $TMP_DIR/shared/t.trace 2>&1 >/dev/null | sed "s|$TMP_DIR/||; s|graph-[0-9a-f]*|graph-KEY|; s|causeway/[0-9a-f]\{16\}/|causeway/HASH/|"
  causeway: cache: graph saved to root-cache/causeway/HASH/graph-KEY.cwg
  $ XDG_CACHE_HOME=$TMP_DIR/root-cache CAUSEWAY_CACHE=verbose causeway graph $TMP_DIR/shared/t.trace 2>&1 >/dev/null | sed "s|$TMP_DIR/||; s|graph-[0-9a-f]*|graph-KEY|; s|causeway/[0-9a-f]\{16\}/|causeway/HASH/|"
  causeway: cache: graph loaded from root-cache/causeway/HASH/graph-KEY.cwg
  $ ls -A $TMP_DIR/shared
  t.trace

She plants TRACE.cwcache as a link to a folder of hers holding entries that would load
for this trace (the entries root's own run makes on the same content elsewhere, copied:
the same keys) and an old temporary file of her own.

  $ XDG_CACHE_HOME=$TMP_DIR/unused CAUSEWAY_CACHE=verbose causeway debug $TMP_DIR/safe/t.trace --auto >/dev/null 2>&1; ls $TMP_DIR/safe/t.trace.cwcache | sed 's/[0-9a-f]\{16\}/KEY/g'
  base-KEY.cwb
  graph-KEY.cwg
  hang-KEY-KEY.cwh
  matches.cwm
  $ setpriv --reuid=cwtest2 --regid=cwtest2 --clear-groups mkdir -m 700 $TMP_DIR/shared/hers && cp $TMP_DIR/safe/t.trace.cwcache/* $TMP_DIR/shared/hers/ && touch -d '3 days ago' $TMP_DIR/shared/hers/trace.cwa.tmp-1-1 && chown -R cwtest2:cwtest2 $TMP_DIR/shared/hers && setpriv --reuid=cwtest2 --regid=cwtest2 --clear-groups ln -s hers $TMP_DIR/shared/t.trace.cwcache && (cd $TMP_DIR/shared/hers && find . -printf "%p %s %T@ %u\n" | sort | sha256sum) > $TMP_DIR/hers.before; ls $TMP_DIR/shared/hers | wc -l
  5

Root's graph, debug and hangs runs on the trace: nothing loaded from her folder, nothing
written to it or removed from it; the same output as without the cache.

  $ for c in "graph" "debug --auto" "hangs"; do XDG_CACHE_HOME=$TMP_DIR/root-cache CAUSEWAY_CACHE=verbose causeway $c $TMP_DIR/shared/t.trace >$TMP_DIR/out 2>$TMP_DIR/err; causeway $c $TMP_DIR/shared/t.trace --no-cache >$TMP_DIR/fresh 2>/dev/null; echo "$c: same as --no-cache: $(cmp -s $TMP_DIR/out $TMP_DIR/fresh && echo yes || echo no); mentions her folder: $(grep -c -e hers -e t.trace.cwcache $TMP_DIR/err)"; done
  graph: same as --no-cache: yes; mentions her folder: 0
  debug --auto: same as --no-cache: yes; mentions her folder: 0
  hangs: same as --no-cache: yes; mentions her folder: 0
  $ (cd $TMP_DIR/shared/hers && find . -printf "%p %s %T@ %u\n" | sort | sha256sum) | cmp - $TMP_DIR/hers.before && readlink $TMP_DIR/shared/t.trace.cwcache
  hers
  $ grep -h "cache: " $TMP_DIR/err | sed "s|$TMP_DIR/||; s|[0-9a-f]\{16\}|KEY|g"
  causeway: cache: graph loaded from root-cache/causeway/KEY/graph-KEY.cwg

`causeway cache clean` with the trace: root's entries go; hers, behind the link, stay.

  $ XDG_CACHE_HOME=$TMP_DIR/root-cache causeway cache clean --all $TMP_DIR/shared/t.trace | sed "s|$TMP_DIR/||; s|[0-9a-f]\{16\}|HASH|; s|, [0-9.]* [KMG]*i*B$|, SIZE|"
  root-cache/causeway/HASH: removed 4 entries, SIZE
  removed 4 entries, SIZE
  $ (cd $TMP_DIR/shared/hers && find . -printf "%p %s %T@ %u\n" | sort | sha256sum) | cmp - $TMP_DIR/hers.before && echo unchanged
  unchanged

Root run with her environment (sudo -E: her HOME, no XDG_CACHE_HOME): nothing is made in
her home; root's cache goes under root's own home.

  $ mkdir -m 700 $TMP_DIR/her-home && chown cwtest2:cwtest2 $TMP_DIR/her-home && env -u XDG_CACHE_HOME HOME=$TMP_DIR/her-home CAUSEWAY_CACHE=verbose causeway graph $TMP_DIR/shared/t.trace 2>&1 >/dev/null | sed "s|$(getent passwd root | cut -d: -f6)|ROOT-HOME|; s|[0-9a-f]\{16\}|KEY|g"; ls -A $TMP_DIR/her-home | wc -l
  causeway: cache: graph saved to ROOT-HOME/.cache/causeway/KEY/graph-KEY.cwg
  0
  $ env -u XDG_CACHE_HOME HOME=$TMP_DIR/her-home causeway cache clean --all $TMP_DIR/shared/t.trace | tail -1 | sed "s|, [0-9.]* [KMG]*i*B$|, SIZE|"
  removed 3 entries, SIZE
