A text trace converts to the binary form and back without losing anything.

  $ causeway convert examples/server-loop.trace -o $TMP_DIR/demo.cwt 2>&1 | sed "s|$TMP_DIR/||"
  42 events written to demo.cwt (binary form)

  $ stat -c %a $TMP_DIR/demo.cwt
  600

  $ causeway convert $TMP_DIR/demo.cwt -o $TMP_DIR/back.trace 2>&1 | sed "s|$TMP_DIR/||"
  42 events written to back.trace (text form)

  $ causeway graph $TMP_DIR/back.trace --json > $TMP_DIR/a.json && causeway graph examples/server-loop.trace --json > $TMP_DIR/b.json && cmp $TMP_DIR/a.json $TMP_DIR/b.json && echo same graph
  same graph
