Held waits (`record --calls scheduler --min-wait DURATION`): beyond its budget of waits
written in full (`--wait-budget`, 50 a second by default), a thread that blocks is written
only once its wait has lasted DURATION, stamped when it began; shorter waits leave out their
switches and wake-ups and are counted in short_waits events (docs/recording.md).

cw-prog-chain, with no budget: the client writes to the server and blocks in read for 300
ms, while the server asks the timekeeper, whose timerfd runs 300 ms. Those waits are held,
then written once they have lasted, with their calls and the wake-ups that end them, and the
diagnosis walks them as with every wait.

  $ causeway record --calls scheduler --min-wait 1ms --wait-budget 0 -o $TMP_DIR/chain.cwt -- cw-prog-chain 2>/dev/null
  $ causeway convert $TMP_DIR/chain.cwt -o $TMP_DIR/chain.txt >/dev/null 2>&1
  $ client=$(grep -oE "^(update )?process [0-9]+ comm=cw-client" $TMP_DIR/chain.txt | head -1 | grep -oE "[0-9]+"); grep -E " $client (syscall_enter|switch_out)" $TMP_DIR/chain.txt | sed -E 's/^[0-9]+ [0-9]+ //; s/cpu=[0-9]+ //; s/(fd|resource)=[0-9a-fx]+/\1=N/g' | grep -B1 "^switch_out state=S" | grep -c "^syscall_enter name=read fd=N resource=N count=8"
  1
  $ causeway debug $TMP_DIR/chain.cwt --auto --min-hang 0.1 --no-cache 2>/dev/null | grep '^root cause' | sed -E 's/[0-9]+/N/g'
  root cause: process cw-timekeeper N, thread cw-timekeeper N

cw-prog-irqpoll: cw-napper sleeps 50 µs at a time, 300 ms long. With no budget none of its
sleeps shorter than 1 ms is written (one the busy CPU makes last longer is, as it should be:
every wait it writes lasted 1 ms or more); they are counted, about 1/60 µs of them (each
sleep and its wake-up take longer than 50 µs), and their time is most of the napper's.

  $ causeway record --calls scheduler --min-wait 1ms --wait-budget 0 -o $TMP_DIR/irqpoll.cwt -- cw-prog-irqpoll 300 2>/dev/null
  $ causeway convert $TMP_DIR/irqpoll.cwt -o $TMP_DIR/irqpoll.txt >/dev/null 2>&1
  $ napper=$(grep -oE "thread [0-9]+ pid=[0-9]+ comm=cw-napper" $TMP_DIR/irqpoll.txt | head -1 | cut -d' ' -f2); awk -v t=$napper '$2 == t && $3 == "switch_out" && $0 ~ /state=S/ { out = $1 } $2 == t && $3 == "switch_in" && out { if ($1 - out < 1000000) print "a wait of", $1 - out, "ns written"; out = 0 }' $TMP_DIR/irqpoll.txt
  $ napper=$(grep -oE "thread [0-9]+ pid=[0-9]+ comm=cw-napper" $TMP_DIR/irqpoll.txt | head -1 | cut -d' ' -f2); grep -E " $napper short_waits" $TMP_DIR/irqpoll.txt | grep -oE "(count|total_ns|preempted|runnable_ns)=[0-9]+" | awk -F= '{ s[$1] += $2 } END { n = s["count"] - s["preempted"]; t = s["total_ns"] - s["runnable_ns"]; print (n > 1000 && n < 6000 ? "count ok" : "count " n), (t > 150000000 && t < 300000000 ? "time ok" : "time " t) }'
  count ok time ok

Every sleep is counted or written, the last ones too: the napper's short waits counted
when it exits are written then, not lost with it (nor, before a wake-up it raises, read as
time it ran). A nap preempted before it blocks, whose timer fires meanwhile, never sleeps:
up to 5 of its naps may leave no wait (the last 10 ms of them, 29 to 65, went uncounted
before).

  $ causeway record --calls scheduler --min-wait 1ms --wait-budget 0 -o $TMP_DIR/naps.cwt -- cw-prog-irqpoll -v 300 2>/dev/null > $TMP_DIR/naps.out
  $ causeway convert $TMP_DIR/naps.cwt -o $TMP_DIR/naps.txt >/dev/null 2>&1
  $ napper=$(grep -oE "thread [0-9]+ pid=[0-9]+ comm=cw-napper" $TMP_DIR/naps.txt | head -1 | cut -d' ' -f2); naps=$(grep -oE "napped [0-9]+" $TMP_DIR/naps.out | cut -d' ' -f2); awk -v t=$napper -v naps=$naps '$2 == t && $3 == "short_waits" { for (i = 4; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "count") n += kv[2]; if (kv[1] == "preempted") n -= kv[2] } } $2 == t && $3 == "switch_out" && / state=S/ { n++ } END { print (n <= naps && naps - n <= 5 && n > 1000 ? "every sleep: ok" : n " of " naps " sleeps") }' $TMP_DIR/naps.txt
  every sleep: ok

