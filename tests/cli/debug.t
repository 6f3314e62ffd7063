`causeway debug` finds the hang and walks the event graph back to its root cause
(docs/diagnosis.md). The fixture: a client asks a server's worker twice over a socket;
the second answer takes 800 ms of computing, so the client's second read waits.

Its help says how it is used, what it asks and what its exit status means (the options
themselves are checked against the completion by tests/install.sh):

  $ causeway debug --help | grep -E "^Usage|^Questions|^Exit status"
  Usage: causeway debug [OPTIONS] TRACE [OTHER...]
  Questions: at a terminal, type an option's number, Enter for the first (best), ? to explain, s to stop. See docs/diagnosis.md.
  Exit status: 0 done, 1 the input was wrong (bad trace, pack, --hang, answers file, or no such hang), 2 the environment cannot do it.

A bad symptom is an input error that says what is wrong.

  $ causeway debug examples/slow-server.trace --hang 811
  causeway: --hang: expected auto, TID@SECONDS or a thread name, got '811' (a thread id needs its time: 811@SECONDS)
  [1]

  $ causeway debug examples/slow-server.trace --hang client@1
  causeway: --hang: expected auto, TID@SECONDS or a thread name, got 'client@1' ('client' is not a thread id)
  [1]

  $ causeway debug examples/slow-server.trace --hang 811@soon
  causeway: --hang: expected auto, TID@SECONDS or a thread name, got '811@soon' ('soon' is not a number of seconds, like 1.5)
  [1]

A thread's name picks the longest stretch of the threads so named; a name no thread has
is an error.

  $ causeway debug examples/slow-server.trace --hang cw-srv-worker --auto 2>/dev/null | grep -A2 '^hang'
  hang: LongRunning of thread cw-srv-worker 813 (process cw-server 812)
    when: 0.009600 s to 0.819100 s (809.5 ms)
    found by: auto: longest stretch of 1 thread named cw-srv-worker (813: 0.809 s)
  $ causeway debug examples/slow-server.trace --hang cw-nobody
  causeway: no thread named 'cw-nobody' in the trace
  [1]

  $ causeway debug examples/slow-server.trace --hang 999@0.1
  causeway: no thread 999 in the trace (threads: 811 cw-client, 813 cw-srv-worker)
  [1]

Without a terminal every question takes the best-scored option, and the report says so.
The root cause comes first, then the hang, the causal path, the questions.

  $ causeway debug examples/slow-server.trace
  root cause: process cw-server 812, thread cw-srv-worker 813
    when: 0.009600 s to 0.819100 s (809.5 ms)
    kind: LongRunning (what the hang waited for)
    what: ran 799.9 ms on a CPU (0.0 ms runnable) with recvfrom ×1, sendto ×1; its work began with a message from cw-client 811 at 0.019000 s
    costliest functions (from its 5 stacks, as `causeway latency`): serve 799.9 ms, recvfrom 9.6 ms
    stack:
      recvfrom
      serve
      main
  
  hang: LongWait of thread cw-client 811 (process cw-client 811)
    when: 0.019100 s to 0.820000 s (800.9 ms)
    found by: auto: longest stretch of 1 main thread (cw-client 811: 0.801 s)
    blocked: 800.1 ms from 0.019100 s in read(fd: 3)
    stack:
      read
      ask
      main
  
  causal path, from the root cause to the hang:
      0.819000 s  cw-srv-worker 813     send(fd: 4<object 2>, offset: 64, len: 64, peer: 811)  --message, strong-->
      0.819200 s  cw-client 811         recv(fd: 3<object 2>, offset: 64, len: 64, peer: 812)  (the hang)
  
  questions: 1 asked
    1. [recurse] cw-srv-worker 813 (cw-server 812) ran 799.9 ms on a CPU (0.0 ms runnable) with recvfrom ×1, sendto ×1 (from 0.009600 s), while the hang lasted. Find out why it did, in turn?
       -> diagnose cw-srv-worker 813 (cw-server 812) (AUTOMATIC: the best-scored of 2 options, nobody was asked)
    1 of 1 choices were made automatically; answer them in a terminal, or with --answers FILE.
  
  recording lost: nothing

