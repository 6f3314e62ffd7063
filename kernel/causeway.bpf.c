// causeway's kernel side: scheduler, syscall, interrupt and signal hooks that write the
// records of kernel/records.h to one ring buffer. Loaded by kernel/probes.cc.
// vmlinux.h first: it defines the types the libbpf headers use.
// clang-format off
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
// clang-format on

#include "kernel/records.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

// Set by the loader before load.
const volatile __u32 self_tgid = 0;    // the recorder: never recorded
const volatile __u32 stack_mode = 0;   // 0 none, 1 blocking, 2 all (ProbeOptions::stacks)
const volatile __u32 filter_pids = 0;  // 1: only tgids in `traced_pids`
// --call-graph dwarf: bytes of user stack copied per stack (0: walk frame pointers instead).
const volatile __u32 ustack_bytes = 0;
// Object recognition: file_operations addresses, or (when the kernel does not list data
// symbols) the address of the f_op->release function each kind uses.
const volatile __u64 eventfd_fops = 0, timerfd_fops = 0, pipefifo_fops = 0, socket_fops = 0;
const volatile __u64 eventfd_release = 0, timerfd_release = 0, pipe_release = 0, sock_release = 0;
// Syscall numbers whose decoding differs within one class.
const volatile __u32 nr_flock = 0, nr_fcntl = 0, nr_waitid = 0, nr_tgkill = 0;
// CLOCK_REALTIME - CLOCK_MONOTONIC at load, to place absolute realtime timerfds.
const volatile __s64 realtime_offset_ns = 0;
// Waking the reader for every record costs more than writing it: the reader is woken once
// this much is waiting, and otherwise finds the records when its poll times out.
const volatile __u64 wakeup_bytes = 1 << 20;

__u64 next_seq = 0;

extern bool CONFIG_KASAN __kconfig __weak;

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 1 << 24);  // resized by the loader
} events SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} lost SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, CW_MAX_SYSCALLS);
  __type(key, __u32);
  __type(value, __u32);
} syscall_class SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 16384);
  __type(key, __u32);
  __type(value, __u8);
} traced_pids SEC(".maps");

// A recorded syscall between its entry and its exit, per thread.
struct inflight {
  __u64 seq;
  __u64 enter_ts;
  __u64 object;
  __u64 user_buf;    // buffer or array read at exit (eventfd value, epoll/poll arrays)
  __u64 value;       // eventfd write value
  __u64 expires_ns;  // timerfd_settime: absolute expiry (0: cancel)
  __u64 interval_ns;
  __u32 nr;
  __u32 cls;
  __s32 fd;
  __u32 obj_kind;
  __u32 tcp_seq;
  __s32 peer_pid;
  __u32 count;
  __u8 is_send;
  __u8 stack_taken;
  __u8 emitted;  // `rec` is in the ring buffer
  __u8 active;   // the thread is inside this call
  // The entry record, written out only once the call turns out to matter (see lazy_class).
  struct cw_rec_sys_enter rec;
};

// Task-local storage: found through the task itself, no hashing, and freed with it.
struct {
  __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, struct inflight);
} inflight SEC(".maps");

// Bytes (eventfd: counter units) sent and received per stream object since recording
// began: the n-th byte written and the n-th byte read get the same offset.
struct stream_offsets {
  __u64 sent;
  __u64 received;
};

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 65536);
  __type(key, __u64);
  __type(value, struct stream_offsets);
} streams SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct cw_rec_stack);
} stack_scratch SEC(".maps");

// A dwarf-mode stack is built here (32 KiB is too big for the BPF stack). The slack after the
// record lets the copy loop below write a page at any offset the verifier can bound.
struct ustack_scratch {
  struct cw_rec_ustack rec;
  __u8 slack[4096];
  struct pt_regs regs;
};

// Two slots per CPU (a per-CPU array's values stop at 32 KiB): 2 * cpu for the tracepoints,
// 2 * cpu + 1 for the sampling program, whose tick may interrupt a syscall tracepoint on
// the same CPU halfway through its stack. Sized by the loader.
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 2);
  __type(key, __u32);
  __type(value, struct ustack_scratch);
} ustack_scratch SEC(".maps");

#define PF_KTHREAD_FLAG 0x00200000
#define S_IFMT_BITS 00170000
#define S_IFSOCK_BITS 0140000
#define S_IFIFO_BITS 0010000
#define AF_UNIX_FAMILY 1
#define AF_INET_FAMILY 2
#define AF_INET6_FAMILY 10
#define IPPROTO_TCP_NUM 6
#define FUTEX_CMD_MASK_BITS 127  // ~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME)
#define MAX_POLL_SCAN 64

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

static __always_inline __u8 state_letter(bool preempt, unsigned int state) {
  if (preempt || state == 0) return 'R';
  if ((state & 0x402) == 0x402) return 'I';  // TASK_IDLE: uninterruptible, no load
  if (state & 0x1) return 'S';
  if (state & 0x2) return 'D';
  if (state & 0x4) return 'T';
  if (state & 0x8) return 't';
  if (state & 0x10) return 'X';
  if (state & 0x20) return 'Z';
  if (state & 0x40) return 'P';
  if (state & 0x80) return 'X';  // TASK_DEAD
  return 'D';
}

// One stack walked by the kernel (bpf_get_stack with `walk`: BPF_F_USER_STACK for the
// user stack by frame pointers, 0 for the kernel stack) as a cw_rec_stack of `type`.
static __always_inline int emit_walked_stack(void* ctx, __u32 type, __u64 walk, __u32 tid,
                                             __u32 tgid, __u64 seq, __u32 flags) {
  __u32 zero = 0;
  struct cw_rec_stack* rec = bpf_map_lookup_elem(&stack_scratch, &zero);
  if (!rec) return 0;
  long got = bpf_get_stack(ctx, rec->ips, sizeof(rec->ips), walk);
  // An empty user stack is still the event's (its thread ran no user code); an empty
  // kernel stack says nothing.
  if (got < 0 || (got == 0 && walk == 0)) return 0;
  __u32 n = (__u64)got / sizeof(__u64);
  if (n > CW_MAX_STACK) n = CW_MAX_STACK;
  __u64 size = sizeof(*rec) - sizeof(rec->ips) + (__u64)n * sizeof(__u64);
  if (size > sizeof(*rec)) return 0;
  rec->h.type = type;
  rec->h.size = size;
  rec->h.ts = bpf_ktime_get_ns();
  rec->h.pid = tgid;
  rec->h.tid = tid;
  rec->h.cpu = bpf_get_smp_processor_id();
  rec->h.flags = flags;
  rec->seq = seq;
  rec->n = n;
  rec->pad = 0;
  if (bpf_ringbuf_output(&events, rec, size, wakeup_flag()) != 0) count_lost();
  return 1;
}

static __always_inline int take_fp_stack(void* ctx, __u32 tid, __u32 tgid, __u64 seq,
                                         __u32 flags) {
  return emit_walked_stack(ctx, CW_REC_STACK, BPF_F_USER_STACK, tid, tgid, seq, flags);
}

