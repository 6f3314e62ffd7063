`causeway ui` serves the diagnosis on 127.0.0.1 under a random token (docs/ui.md). The
browser side is tests/browser/ui.sh; here the server is asked over plain HTTP
(tests/cli/data/ui_session.sh): without the token, or with another one, everything is
403; the address without its slash is sent to it.

While the diagnosis waits for the page, the state holds the question and its options;
Quit ends the server then (exit 0) without an answer.

  $ tests/cli/data/ui_session.sh examples/slow-server.trace
  GET / 403
  GET /index.html 403
  GET /[0-9a-f]{31}x/ 403 (re)
  GET /TOKEN 302
  GET /TOKEN/ 200
  GET /TOKEN/api/state 200
  phase: question
  question 1 (recurse): cw-srv-worker 813 (cw-server 812) ran 799.9 ms on a CPU (0.0 ms runnable) with recvfrom ×1, sendto ×1 (from 0.009600 s), while the hang lasted. Find out why it did, in turn?
    - diagnose cw-srv-worker 813 (cw-server 812)
    - stop: it is the root cause
  POST quit 200
  exit 0

--answers answers the first questions (here all of them) as `debug --answers` does; the
report says who answered.

  $ printf 's\n' >$TMP_DIR/stop.txt && tests/cli/data/ui_session.sh examples/slow-server.trace --answers $TMP_DIR/stop.txt | sed -n '/^phase/,$p'
  phase: done
  root cause: cw-srv-worker 813
  answered by answers: stop: it is the root cause
  POST quit 200
  exit 0

What is wrong on the command line is said before anything is served, as `debug` says it.

  $ causeway ui examples/slow-server.trace --hang 811 --no-browser
  causeway: --hang: expected auto, TID@SECONDS or a thread name, got '811' (a thread id needs its time: 811@SECONDS)
  [1]

A symptom the trace does not hold is found once the page is served: the page says so.

  $ tests/cli/data/ui_session.sh examples/slow-server.trace --hang 999@0.5 | sed -n '/^phase/,$p'
  phase: error
  no thread 999 in the trace (threads: 811 cw-client, 813 cw-srv-worker)
  POST quit 200
  exit 0

Without --no-browser the page is opened with xdg-open, given a file only this user can
read that forwards to the address (the token stays off command lines). xdg-open is
reaped when it exits (no zombie while the server runs), and the file goes when the
server ends.

  $ mkdir -p $TMP_DIR/bin && printf '#!/bin/sh\necho "$1" >%s/opened\n' $TMP_DIR >$TMP_DIR/bin/xdg-open && chmod +x $TMP_DIR/bin/xdg-open
  $ PATH=$TMP_DIR/bin:$PATH causeway ui examples/slow-server.trace --json --no-cache >$TMP_DIR/ui.json 2>/dev/null & pid=$!; for i in $(seq 100); do [ -s $TMP_DIR/opened ] && break; sleep 0.1; done; sleep 0.5; opened=$(cat $TMP_DIR/opened); echo "token in the file: $(grep -c "$(jq -r .url $TMP_DIR/ui.json | cut -d/ -f4)" "$opened")"; echo "mode: $(stat -c %a "$opened")"; echo "zombies: $(ps -o stat= --ppid $pid | grep -c Z)"; kill -INT $pid; wait $pid; echo "exit $?"; test -e "$opened" && echo "file kept" || echo "file removed"
  token in the file: 1
  mode: 600
  zombies: 0
  exit 0
  file removed

What a client can make the server hold is bounded (docs/ui.md, "Limits"). A request
without the token is refused from its head: the 403 comes though the client claims a
gigabyte and sends a little of it, and the server closes the connection instead of
reading the rest (its memory does not grow). An option is a whole number that fits, or
the answer is refused (2^32 + 1 is not option 1) and the question still waits. Quit ends
the server at once though other connections hold it open.

  $ tests/cli/data/ui_limits.sh examples/slow-server.trace
  no token, 1 GB body: HTTP/1.1 403 Forbidden
  the rest of the body: refused
  memory: grew less than 64 MB
  option 4294967297: 400 option: expected a whole number from 0 to 4294967295, got 4294967297
  phase after it: question
  quit with connections held: exit 0 within 2 s
