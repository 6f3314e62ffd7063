Damaged traces: each file under traces/ is examples/slow-server.trace, converted to the
binary form and damaged in one way by traces/make.py, or a text trace with one bad line.
Reading keeps every intact part and says where the damage is; each case is bounded in
time by `timeout`.

An empty file, a cut header, another file type, a newer major version: refused, saying which.

  $ timeout 20 causeway graph tests/hostile/traces/empty.cwt
  causeway: tests/hostile/traces/empty.cwt: empty file (0 bytes): not a causeway trace
  [1]

  $ timeout 20 causeway graph tests/hostile/traces/short-header.cwt
  causeway: tests/hostile/traces/short-header.cwt: not a causeway trace: header truncated at 10 bytes
  [1]

  $ timeout 20 causeway graph tests/hostile/traces/bad-magic.cwt
  causeway: tests/hostile/traces/bad-magic.cwt: not a causeway trace (no CWTRACE header)
  [1]

  $ timeout 20 causeway graph tests/hostile/traces/newer-major.cwt
  causeway: tests/hostile/traces/newer-major.cwt: trace format version 99.1 is newer than this causeway reads (up to 3.x); upgrade causeway
  [1]

A file cut inside the events chunk: the intact chunks are kept, the cut is reported with its byte offset.

  $ timeout 20 causeway graph tests/hostile/traces/cut-in-events.cwt
  tests/hostile/traces/cut-in-events.cwt: warning: skipped 1032 bytes at offset 5344: truncated events chunk (needs 2016 bytes, 1008 left)
  tests/hostile/traces/cut-in-events.cwt: note: no end chunk: the recording did not finish, or the file was cut short
  trace: 0 events, 2 processes, 2 threads, 0 lost events
  recording lost: nothing
  graph: 0 segments, 0 edges (0 strong, 0 weak, 0 boosted)
  rules: 0 candidates, 0 unclassified, 0 pruned, 0 boosted, 0 cuts, 0 flag edges from 0 data flags
  over-connections: 0 (requests), 0 (segments)

A file that ends before its end chunk: all it holds is kept, with a note.

  $ timeout 20 causeway graph tests/hostile/traces/no-end-chunk.cwt
  tests/hostile/traces/no-end-chunk.cwt: note: no end chunk: the recording did not finish, or the file was cut short
  trace: 39 events, 2 processes, 2 threads, 0 lost events
  recording lost: nothing
  graph: 6 segments, 12 edges (4 strong, 8 weak, 0 boosted)
  edges by kind: message 4 split 4 wakeup 4
  rules: 8 candidates, 0 unclassified, 0 pruned, 0 boosted, 4 cuts, 0 flag edges from 0 data flags
  over-connections: 0 (requests), 0 (segments)

One flipped byte: its chunk fails the checksum and is skipped; the others are kept.

  $ timeout 20 causeway graph tests/hostile/traces/flipped-event-byte.cwt
  tests/hostile/traces/flipped-event-byte.cwt: warning: skipped 2040 bytes at offset 5344: checksum mismatch in events chunk
  trace: 0 events, 2 processes, 2 threads, 0 lost events
  recording lost: nothing
  graph: 0 segments, 0 edges (0 strong, 0 weak, 0 boosted)
  rules: 0 candidates, 0 unclassified, 0 pruned, 0 boosted, 0 cuts, 0 flag edges from 0 data flags
  over-connections: 0 (requests), 0 (segments)

A chunk size of 2^62: no allocation of that size, the chunk is skipped.

  $ timeout 20 causeway graph tests/hostile/traces/huge-chunk-size.cwt
  tests/hostile/traces/huge-chunk-size.cwt: warning: skipped 2040 bytes at offset 5344: truncated events chunk (needs 4611686018427387904 bytes, 2040 left)
  trace: 0 events, 2 processes, 2 threads, 0 lost events
  recording lost: nothing
  graph: 0 segments, 0 edges (0 strong, 0 weak, 0 boosted)
  rules: 0 candidates, 0 unclassified, 0 pruned, 0 boosted, 0 cuts, 0 flag edges from 0 data flags
  over-connections: 0 (requests), 0 (segments)

Junk between two chunks: the reader finds the next chunk and loses nothing.

  $ timeout 20 causeway graph tests/hostile/traces/junk-between-chunks.cwt
  tests/hostile/traces/junk-between-chunks.cwt: warning: skipped 28 bytes at offset 5344: no chunk magic
  trace: 39 events, 2 processes, 2 threads, 0 lost events
  recording lost: nothing
  graph: 6 segments, 12 edges (4 strong, 8 weak, 0 boosted)
  edges by kind: message 4 split 4 wakeup 4
  rules: 8 candidates, 0 unclassified, 0 pruned, 0 boosted, 4 cuts, 0 flag edges from 0 data flags
  over-connections: 0 (requests), 0 (segments)

