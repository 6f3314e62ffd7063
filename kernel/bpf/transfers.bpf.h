// Bytes moved on sockets and pipes when calls are taken at the scheduler (calls_at_switch):
// the socket layer's tracepoints (sock_send_length, sock_recv_length) fire as a send or a
// receive of a unix or TCP socket returns, in the caller's context, with no syscall
// program; a pipe's bytes, when asked for (record --pipe-bytes), at the exits of the read
// and write calls (syscalls:sys_exit_read and the like).
//
// Only the transfers no wake-up explains are written. A send that woke its reader is joined
// to it by that wake-up already; one that woke nobody (the reader was busy, or not yet
// waiting: a request queued behind another client's) leaves no trace but its bytes, and the
// read that takes them later neither blocks nor is woken. Such a send is written, with its
// stream and byte offsets as the syscall programs would give them, and so is the first read
// of bytes at or before the end of the last send written: the two make a message edge. With
// held waits, a send past its thread's budget is written only once its bytes have waited
// (held_waits.bpf.h, hold_send). Each is written as a call of its own (entry, transfer, exit
// with the bytes moved as its return), so the rules that cut at a read's call cut there.
#pragma once

#define MSG_PEEK_FLAG 2

static __always_inline struct stream_offsets* stream_entry(__u64 object) {
  struct stream_offsets* entry = bpf_map_lookup_elem(&streams, &object);
  if (entry) return entry;
  struct stream_offsets zero = {};
  bpf_map_update_elem(&streams, &object, &zero, BPF_NOEXIST);
  return bpf_map_lookup_elem(&streams, &object);
}

// A send's program runs once its bytes are queued, and a reader on another CPU can take them
// first: one that polls, or one the send woke. Such a read of a unix stream, of bytes whose
// send's program has not decided yet what to write (past the entry's settled_end), finds no
// send written or held to join; it is noted in the stream's entry for the send's program to
// settle: a held send whose bytes were all taken so is dropped (they waited for nothing), and
// a send written writes the read as well (CW_XFER_LATE, on the reader's thread), its own call
// stamped before it. The send's program marks its bytes settled, then claims the note; the
// reader notes, then looks whether they were settled meanwhile and, if it can claim its note
// back, settles its read itself: one of the two writes it. (Each side's store and then load
// of the other's mark go through an exchange: a full barrier, so that the two cannot both
// read the other's mark from before.)
struct early_read {
  __u64 ts, start, end;
  __u32 pid, tid;
  __s32 fd;
  __u32 cpu;
};

// Notes the read of `len` bytes at `offset`: the time it is noted with.
static __always_inline __u64 note_early_read(struct stream_offsets* entry, struct task_struct* task,
                                             __u64 offset, __u64 len) {
  const __u32 tid = task->pid;
  const __u64 noted = entry->early_ts;
  if (noted != 0 && entry->early_tid == tid && entry->early_end == offset) {
    entry->early_end = offset + len;  // the same reader taking on
    __sync_lock_test_and_set(&entry->early_ts, noted);
    return noted;
  }
  const struct pt_regs* regs = user_regs_of(task);
  long nr;
  __s32 fd = -1;
  if (syscall_frame(regs, &nr) && io_class(class_of(nr))) fd = (__s32)regs->di;
  entry->early_start = offset;
  entry->early_end = offset + len;
  entry->early_pid = task->tgid;
  entry->early_tid = tid;
  entry->early_fd = fd;
  entry->early_cpu = bpf_get_smp_processor_id();
  const __u64 now = bpf_ktime_get_ns();
  __sync_lock_test_and_set(&entry->early_ts, now);
  return now;
}

// The bytes of a unix stream up to `end` are settled: their send's program has decided.
static __always_inline void settle_sent(struct stream_offsets* entry, __u64 end) {
  if (end > entry->settled_end) __sync_lock_test_and_set(&entry->settled_end, end);
}