// Copies up to `want` bytes of user memory from `sp` up. One read does it unless the
// stack's mapping ends sooner (a main thread near the top of its stack): then page by
// page, keeping what could be read.
static __always_inline __u32 copy_user_stack(__u8* dst, __u64 sp, __u32 want) {
  if (want > CW_MAX_USTACK_BYTES) want = CW_MAX_USTACK_BYTES;
  if (bpf_probe_read_user(dst, want, (void*)sp) == 0) return want;
  __u32 got = 0;
  for (int i = 0; i < CW_MAX_USTACK_BYTES / 4096 + 1; i++) {
    if (got >= want) break;
    __u64 addr = sp + got;
    __u32 chunk = 4096 - (__u32)(addr & 4095);
    if (chunk > want - got) chunk = want - got;
    if (chunk == 0 || chunk > 4096) break;
    if (bpf_probe_read_user(dst + (got & (CW_MAX_USTACK_BYTES - 1)), chunk, (void*)addr) != 0)
      break;
    got += chunk;
  }
  return got;
}

// --call-graph dwarf: the thread's user registers (saved where it entered the kernel) and
// the top of its user stack, for user space to unwind with the files' CFI.
static __always_inline int take_dwarf_stack(__u32 tid, __u32 tgid, __u64 seq, __u32 flags) {
  __u32 slot = bpf_get_smp_processor_id() * 2 + ((flags & CW_STACK_OF_SAMPLE) ? 1 : 0);
  struct ustack_scratch* scratch = bpf_map_lookup_elem(&ustack_scratch, &slot);
  if (!scratch) return 0;
  struct task_struct* task = bpf_get_current_task_btf();
  if (task->flags & PF_KTHREAD_FLAG) return 0;
  struct pt_regs* user = (struct pt_regs*)bpf_task_pt_regs(task);
  if (bpf_probe_read_kernel(&scratch->regs, sizeof(scratch->regs), user) != 0) return 0;
  struct pt_regs* r = &scratch->regs;
  if ((r->cs & 3) != 3) return 0;  // not a frame of user code
  struct cw_rec_ustack* rec = &scratch->rec;
  rec->regs[0] = r->ax;
  rec->regs[1] = r->dx;
  rec->regs[2] = r->cx;
  rec->regs[3] = r->bx;
  rec->regs[4] = r->si;
  rec->regs[5] = r->di;
  rec->regs[6] = r->bp;
  rec->regs[7] = r->sp;
  rec->regs[8] = r->r8;
  rec->regs[9] = r->r9;
  rec->regs[10] = r->r10;
  rec->regs[11] = r->r11;
  rec->regs[12] = r->r12;
  rec->regs[13] = r->r13;
  rec->regs[14] = r->r14;
  rec->regs[15] = r->r15;
  rec->regs[16] = r->ip;
  __u32 got = copy_user_stack(rec->data, r->sp, ustack_bytes);
  __u64 size = sizeof(*rec) - sizeof(rec->data) + (__u64)got;
  if (size > sizeof(*rec)) return 0;
  rec->h.type = CW_REC_USTACK;
  rec->h.size = size;
  rec->h.ts = bpf_ktime_get_ns();
  rec->h.pid = tgid;
  rec->h.tid = tid;
  rec->h.cpu = bpf_get_smp_processor_id();
  rec->h.flags = flags;
  rec->seq = seq;
  rec->size = got;
  rec->pad = 0;
  if (bpf_ringbuf_output(&events, rec, size, wakeup_flag()) != 0) count_lost();
  return 1;
}

// The current thread's user stack: `seq` is its syscall's number (flags 0) or its sample's
// timestamp (CW_STACK_OF_SAMPLE).
static __always_inline int take_stack(void* ctx, __u32 tid, __u32 tgid, __u64 seq, __u32 flags) {
  if (ustack_bytes != 0) return take_dwarf_stack(tid, tgid, seq, flags);
  return take_fp_stack(ctx, tid, tgid, seq, flags);
}

// The kernel stack where a syscall blocked (CW_REC_KSTACK): which kernel function the
// thread sleeps in (a pipe read, a futex wait, a poll), which the user stack cannot say.
static __always_inline void take_kstack(void* ctx, __u32 tid, __u32 tgid, __u64 seq) {
  emit_walked_stack(ctx, CW_REC_KSTACK, 0, tid, tgid, seq, 0);
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

SEC("tp_btf/sched_switch")
int BPF_PROG(on_sched_switch, bool preempt, struct task_struct* prev, struct task_struct* next,
             unsigned int prev_state) {
  __u32 prev_tid = prev->pid, prev_tgid = prev->tgid;
  __u32 next_tid = next->pid, next_tgid = next->tgid;
  bool prev_recorded = prev_tid != 0 && traced_tgid(prev_tgid);
  bool next_recorded = next_tid != 0 && traced_tgid(next_tgid);
  if (!prev_recorded && !next_recorded) return 0;
  // The idle task and the recorder itself never appear, whichever side they are on.
  if (prev_tid == 0 || prev_tgid == self_tgid) prev_tid = prev_tgid = 0;
  if (next_tid == 0 || next_tgid == self_tgid) next_tid = next_tgid = 0;

  bool sleeps = !preempt && prev_state != 0;
  if (prev_recorded && sleeps) {
    struct inflight* call = bpf_task_storage_get(&inflight, prev, 0, 0);
    if (call && call->active) {
      emit_enter(call);  // a call that blocks always matters
      if (stack_mode != 0 && !call->stack_taken) {
        call->stack_taken = 1;
        take_stack(ctx, prev_tid, prev_tgid, call->seq, 0);
        take_kstack(ctx, prev_tid, prev_tgid, call->seq);
      }
    }
  }

  struct cw_rec_switch* rec = reserve(sizeof(*rec));
  if (!rec) return 0;
  fill_header(&rec->h, CW_REC_SWITCH, sizeof(*rec));
  rec->h.pid = prev_tgid;
  rec->h.tid = prev_tid;
  rec->next_pid = next_tgid;
  rec->next_tid = next_tid;
  rec->prev_state = state_letter(preempt, prev_state);
  rec->prev_kernel = (prev->flags & PF_KTHREAD_FLAG) != 0;
  rec->next_kernel = (next->flags & PF_KTHREAD_FLAG) != 0;
  rec->next_recorded = next_recorded && next_tid != 0;
  __builtin_memset(rec->pad, 0, sizeof(rec->pad));
  submit(rec);
  return 0;
}

// Interrupt context, without the preempt count (a per-CPU variable this kernel does not
// list in kallsyms, so BPF cannot address it). An interrupt of kernel code runs on the
// CPU's interrupt stack: this frame is then outside the task's stack. An interrupt of user
// code runs on the task's (empty) stack, under a register frame whose orig_ax is negative
// (the vector), where a syscall's holds its number and a kernel thread's is zero.
static __always_inline bool in_interrupt_context(void) {
  struct task_struct* task = bpf_get_current_task_btf();
  __u64 stack_base = (__u64)task->stack;
  __u64 thread_size = CONFIG_KASAN ? 32768 : 16384;
  volatile __u64 frame_marker = 0;
  __u64 here = (__u64)&frame_marker;
  if (here - stack_base >= thread_size) return true;
  if (task->flags & PF_KTHREAD_FLAG) return false;
  struct pt_regs* user_regs = (struct pt_regs*)bpf_task_pt_regs(task);
  return (long)BPF_CORE_READ(user_regs, orig_ax) < 0;
}

// ---- timers: on whose behalf an interrupt wakes --------------------------------------
// A timer's expiry runs in interrupt context on whatever thread the CPU was running; the
// wake-ups and signals it raises are recorded with the thread that armed the timer, known
// from the arming (hrtimer_start in process context: the arming task is current). Every
// timer a thread waits on is an hrtimer: a timed sleep's or wait's own, a timerfd's, a
// POSIX timer's, alarm's and setitimer's.

struct timer_owner {
  __u32 tgid, tid;
};

// hrtimer address -> the thread that last armed it. LRU: an owner whose timer was freed is
// evicted, never leaked. A periodic timer restarted by its own expiry (interrupt context)
// keeps the owner that armed it.
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 65536);
  __type(key, __u64);
  __type(value, struct timer_owner);
} timer_owners SEC(".maps");

