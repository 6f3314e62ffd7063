A loop's wait that returns at once, with descriptors ready, is a turn of the loop as much
as one that blocked: the rules cut there (linux.kernel `loop.wait`) and a thread waiting
in select or poll is an event-loop thread from its first (docs/rules.md, `within loop`).
The recorder keeps such a call when it returns ready descriptors (a call that did nothing
worth a record is dropped, docs/recording.md). A Python script (its thread named after its
file) selects three times and polls three times on a pipe that holds a byte.

  $ printf '#!/usr/bin/python3\nimport os, select\nr, w = os.pipe()\nos.write(w, b"x")\nfor _ in range(3):\n    select.select([r], [], [])\np = select.poll()\np.register(r, select.POLLIN)\nfor _ in range(3):\n    p.poll()\n' > $TMP_DIR/cw-prog-select && chmod +x $TMP_DIR/cw-prog-select
  $ causeway record -o $TMP_DIR/ready.cwt -- $TMP_DIR/cw-prog-select 2>/dev/null
  $ causeway convert $TMP_DIR/ready.cwt -o $TMP_DIR/ready.txt --to text 2>/dev/null && tid=$(sed -n 's/^\(update \)\{0,1\}thread \([0-9]*\) .*comm=cw-prog-select.*/\2/p' $TMP_DIR/ready.txt | head -1) && for call in select poll; do echo "$call $(grep -cE "^[0-9]+ $tid syscall_enter .*name=p?$call(6)? " $TMP_DIR/ready.txt)"; done
  select 3
  poll 3
