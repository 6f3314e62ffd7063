A recording of one command's processes (`--pid`): a process stops being recorded when its
last thread exits (a later process given its pid is not one of ours), yet that thread's
final switch off its CPU comes after. It is still recorded: otherwise the thread would
seem to stay on its CPU, running, until a recorded thread next took that CPU (a child
that exited at once looked busy for 800 ms), and the switch would count as lost.

  $ for i in 1 2 3 4 5; do causeway record --pid $$ -o $TMP_DIR/p$i.cwt -- sh -c '/bin/true; /bin/true; sleep 0.2' >/dev/null 2>&1; causeway graph $TMP_DIR/p$i.cwt --json 2>/dev/null | jq '.trace.losses.switches_unreported'; done | sort | uniq -c | sed -E 's/^ +//'
  5 0
  $ causeway convert $TMP_DIR/p1.cwt -o $TMP_DIR/p1.txt --to text >/dev/null 2>&1; grep -c 'switch_out.*state=X' $TMP_DIR/p1.txt
  4
