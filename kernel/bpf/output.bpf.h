// Writing records: whether a thread is recorded (the pid filter), the ring buffer and the
// header every record starts with, and the entry record of a syscall, which is written
// only once the call turns out to matter.
#pragma once

static __always_inline void count_lost_n(__u64 n) {
  __u32 zero = 0;
  __u64* lost_count = bpf_map_lookup_elem(&lost, &zero);
  if (lost_count) *lost_count += n;
}

static __always_inline void count_lost(void) {
  count_lost_n(1);
}

static __always_inline __u64 wakeup_flag(void) {
  return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP
                                                                       : BPF_RB_NO_WAKEUP;
}

// Records are written to a staging area of their CPU and reach the ring buffer a block at a
// time. One ring reservation per record cost more than everything else a context switch or
// a wake-up records (on pgbench's select-only load, sched_switch 420 ns a run with its
// record against 100 without, sched_waking 620 against 260): the ring's lock and positions
// are shared by every CPU and by the reader. A block goes out when the next record would
// not fit, when its oldest record is STAGE_FLUSH_NS old (checked as records come and at the
// timer tick), when the CPU goes idle, before a record too big to stage, and when the
// recorder stops (it reads what is left, kernel/probes.cc). The reader splits a block into
// its records by their headers' sizes.
//
// A program can be interrupted while it writes (a wake-up from an interrupt, a sample):
// `stage_depth` counts the records being written on the CPU, and a program that finds one
// under way stages at the next level, whose block goes out as soon as its record is done.
//
// Everything a CPU keeps for the programs running on it (the staging below, the per-CPU call
// numbers, scratch space) assumes that a program that starts while another writes finishes
// first, as an interrupt's does. Uprobe and task-iterator programs run with only migration
// disabled, and so may syscall-tracepoint programs on kernels whose syscall tracepoints may
// fault: on a kernel that preempts kernel code (preempt=full or lazy), such a program
// preempted while it writes leaves the CPU to another task whose programs write the same
// block, and the two interleave (a stage level taken twice, a depth restored out of order:
// a record lost, counted nowhere). Those programs hold their CPU from start to end
// (keep_cpu .. let_cpu) where the kernel lets them (bpf_preempt_disable, Linux 6.10 and
// later). A kernel that runs with preempt=none never preempts them.
extern void bpf_preempt_disable(void) __ksym __weak;
extern void bpf_preempt_enable(void) __ksym __weak;

static __always_inline void keep_cpu(void) {
  if (preempt_guard) bpf_preempt_disable();
}

static __always_inline void let_cpu(void) {
  if (preempt_guard) bpf_preempt_enable();
}

#define STAGE_CAP CW_STAGE_CAP
#define STAGE_SLACK CW_STAGE_SLACK  // room past STAGE_CAP: the largest staged record
#define STAGE_LEVELS CW_STAGE_LEVELS
#define STAGE_FLUSH_NS 5000000LL

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, STAGE_LEVELS);
  __type(key, __u32);
  __type(value, struct cw_stage);
} stages SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u32);
} stage_depth SEC(".maps");

static __always_inline __u32* depth_of_cpu(void) {
  __u32 zero = 0;
  return bpf_map_lookup_elem(&stage_depth, &zero);
}

static __always_inline struct cw_stage* stage_at(__u32 level) {
  return bpf_map_lookup_elem(&stages, &level);
}

// The records of a level from `sent` to `len`, all whole, to the ring; `wake`: how the
// reader is told (wakeup_flag(), or BPF_RB_FORCE_WAKEUP for a record it acts on at once).
static __always_inline void send_staged_as(struct cw_stage* s, __u64 wake) {
  __u64 sent = s->sent, len = s->len;
  if (sent > STAGE_CAP + STAGE_SLACK || len > STAGE_CAP + STAGE_SLACK || len <= sent) return;
  __u64 size = len - sent;
  asm volatile("" : "+r"(size));  // bounded here, as the verifier sees it
  if (size > STAGE_CAP + STAGE_SLACK) return;
  // Lost when the ring is full: the records of this send, not those an earlier one took.
  if (bpf_ringbuf_output(&events, s->data + sent, size, wake) != 0)
    count_lost_n(s->records - s->sent_records);
  s->sent = len;
  s->sent_records = s->records;
}

static __always_inline void send_staged(struct cw_stage* s) {
  send_staged_as(s, wakeup_flag());
}

// Sends a level's block and empties it. The caller holds the level (depth above it), so
// nothing nested writes into the block meanwhile.
static __always_inline void flush_stage_as(struct cw_stage* s, __u64 wake) {
  if (s->len == 0) return;
  s->flushing = 1;
  send_staged_as(s, wake);
  s->len = s->sent = s->records = s->sent_records = 0;
  s->flushing = 0;
}