// The timer whose expiry this CPU is running, and its owner (tid 0: not known). `outer`: a
// softirq-mode timer's callback that a hard timer interrupt interrupted, restored when the
// inner expiry ends. `masked`: a device interrupt in the middle of a callback, whose
// wake-ups are the device's, not the timer's.
struct expiring {
  __u64 timer, since;
  struct timer_owner owner;
  __u64 outer_timer, outer_since;
  struct timer_owner outer_owner;
  __u32 masked;
  __u32 pad;
};

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct expiring);
} expiring SEC(".maps");

// A callback runs for microseconds: an owner older than this was left by an expiry whose
// end was not seen (the programs were being attached or detached), not by a running one.
#define EXPIRY_MAX_NS 2000000ull

static __always_inline bool in_interrupt_context(void);

// The owner of the timer whose expiry is running on this CPU now, or NULL.
static __always_inline struct timer_owner* expiring_owner(__u64 now) {
  __u32 zero = 0;
  struct expiring* ex = bpf_map_lookup_elem(&expiring, &zero);
  if (!ex || ex->timer == 0 || ex->owner.tid == 0 || ex->masked != 0) return NULL;
  if (now - ex->since > EXPIRY_MAX_NS) return NULL;
  return &ex->owner;
}

SEC("tp_btf/hrtimer_start")
int BPF_PROG(on_hrtimer_start, struct hrtimer* timer) {
  __u64 id = bpf_get_current_pid_tgid();
  if ((__u32)id == 0 || !traced_tgid(id >> 32)) return 0;
  // Restarted from an interrupt (a periodic timer's own expiry, a kernel tick): the task
  // that happens to run armed nothing.
  if (in_interrupt_context()) return 0;
  __u64 key = (__u64)timer;
  struct timer_owner owner = {.tgid = id >> 32, .tid = (__u32)id};
  bpf_map_update_elem(&timer_owners, &key, &owner, BPF_ANY);
  return 0;
}

SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(on_hrtimer_expire_entry, struct hrtimer* timer) {
  __u64 key = (__u64)timer;
  struct timer_owner* owner = bpf_map_lookup_elem(&timer_owners, &key);
  __u32 zero = 0;
  struct expiring* ex = bpf_map_lookup_elem(&expiring, &zero);
  if (!ex || (!owner && ex->timer == 0)) return 0;
  ex->outer_timer = ex->timer;
  ex->outer_since = ex->since;
  ex->outer_owner = ex->owner;
  ex->timer = key;
  ex->since = bpf_ktime_get_ns();
  ex->owner.tgid = owner ? owner->tgid : 0;
  ex->owner.tid = owner ? owner->tid : 0;
  return 0;
}

SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(on_hrtimer_expire_exit, struct hrtimer* timer) {
  __u32 zero = 0;
  struct expiring* ex = bpf_map_lookup_elem(&expiring, &zero);
  if (!ex || ex->timer != (__u64)timer) return 0;
  ex->timer = ex->outer_timer;
  ex->since = ex->outer_since;
  ex->owner = ex->outer_owner;
  ex->outer_timer = 0;
  ex->outer_owner.tgid = ex->outer_owner.tid = 0;
  return 0;
}

// A device interrupt inside a timer's callback (a softirq-mode timer) wakes for the device.
static __always_inline void mask_expiry(bool device_irq_entered) {
  __u32 zero = 0;
  struct expiring* ex = bpf_map_lookup_elem(&expiring, &zero);
  if (!ex || ex->timer == 0) return;
  if (device_irq_entered)
    ex->masked++;
  else if (ex->masked > 0)
    ex->masked--;
}

