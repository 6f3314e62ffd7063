Recording real programs with the eBPF recorder (needs root, or CAP_BPF and CAP_PERFMON).
The recording is system-wide; each check looks only at the program's own threads,
whose names start with "cw-prog".

A unix-socket exchange: the parent writes 100 then 50 bytes and the child reads all 150
in one read; the child writes 200 bytes and the parent reads them as 120 and 80. Every
piece of a read is joined to the write it came from by a strong message edge, by stream
byte offset: [from offset, length] -> [to offset, length].

  $ causeway record -o $TMP_DIR/split.cwt -- cw-prog-pingpong split 2>/dev/null
  $ causeway graph $TMP_DIR/split.cwt --json --edges 2>/dev/null | jq -c '[.edge_list[] | select(.kind == "message" and (.from.comm | startswith("cw-prog"))) | [.strength, .from.offset, .from.len, .to.offset, .to.len]] | sort | .[]'
  ["strong",0,100,0,150]
  ["strong",0,200,0,120]
  ["strong",0,200,120,80]
  ["strong",100,50,0,150]

Both ends of each stream name the same object, and the edges go between the two
processes.

  $ causeway graph $TMP_DIR/split.cwt --json --edges 2>/dev/null | jq -c '[.edge_list[] | select(.kind == "message" and (.from.comm | startswith("cw-prog"))) | (.from.object == .to.object) and (.from.pid != .to.pid)] | unique'
  [true]

The same ping-pong over a pipe and over loopback TCP: every round's request and reply
is a strong message edge from a send to a recv between the two processes (5 rounds, 10
messages). Over TCP the receiver is woken from the loopback's NET_RX softirq run inside
the sender's write: the stdlib makes that wake-up a strong message edge too
(linux.kernel `wakeup.own-send`), which is why only send → recv edges are counted.

  $ causeway record -o $TMP_DIR/pipe.cwt -- cw-prog-pingpong pipe 5 2>/dev/null
  $ causeway graph $TMP_DIR/pipe.cwt --json --edges 2>/dev/null | jq '[.edge_list[] | select(.kind == "message" and .strength == "strong" and .from.kind == "send" and (.from.comm | startswith("cw-prog")) and .from.pid != .to.pid)] | length'
  10
  $ causeway record -o $TMP_DIR/tcp.cwt -- cw-prog-pingpong tcp 5 2>/dev/null
  $ causeway graph $TMP_DIR/tcp.cwt --json --edges 2>/dev/null | jq '[.edge_list[] | select(.kind == "message" and .strength == "strong" and .from.kind == "send" and (.from.comm | startswith("cw-prog")) and .from.pid != .to.pid)] | length'
  10
  $ causeway graph $TMP_DIR/tcp.cwt --json --edges 2>/dev/null | jq '[.edge_list[] | select(.rule == "linux.kernel/wakeup.own-send" and (.from.comm | startswith("cw-prog")) and .from.pid != .to.pid)] | length > 0'
  true

A stream made where a freed one was (the kernel reuses the memory of a closed eventfd,
pipe or socket at once) starts past every byte the freed one moved: its first write pairs
with its first read, never with the freed stream's bytes nobody read. A Python script
makes 64 eventfds in turn, each written once and closed unread, then a last one that a
second thread reads after the main thread writes it 0.1 s later: one message edge, from
that last write.

  $ printf '#!/usr/bin/python3\nimport os, threading, time\nfor _ in range(64):\n    fd = os.eventfd(0)\n    os.eventfd_write(fd, 1)\n    os.close(fd)\nfd = os.eventfd(0)\nt = threading.Thread(target=os.eventfd_read, args=(fd,))\nt.start()\ntime.sleep(0.1)\nos.eventfd_write(fd, 1)\nt.join()\n' > $TMP_DIR/cw-prog-evreuse && chmod +x $TMP_DIR/cw-prog-evreuse
  $ causeway record -o $TMP_DIR/reuse.cwt -- $TMP_DIR/cw-prog-evreuse 2>/dev/null
  $ causeway convert $TMP_DIR/reuse.cwt -o $TMP_DIR/reuse.txt --to text 2>/dev/null && pid=$(sed -n 's/^\(update \)\{0,1\}process \([0-9]*\) .*comm=cw-prog-evreuse.*/\2/p' $TMP_DIR/reuse.txt | head -1) && echo "objects reused: $(grep -E "^[0-9]+ $pid send " $TMP_DIR/reuse.txt | sed 's/.*object=\([^ ]*\).*/\1/' | sort | uniq -d | grep -c .)" | sed 's/[1-9][0-9]*$/yes/'
  objects reused: yes
  $ causeway graph $TMP_DIR/reuse.cwt --json --edges 2>/dev/null | jq -c '[.edge_list[] | select(.kind == "message" and (.from.comm | startswith("cw-prog"))) | (.to.ts - .from.ts) < 50000000]'
  [true]
