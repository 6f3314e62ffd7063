A timer armed by one thread and awaited by another, while two bystander processes keep
the CPUs busy: the timer's expiry runs in an interrupt on whatever thread a CPU was
running (often a bystander), and the recorder names the thread that armed the timer as
the wake-up's cause. The waiter's hang goes back to cw-armer, never to a bystander
(tests/programs/timerowner.c). A POSIX timer signalling one thread (SIGEV_THREAD_ID),
awaited in sigwaitinfo:

  $ causeway record -o $TMP_DIR/posix.cwt -- cw-prog-timerowner posix 2>/dev/null
  $ causeway debug $TMP_DIR/posix.cwt --hang cw-waiter --min-hang 0.5 --auto --json 2>/dev/null > $TMP_DIR/posix.json
  $ jq -c '[.hang.comm, .hang.kind]' $TMP_DIR/posix.json
  ["cw-waiter","LongWait"]
  $ jq -c '[([.root_causes[].comm] + [.path[].comm]) | index("cw-armer") != null, index("cw-bystander")]' $TMP_DIR/posix.json
  [true,null]

The wake-ups the expiry raised carry the armer as their cause, whichever thread they were
recorded on:

  $ causeway convert $TMP_DIR/posix.cwt --to text -o $TMP_DIR/posix.txt 2>/dev/null
  $ grep -E ' (wakeup|signal_send) (cpu=[0-9]+ )?target=[0-9]+ .*cause=[0-9]+' $TMP_DIR/posix.txt | grep -c . | awk '{print ($1 > 0)}'
  1

A timerfd armed by one thread and read by another:

  $ causeway record -o $TMP_DIR/timerfd.cwt -- cw-prog-timerowner timerfd 2>/dev/null
  $ causeway debug $TMP_DIR/timerfd.cwt --hang cw-waiter --min-hang 0.5 --auto --json 2>/dev/null > $TMP_DIR/timerfd.json
  $ jq -c '[.hang.comm, .hang.kind]' $TMP_DIR/timerfd.json
  ["cw-waiter","LongWait"]
  $ jq -c '[([.root_causes[].comm] + [.path[].comm]) | index("cw-armer") != null, index("cw-bystander")]' $TMP_DIR/timerfd.json
  [true,null]

The expiry's wake-up of the reader is a strong timer edge from cw-armer (`from_thread`
names it when the interrupt's event is on another thread):

  $ causeway graph $TMP_DIR/timerfd.cwt --json --edges 2>/dev/null | jq -c '[.edge_list[] | select(.rule == "linux.kernel/wakeup.timer" and .to.comm == "cw-waiter") | [.strength, .kind, (.from_thread.comm // .from.comm)]] | unique'
  [["strong","timer","cw-armer"]]