static __always_inline int record_wake(__u32 type, struct task_struct* p) {
  __u32 target_tgid = p->tgid;
  bool recorder = current_is_recorder();
  if (!traced_tgid(target_tgid) && (recorder || !current_traced())) return 0;
  bool in_irq = in_interrupt_context();
  // The recorder's own wake-ups are left out; an interrupt that happened to land on it
  // woke someone on nobody's behalf, and is kept as woken by no thread (tid 0).
  if (recorder && !in_irq) return 0;
  if (!recorder && !in_irq) {
    // The wake-up happened inside the waker's syscall: that call matters. Not so for an
    // interrupt's: it has nothing to do with the call of the task it landed on, and may have
    // landed while on_sys_enter was still filling that call's record (an interrupt comes
    // between any two instructions), which emitting it here would cut short: a poll with
    // no descriptors and no timeout in the trace.
    struct inflight* call = bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), 0, 0);
    if (call && call->active) emit_enter(call);
  }
  struct cw_rec_wake* rec = reserve(sizeof(*rec));
  if (!rec) return 0;
  fill_header(&rec->h, type, sizeof(*rec));
  if (recorder) rec->h.pid = rec->h.tid = 0;
  rec->target_pid = target_tgid;
  rec->target_tid = p->pid;
  rec->in_irq = in_irq;
  rec->cause_tid = 0;
  struct timer_owner* owner = in_irq ? expiring_owner(rec->h.ts) : NULL;
  if (owner) {
    rec->cause_tid = owner->tid;
    // On an idle CPU (or the recorder) no recorded thread was interrupted: another thread's
    // timer wakes on that thread's behalf, so the record is its. A thread's own timer (a
    // timed sleep) stays a wake-up by no thread, as before.
    if (rec->h.tid == 0 && owner->tid != rec->target_tid) {
      rec->h.pid = owner->tgid;
      rec->h.tid = owner->tid;
    }
  }
  submit(rec);
  return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(on_sched_waking, struct task_struct* p) {
  return record_wake(CW_REC_WAKING, p);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(on_sched_wakeup_new, struct task_struct* p) {
  return record_wake(CW_REC_WAKEUP_NEW, p);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_sched_process_fork, struct task_struct* parent, struct task_struct* child) {
  __u32 parent_tgid = parent->tgid, child_tgid = child->tgid;
  if (!traced_tgid(parent_tgid)) return 0;
  if (filter_pids && child_tgid != parent_tgid) {
    __u8 one = 1;
    bpf_map_update_elem(&traced_pids, &child_tgid, &one, BPF_ANY);
  }
  struct cw_rec_fork* rec = reserve(sizeof(*rec));
  if (!rec) return 0;
  fill_header(&rec->h, CW_REC_FORK, sizeof(*rec));
  rec->h.pid = parent_tgid;
  rec->h.tid = parent->pid;
  rec->child_pid = child_tgid;
  rec->child_tid = child->pid;
  rec->is_thread = child_tgid == parent_tgid;
  rec->child_kernel = (child->flags & PF_KTHREAD_FLAG) != 0;
  bpf_probe_read_kernel_str(rec->child_comm, sizeof(rec->child_comm), child->comm);
  submit(rec);
  return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_sched_process_exec, struct task_struct* p, pid_t old_pid,
             struct linux_binprm* bprm) {
  if (!current_traced()) return 0;
  struct cw_rec_exec* rec = reserve(sizeof(*rec));
  if (!rec) return 0;
  fill_header(&rec->h, CW_REC_EXEC, sizeof(*rec));
  bpf_probe_read_kernel_str(rec->comm, sizeof(rec->comm), p->comm);
  const char* filename = BPF_CORE_READ(bprm, filename);
  if (bpf_probe_read_kernel_str(rec->path, sizeof(rec->path), filename) < 0) rec->path[0] = 0;
  submit(rec);
  return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_sched_process_exit, struct task_struct* p, bool group_dead) {
  __u32 tgid = p->tgid;
  if (!traced_tgid(tgid)) return 0;
  struct cw_rec_exit* rec = reserve(sizeof(*rec));
  if (rec) {
    fill_header(&rec->h, CW_REC_EXIT, sizeof(*rec));
    rec->code = p->exit_code;
    rec->pad = 0;
    submit(rec);
  }
  // A later process given the same pid is not one of ours.
  if (filter_pids && group_dead) bpf_map_delete_elem(&traced_pids, &tgid);
  return 0;
}

SEC("tp_btf/task_rename")
int BPF_PROG(on_task_rename, struct task_struct* task, const char* comm) {
  __u32 tgid = task->tgid;
  if (!traced_tgid(tgid)) return 0;
  struct cw_rec_comm* rec = reserve(sizeof(*rec));
  if (!rec) return 0;
  fill_header(&rec->h, CW_REC_COMM, sizeof(*rec));
  rec->h.pid = tgid;
  rec->h.tid = task->pid;
  bpf_probe_read_kernel_str(rec->comm, sizeof(rec->comm), comm);
  submit(rec);
  return 0;
}

// ---- file descriptors -----------------------------------------------------------------

struct object_info {
  __u64 object;
  __u32 kind;
  __s32 peer_pid;
  __u32 tcp_seq;
};

// Reads through typed kernel pointers are plain loads the verifier guards; a helper call
// per field (BPF_CORE_READ) cost most of a syscall's recording time.
extern void* bpf_rdonly_cast(void* obj, __u32 btf_id) __ksym;
#define KERNEL_CAST(type, ptr) ((type*)bpf_rdonly_cast((void*)(ptr), bpf_core_type_id_kernel(type)))

static __always_inline struct file* fd_file(int fd) {
  if (fd < 0) return NULL;
  struct task_struct* task = bpf_get_current_task_btf();
  struct files_struct* files = task->files;
  if (!files) return NULL;
  struct fdtable* fdt = files->fdt;
  if (!fdt) return NULL;
  if ((unsigned int)fd >= fdt->max_fds) return NULL;
  struct file** table = fdt->fd;
  struct file* file = NULL;
  bpf_probe_read_kernel(&file, sizeof(file), table + fd);
  return file;
}

static __always_inline __u64 mix(__u64 hash, __u64 value) {
  hash ^= value;
  hash *= 0x100000001b3ULL;
  hash ^= hash >> 29;
  return hash;
}

// Hash of the directed 4-tuple source -> destination: a send hashes local -> remote, a
// receive remote -> local, so both ends of one direction agree.
static __always_inline __u64 tcp_flow_hash(struct sock* sk, bool is_send) {
  __u16 family = BPF_CORE_READ(sk, __sk_common.skc_family);
  __u32 local[4] = {}, remote[4] = {};
  if (family == AF_INET6_FAMILY) {
    BPF_CORE_READ_INTO(&local, sk, __sk_common.skc_v6_rcv_saddr.in6_u.u6_addr32);
    BPF_CORE_READ_INTO(&remote, sk, __sk_common.skc_v6_daddr.in6_u.u6_addr32);
    // A v4-mapped address hashes like the plain IPv4 address the other end may use.
    if (local[0] == 0 && local[1] == 0 && local[2] == bpf_htonl(0xffff)) {
      local[2] = 0;
      remote[2] = 0;
    }
  } else {
    local[3] = BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr);
    remote[3] = BPF_CORE_READ(sk, __sk_common.skc_daddr);
  }
  __u64 local_port = BPF_CORE_READ(sk, __sk_common.skc_num);
  __u64 remote_port = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
  __u32* src = is_send ? local : remote;
  __u32* dst = is_send ? remote : local;
  __u64 hash = 0xcbf29ce484222325ULL;
#pragma unroll
  for (int i = 0; i < 4; i++) hash = mix(hash, src[i]);
  hash = mix(hash, is_send ? local_port : remote_port);
#pragma unroll
  for (int i = 0; i < 4; i++) hash = mix(hash, dst[i]);
  hash = mix(hash, is_send ? remote_port : local_port);
  return hash;
}

static __always_inline __s32 pid_number(struct pid* pid) {
  if (!pid) return -1;
  return BPF_CORE_READ(pid, numbers[0].nr);
}

static __always_inline bool is_kind(__u64 f_op, __u64 release, __u64 fops_addr,
                                    __u64 release_addr) {
  return (fops_addr && f_op == fops_addr) || (release_addr && release == release_addr);
}

static __always_inline void resolve_file(struct file* file, bool is_send, struct object_info* out) {
  out->object = 0;
  out->kind = CW_OBJ_NONE;
  out->peer_pid = -1;
  out->tcp_seq = 0;
  if (!file) return;
  file = KERNEL_CAST(struct file, file);
  const struct file_operations* fops = file->f_op;
  __u64 f_op = (__u64)fops;
  __u64 release = fops ? (__u64)fops->release : 0;
  struct inode* inode = file->f_inode;
  __u32 mode = inode ? inode->i_mode : 0;
  void* private_data = file->private_data;
  if (is_kind(f_op, release, eventfd_fops, eventfd_release)) {
    out->kind = CW_OBJ_EVENTFD;
    out->object = (__u64)private_data;
    return;
  }
  if (is_kind(f_op, release, timerfd_fops, timerfd_release)) {
    out->kind = CW_OBJ_TIMERFD;
    out->object = (__u64)private_data;
    return;
  }
  if (is_kind(f_op, release, socket_fops, sock_release) || (mode & S_IFMT_BITS) == S_IFSOCK_BITS) {
    struct sock* sk = KERNEL_CAST(struct socket, private_data)->sk;
    if (!sk) {
      out->kind = CW_OBJ_OTHER_SOCK;
      return;
    }
    __u16 family = sk->__sk_common.skc_family;
    __u16 protocol = sk->sk_protocol;
    if (family == AF_UNIX_FAMILY) {
      struct sock* receiver = is_send ? KERNEL_CAST(struct unix_sock, sk)->peer : sk;
      out->kind = CW_OBJ_UNIX;
      out->object = (__u64)receiver;
      out->peer_pid = pid_number(sk->sk_peer_pid);
      return;
    }
    if ((family == AF_INET_FAMILY || family == AF_INET6_FAMILY) && protocol == IPPROTO_TCP_NUM) {
      struct tcp_sock* tp = (struct tcp_sock*)sk;
      out->kind = CW_OBJ_TCP;
      out->object = tcp_flow_hash(sk, is_send);
      out->tcp_seq = is_send ? BPF_CORE_READ(tp, write_seq) : BPF_CORE_READ(tp, copied_seq);
      return;
    }
    out->kind = CW_OBJ_OTHER_SOCK;
    out->object = (__u64)sk;
    return;
  }
  if (is_kind(f_op, release, pipefifo_fops, pipe_release) || (mode & S_IFMT_BITS) == S_IFIFO_BITS) {
    out->kind = CW_OBJ_PIPE;
    out->object = (__u64)private_data;
    return;
  }
  out->kind = CW_OBJ_FILE;
  out->object = inode ? inode->i_ino : 0;
}