A chunk of a type from a newer causeway is skipped with a note.

  $ timeout 20 causeway graph tests/hostile/traces/unknown-chunk-type.cwt
  tests/hostile/traces/unknown-chunk-type.cwt: note: skipped a chunk of unknown type 77 at byte 5344 (24 bytes; from a newer causeway?)
  trace: 39 events, 2 processes, 2 threads, 0 lost events
  recording lost: nothing
  graph: 6 segments, 12 edges (4 strong, 8 weak, 0 boosted)
  edges by kind: message 4 split 4 wakeup 4
  rules: 8 candidates, 0 unclassified, 0 pruned, 0 boosted, 4 cuts, 0 flag edges from 0 data flags
  over-connections: 0 (requests), 0 (segments)

Forty compressed strings chunks of about 2 KB, each decompressing to the per-chunk cap
(64 MiB, a string that would stay in memory): 2.7 GB from a file of 93 KB. What a file
decompresses to is bounded in total (here by 64 MiB, one full chunk): the chunk that would
go past it and the rest of the file are skipped, naming the chunk; what came before is
kept. Under a 1 GB address-space limit, within 20 s.

  $ (ulimit -v 1000000; timeout 20 causeway graph tests/hostile/traces/decompression-total.cwt)
  tests/hostile/traces/decompression-total.cwt: warning: skipped 83016 bytes at offset 9840: chunk 8 of the file (compressed strings chunk) would take the trace's decompressed total to 134217728 bytes, past the limit of 67108864 bytes (the larger of 64 MiB and 64 times the file's 92856 bytes, at most 16 GiB; CAUSEWAY_MAX_DECOMPRESSED=SIZE sets another): the chunks before it are kept, it and the rest of the file are not read
  trace: 39 events, 2 processes, 2 threads, 0 lost events
  recording lost: nothing
  graph: 6 segments, 12 edges (4 strong, 8 weak, 0 boosted)
  edges by kind: message 4 split 4 wakeup 4
  rules: 8 candidates, 0 unclassified, 0 pruned, 0 boosted, 4 cuts, 0 flag edges from 0 data flags
  over-connections: 0 (requests), 0 (segments)

A thread declared again in another process, with no fork event creating it there: the
trace contradicts itself (its events would be put in the wrong process, and a root cause
with them), and is refused like the text form refuses it, naming the record.

  $ timeout 20 causeway graph tests/hostile/traces/thread-in-two-processes.cwt
  causeway: tests/hostile/traces/thread-in-two-processes.cwt: threads chunk at byte 7712, record 0 (byte 7740): thread 813 is declared in process 811 after process 812, and no fork event creates it there (a trace puts a thread in one process)
  [1]

Random bytes after a valid header: all skipped, one warning.

  $ timeout 20 causeway graph tests/hostile/traces/random-after-header.cwt
  tests/hostile/traces/random-after-header.cwt: warning: skipped 4096 bytes at offset 32: no chunk magic
  tests/hostile/traces/random-after-header.cwt: note: no end chunk: the recording did not finish, or the file was cut short
  trace: 0 events, 0 processes, 0 threads, 0 lost events
  recording lost: nothing
  graph: 0 segments, 0 edges (0 strong, 0 weak, 0 boosted)
  rules: 0 candidates, 0 unclassified, 0 pruned, 0 boosted, 0 cuts, 0 flag edges from 0 data flags
  over-connections: 0 (requests), 0 (segments)

Text traces: an error says file:line:col with the line and a caret.

  $ timeout 20 causeway graph tests/hostile/traces/bad-kind.trace
  tests/hostile/traces/bad-kind.trace:11:12: error: unknown event kind 'sendd'
    10ms   811 sendd object=1
               ^~~~~
  hint: did you mean 'send'?
  [1]

  $ timeout 20 causeway graph tests/hostile/traces/ts-overflow.trace
  tests/hostile/traces/ts-overflow.trace:10:1: error: time '99999999999999999999ms' is out of range
    99999999999999999999ms 811 syscall_enter name=sendto fd=3
    ^~~~~~~~~~~~~~~~~~~~~~
  [1]

  $ timeout 20 causeway graph tests/hostile/traces/value-overflow.trace
  tests/hostile/traces/value-overflow.trace:10:39: error: integer '99999999999999999999999' is out of range for field 'fd'
    10ms 811 syscall_enter name=sendto fd=99999999999999999999999
                                          ^~~~~~~~~~~~~~~~~~~~~~~
  [1]

  $ timeout 20 causeway graph tests/hostile/traces/nul-byte.trace
  tests/hostile/traces/nul-byte.trace:10:33: error: a NUL byte (byte 323) in a text trace
    10ms 811 syscall_enter name=send\x00to fd=3
                                    ^~~~
  hint: a text trace holds no NUL; a binary trace starts with the bytes CWTRACE
  [1]