// The read noted early that took some of the `len` bytes at `offset` a send put in stream
// `entry`, claimed into `out` (out->ts 0: none).
static __always_inline void claim_early_read(struct stream_offsets* entry, __u64 offset, __u64 len,
                                             struct early_read* out) {
  out->ts = 0;
  const __u64 at = entry->early_ts;
  if (at == 0 || entry->early_end <= offset || entry->early_start >= offset + len) return;
  out->start = entry->early_start;
  out->end = entry->early_end;
  out->pid = entry->early_pid;
  out->tid = entry->early_tid;
  out->fd = entry->early_fd;
  out->cpu = entry->early_cpu;
  if (__sync_val_compare_and_swap(&entry->early_ts, at, 0) == at) out->ts = at;
}

static __always_inline int stream_transfer(struct task_struct* task, __u64 object, __u32 kind,
                                           __u64 offset, __u64 len, struct stream_offsets* entry,
                                           struct sock* sk, bool is_send);

// A counted stream's entry for connection `sender` (a unix socket's peer, a pipe's inode
// number): a stream made where a freed one was starts past the old one's counts.
static __always_inline void pair_stream(struct stream_offsets* entry, __u64 sender) {
  if (entry->sender == sender) return;
  __u64 past = entry->sent > entry->received ? entry->sent : entry->received;
  entry->sent = entry->received = entry->written_end = entry->settled_end = entry->joined_end =
      past;
  entry->written = 0;
  entry->sender = sender;
}

static __always_inline int socket_transfer(struct sock* sk, int ret, int flags, bool is_send) {
  if (!calls_at_switch || ret <= 0 || !sk) return 0;
  if (!is_send && (flags & MSG_PEEK_FLAG)) return 0;  // the bytes stay for the next read
  if (!current_traced()) return 0;
  struct task_struct* task = bpf_get_current_task_btf();
  if (task->flags & PF_KTHREAD_FLAG) return 0;
  __u64 len = ret;
  __u16 family = sk->__sk_common.skc_family;
  __u64 object, offset;
  __u32 kind;
  struct stream_offsets* entry;
  if (family == AF_UNIX_FAMILY) {
    // Counted on the receiving socket, as resolve_file names a unix stream.
    struct sock* receiver = is_send ? KERNEL_CAST(struct unix_sock, sk)->peer : sk;
    if (!receiver) return 0;
    kind = CW_OBJ_UNIX;
    object = (__u64)receiver;
    entry = stream_entry(object);
    if (!entry) return 0;
    // Which connection the counts are of: the receiving socket's peer, fixed when the two
    // are joined (before an accept returns the server's end) and kept until the socket is
    // freed. A socket made where a freed one was starts past the old counts.
    pair_stream(entry, is_send ? (__u64)sk : (__u64)KERNEL_CAST(struct unix_sock, sk)->peer);
    offset = is_send ? __sync_fetch_and_add(&entry->sent, len)
                     : __sync_fetch_and_add(&entry->received, len);
  } else if ((family == AF_INET_FAMILY || family == AF_INET6_FAMILY) &&
             sk->sk_protocol == IPPROTO_TCP_NUM) {
    // The socket layer fires after the call: its sequence number is past these bytes.
    struct tcp_sock* tp = KERNEL_CAST(struct tcp_sock, sk);
    kind = CW_OBJ_TCP;
    object = tcp_flow_hash(sk, is_send);
    offset = (__u32)((is_send ? tp->write_seq : tp->copied_seq) - (__u32)len);
    // Its sequence numbers are the offsets: an entry is needed only once a send is written
    // (most flows' sends wake their readers, and their entries are never made).
    entry = bpf_map_lookup_elem(&streams, &object);
  } else {
    return 0;
  }
  return stream_transfer(task, object, kind, offset, len, entry, sk, is_send);
}

