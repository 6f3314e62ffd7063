// Writing records: whether a thread is recorded (the pid filter), the ring buffer and the
// header every record starts with, and the entry record of a syscall, which is written
// only once the call turns out to matter.
#pragma once

static __always_inline void count_lost(void) {
  __u32 zero = 0;
  __u64* n = bpf_map_lookup_elem(&lost, &zero);
  if (n) *n += 1;
}

static __always_inline void* reserve(__u64 size) {
  void* rec = bpf_ringbuf_reserve(&events, size, 0);
  if (!rec) count_lost();
  return rec;
}

static __always_inline __u64 wakeup_flag(void) {
  return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP
                                                                       : BPF_RB_NO_WAKEUP;
}

static __always_inline void submit(void* rec) {
  bpf_ringbuf_submit(rec, wakeup_flag());
}

static __always_inline void fill_header(struct cw_rec_header* h, __u32 type, __u32 size) {
  __u64 id = bpf_get_current_pid_tgid();
  h->type = type;
  h->size = size;
  h->ts = bpf_ktime_get_ns();
  h->pid = id >> 32;
  h->tid = (__u32)id;
  h->cpu = bpf_get_smp_processor_id();
  h->flags = 0;
}

static __always_inline bool traced_tgid(__u32 tgid) {
  if (tgid == self_tgid) return false;
  if (!filter_pids) return true;
  return bpf_map_lookup_elem(&traced_pids, &tgid) != NULL;
}

static __always_inline bool current_traced(void) {
  return traced_tgid(bpf_get_current_pid_tgid() >> 32);
}

static __always_inline bool current_is_recorder(void) {
  return (bpf_get_current_pid_tgid() >> 32) == self_tgid;
}

// Calls of these classes are recorded only when something happens in them: the thread
// blocks, wakes another, moves bytes on a stream or is told of ready descriptors. A read
// of a regular file that did not block, a futex wake with no waiter, a zero-timeout poll
// that found nothing: their records would say nothing, and cost the most on the busiest
// paths. Calls of other classes are recorded always.
// Reads and writes on an fd: a transfer when the fd is a stream.
static __always_inline bool io_class(__u32 cls) {
  return cls == CW_SYS_READ || cls == CW_SYS_WRITE || cls == CW_SYS_READV || cls == CW_SYS_WRITEV ||
         cls == CW_SYS_RECVMSG || cls == CW_SYS_SENDMSG;
}

static __always_inline bool lazy_class(__u32 cls) {
  if (io_class(cls)) return true;
  switch (cls) {
    case CW_SYS_FUTEX:
    case CW_SYS_EPOLL_WAIT:
    case CW_SYS_EPOLL_PWAIT2:
    case CW_SYS_POLL:
    case CW_SYS_PPOLL:
    case CW_SYS_SELECT:
    case CW_SYS_PSELECT:
    case CW_SYS_NANOSLEEP:
    case CW_SYS_CLOCK_NANOSLEEP: return true;
    default: return false;
  }
}

static __always_inline void emit_enter(struct inflight* call) {
  if (call->emitted) return;
  call->emitted = 1;
  if (bpf_ringbuf_output(&events, &call->rec, sizeof(call->rec), wakeup_flag()) != 0) count_lost();
}