// ---- syscalls -------------------------------------------------------------------------

struct user_timespec {
  __s64 sec;
  __s64 nsec;
};

// -1 when `ptr` is NULL or unreadable.
static __always_inline __s64 read_timespec(__u64 ptr) {
  struct user_timespec ts;
  if (!ptr || bpf_probe_read_user(&ts, sizeof(ts), (void*)ptr) != 0) return -1;
  return ts.sec * 1000000000LL + ts.nsec;
}

static __always_inline __s64 read_timeval(__u64 ptr) {
  struct user_timespec tv;
  if (!ptr || bpf_probe_read_user(&tv, sizeof(tv), (void*)ptr) != 0) return -1;
  return tv.sec * 1000000000LL + tv.nsec * 1000;
}

static __always_inline __s64 millis_timeout(__s64 ms) {
  return ms < 0 ? -1 : ms * 1000000LL;
}

struct user_iovec {
  __u64 base;
  __u64 len;
};

#define MAX_IOVECS 8

// Bytes the first MAX_IOVECS entries of an iovec array describe.
static __always_inline __u64 iovec_bytes(__u64 iov, __u64 iovcnt) {
  __u64 total = 0;
#pragma unroll
  for (int i = 0; i < MAX_IOVECS; i++) {
    if (i >= iovcnt) break;
    struct user_iovec entry;
    if (bpf_probe_read_user(&entry, sizeof(entry), (void*)(iov + i * sizeof(entry))) != 0) break;
    total += entry.len;
  }
  return total;
}

struct user_msghdr_head {
  __u64 name;
  __u32 namelen;
  __u32 pad;
  __u64 iov;
  __u64 iovlen;
};

static __always_inline bool stream_kind(__u32 kind) {
  return kind == CW_OBJ_UNIX || kind == CW_OBJ_PIPE || kind == CW_OBJ_EVENTFD || kind == CW_OBJ_TCP;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(on_sys_enter, struct pt_regs* regs, long id) {
  // The hot path: every syscall on the machine comes here.
  __u32 nr = id;
  if ((unsigned long)id >= CW_MAX_SYSCALLS) return 0;
  __u32* cls_slot = bpf_map_lookup_elem(&syscall_class, &nr);
  if (!cls_slot || *cls_slot == CW_SYS_NONE) return 0;
  __u32 cls = *cls_slot;
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  __u32 tid = (__u32)pid_tgid, tgid = pid_tgid >> 32;
  if (!traced_tgid(tgid)) return 0;

  struct inflight* call = bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), 0,
                                               BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (!call) return 0;
  // Every field is set below or here: no clearing of the whole entry on the hot path.
  call->object = call->user_buf = call->value = call->expires_ns = call->interval_ns = 0;
  call->obj_kind = call->tcp_seq = call->count = 0;
  call->is_send = call->stack_taken = call->emitted = 0;
  call->active = 1;
  struct cw_rec_sys_enter* rec = &call->rec;
  call->seq = __sync_fetch_and_add(&next_seq, 1) + 1;
  call->enter_ts = bpf_ktime_get_ns();
  call->nr = nr;
  call->cls = cls;
  call->fd = -1;
  call->peer_pid = -1;

  __u64 args[6];
  args[0] = regs->di;
  args[1] = regs->si;
  args[2] = regs->dx;
  args[3] = regs->r10;
  args[4] = regs->r8;
  args[5] = regs->r9;

  fill_header(&rec->h, CW_REC_SYS_ENTER, sizeof(*rec));
  rec->h.ts = call->enter_ts;
  rec->seq = call->seq;
  rec->nr = nr;
  rec->sys_class = cls;
#pragma unroll
  for (int i = 0; i < 6; i++) rec->args[i] = args[i];
  rec->resource = 0;
  rec->value = 0;
  rec->count = 0;
  rec->timeout_ns = -1;
  rec->op = 0;
  rec->pad = 0;

  bool is_send = cls == CW_SYS_WRITE || cls == CW_SYS_WRITEV || cls == CW_SYS_SENDMSG;
  struct object_info object;
  if (io_class(cls) || cls == CW_SYS_FD || cls == CW_SYS_TIMERFD_SETTIME) {
    call->fd = (__s32)args[0];
    resolve_file(fd_file(call->fd), is_send, &object);
    call->object = object.object;
    call->obj_kind = object.kind;
    call->peer_pid = object.peer_pid;
    call->tcp_seq = object.tcp_seq;
    rec->resource = object.object;
  }
  call->is_send = is_send;

  switch (cls) {
    case CW_SYS_READ:
    case CW_SYS_WRITE:
      rec->count = args[2];
      call->user_buf = args[1];
      if (call->obj_kind == CW_OBJ_EVENTFD && is_send && args[2] >= 8)
        bpf_probe_read_user(&call->value, sizeof(call->value), (void*)args[1]);
      break;
    case CW_SYS_READV:
    case CW_SYS_WRITEV: rec->count = iovec_bytes(args[1], args[2]); break;
    case CW_SYS_RECVMSG:
    case CW_SYS_SENDMSG: {
      struct user_msghdr_head msg;
      if (bpf_probe_read_user(&msg, sizeof(msg), (void*)args[1]) == 0)
        rec->count = iovec_bytes(msg.iov, msg.iovlen);
      break;
    }
    case CW_SYS_FUTEX: {
      __u32 cmd = (__u32)args[1] & FUTEX_CMD_MASK_BITS;
      rec->resource = args[0];
      rec->op = cmd;
      rec->value = (__u32)args[2];
      // wait (relative), wait_bitset, lock_pi, wait_requeue_pi, lock_pi2 (absolute) take a
      // timespec; the other commands use that argument as a number.
      if (cmd == 0) {
        rec->timeout_ns = read_timespec(args[3]);
      } else if (cmd == 9 || cmd == 6 || cmd == 11 || cmd == 13) {
        rec->timeout_ns = read_timespec(args[3]);
        if (rec->timeout_ns >= 0) rec->h.flags |= CW_ENTER_ABS_TIMEOUT;
      }
      break;
    }
    case CW_SYS_EPOLL_WAIT:
    case CW_SYS_EPOLL_PWAIT2:
      call->fd = (__s32)args[0];
      rec->count = (__u32)args[2];
      call->user_buf = args[1];
      rec->timeout_ns =
          cls == CW_SYS_EPOLL_WAIT ? millis_timeout((__s32)args[3]) : read_timespec(args[3]);
      break;
    case CW_SYS_POLL:
    case CW_SYS_PPOLL:
      rec->count = (__u32)args[1];
      call->user_buf = args[0];
      call->count = (__u32)args[1];
      rec->timeout_ns =
          cls == CW_SYS_POLL ? millis_timeout((__s32)args[2]) : read_timespec(args[2]);
      break;
    case CW_SYS_SELECT:
      rec->count = (__u32)args[0];
      rec->timeout_ns = read_timeval(args[4]);
      break;
    case CW_SYS_PSELECT:
      rec->count = (__u32)args[0];
      rec->timeout_ns = read_timespec(args[4]);
      break;
    case CW_SYS_NANOSLEEP: rec->timeout_ns = read_timespec(args[0]); break;
    case CW_SYS_CLOCK_NANOSLEEP:
      rec->timeout_ns = read_timespec(args[2]);
      if (args[1] & 1) rec->h.flags |= CW_ENTER_ABS_TIMEOUT;  // TIMER_ABSTIME
      break;
    case CW_SYS_TIMERFD_SETTIME: {
      struct user_timespec spec[2];  // it_interval, it_value
      if (call->obj_kind != CW_OBJ_TIMERFD ||
          bpf_probe_read_user(&spec, sizeof(spec), (void*)args[2]) != 0)
        break;
      __s64 interval = spec[0].sec * 1000000000LL + spec[0].nsec;
      __s64 value = spec[1].sec * 1000000000LL + spec[1].nsec;
      call->interval_ns = interval;
      if (value == 0) {
        call->expires_ns = 0;
      } else if (args[1] & 1) {  // TFD_TIMER_ABSTIME, in the timer's clock
        struct timerfd_ctx* timer = (struct timerfd_ctx*)call->object;
        int clockid = BPF_CORE_READ(timer, clockid);
        if (clockid == 0 || clockid == 8)  // CLOCK_REALTIME(_ALARM)
          value -= realtime_offset_ns;
        else if (clockid == 7 || clockid == 9)  // CLOCK_BOOTTIME(_ALARM)
          value -= bpf_ktime_get_boot_ns() - bpf_ktime_get_ns();
        call->expires_ns = value;
      } else {
        call->expires_ns = call->enter_ts + value;
      }
      break;
    }
    case CW_SYS_WAIT:
      if (nr == nr_waitid) {
        rec->resource = args[1];
        rec->op = (__u32)args[0];
      } else {
        rec->resource = (__s64)(__s32)args[0];
      }
      break;
    case CW_SYS_FD:
      if (nr == nr_flock || nr == nr_fcntl) rec->op = (__u32)args[1];
      // Lock calls, so rules can tell a try from a wait and a lock from an unlock: flock's
      // whole operation (LOCK_NB included); F_SETLK*'s l_type, the first field of struct
      // flock (F_RDLCK 0, F_WRLCK 1, F_UNLCK 2).
      if (nr == nr_flock) rec->value = (__u32)args[1];
      if (nr == nr_fcntl && (args[1] == 6 || args[1] == 7 || args[1] == 37 || args[1] == 38)) {
        __s16 type = -1;
        if (args[2] && bpf_probe_read_user(&type, sizeof(type), (void*)args[2]) == 0)
          rec->value = (__u16)type;
      }
      break;
    case CW_SYS_KILL:
      if (nr == nr_tgkill) {
        rec->resource = (__s64)(__s32)args[1];
        rec->value = (__u32)args[2];
      } else {
        rec->resource = (__s64)(__s32)args[0];
        rec->value = (__u32)args[1];
      }
      break;
    default: break;
  }
  rec->fd = call->fd;
  rec->obj_kind = call->obj_kind;
  if (!lazy_class(cls) || stack_mode == 2) emit_enter(call);
  if (stack_mode == 2) call->stack_taken = take_stack(ctx, tid, tgid, call->seq, 0);

  return 0;
}

