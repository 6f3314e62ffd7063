Kernel stacks where a call blocked: with stacks on (the default, `--stacks blocking`),
when a system call blocks the recorder takes the kernel's stack as well as the user's and
names its frames from /proc/kallsyms at once, so the trace shows them on any machine.
`causeway debug` lists them first (marked [kernel]) in the blocked call's stack.

Root must be able to read kernel addresses in /proc/kallsyms (kptr_restrict 2 hides them
from everyone; the frames would keep their addresses only):

  $ test "$(awk '$3 == "schedule" { print $1; exit }' /proc/kallsyms)" != 0000000000000000 || { echo "/proc/kallsyms hides kernel addresses (kptr_restrict)"; exit 77; }

cat blocked reading a pipe whose writer (sleep) writes nothing for 3 s: it sleeps in the
pipe's read (anon_pipe_read since Linux 6.14, pipe_read before), under the read system
call, and under that come the user frames.

  $ causeway record --duration 1 -o $TMP_DIR/pipe.cwt -- sh -c 'sleep 3 | cat' 2>/dev/null
  $ causeway debug $TMP_DIR/pipe.cwt --hang cat --min-hang 0.5 --auto --json 2>/dev/null > $TMP_DIR/pipe.json
  $ jq -r '.hang.stack_frames[] | select(.kernel) | .name' $TMP_DIR/pipe.json | grep -E -x -c 'anon_pipe_read|pipe_read'
  1
  $ jq -c '[.hang.stack_frames[] | .kernel // false] | [(index(false) != null), (. == (sort | reverse))]' $TMP_DIR/pipe.json
  [true,true]

The recorder's own probe (its BPF program and the tracepoint code that calls it) is left
out: the innermost frames are the scheduler's.

  $ jq -c '[.hang.stack_frames[] | select(.kernel) | .name | select(test("^bpf_|^__bpf_trace|^__traceiter"))] | length' $TMP_DIR/pipe.json
  0
  $ causeway debug $TMP_DIR/pipe.cwt --hang cat --min-hang 0.5 --auto 2>/dev/null | grep -E -c '^    (anon_pipe_read|pipe_read) \[kernel\]$'
  1

The names are in the trace, stored when recording: its text form writes them with their
addresses (`anon_pipe_read@0xffff…`, innermost last), after the user frames.

  $ causeway convert $TMP_DIR/pipe.cwt --to text -o $TMP_DIR/pipe.txt 2>/dev/null
  $ grep -E ' syscall_enter (.* )?name=read .*stack=([^ ]*;)?read@0x[0-9a-f]+;[^ ]*(anon_pipe_read|pipe_read)@0xffff' $TMP_DIR/pipe.txt | head -1 | wc -l
  1

cw-prog-mutexhold: cw-mutexwait blocks on a pthread mutex another thread holds: the futex
wait (futex_do_wait since Linux 6.16, futex_wait_queue or futex_wait_queue_me before).

  $ causeway record --duration 1 -o $TMP_DIR/mutex.cwt -- cw-prog-mutexhold 2>/dev/null
  $ causeway debug $TMP_DIR/mutex.cwt --hang cw-mutexwait --min-hang 0.5 --auto --json 2>/dev/null > $TMP_DIR/mutex.json
  $ jq -r '.hang.stack_frames[] | select(.kernel) | .name' $TMP_DIR/mutex.json | grep -E -x -c 'futex_do_wait|futex_wait_queue|futex_wait_queue_me'
  1

`causeway latency` puts them as leaves under the user frames that made the call.

  $ causeway latency $TMP_DIR/pipe.cwt --comm cat --json 2>/dev/null | jq -r '.. | objects | .function? // empty' | grep -E -x -c 'anon_pipe_read|pipe_read' | awk '$1 > 0 { print "found" }'
  found
