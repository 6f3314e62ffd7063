A text trace converts to the binary form and back without losing anything.

  $ causeway convert examples/server-loop.trace -o $TMP_DIR/demo.cwt 2>&1 | sed "s|$TMP_DIR/||"
  42 events written to demo.cwt (binary form)

  $ stat -c %a $TMP_DIR/demo.cwt
  600

  $ causeway convert $TMP_DIR/demo.cwt -o $TMP_DIR/back.trace 2>&1 | sed "s|$TMP_DIR/||"
  42 events written to back.trace (text form)

  $ causeway graph $TMP_DIR/back.trace --json > $TMP_DIR/a.json && causeway graph examples/server-loop.trace --json > $TMP_DIR/b.json && cmp $TMP_DIR/a.json $TMP_DIR/b.json && echo same graph
  same graph

The binary form is zstd-compressed, its events packed first (trace format 3.0), unless `--compress none` asks for
format 1.2, which older causeway versions read; `zstd=LEVEL` picks the level. All read the
same.

  $ causeway convert examples/server-loop.trace --compress none -o $TMP_DIR/plain.cwt 2>/dev/null && od -An -tu4 -j8 -N8 $TMP_DIR/plain.cwt | tr -s ' '
   1 2
  $ od -An -tu4 -j8 -N8 $TMP_DIR/demo.cwt | tr -s ' '
   3 0
  $ causeway convert examples/server-loop.trace --compress zstd=19 -o $TMP_DIR/z19.cwt 2>/dev/null
  $ for f in plain z19; do causeway convert $TMP_DIR/$f.cwt --to text -o $TMP_DIR/$f.trace 2>/dev/null; cmp $TMP_DIR/$f.trace $TMP_DIR/back.trace && echo $f same; done
  plain same
  z19 same
  $ causeway convert examples/server-loop.trace --compress zstd=30 -o $TMP_DIR/x.cwt
  causeway convert: --compress: 'zstd=30': the zstd level is a whole number from 1 to 22
  run 'causeway convert --help' for the options
  [1]

Output files are never written through a symbolic link (as root in a shared folder that
would clobber any file): the link is refused, exit 2, and what it points to is unchanged.
The same holds for `graph --dot` and `record -o` (base/output_file.h).

  $ echo 'root:x:0:0' > $TMP_DIR/precious && ln -s $TMP_DIR/precious $TMP_DIR/link.cwt
  $ causeway convert examples/server-loop.trace -o $TMP_DIR/link.cwt 2>&1 | sed "s#$TMP_DIR#TMP#g"; echo "exit ${PIPESTATUS[0]}"
  causeway: TMP/link.cwt: refusing to write through a symbolic link (remove it, or write elsewhere)
  exit 2
  $ causeway convert examples/server-loop.trace --to text -o $TMP_DIR/link.cwt >/dev/null 2>&1; echo "exit $?"
  exit 2
  $ causeway graph examples/server-loop.trace --dot $TMP_DIR/link.cwt 2>&1 >/dev/null | sed "s#$TMP_DIR#TMP#g"
  causeway: TMP/link.cwt: refusing to write through a symbolic link (remove it, or write elsewhere)
  $ cat $TMP_DIR/precious; stat -c %a $TMP_DIR/precious
  root:x:0:0
  644

perf script output converts to the binary form by default, and to text: samples with their
stacks, outermost first, and the process perf's task events named.

  $ causeway convert tests/cli/data/hotspot.perf.txt -o $TMP_DIR/hotspot.cwt 2>&1 | sed "s#$TMP_DIR#TMP#g"
  21 events written to TMP/hotspot.cwt (binary form)
  $ causeway convert $TMP_DIR/hotspot.cwt -o $TMP_DIR/hotspot.trace 2>/dev/null && head -4 $TMP_DIR/hotspot.trace
  causeway-trace 1
  process 24483 comm=cw-prog-hotspot ppid=24482
  thread 24483 pid=24483 comm=cw-prog-hotspot
  13764941493000 24483 sample event=cpu-clock period=1001001 stack=__libc_start_call_main@0x2724a;main@0x16f6;fast_part@0x15bd