// The bytes of a pipe or FIFO a write put in, or a read took (`file`: the descriptor's
// file, `ret` the bytes): counted as a unix stream's are, on the pipe, and written as those
// are when no wake-up explains them (a reader that was runnable already, its poll's
// timeout come, when the writer wrote). Other files are left alone.
static __always_inline int pipe_transfer(struct file* file, long ret, bool is_send) {
  if (!file) return 0;
  file = KERNEL_CAST(struct file, file);
  struct inode* inode = file->f_inode;
  if (!inode) return 0;
  const struct file_operations* fops = file->f_op;
  const __u64 release = fops ? (__u64)fops->release : 0;
  if (!is_kind((__u64)fops, release, pipefifo_fops, pipe_release) &&
      (inode->i_mode & S_IFMT_BITS) != S_IFIFO_BITS)
    return 0;
  const __u64 object = (__u64)file->private_data;
  if (!object) return 0;
  struct stream_offsets* entry = stream_entry(object);
  if (!entry) return 0;
  // A pipe's inode number is its own (a FIFO's, the file's): a pipe made where a freed
  // one's buffer was is told apart by it.
  pair_stream(entry, inode->i_ino);
  const __u64 len = ret;
  const __u64 offset = is_send ? __sync_fetch_and_add(&entry->sent, len)
                               : __sync_fetch_and_add(&entry->received, len);
  return stream_transfer(bpf_get_current_task_btf(), object, CW_OBJ_PIPE, offset, len, entry, NULL,
                         is_send);
}

// A read or write (or readv, writev) returned `ret` bytes: those of a pipe are counted.
// The call's descriptor is its first argument, still in the saved registers.
static __always_inline int pipe_call_returned(long ret, bool is_send) {
  if (!calls_at_switch || ret <= 0 || !current_traced()) return 0;
  struct task_struct* task = bpf_get_current_task_btf();
  if (task->flags & PF_KTHREAD_FLAG) return 0;
  const struct pt_regs* regs = user_regs_of(task);
  keep_cpu();
  int result = pipe_transfer(fd_file((int)regs->di), ret, is_send);
  let_cpu();
  return result;
}