static __always_inline void flush_stage(struct cw_stage* s) {
  flush_stage_as(s, wakeup_flag());
}

// A record written at a nested level (an interrupt came while a program wrote at a lower
// one) goes out at once, after the whole records the interrupted levels hold: the CPU's
// records reach the reader in the order they were committed.
static __always_inline void send_under(__u32 below, __u32 level) {
  if (below >= level) return;
  struct cw_stage* under = stage_at(below);
  if (under && !under->flushing) send_staged(under);
}

static __always_inline void flush_nested(struct cw_stage* s, __u32 level) {
  send_under(0, level);  // STAGE_LEVELS - 1 levels can be under a record
  send_under(1, level);
  send_under(2, level);
  flush_stage(s);
}

// Room for a record of `size` bytes (a constant at every call), to be filled and then passed
// to submit() or discard(); null when it cannot be had (counted as lost).
static __always_inline void* reserve(__u64 size) {
  __u32* depth = depth_of_cpu();
  if (!depth) return NULL;
  __u32 level = *depth;
  if (level >= STAGE_LEVELS || size > STAGE_SLACK) {
    count_lost();
    return NULL;
  }
  struct cw_stage* s = stage_at(level);
  if (!s) return NULL;
  *depth = level + 1;
  __u32 len = s->len;
  if (len > STAGE_CAP) {
    flush_stage(s);
    len = 0;
  }
  s->reserved = size;
  return s->data + len;
}

// The record reserve() gave, now written: its header's size says how much of the room it
// used (a stack fills only part of its room).
static __always_inline void submit(void* rec) {
  __u32* depth = depth_of_cpu();
  if (!depth) return;
  __u32 level = *depth - 1;
  struct cw_stage* s = stage_at(level);
  if (!s) return;
  const struct cw_rec_header* h = rec;
  __u32 size = h->size;
  if (size > s->reserved) size = s->reserved;
  if (s->len == 0) s->first_ts = h->ts;
  s->len += size;
  s->records += 1;
  if (level > 0)
    flush_nested(s, level);
  else if (!stage_records || (__s64)(h->ts - s->first_ts) > STAGE_FLUSH_NS)
    flush_stage(s);
  *depth = level;
}

// The record reserve() gave, not wanted after all.
static __always_inline void discard(void* rec) {
  __u32* depth = depth_of_cpu();
  if (depth && *depth > 0) *depth -= 1;
}

// Sends this CPU's block now (`stale_only`: only if its oldest record is STAGE_FLUSH_NS old)
// unless a record is being written on it. Before a record that goes to the ring directly,
// so that it follows the records staged before it; when the CPU goes idle; at the tick.
static __always_inline void flush_cpu(bool stale_only) {
  __u32* depth = depth_of_cpu();
  if (!depth || *depth != 0) return;
  struct cw_stage* s = stage_at(0);
  if (!s || s->len == 0) return;
  if (stale_only && (__s64)(bpf_ktime_get_ns() - s->first_ts) <= STAGE_FLUSH_NS) return;
  *depth = 1;
  flush_stage(s);
  *depth = 0;
}

// Sends this CPU's block now, if no record is being written on it, and wakes the reader:
// after a record the recorder acts on at once (a new program, whose functions it probes
// before they run: recorder/record_instrumentation.h), not within the poll's 100 ms.
static __always_inline void flush_cpu_waking(void) {
  __u32* depth = depth_of_cpu();
  if (!depth || *depth != 0) return;
  struct cw_stage* s = stage_at(0);
  if (!s || s->len == 0) return;
  *depth = 1;
  flush_stage_as(s, BPF_RB_FORCE_WAKEUP);
  *depth = 0;
}

// The header of a record made at `ts` by the current thread.
static __always_inline void fill_header_at(struct cw_rec_header* h, __u32 type, __u32 size,
                                           __u64 ts) {
  __u64 id = current_ids();
  h->type = type;
  h->size = size;
  h->ts = ts;
  h->pid = id >> 32;
  h->tid = (__u32)id;
  h->cpu = bpf_get_smp_processor_id();
  h->flags = 0;
}

static __always_inline void fill_header(struct cw_rec_header* h, __u32 type, __u32 size) {
  fill_header_at(h, type, size, bpf_ktime_get_ns());
}

static __always_inline bool traced_tgid(__u32 tgid) {
  if (tgid == self_tgid) return false;
  if (!filter_pids) return true;
  return bpf_map_lookup_elem(&traced_pids, &tgid) != NULL;
}

static __always_inline bool current_traced(void) {
  return traced_tgid(current_ids() >> 32);
}

static __always_inline bool current_is_recorder(void) {
  return (current_ids() >> 32) == self_tgid;
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
  struct cw_rec_sys_enter* rec = reserve(sizeof(*rec));
  if (!rec) return;
  __builtin_memcpy(rec, &call->rec, sizeof(*rec));
  submit(rec);
}