A last line without a newline is a line.

  $ timeout 20 causeway graph tests/hostile/traces/no-final-newline.trace
  trace: 3 events, 2 processes, 2 threads, 0 lost events
  recording lost: nothing
  graph: 2 segments, 0 edges (0 strong, 0 weak, 0 boosted)
  rules: 0 candidates, 0 unclassified, 0 pruned, 0 boosted, 0 cuts, 0 flag edges from 0 data flags
  over-connections: 0 (requests), 0 (segments)

The JSON summary of a damaged trace is JSON, with the damage in it (under "trace").

  $ timeout 20 causeway graph tests/hostile/traces/flipped-event-byte.cwt --json 2>/dev/null | sed -n '/"trace"/,$p'
    "trace": {
      "events": 0,
      "losses": {
        "hook_log": 0,
        "kernel_buffer": 0,
        "maps": 0,
        "switches_unreported": 0,
        "watchpoints_silent": 0
      },
      "lost_events": 0,
      "lost_per_cpu": {},
      "notes": [],
      "processes": 2,
      "skipped": [
        {
          "offset": 5344,
          "reason": "checksum mismatch in events chunk",
          "size": 2040
        }
      ],
      "skipped_chunks": 1,
      "threads": 2
    }
  }

The largest ids a trace can hold (a process and threads 4294967295 and 4294967294, a
324-byte file): ids are keys, never sizes. Each command runs in a 2 GB address space
(`ulimit -v`), where a table indexed by thread id (4 G entries) cannot be allocated.

  $ (ulimit -v 2000000; timeout 20 causeway debug --auto --no-cache tests/hostile/traces/huge-tid.trace)
  root cause: process big 4294967295, thread big 4294967295
    when: 0.000000 s to 0.899000 s (899.0 ms)
    kind: LongWait (the hang itself)
    what: blocked 899.0 ms in read (fd 3); ended by a wakeup edge (weak) from waker 4294967294 (big 4294967295) at 0.899000 s
    stack: none recorded
  
  hang: LongWait of thread big 4294967295 (process big 4294967295)
    when: 0.000000 s to 0.899000 s (899.0 ms)
    found by: auto: longest stretch of 1 main thread (big 4294967295: 0.899 s)
    blocked: 899.0 ms from 0.000000 s in read(fd: 3)
    stack: none recorded
  
  causal path, from the root cause to the hang:
      0.000000 s  big 4294967295        read(fd: 3)  (the hang)
  
  questions: 1 asked
    1. [edge] What made big 4294967295 run at 0.000000 s? Several events could have.
       -> waker 4294967294 (big 4294967295) → big 4294967295: wakeup (weak) at 0.899000 s (AUTOMATIC: the best-scored of 2 options, nobody was asked)
    1 of 1 choices were made automatically; answer them in a terminal, or with --answers FILE.
  
  recording lost: nothing

  $ (ulimit -v 2000000; timeout 20 causeway hangs --no-cache tests/hostile/traces/huge-tid.trace)
  candidates for --hang auto, best first:
    1. big (pid 4294967295, tid 4294967295)  LongWait  at 0.000000 s, 0.899 s without a response  --hang 4294967295@0
       waited in read(fd: 3), ended by waker 4294967294

The same in the binary form, with the cache on: the first run saves the events, the
thread index, the graph and the hang; the second maps and loads them. (The events are kept
at any size here, CAUSEWAY_CACHE_EVENTS_MIN=0, as a large trace's are.)

  $ cp tests/hostile/traces/huge-tid.cwt $TMP_DIR/huge-tid.cwt
  $ for run in cold warm; do (ulimit -v 2000000; CAUSEWAY_CACHE_EVENTS_MIN=0 CAUSEWAY_CACHE=verbose timeout 20 causeway debug --auto $TMP_DIR/huge-tid.cwt 2>&1 >/dev/null | sed "s|$TMP_DIR/||g; s/^/$run: /" | sort); done
  cold: causeway: cache: events by kind and name saved to huge-tid.cwt.cwcache/names.cwa
  cold: causeway: cache: events saved to huge-tid.cwt.cwcache/trace.cwa
  cold: causeway: cache: graph saved to huge-tid.cwt.cwcache/graph-[0-9a-f]{16}.cwg (re)
  cold: causeway: cache: thread index saved to huge-tid.cwt.cwcache/threads.cwa
  warm: causeway: cache: events mapped from huge-tid.cwt.cwcache/trace.cwa (checked in full before, unchanged since)
  warm: causeway: cache: graph loaded from huge-tid.cwt.cwcache/graph-[0-9a-f]{16}.cwg (re)
  warm: causeway: cache: hang found before on this graph, from the cache
  warm: causeway: cache: thread index mapped from huge-tid.cwt.cwcache/threads.cwa
  $ (ulimit -v 2000000; timeout 20 causeway hangs $TMP_DIR/huge-tid.cwt)
  candidates for --hang auto, best first:
    1. big (pid 4294967295, tid 4294967295)  LongWait  at 0.000000 s, 0.899 s without a response  --hang 4294967295@0
       waited in read(fd: 3), ended by waker 4294967294
