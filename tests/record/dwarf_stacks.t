User stacks unwound with CFI (`record --call-graph dwarf`) and cpu-clock samples (`record
--sample HZ`) of a program built without frame pointers (docs/latency.md). Needs root.

cw-prog-deepchain's main() calls outer_level(), which calls middle_level(), which calls
inner_level(), which computes and sleeps 0.1 ms every 2^20 rounds (tests/programs/
deepchain.c, -O2 -fomit-frame-pointer). The ground truth: nearly all of its time is in
inner_level under that chain.

A machine that will not open cpu-clock perf events records without samples and says so:
the test is skipped then (exit 77), not passed.

  $ causeway record -o $TMP_DIR/dwarf.cwt --call-graph dwarf --sample 999 -- cw-prog-deepchain 2>$TMP_DIR/dwarf.err
  > if grep -q 'no cpu-clock samples' $TMP_DIR/dwarf.err; then echo "skip: $(grep -m1 'no cpu-clock' $TMP_DIR/dwarf.err)"; exit 77; fi
  > grep -o 'dwarf.cwt: [0-9]* events, [0-9]* cpu-clock samples' $TMP_DIR/dwarf.err | sed 's/[0-9][0-9]*/N/g'
  dwarf.cwt: N events, N cpu-clock samples

With dwarf stacks the context where the samples found the program computing is the whole
chain, from the C library's start through main to inner_level (`$`: the context ends
there); its sleeps are under inner_level too (`;`: deeper contexts).

  $ causeway latency $TMP_DIR/dwarf.cwt --comm cw-prog-deepcha --folded 2>/dev/null |
  >   grep -o ';__libc_start_call_main;main;outer_level;middle_level;inner_level[; ]' | sort -u | tr ' ' '$'
  ;__libc_start_call_main;main;outer_level;middle_level;inner_level$
  ;__libc_start_call_main;main;outer_level;middle_level;inner_level;

Nearly every sample's stack reaches the start: of the folded contexts that end in
inner_level, those through main hold at least 90 % of the time.

  $ causeway latency $TMP_DIR/dwarf.cwt --comm cw-prog-deepcha --folded 2>/dev/null | awk '
  >   $1 ~ /;inner_level$/ { all += $2; if ($1 ~ /;main;outer_level;middle_level;inner_level$/) deep += $2 }
  >   END { print (all > 0 && deep >= 0.9 * all) ? "deep" : "shallow " deep "/" all }'
  deep

Frame pointers, on the same program: the walk stops a frame or two above the sample, so
the chain never shows, and the stacks are shallower.

  $ causeway record -o $TMP_DIR/fp.cwt --call-graph fp --sample 999 -- cw-prog-deepchain 2>/dev/null
  $ causeway latency $TMP_DIR/fp.cwt --comm cw-prog-deepcha --folded 2>/dev/null | grep -c 'main;outer_level;middle_level;inner_level'
  0
  [1]
  $ depth() { causeway latency $1 --comm cw-prog-deepcha --folded 2>/dev/null | awk '{ n = split($1, f, ";"); d += n * $2; t += $2 } END { printf "%d\n", 10 * d / t }'; }
  > fp=$(depth $TMP_DIR/fp.cwt); dwarf=$(depth $TMP_DIR/dwarf.cwt); [ $dwarf -gt $fp ] && echo "dwarf deeper" || echo "fp $fp dwarf $dwarf"
  dwarf deeper

A blocking syscall's stack is unwound too (`--stacks blocking`, the default): the sleep in
inner_level shows under the chain without samples.

  $ causeway record -o $TMP_DIR/nosample.cwt --call-graph dwarf -- cw-prog-deepchain 100000000 2>/dev/null
  $ causeway latency $TMP_DIR/nosample.cwt --comm cw-prog-deepcha --folded 2>/dev/null | grep -c 'main;outer_level;middle_level;inner_level' | awk '{ print ($1 > 0) ? "found" : "missing" }'
  found

The options work beside `--pid` (the command joins the recorded processes), and only
the recorded processes are sampled. (A thread renamed by its exec is declared again by an
`update thread` record: its last name is the one counted.)

  $ sleep 60 & idle=$!
  > causeway record -o $TMP_DIR/pid.cwt --pid $idle --call-graph dwarf --sample 999 -- cw-prog-deepchain 100000000 2>&1 | grep -o 'cpu-clock samples'
  > kill $idle
  > causeway convert $TMP_DIR/pid.cwt -o $TMP_DIR/pid.txt >/dev/null 2>&1
  > awk 'FNR == NR { sub(/^update /, ""); if ($1 == "thread") for (i = 3; i <= NF; i++) if ($i ~ /^comm=/) name[$2] = substr($i, 6); next }
  >      $3 == "sample" { n[name[$2]]++ } END { for (c in n) print c }' $TMP_DIR/pid.txt $TMP_DIR/pid.txt
  cpu-clock samples
  cw-prog-deepcha

The stack copy's size is checked.

  $ causeway record -o $TMP_DIR/x.cwt --call-graph dwarf,65536 -- true
  causeway: --call-graph dwarf,65536: the stack copy must be 8 to 32768 bytes, a multiple of 8 (e.g. dwarf,16384 or dwarf,16K), not '65536'
  [1]
  $ causeway record -o $TMP_DIR/x.cwt --call-graph lbr -- true
  causeway: --call-graph lbr: expected fp, dwarf or dwarf,BYTES
  [1]
