`causeway flags suggest` on real programs (docs/flags.md): it samples a spinning thread's
program counters and user stack, finds the loop it spins in and prints the data its exit
conditions read as `flag` rules. Needs root (perf_event_open on another process).

cw-prog-spin's main thread (cw-spinner) polls the global `ready_flag` with sched_yield
until cw-setter stores it (here after 5 s). Without --tid the busiest thread is sampled.

  $ cw-prog-spin yield 5000 & echo $! > $TMP_DIR/yield.pid
  $ sleep 0.3; causeway flags suggest --pid $(cat $TMP_DIR/yield.pid) > $TMP_DIR/yield.cw 2> $TMP_DIR/yield.err; echo $?
  0
  $ sed -E 's/[0-9]+/N/g' $TMP_DIR/yield.err
  sampling thread N (cw-spinner) of process N for N s
  $ head -1 $TMP_DIR/yield.cw
  # cw-prog-spin: (main|spin)\(\) at 0x[0-9a-f]+ loops \([0-9]+% of [0-9]+ samples\); its exit reads ready_flag \(.*\) (re)
  $ grep -A4 '^flag ready_flag {' $TMP_DIR/yield.cw
  flag ready_flag {
    symbol "ready_flag"
    binary "cw-prog-spin"
    size 4
  }

The suggestions paste into a pack as they are.

  $ (printf 'pack test.suggested {\n  version "0.1.0"\n  engine ">= 0.1"\n  requires linux.kernel\n  description "What flags suggest printed"\n}\n\n'; cat $TMP_DIR/yield.cw) > $TMP_DIR/suggested.cw
  $ causeway rules check $TMP_DIR/suggested.cw 2>&1 | tail -1
  1 pack checked (test.suggested), 0 warnings
  $ kill $(cat $TMP_DIR/yield.pid)

Polling with 1 ms sleeps, the thread is mostly off the CPU and its samples are few and
deep in libc's sleep; the return addresses on its stack lead back to the loop. The
spinner is the main thread, so its tid is the pid. --json prints an object whose `suggestions` are best first.

  $ cw-prog-spin sleep 5000 & echo $! > $TMP_DIR/sleep.pid
  $ sleep 0.3; causeway flags suggest --pid $(cat $TMP_DIR/sleep.pid) --tid $(cat $TMP_DIR/sleep.pid) --json 2>/dev/null > $TMP_DIR/sleep.json; echo $?
  0
  $ jq -c '.suggestions[0] | [.resolved, .symbol, .binary, .size, .offset, .declaration]' $TMP_DIR/sleep.json
  [true,"ready_flag","cw-prog-spin",4,0,"flag ready_flag {\n  symbol \"ready_flag\"\n  binary \"cw-prog-spin\"\n  size 4\n}\n"]
  $ jq -c '.suggestions[0].loops[0] | [.binary, .samples > 0, (.reads | length) > 0]' $TMP_DIR/sleep.json
  ["cw-prog-spin",true,true]
  $ kill $(cat $TMP_DIR/sleep.pid)

What cannot be done is said, with exit status 1: no such process or thread, a thread
that never ran (blocked in one long wait), a thread whose loops read no named memory.

  $ causeway flags suggest --pid 1073741823
  causeway: flags suggest: no process 1073741823
  [1]
  $ causeway flags suggest --pid $$ --tid 1073741823 2>&1 | sed -E 's/process [0-9]+/process N/'
  causeway: flags suggest: no thread 1073741823 in process N
  $ sleep 3 & echo $! > $TMP_DIR/sleep3.pid
  $ causeway flags suggest --pid $(cat $TMP_DIR/sleep3.pid) --duration 0.2 2>&1 | sed -E 's/[0-9]+/N/g'
  sampling thread N (sleep) of process N for N.N s
  causeway: flags suggest: no sample of thread N (sleep) with user registers in N.N s (N lost): it did not run; a thread blocked in one long wait is not spinning
  $ kill $(cat $TMP_DIR/sleep3.pid)
  $ causeway flags suggest --pid 1 --duration 0
  causeway: flags suggest: --duration must be in (0, 600] seconds, got 0
  [1]