static __always_inline __u64 advance_stream(__u64 object, bool is_send, __u64 len) {
  struct stream_offsets* offsets = bpf_map_lookup_elem(&streams, &object);
  if (!offsets) {
    struct stream_offsets zero = {};
    bpf_map_update_elem(&streams, &object, &zero, BPF_NOEXIST);
    offsets = bpf_map_lookup_elem(&streams, &object);
    if (!offsets) return 0;
  }
  return is_send ? __sync_fetch_and_add(&offsets->sent, len)
                 : __sync_fetch_and_add(&offsets->received, len);
}

static __always_inline void emit_xfer(struct inflight* call, __u64 object, __s64 ret) {
  __u64 len = ret;
  if (call->obj_kind == CW_OBJ_EVENTFD) {
    if (ret != 8) return;
    if (call->is_send) {
      len = call->value;
    } else if (bpf_probe_read_user(&len, sizeof(len), (void*)call->user_buf) != 0) {
      return;
    }
  }
  if (object == 0) return;
  struct cw_rec_xfer* rec = reserve(sizeof(*rec));
  if (!rec) return;
  fill_header(&rec->h, CW_REC_XFER, sizeof(*rec));
  rec->seq = call->seq;
  rec->object = object;
  rec->offset =
      call->obj_kind == CW_OBJ_TCP ? call->tcp_seq : advance_stream(object, call->is_send, len);
  rec->len = len;
  rec->fd = call->fd;
  rec->peer_pid = call->peer_pid;
  rec->obj_kind = call->obj_kind;
  rec->is_send = call->is_send;
  submit(rec);
}

struct user_epoll_event {
  __u32 events;
  __u32 data_low;
  __u32 data_high;
} __attribute__((packed));

struct user_pollfd {
  __s32 fd;
  __s16 events;
  __s16 revents;
};

static __always_inline void emit_ready(struct inflight* call, __s64 ret) {
  struct cw_rec_ready* rec = reserve(sizeof(*rec));
  if (!rec) return;
  fill_header(&rec->h, CW_REC_READY, sizeof(*rec));
  rec->seq = call->seq;
  rec->pad = 0;
  __builtin_memset(rec->fds, 0, sizeof(rec->fds));
  __builtin_memset(rec->events, 0, sizeof(rec->events));
  rec->n = 0;
  if (call->cls == CW_SYS_EPOLL_WAIT || call->cls == CW_SYS_EPOLL_PWAIT2) {
    for (int i = 0; i < CW_MAX_READY; i++) {
      if (i >= ret) break;
      struct user_epoll_event event;
      if (bpf_probe_read_user(&event, sizeof(event), (void*)(call->user_buf + i * sizeof(event))) !=
          0)
        break;
      rec->fds[i] = event.data_low;
      rec->events[i] = event.events;
      rec->n = i + 1;
    }
  } else {
    // The count lives in the record, not a register: the verifier then sees one state per
    // iteration instead of one per (iteration, count) pair.
    for (int i = 0; i < MAX_POLL_SCAN; i++) {
      if (i >= call->count) break;
      struct user_pollfd entry;
      if (bpf_probe_read_user(&entry, sizeof(entry), (void*)(call->user_buf + i * sizeof(entry))) !=
          0)
        break;
      if (entry.revents == 0) continue;
      __u32 slot = rec->n;
      if (slot >= CW_MAX_READY) break;
      rec->fds[slot] = entry.fd;
      rec->events[slot] = (__u16)entry.revents;
      rec->n = slot + 1;
    }
  }
  submit(rec);
}

static __always_inline void emit_timer(__u32 op, __u64 timer, __u64 expires, __u64 interval) {
  struct cw_rec_timer* rec = reserve(sizeof(*rec));
  if (!rec) return;
  fill_header(&rec->h, CW_REC_TIMER, sizeof(*rec));
  rec->timer = timer;
  rec->expires_ns = expires;
  rec->interval_ns = interval;
  rec->op = op;
  rec->pad = 0;
  submit(rec);
}

// Whether the exit of a call reports something of its own (see the switch in on_sys_exit).
static __always_inline bool exit_has_news(struct inflight* call, long ret) {
  if (io_class(call->cls))
    return (ret > 0 && stream_kind(call->obj_kind)) ||
           (ret == 8 && call->obj_kind == CW_OBJ_TIMERFD && call->cls == CW_SYS_READ);
  switch (call->cls) {
    case CW_SYS_EPOLL_WAIT:
    case CW_SYS_EPOLL_PWAIT2:
    case CW_SYS_POLL:
    case CW_SYS_PPOLL: return ret > 0;
    default: return false;
  }
}

SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs* regs, long ret) {
  __u32 nr = regs->orig_ax;
  if (nr >= CW_MAX_SYSCALLS) return 0;
  __u32* cls_slot = bpf_map_lookup_elem(&syscall_class, &nr);
  if (!cls_slot || *cls_slot == CW_SYS_NONE) return 0;
  struct inflight* call = bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), 0, 0);
  if (!call || !call->active) return 0;
  call->active = 0;
  if (call->nr != nr) return 0;
  if (!call->emitted && !exit_has_news(call, ret)) return 0;  // it did nothing worth a record
  emit_enter(call);

  struct cw_rec_sys_exit* rec = reserve(sizeof(*rec));
  if (rec) {
    fill_header(&rec->h, CW_REC_SYS_EXIT, sizeof(*rec));
    rec->seq = call->seq;
    rec->nr = nr;
    rec->pad = 0;
    rec->ret = ret;
    submit(rec);
  }

  switch (call->cls) {
    case CW_SYS_READ:
    case CW_SYS_WRITE:
    case CW_SYS_READV:
    case CW_SYS_WRITEV:
    case CW_SYS_RECVMSG:
    case CW_SYS_SENDMSG:
      if (ret > 0 && stream_kind(call->obj_kind)) emit_xfer(call, call->object, ret);
      if (ret == 8 && call->obj_kind == CW_OBJ_TIMERFD && call->cls == CW_SYS_READ)
        emit_timer(CW_TIMER_FIRE, call->object, 0, 0);
      break;
    case CW_SYS_EPOLL_WAIT:
    case CW_SYS_EPOLL_PWAIT2:
    case CW_SYS_POLL:
    case CW_SYS_PPOLL:
      if (ret > 0) emit_ready(call, ret);
      break;
    case CW_SYS_TIMERFD_SETTIME:
      if (ret == 0 && call->obj_kind == CW_OBJ_TIMERFD) {
        if (call->expires_ns == 0)
          emit_timer(CW_TIMER_CANCEL, call->object, 0, 0);
        else
          emit_timer(CW_TIMER_ARM, call->object, call->expires_ns, call->interval_ns);
      }
      break;
    default: break;
  }
  return 0;
}

// ---- interrupts and signals -----------------------------------------------------------