The same as JSON (docs/json.md): the hang, the root causes, the path, the questions; the trace's
start and every time also in seconds since it, as the text counts.

  $ causeway debug examples/slow-server.trace --hang 811@0.1 --json | jq -c '.hang, .root_causes[0], .path[], (.queries[] | {kind, options, chosen, source}), (keys)'
  {"comm":"cw-client","end_ns":821000000,"end_s":0.82,"kind":"LongWait","pid":811,"stack":["read","ask","main"],"stack_frames":[{"function":"read","name":"read"},{"function":"ask","name":"ask"},{"function":"main","name":"main"}],"start_ns":20100000,"start_s":0.0191,"tid":811}
  {"comm":"cw-srv-worker","costliest_functions":[{"function":"serve","own_ns":799900000},{"function":"recvfrom","own_ns":9600000}],"end_ns":820100000,"end_s":0.8191,"kind":"LongRunning","pid":812,"stack":["recvfrom","serve","main"],"stack_frames":[{"function":"recvfrom","name":"recvfrom"},{"function":"serve","name":"serve"},{"function":"main","name":"main"}],"start_ns":10600000,"start_s":0.0096,"tid":813,"what":"ran 799.9 ms on a CPU (0.0 ms runnable) with recvfrom ×1, sendto ×1; its work began with a message from cw-client 811 at 0.019000 s"}
  {"comm":"cw-srv-worker","edge_kind":"message","end_ns":820100000,"end_s":0.8191,"pid":812,"start_ns":10600000,"start_s":0.0096,"strength":"strong","tid":813}
  {"comm":"cw-client","edge_kind":null,"end_ns":821000000,"end_s":0.82,"pid":811,"start_ns":20100000,"start_s":0.0191,"strength":null,"tid":811}
  {"kind":"recurse","options":["diagnose cw-srv-worker 813 (cw-server 812)","stop: it is the root cause"],"chosen":"diagnose cw-srv-worker 813 (cw-server 812)","source":"auto"}
  ["hang","losses","notes","path","queries","root_causes","schema_version","trace_start_ns"]
  $ causeway debug examples/slow-server.trace --hang 811@0.1 --json | jq -c '[.schema_version, .trace_start_ns]'
  [1,1000000]

An answers file replays answers, one per question asked: `s` stops at the worker instead
of diagnosing it too (the only question here: whether to recurse into the culprit).

  $ printf '# the worker is the culprit; stop there\ns\n' > $TMP_DIR/answers && causeway debug examples/slow-server.trace --answers $TMP_DIR/answers | sed -n '/^questions/,/^$/p'
  questions: 1 asked
    1. [recurse] cw-srv-worker 813 (cw-server 812) ran 799.9 ms on a CPU (0.0 ms runnable) with recvfrom ×1, sendto ×1 (from 0.009600 s), while the hang lasted. Find out why it did, in turn?
       -> stop: it is the root cause (from the answers file)
  

A line that answers nothing is an error at its line.

  $ printf '# the first answer\nmaybe\n' > $TMP_DIR/bad-answers && causeway debug examples/slow-server.trace --answers $TMP_DIR/bad-answers 2>&1 | sed "s|$TMP_DIR/||"
  bad-answers:2: expected an option number from 1 to 2 or 's' for question "cw-srv-worker 813 (cw-server 812) ran 799.9 ms on a CPU (0.0 ms runnable) with recvfrom ×1, sendto ×1 (from 0.009600 s), while the hang lasted. Find out why it did, in turn?", got 'maybe'

  $ causeway debug examples/slow-server.trace --answers $TMP_DIR/bad-answers >/dev/null 2>&1
  [1]

More answers than questions is not an error, but it is said.

  $ printf '1\n2\n' > $TMP_DIR/long-answers && causeway debug examples/slow-server.trace --answers $TMP_DIR/long-answers 2>&1 >/dev/null | sed "s|$TMP_DIR/||"
  long-answers: note: 1 answer not used: the diagnosis asked fewer questions