Preemptions are held the same way: each time cw-napper wakes it takes CPU 0 from cw-poller
for a few microseconds, and cw-poller, still runnable, gets it back. None of those
preemptions shorter than 1 ms is written (a switch_out in state R); they are counted in
cw-poller's short waits, as preempted and their time as runnable, hundreds of them.

  $ poller=$(grep -oE "thread [0-9]+ pid=[0-9]+ comm=cw-poller" $TMP_DIR/irqpoll.txt | head -1 | cut -d' ' -f2); awk -v t=$poller '$2 == t && $3 == "switch_out" && $0 ~ /state=R/ { out = $1 } $2 == t && $3 == "switch_in" && out { if ($1 - out < 1000000) print "a preemption of", $1 - out, "ns written"; out = 0 }' $TMP_DIR/irqpoll.txt
  $ poller=$(grep -oE "thread [0-9]+ pid=[0-9]+ comm=cw-poller" $TMP_DIR/irqpoll.txt | head -1 | cut -d' ' -f2); grep -E " $poller short_waits" $TMP_DIR/irqpoll.txt | grep -oE "(preempted|runnable_ns)=[0-9]+" | awk -F= '{ s[$1] += $2 } END { print (s["preempted"] > 300 ? "preempted ok" : "preempted " s["preempted"]), (s["runnable_ns"] > 0 && s["runnable_ns"] < 300000000 ? "runnable ok" : "runnable " s["runnable_ns"]) }'
  preempted ok runnable ok

With the default budget the first 50 sleeps, and one every 20 ms after them, are written
in full: 50 to 75 of them in 300 ms (`causeway record` runs the command as it starts).

  $ causeway record --calls scheduler --min-wait 1ms -o $TMP_DIR/budget.cwt -- cw-prog-irqpoll 300 2>/dev/null
  $ causeway convert $TMP_DIR/budget.cwt -o $TMP_DIR/budget.txt >/dev/null 2>&1
  $ napper=$(grep -oE "thread [0-9]+ pid=[0-9]+ comm=cw-napper" $TMP_DIR/budget.txt | head -1 | cut -d' ' -f2); grep -cE " $napper syscall_enter( cpu=[0-9]+)? name=clock_nanosleep" $TMP_DIR/budget.txt | awk '{ print ($1 >= 50 && $1 <= 75 ? "in full: ok" : "in full: " $1) }'
  in full: ok

`--wait-burst` bounds how many of them come at once, apart from the rate: with 10 a second
and bursts of 20, the first 20 and one every 100 ms after them, 20 to 25 in 300 ms; with
bursts of 5, 5 to 10.

  $ for burst in 20 5; do causeway record --calls scheduler --min-wait 1ms --wait-budget 10 --wait-burst $burst -o $TMP_DIR/burst.cwt -- cw-prog-irqpoll 300 2>/dev/null; causeway convert $TMP_DIR/burst.cwt -o $TMP_DIR/burst.txt >/dev/null 2>&1; napper=$(grep -oE "thread [0-9]+ pid=[0-9]+ comm=cw-napper" $TMP_DIR/burst.txt | head -1 | cut -d' ' -f2); grep -cE " $napper syscall_enter( cpu=[0-9]+)? name=clock_nanosleep" $TMP_DIR/burst.txt | awk -v b=$burst '{ print "bursts of " b ": " ($1 >= b && $1 <= b + 5 ? "ok" : $1) }'; done
  bursts of 20: ok
  bursts of 5: ok

A hang still in progress when the recording stops: cw-mutexwait blocks on a mutex
cw-owner holds. Its wait is still held at the end; the recorder's last pass over the
tasks writes it, and the diagnosis finds the owner.

  $ causeway record --calls scheduler --min-wait 1ms --wait-budget 0 --duration 1 -o $TMP_DIR/mutex.cwt -- cw-prog-mutexhold 2>/dev/null
  $ causeway debug $TMP_DIR/mutex.cwt --hang cw-mutexwait --min-hang 0.5 --auto --json 2>/dev/null > $TMP_DIR/mutex.json
  $ jq -c '[.hang.comm, .hang.kind], [.path[] | .comm]' $TMP_DIR/mutex.json
  ["cw-mutexwait","LongWait"]
  ["cw-owner","cw-mutexwait"]

Mistakes are said:

  $ causeway record --min-wait 1ms -o $TMP_DIR/x.cwt -- true
  causeway: --min-wait needs --calls scheduler: with the syscall programs every call's entry and exit is seen anyway
  [1]
  $ causeway record --calls scheduler --min-wait 1h -o $TMP_DIR/x.cwt -- true
  causeway: --min-wait 1h: expected a duration such as 500us, 1ms or 20ms
  [1]
  $ causeway record --calls scheduler --min-wait 1s -o $TMP_DIR/x.cwt -- true
  causeway: --min-wait 1s: at most 100 ms
  [1]
  $ causeway record --wait-burst 5 -o $TMP_DIR/x.cwt -- true
  causeway: --wait-burst needs --min-wait: without it every wait is written
  [1]
  $ causeway record --calls scheduler --min-wait 1ms --wait-budget 0 --wait-burst 5 -o $TMP_DIR/x.cwt -- true
  causeway: --wait-burst with --wait-budget 0: no wait is written in full, so none can be at once
  [1]
  $ causeway record --calls scheduler --min-wait 1ms --wait-burst 0 -o $TMP_DIR/x.cwt -- true 2>&1 | head -1
  causeway record: --wait-burst: Value 0 not in range 1 to 1000000