static __always_inline int record_irq(__u32 op, int irq, struct irqaction* action) {
  if (op == CW_HARDIRQ_ENTER || op == CW_HARDIRQ_EXIT) mask_expiry(op == CW_HARDIRQ_ENTER);
  __u64 id = bpf_get_current_pid_tgid();
  if ((__u32)id == 0 || !traced_tgid(id >> 32)) return 0;
  struct cw_rec_irq* rec = reserve(sizeof(*rec));
  if (!rec) return 0;
  fill_header(&rec->h, CW_REC_IRQ, sizeof(*rec));
  rec->op = op;
  rec->irq = irq;
  __builtin_memset(rec->name, 0, sizeof(rec->name));
  if (action) bpf_probe_read_kernel_str(rec->name, sizeof(rec->name), BPF_CORE_READ(action, name));
  submit(rec);
  return 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(on_irq_entry, int irq, struct irqaction* action) {
  return record_irq(CW_HARDIRQ_ENTER, irq, action);
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(on_irq_exit, int irq, struct irqaction* action, int result) {
  return record_irq(CW_HARDIRQ_EXIT, irq, NULL);
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(on_softirq_entry, unsigned int vec) {
  return record_irq(CW_SOFTIRQ_ENTER, vec, NULL);
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(on_softirq_exit, unsigned int vec) {
  return record_irq(CW_SOFTIRQ_EXIT, vec, NULL);
}

SEC("tp_btf/signal_generate")
int BPF_PROG(on_signal_generate, int sig, struct kernel_siginfo* info, struct task_struct* task,
             int group, int result) {
  __u32 target_tgid = task->tgid;
  bool recorder = current_is_recorder();
  if (!recorder && !current_traced() && !traced_tgid(target_tgid)) return 0;
  // A timer's signal raised in an interrupt that landed on the recorder is its owner's;
  // the recorder's own signals are left out.
  struct timer_owner* owner = NULL;
  if (in_interrupt_context()) owner = expiring_owner(bpf_ktime_get_ns());
  if (recorder && (!owner || !traced_tgid(target_tgid))) return 0;
  struct cw_rec_signal* rec = reserve(sizeof(*rec));
  if (!rec) return 0;
  fill_header(&rec->h, CW_REC_SIGNAL, sizeof(*rec));
  rec->op = CW_SIGNAL_GENERATE;
  rec->sig = sig;
  rec->target_pid = target_tgid;
  rec->target_tid = task->pid;
  rec->cause_tid = 0;
  rec->pad = 0;
  if (owner) {
    rec->cause_tid = owner->tid;
    // As in record_wake: a signal raised on an idle CPU (or the recorder) is the owner's.
    if (rec->h.tid == 0 || recorder) {
      rec->h.pid = owner->tgid;
      rec->h.tid = owner->tid;
    }
  }
  submit(rec);
  return 0;
}

SEC("tp_btf/signal_deliver")
int BPF_PROG(on_signal_deliver, int sig, struct kernel_siginfo* info, struct k_sigaction* ka) {
  if (!current_traced()) return 0;
  struct cw_rec_signal* rec = reserve(sizeof(*rec));
  if (!rec) return 0;
  fill_header(&rec->h, CW_REC_SIGNAL, sizeof(*rec));
  rec->op = CW_SIGNAL_DELIVER;
  rec->sig = sig;
  rec->target_pid = 0;
  rec->target_tid = 0;
  rec->cause_tid = 0;
  rec->pad = 0;
  submit(rec);
  return 0;
}

// ---- instrumentation: function boundaries, flag-access instructions, watchpoints ------
// Uprobes are attached per file with pid -1, so they fire in every process that maps the
// file; the pid filter decides here, as for the tracepoints.

static __always_inline int record_call(struct pt_regs* ctx, __u32 is_exit) {
  if (!current_traced()) return 0;
  struct cw_rec_call* rec = reserve(sizeof(*rec));
  if (!rec) return 0;
  fill_header(&rec->h, CW_REC_CALL, sizeof(*rec));
  rec->fn_index = (__u32)bpf_get_attach_cookie(ctx);
  rec->is_exit = is_exit;
  // At a uretprobe the ip is the caller's return address, not the function's.
  rec->address = is_exit ? 0 : PT_REGS_IP(ctx);
  submit(rec);
  return 0;
}

SEC("uprobe")
int on_function_entry(struct pt_regs* ctx) {
  return record_call(ctx, 0);
}

SEC("uretprobe")
int on_function_exit(struct pt_regs* ctx) {
  return record_call(ctx, 1);
}

// What a thread's last flag store will have written once it has run (see cw_site_kind).
struct flag_arm {
  __u64 ts;  // just before the store: the write's time (see emit_probed_access)
  __u64 addr;
  __u64 site_ip;
  __u64 next_ip;
  __u32 flag_index;
  __u32 size;
  __u32 access;  // CW_FLAG_WRITE or CW_FLAG_READ
  __u32 pad;
};

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);  // an arm whose thread died is evicted, not leaked
  __uint(max_entries, 16384);
  __type(key, __u32);  // tid
  __type(value, struct flag_arm);
} flag_arms SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __type(key, struct cw_watch_key);
  __type(value, struct cw_watch_info);
} watched SEC(".maps");

// The flag's value, zero-extended; false when the memory cannot be read. One constant
// size per case: the verifier loses the bounds of a computed size.
static __always_inline bool read_flag(__u64 addr, __u32 size, __u64* value) {
  *value = 0;  // little-endian: the low bytes are read into
  switch (size) {
    case 1: return bpf_probe_read_user(value, 1, (void*)addr) == 0;
    case 2: return bpf_probe_read_user(value, 2, (void*)addr) == 0;
    case 4: return bpf_probe_read_user(value, 4, (void*)addr) == 0;
    case 8: return bpf_probe_read_user(value, 8, (void*)addr) == 0;
    default: return false;
  }
}

static __always_inline struct cw_rec_flag* start_flag_record(__u32 flag_index, __u8 access,
                                                             __u8 source, __u32 size) {
  struct cw_rec_flag* rec = reserve(sizeof(*rec));
  if (!rec) return NULL;
  fill_header(&rec->h, CW_REC_FLAG, sizeof(*rec));
  rec->flag_index = flag_index;
  rec->access = access;
  rec->source = source;
  rec->size = size;
  rec->insn_len = 0;
  __builtin_memset(rec->insn, 0, sizeof(rec->insn));
  return rec;
}

// `ts`: 0 for now; a write passes the time its store was armed. The value is read after
// the store, a trap later, and a thread on another CPU may have read it in between: stamped
// with the arm's time, the write still comes before every read that saw it.
static __always_inline void emit_probed_access(__u32 flag_index, __u8 access, __u32 size,
                                               __u64 addr, __u64 ip, __u64 ts) {
  __u64 value;
  if (!read_flag(addr, size, &value)) return;
  struct cw_rec_flag* rec = start_flag_record(flag_index, access, CW_FLAG_PROBE, size);
  if (!rec) return;
  if (ts) rec->h.ts = ts;
  rec->addr = addr;
  rec->value = value;
  rec->ip = ip;
  submit(rec);
}

SEC("uprobe")
int on_flag_site(struct pt_regs* ctx) {
  if (!current_traced()) return 0;
  __u64 cookie = bpf_get_attach_cookie(ctx);
  __u64 ip = PT_REGS_IP(ctx);
  __u32 tid = (__u32)bpf_get_current_pid_tgid();
  __u32 kind = cw_site_kind(cookie);

  if (kind == CW_SITE_WRITE_AFTER) {
    struct flag_arm* arm = bpf_map_lookup_elem(&flag_arms, &tid);
    if (!arm || arm->next_ip != ip) return 0;  // reached by a jump, not after the store
    emit_probed_access(arm->flag_index, arm->access, arm->size, arm->addr, arm->site_ip,
                       arm->access == CW_FLAG_WRITE ? arm->ts : 0);
    bpf_map_delete_elem(&flag_arms, &tid);
    return 0;
  }

  __u64 addr = ip + cw_site_delta(cookie);
  if (cw_site_via_got(cookie) && bpf_probe_read_user(&addr, sizeof(addr), (void*)addr) != 0)
    return 0;
  if (kind == CW_SITE_READ) {
    emit_probed_access(cw_site_flag(cookie), CW_FLAG_READ, cw_site_size(cookie), addr, ip, 0);
    return 0;
  }
  if (kind != CW_SITE_WRITE_ARM && kind != CW_SITE_READ_ARM) return 0;
  // A store right after another flag store is also the first one's WRITE_AFTER site, and
  // the two uprobes run in either order: finish the pending write before arming anew.
  struct flag_arm* pending = bpf_map_lookup_elem(&flag_arms, &tid);
  if (pending && pending->next_ip == ip)
    emit_probed_access(pending->flag_index, pending->access, pending->size, pending->addr,
                       pending->site_ip, pending->access == CW_FLAG_WRITE ? pending->ts : 0);
  struct flag_arm arm = {
      .ts = bpf_ktime_get_ns(),
      .addr = addr,
      .site_ip = ip,
      .next_ip = ip + cw_site_length(cookie),
      .flag_index = cw_site_flag(cookie),
      .size = cw_site_size(cookie),
      .access = kind == CW_SITE_WRITE_ARM ? CW_FLAG_WRITE : CW_FLAG_READ,
      .pad = 0,
  };
  bpf_map_update_elem(&flag_arms, &tid, &arm, BPF_ANY);
  return 0;
}

// A hardware watchpoint's trap: it comes after the accessing instruction, with the
// thread's user registers (ip = the next instruction) and the watched address.
SEC("perf_event")
int on_watch_hit(struct bpf_perf_event_data* ctx) {
  if (!current_traced()) return 0;
  struct cw_watch_key key = {.tgid = bpf_get_current_pid_tgid() >> 32, .pad = 0, .addr = ctx->addr};
  struct cw_watch_info* watch = bpf_map_lookup_elem(&watched, &key);
  if (!watch) return 0;  // an inherited copy in a forked (maybe exec'd) process
  __u64 value;
  if (!read_flag(ctx->addr, watch->size, &value)) return 0;
  struct cw_rec_flag* rec =
      start_flag_record(watch->flag_index, watch->writes_only ? CW_FLAG_WRITE : CW_FLAG_UNKNOWN,
                        CW_FLAG_WATCH, watch->size);
  if (!rec) return 0;
  __u64 ip = PT_REGS_IP(&ctx->regs);
  rec->addr = ctx->addr;
  rec->value = value;
  rec->ip = ip;
  // The instruction that trapped ends at ip; x86 instructions are at most 15 bytes. Near
  // the start of a mapping only the bytes on ip's own page can be read.
  if (bpf_probe_read_user(rec->insn, CW_INSN_BEFORE, (void*)(ip - CW_INSN_BEFORE)) == 0) {
    rec->insn_len = CW_INSN_BEFORE;
  } else {
    __u32 on_page = ip & 0xfff;
    if (on_page > 0 && on_page < CW_INSN_BEFORE &&
        bpf_probe_read_user(rec->insn, on_page, (void*)(ip - on_page)) == 0)
      rec->insn_len = on_page;
    else
      __builtin_memset(rec->insn, 0, sizeof(rec->insn));
  }
  submit(rec);
  return 0;
}

// record --sample HZ: a cpu-clock tick on one CPU (one perf event per online CPU). The
// thread it interrupted is recorded with its user stack, as at a blocking syscall.
SEC("perf_event")
int on_cpu_clock(struct bpf_perf_event_data* ctx) {
  __u64 id = bpf_get_current_pid_tgid();
  __u32 tid = (__u32)id, tgid = id >> 32;
  if (tid == 0 || !traced_tgid(tgid)) return 0;
  struct task_struct* task = bpf_get_current_task_btf();
  if (task->flags & PF_KTHREAD_FLAG) return 0;
  struct cw_rec_sample* rec = reserve(sizeof(*rec));
  if (!rec) return 0;
  fill_header(&rec->h, CW_REC_SAMPLE, sizeof(*rec));
  __u64 ts = rec->h.ts;
  rec->period = ctx->sample_period;
  // Kernel addresses have the top bit set (the context allows no 2-byte read of cs).
  rec->user = (PT_REGS_IP(&ctx->regs) >> 63) == 0;
  rec->pad = 0;
  submit(rec);
  if (stack_mode != 0) take_stack(ctx, tid, tgid, ts, CW_STACK_OF_SAMPLE);
  return 0;
}