Answers are rules: --save-answers writes them as a pack with a test that replays the
diagnosis. The pack checks, its test passes, and a re-run with it asks nothing and blames
the same thread.

  $ causeway debug examples/slow-server.trace --save-answers $TMP_DIR/replay 2>&1 >/dev/null | sed "s|$TMP_DIR/||g"
  saved 1 answer as rules in replay/pack.cw; re-run with --rules replay to ask nothing

  $ sed -n '/^answer/,$p' $TMP_DIR/replay/pack.cw | sed -E 's|trace file ".*examples/|trace file ".../examples/|'
  answer q1 {
    question recurse
    subject process.comm == "cw-server" and thread.comm == "cw-srv-worker" and kind == "syscall_enter" and "recvfrom" in stack
    choose recurse
  }
  
  test "replays the saved diagnosis" {
    trace file ".../examples/slow-server.trace"
    hang "auto"
    expect hang 811 kind LongWait
    expect root_cause 813 kind LongRunning
    expect questions == 0
  }

  $ causeway rules check $TMP_DIR/replay && causeway rules test $TMP_DIR/replay
  1 pack checked (answers.replay), 0 warnings
  PASS answers.replay "replays the saved diagnosis"
  1 passed, 0 failed

  $ causeway debug examples/slow-server.trace --rules $TMP_DIR/replay | sed -n '1,2p;/^questions/,/^$/p'
  root cause: process cw-server 812, thread cw-srv-worker 813
    when: 0.009600 s to 0.819100 s (809.5 ms)
  questions: 0 asked, 1 answered by rules
    1. [recurse] cw-srv-worker 813 (cw-server 812) ran 799.9 ms on a CPU (0.0 ms runnable) with recvfrom ×1, sendto ×1 (from 0.009600 s), while the hang lasted. Find out why it did, in turn?
       -> diagnose cw-srv-worker 813 (cw-server 812) (by rule answers.replay/q1)
  

The answers name places in the program (process, thread, event, frame), not this
recording's thread ids and times: a new recording of the same program, whose threads have
other ids, is answered by them too.

  $ sed -E 's/\b811\b/1811/g; s/\b812\b/1812/g; s/\b813\b/1813/g' examples/slow-server.trace > $TMP_DIR/again.trace
  $ causeway debug $TMP_DIR/again.trace --rules $TMP_DIR/replay --no-cache | sed -n '1p;/^questions/,/^$/p'
  root cause: process cw-server 1812, thread cw-srv-worker 1813
  questions: 0 asked, 1 answered by rules
    1. [recurse] cw-srv-worker 1813 (cw-server 1812) ran 799.9 ms on a CPU (0.0 ms runnable) with recvfrom ×1, sendto ×1 (from 0.009600 s), while the hang lasted. Find out why it did, in turn?
       -> diagnose cw-srv-worker 1813 (cw-server 1812) (by rule answers.replay/q1)
  

A pack that causeway did not write is not overwritten.

  $ mkdir -p $TMP_DIR/mine && echo 'pack mine { version "1.0.0" }' > $TMP_DIR/mine/pack.cw && causeway debug examples/slow-server.trace --save-answers $TMP_DIR/mine 2>&1 >/dev/null | sed "s|$TMP_DIR/||"
  causeway: mine/pack.cw: not overwritten: this pack was not written by causeway debug --save-answers (its first line is not the marker comment); choose another folder

In a terminal (here a pseudo-terminal made by `script`), each question shows its options
ranked, each with its evidence; `?` explains the question and shows all the evidence
again; `s` takes the option that stops.

  $ printf '?\ns\n' | script -qec "causeway debug examples/slow-server.trace" /dev/null | tr -d '\r' | grep -E '^(question 1|  [12]\)|A thread on|answer \[|     -> )' | sed 's/answer \[\([^]]*\)\]: .*/answer [\1]:/'
  question 1 (recurse): cw-srv-worker 813 (cw-server 812) ran 799.9 ms on a CPU (0.0 ms runnable) with recvfrom ×1, sendto ×1 (from 0.009600 s), while the hang lasted. Find out why it did, in turn?
    1) diagnose cw-srv-worker 813 (cw-server 812)
    2) stop: it is the root cause
  answer [1-2, Enter = 1, ? = explain, s = stop]:
  A thread on the normal run's causal path was itself hung while the hang lasted. Diagnosing it looks for what it was waiting for, recursively; stopping keeps it as the root cause.
    1) diagnose cw-srv-worker 813 (cw-server 812)
    2) stop: it is the root cause
  answer [1-2, Enter = 1, ? = explain, s = stop]:
       -> stop: it is the root cause (answered by you)

