// Interrupt context, and on whose behalf an interrupt wakes.
//
// A timer's expiry runs in interrupt context on whatever thread the CPU was running; the
// wake-ups and signals it raises are recorded with the thread that armed the timer, known
// from the arming (hrtimer_start in process context: the arming task is current). Every
// timer a thread waits on is an hrtimer: a timed sleep's or wait's own, a timerfd's, a
// POSIX timer's, alarm's and setitimer's.
#pragma once

// Interrupt context, without the preempt count (a per-CPU variable this kernel does not
// list in kallsyms, so BPF cannot address it). An interrupt of kernel code runs on the
// CPU's interrupt stack: the tracepoint's arguments (`ctx`, which the tracepoint's caller
// keeps on its stack) are then outside the task's stack. An interrupt of user code runs on
// the task's (empty) stack, under a register frame whose orig_ax is negative (the vector),
// where a syscall's holds its number and a kernel thread's is zero. Not the program's own
// frame: a kernel may run a program with a deep frame on a stack of its own (a BPF private
// stack), which is no task's.
static __always_inline bool in_interrupt_context(void* ctx) {
  struct task_struct* task = bpf_get_current_task_btf();
  __u64 stack_base = (__u64)task->stack;
  __u64 thread_size = CONFIG_KASAN ? 32768 : 16384;
  __u64 here = (__u64)ctx;
  if (here - stack_base >= thread_size) return true;
  if (task->flags & PF_KTHREAD_FLAG) return false;
  return (long)user_regs_of(task)->orig_ax < 0;
}

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
  __u64 id = current_ids();
  if ((__u32)id == 0 || !traced_tgid(id >> 32)) return 0;
  // Restarted from an interrupt (a periodic timer's own expiry, a kernel tick): the task
  // that happens to run armed nothing.
  if (in_interrupt_context(ctx)) return 0;
  __u64 key = (__u64)timer;
  // Most starts re-arm a timer the same thread armed last: the one a timed wait keeps on
  // its kernel stack, at the same place at every call of the same loop. An update takes
  // the map's lock and swaps in a new element; a lookup that finds the owner there already
  // touches less (bench/RESULTS.md: 212-219 ns a start against 233-257 in a loop of timed
  // ppolls, and a start costs 500-640 ns under pgbench at a fixed rate, its lines cold).
  const struct timer_owner* known = bpf_map_lookup_elem(&timer_owners, &key);
  if (known && known->tgid == (__u32)(id >> 32) && known->tid == (__u32)id) return 0;
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
  // Every CPU's tick is an hrtimer: a block staged on a CPU that has since run one task
  // without a record goes out within STAGE_FLUSH_NS and a tick.
  if (stage_records) flush_cpu(true);
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