// What a transfer of `len` bytes at `offset` in stream `object` (`entry`: its counts, NULL
// for a TCP flow without one) writes: nothing when a wake-up explains it, else the send or
// the read of a send written, in a call of its own. `sk`: the socket, NULL for a pipe.
static __always_inline int stream_transfer(struct task_struct* task, __u64 object, __u32 kind,
                                           __u64 offset, __u64 len, struct stream_offsets* entry,
                                           struct sock* sk, bool is_send) {
  const long ret = (long)len;
  const bool tcp = kind == CW_OBJ_TCP;
  // A read matters only when it takes bytes of a send written or held, and most take
  // neither: settled before anything of the thread is looked up, or the clock read.
  if (!is_send) {
    if (!entry) return 0;
    // Read before what the send's program decided: it marks its bytes settled after it
    // holds or writes them, so a read that finds them settled finds that too.
    const __u64 settled = *(volatile __u64*)&entry->settled_end;
    asm volatile("" ::: "memory");  // (x86 keeps two loads in order; the compiler must too)
    if (holding_waits()) read_held_send(entry, object, offset, len, tcp);
    if (!entry->written || !offset_before(offset, entry->written_end, tcp)) {
      if (tcp || offset + len <= settled) return 0;
      const __u64 noted = note_early_read(entry, task, offset, len);
      // Settled meanwhile, and the note not claimed by the send: this read settles itself.
      if (offset + len > entry->settled_end ||
          __sync_val_compare_and_swap(&entry->early_ts, noted, 0) != noted)
        return 0;
      if (holding_waits()) read_held_send(entry, object, offset, len, tcp);
      if (!entry->written || !offset_before(offset, entry->written_end, tcp)) return 0;
    }
    // Bytes a written read of the same sends began to take: their edge is made.
    if (!tcp && offset + len <= entry->joined_end) return 0;
  }

  struct inflight* st = bpf_task_storage_get(&inflight, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (!st) return 0;
  const struct pt_regs* regs = user_regs_of(task);
  long nr = -1;
  __u32 cls = CW_SYS_NONE;
  if (syscall_frame(regs, &nr)) cls = class_of(nr);
  __s32 fd = io_class(cls) ? (__s32)regs->di : -1;
  bool wanted = true;
  if (is_send) {
    // A wake-up raised by this very call (since the thread's last transfer, from a call of
    // this number on this descriptor) already joins it to its reader.
    wanted = !(st->woke_since_xfer && st->wake_nr == nr && st->wake_fd == fd);
  }
  st->woke_since_xfer = 0;
  if (!wanted) {
    if (is_send && !tcp && entry) settle_sent(entry, offset + len);
    return 0;
  }
  const __u64 now = bpf_ktime_get_ns();
  const __s32 peer_pid = kind == CW_OBJ_UNIX && sk ? pid_number(sk->sk_peer_pid) : -1;
  struct early_read early = {};
  if (is_send) {
    if (!entry) entry = stream_entry(object);
    // Past the thread's budget, held until its bytes have waited (held_waits.bpf.h); not
    // when a reader took them all before this program ran.
    if (entry && holding_waits() && !spend_budget(st, cls, now)) {
      hold_send(entry, st, object, kind, offset, len, fd, peer_pid, now);
      if (!tcp) {
        settle_sent(entry, offset + len);
        claim_early_read(entry, offset, len, &early);
        if (early.ts != 0 && !offset_before(early.end, offset + len, false))
          __sync_val_compare_and_swap(&entry->pend_ts, now, 0);
      }
      return 0;
    }
    if (entry) {
      entry->written_end = offset + len;
      entry->written = 1;
      if (!tcp) {
        settle_sent(entry, offset + len);
        claim_early_read(entry, offset, len, &early);
      }
    }
  }

  // Its own call, unless the thread is inside one already written (a send that blocked on
  // a full buffer half way).
  // A send whose bytes were read before this program ran is stamped before that read.
  const __u64 at = early.ts != 0 && early.ts <= now ? early.ts - 1 : now;
  bool own_call = cls != CW_SYS_NONE && !(st->active && st->at_switch);
  write_own_short_waits(st, task);
  if (own_call) begin_call_now(st, regs, nr, cls, at);
  struct cw_rec_xfer* rec = reserve(sizeof(*rec));
  if (rec) {
    fill_header_at(&rec->h, CW_REC_XFER, sizeof(*rec), at);
    rec->h.flags |= CW_XFER_QUEUED;
    rec->seq = (st->active && st->at_switch) ? st->seq : 0;
    rec->object = object;
    rec->offset = offset;
    rec->len = len;
    rec->fd = fd;
    rec->peer_pid = peer_pid;
    rec->obj_kind = kind;
    rec->is_send = is_send;
    submit(rec);
  }
  if (!is_send && !tcp) entry->joined_end = entry->written_end;
  // What a read or write of a stream returns: the bytes it moved.
  if (own_call) end_call_now(st, ret);
  if (early.ts != 0)
    write_late_xfer(early.ts, early.pid, early.tid, early.cpu, object, kind, early.start,
                    early.end - early.start, early.fd, (__s32)task->tgid, false);
  return 0;
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(on_sock_send, struct sock* sk, int ret, int flags) {
  return socket_transfer(sk, ret, flags, true);
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(on_sock_recv, struct sock* sk, int ret, int flags) {
  return socket_transfer(sk, ret, flags, false);
}

// The read and write calls' own exit tracepoints: a pipe's bytes are moved by them. They
// fire for those calls alone, but while one is on every system call on the machine takes
// the kernel's slow path: loaded only when asked for (record --pipe-bytes).
SEC("tracepoint/syscalls/sys_exit_write")
int on_write_exit(struct trace_event_raw_sys_exit* ctx) {
  return pipe_call_returned(ctx->ret, true);
}

SEC("tracepoint/syscalls/sys_exit_writev")
int on_writev_exit(struct trace_event_raw_sys_exit* ctx) {
  return pipe_call_returned(ctx->ret, true);
}

SEC("tracepoint/syscalls/sys_exit_read")
int on_read_exit(struct trace_event_raw_sys_exit* ctx) {
  return pipe_call_returned(ctx->ret, false);
}

SEC("tracepoint/syscalls/sys_exit_readv")
int on_readv_exit(struct trace_event_raw_sys_exit* ctx) {
  return pipe_call_returned(ctx->ret, false);
}