At a terminal the question comes after the hang (where it blocked) and what was found
so far: the culprit it asks about.

  $ printf 's\n' | script -qec "causeway debug examples/slow-server.trace" /dev/null | tr -d '\r' | grep -E '^(hang:|  blocked:|found so far:|question 1)' | cut -c1-60
  hang: LongWait of thread cw-client 811 (process cw-client 81
    blocked: 800.1 ms from 0.019100 s in read(fd: 3)
  found so far:
  question 1 (recurse): cw-srv-worker 813 (cw-server 812) ran 
  hang: LongWait of thread cw-client 811 (process cw-client 81
    blocked: 800.1 ms from 0.019100 s in read(fd: 3)

A strong edge that ended the hang's wait is the next step, with nothing to ask, even when
the path behind it costs more than a weak wake-up earlier in the same segment. The fixture
tests/cli/data/chain-timer-answer.trace is a recording of cw-prog-chain (cw-client waits
300 ms for cw-server, which waits for cw-timekeeper's timer) in which the client's segment
also holds weak wake-ups from the server from before it blocked: the answer's message is
still taken without a question. Another strong edge sent while the wait lasted (two requests a
poll returned) is still a question (diagnose_test.cc, "two clients of one process…").

  $ causeway debug tests/cli/data/chain-timer-answer.trace --min-hang 0.1 --auto --no-cache --json 2>/dev/null | jq -c '[.hang.comm, [.root_causes[].comm], (.queries | length), .path[-2].edge_kind]'
  ["cw-client",["cw-timekeeper"],0,"message"]

A thread that the hang's own thread freed once its wait was over waited for the hang, not
the reverse: when another thread ended the hang's wait and that thread is not on the
hang's path, it is not blamed. tests/cli/data/tmux-shell-reaps-waiter.cwt is a recording
of tests/real/32-tmux-delayed-signal: `tmux wait-for` (waiter) waits for a channel the tmux
server signals from a timer; the suite's shell waits in wait4 for waiter and is reaped by
its exit. Comparing the server's timed-out wait with a baseline reached the shell, which
used to be blamed first.

  $ causeway debug tests/cli/data/tmux-shell-reaps-waiter.cwt --hang "waiter: client" --auto --no-cache --json 2>/dev/null | jq -c '[[.root_causes[].comm], .path[0].comm]'
  [["tmux: server"],"sched: client"]
  $ causeway debug tests/cli/data/tmux-shell-reaps-waiter.cwt --hang "waiter: client" --auto --no-cache --json 2>/dev/null | jq -r '.notes[] | select(test("waited for the hang"))' | sed -E 's/bash [0-9]+/bash N/'
  bash N waited for waiter: client, the hang's own thread, which ended that wait after the hang: it waited for the hang, not the reverse

A server busy with one client's request is found below the hang, two recursions deep: the
path still begins with that request, as it does when the server is found at once.
tests/cli/data/server-request-at-depth.cwt is a lean recording (`--calls scheduler
--min-wait 1ms`) of generated topology 20261206:58 under load, its own processes kept:
t58n0c asks t58n1c, a single-threaded server on TCP, which sleeps 1.2 s on it; t58n2py's
request waits behind it; t58n2py's exit, reaped through a pidfd by t58n3c, frees an fcntl
lock for t58n4py, whose release frees t58n5py, the hang. Without the request the path began
at the server.

  $ causeway debug tests/cli/data/server-request-at-depth.cwt --hang t58n5py --auto --no-cache --json 2>/dev/null | jq -c '[[.root_causes[].comm], (.path | map(.comm) | unique_by(.) | length), .path[0].comm, .path[1].comm, .path[-1].comm]'
  [["t58n1c","t58n4py"],6,"t58n0c","t58n1c","t58n5py"]
