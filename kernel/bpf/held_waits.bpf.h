// Waits held back (record --min-wait, with calls taken at the scheduler). Most waits on a
// busy server last microseconds and end as they began, with a request answered; writing
// each one's switches, call and wake-up is most of what recording costs a database
// (bench/RESULTS.md). Past a thread's budget of waits written in full (hold_wait), a thread
// that blocks is written nowhere at first: when and where its wait began, and the call it
// waits in, stay in its task storage. The wait is written, stamped when it began
// (CW_SWITCH_HELD), once it has lasted min_wait_ns: by the wake-up that ends it after that,
// by the thread's next switch in if no wake-up was seen, or by the recorder's periodic
// pass over the tasks (on_task_pass) while it still waits. A shorter wait leaves out its
// switches and its wake-up (the thread seems to run on through it) and is counted in the
// thread's CW_REC_SHORT_WAITS.
#pragma once

#define WAIT_NONE 0
#define WAIT_HELD 1     // blocked, not written (yet)
#define WAIT_WRITTEN 2  // blocked long enough: written
#define WAIT_SHORT 3    // woken before min_wait_ns: left out, its switch in too

// A short-wait summary is written once the waits it counts span this long.
#define SHORT_WAITS_SPAN_NS 10000000ULL

static __always_inline bool holding_waits(void) {
  return calls_at_switch && min_wait_ns != 0;
}

// Claims the held wait of `st` as `phase` (WAIT_WRITTEN or WAIT_SHORT): false when another
// program claimed it first (the periodic pass and a wake-up can meet).
static __always_inline bool claim_wait(struct inflight* st, __u32 phase) {
  return __sync_val_compare_and_swap(&st->wait_phase, WAIT_HELD, phase) == WAIT_HELD;
}

// Writes the short waits counted for thread `tid` of `tgid`, and starts counting anew.
static __always_inline void write_short_waits(struct inflight* st, __u32 tgid, __u32 tid) {
  if (st->short_count == 0) return;
  struct cw_rec_short_waits* rec = reserve(sizeof(*rec));
  if (rec) {
    fill_header(&rec->h, CW_REC_SHORT_WAITS, sizeof(*rec));
    rec->h.pid = tgid;
    rec->h.tid = tid;
    rec->since = st->short_since;
    rec->total_ns = st->short_ns;
    rec->uninterruptible_ns = st->short_d_ns;
    rec->count = st->short_count;
    rec->waker_tid = st->short_waker;
    rec->runnable_ns = st->short_r_ns;
    rec->preempted = st->short_r_count;
    rec->pad = 0;
    submit(rec);
  }
  st->short_count = 0;
  st->short_ns = 0;
  st->short_d_ns = 0;
  st->short_r_count = 0;
  st->short_r_ns = 0;
  st->short_since = 0;
}

// Writes the short waits the thread `task` (the current one: running, so no wake-up counts
// into them meanwhile) has counted so far, before a record of its own the diagnosis may take
// as a boundary: a wake-up or a signal it raises, a call or bytes it writes, its exit. The
// time before that record was spent so, not running; left counting until the span passes or
// its next wait is written, the last of it was lost at the thread's exit and misread as
// running before a hand-off (a loop of short fsyncs that then wakes its reader). `st`: its
// storage, if at hand.
static __always_inline void write_own_short_waits(struct inflight* st, struct task_struct* task) {
  if (!holding_waits()) return;
  if (!st) st = bpf_task_storage_get(&inflight, task, 0, 0);
  if (st && st->short_count != 0) write_short_waits(st, task->tgid, task->pid);
}

// Whether the thread of `st` may still write one more event of class `cls` in full now
// (one is spent if so): wait_budget_ns of credit each, earned at one ns a ns up to
// wait_burst events' worth.
static __always_inline bool spend_budget(struct inflight* st, __u32 cls, __u64 now) {
  struct wait_budget* budget = &st->budget[cls & (CW_WAIT_BUDGETS - 1)];
  __u64 credit = budget->credit + (now - budget->counted);
  if (now < budget->counted || credit > wait_budget_ns * wait_burst)
    credit = wait_budget_ns * wait_burst;
  budget->counted = now;
  if (credit >= wait_budget_ns) {
    budget->credit = credit - wait_budget_ns;
    return true;
  }
  budget->credit = credit;
  return false;
}

// The current task `prev` blocks in state `state`. Within its budget for waits in that
// class of call (wait_budget_ns of credit a wait, earned at one ns a ns up to wait_burst
// waits' worth) its wait is written as any other: a thread that waits a few hundred times
// a second, as most programs one diagnoses do, loses nothing, and one that spins in a
// sleep loop still has its first waits in another call written (the request a server
// waited for after its start-up polls). Beyond it the wait is held, with the recorded call
// it is in, if any (whose entry record is filled now, in its own context): true.
static __always_inline bool hold_wait(struct task_struct* prev, __u8 state, __u64 now) {
  struct inflight* st = bpf_task_storage_get(&inflight, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (!st) return false;
  const struct pt_regs* regs;
  long nr = 0;
  __u32 cls = CW_SYS_NONE;
  const bool in_call = in_recorded_call(prev, &regs, &nr, &cls);
  if (spend_budget(st, cls, now)) {
    st->wait_phase = WAIT_NONE;
    write_short_waits(st, prev->tgid, prev->pid);  // the short waits before it, first
    return false;
  }
  if (in_call)
    begin_call_from(st, regs, nr, cls, now);
  else
    st->active = st->at_switch = 0;
  st->wait_ts = now;
  st->wait_cpu = bpf_get_smp_processor_id();
  st->wait_state = state;
  st->wait_phase = WAIT_HELD;
  return true;
}

// The current task `prev` is preempted: it stays runnable, and gets a CPU again once the
// scheduler picks it. On a busy server that is most of its switches (a client it answers
// woken onto its CPU takes it at once), and nearly all last microseconds: such a
// preemption is held as a wait is, within the same budget rule (its own slot, no class of
// call), and written (state R, stamped when it began) only once it has lasted min_wait_ns;
// a shorter one is counted, its time as runnable, in the thread's short waits. Nothing of
// the call the thread is in changes: a preempted thread neither blocks in it nor leaves it.
static __always_inline bool hold_preemption(struct task_struct* prev, __u64 now) {
  struct inflight* st = bpf_task_storage_get(&inflight, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (!st) return false;
  if (spend_budget(st, CW_PREEMPT_BUDGET, now)) {
    st->wait_phase = WAIT_NONE;
    write_short_waits(st, prev->tgid, prev->pid);
    return false;
  }
  st->wait_ts = now;
  st->wait_cpu = bpf_get_smp_processor_id();
  st->wait_state = 'R';
  st->wait_phase = WAIT_HELD;
  return true;
}

// A held wait claimed as WAIT_SHORT, `waited` ns long, woken by `waker_tid`.
static __always_inline void count_short_wait(struct inflight* st, __u64 waited, __u32 tgid,
                                             __u32 tid, __u32 waker_tid) {
  if (st->short_count == 0) st->short_since = st->wait_ts;
  st->short_count += 1;
  st->short_ns += waited;
  if (st->wait_state == 'D') st->short_d_ns += waited;
  if (st->wait_state == 'R') {
    st->short_r_count += 1;
    st->short_r_ns += waited;
  } else {
    st->short_waker = waker_tid;
  }
  if (st->wait_ts + waited - st->short_since >= SHORT_WAITS_SPAN_NS)
    write_short_waits(st, tgid, tid);
}

// Writes a held wait claimed as WAIT_WRITTEN: the short waits before it, its call's entry
// (filled when it blocked) and its switch away, stamped when it began.
static __always_inline void write_held_wait(struct inflight* st, __u32 tgid, __u32 tid) {
  write_short_waits(st, tgid, tid);
  if (st->wait_state != 'R' && st->active && st->at_switch) emit_enter(st);
  struct cw_rec_switch* rec = reserve(sizeof(*rec));
  if (!rec) return;
  fill_header_at(&rec->h, CW_REC_SWITCH, sizeof(*rec), st->wait_ts);
  rec->h.cpu = st->wait_cpu;
  rec->h.pid = tgid;
  rec->h.tid = tid;
  rec->h.flags = CW_SWITCH_HELD;
  rec->next_pid = rec->next_tid = 0;
  rec->prev_state = st->wait_state;
  rec->prev_kernel = rec->next_kernel = rec->next_recorded = 0;
  __builtin_memset(rec->pad, 0, sizeof(rec->pad));
  submit(rec);
}

// Whether the wake-up of `p`, now, ends a wait too short to write (then it is counted, and
// the wake-up is not written). A held wait that has lasted long enough is written first.
static __always_inline bool wakes_short_wait(struct task_struct* p, __u32 waker_tid) {
  struct inflight* st = bpf_task_storage_get(&inflight, p, 0, 0);
  // A preempted thread (state R) is not waiting for the wake-up: it ran on the way to a
  // sleep when the scheduler took its CPU, and is woken before it slept.
  if (!st || st->wait_phase != WAIT_HELD || st->wait_state == 'R') return false;
  __u64 waited = bpf_ktime_get_ns() - st->wait_ts;
  if (waited >= min_wait_ns) {
    if (claim_wait(st, WAIT_WRITTEN)) write_held_wait(st, p->tgid, p->pid);
    return false;
  }
  if (!claim_wait(st, WAIT_SHORT)) return false;
  count_short_wait(st, waited, p->tgid, p->pid, waker_tid);
  return true;
}

// Whether the switch in of `next` is left out: its wait was too short to write. A wait no
// wake-up was seen for is settled here.
static __always_inline bool switch_in_left_out(struct task_struct* next, __u64 now) {
  struct inflight* st = bpf_task_storage_get(&inflight, next, 0, 0);
  if (!st) return false;
  __u32 phase = st->wait_phase;
  if (phase == WAIT_NONE) return false;
  bool left_out = phase == WAIT_SHORT;
  if (phase == WAIT_HELD) {
    __u64 waited = now - st->wait_ts;
    if (waited >= min_wait_ns) {
      if (claim_wait(st, WAIT_WRITTEN)) write_held_wait(st, next->tgid, next->pid);
    } else if (claim_wait(st, WAIT_SHORT)) {
      count_short_wait(st, waited, next->tgid, next->pid, 0);
      left_out = true;
    }
  }
  st->wait_phase = WAIT_NONE;
  // A held sleep's call, never written, ends unseen; a preemption's call goes on.
  if (left_out && st->wait_state != 'R') st->active = st->at_switch = 0;
  return left_out;
}

// Sends held back the same way (transfers.bpf.h). Of the sends no wake-up joins to their
// reader, a busy server's are nearly all read within microseconds (the reader was runnable,
// on its way to the read): past the thread's budget a send is kept in its stream's entry
// and written only once its bytes have waited min_wait_ns unread (a request queued behind
// other work), by the read that takes them or by the pass over the tasks; bytes read sooner
// leave no record, nor does their read.

// Writes the send held in `entry` of stream `object`, claimed by its time `sent`: stamped
// then, on its thread and CPU. The reads of its bytes are written from now on.
// A transfer written later than it happened (CW_XFER_LATE): stamped `ts`, on thread `tid` of
// `pid` and CPU `cpu`, with no call around it.
static __always_inline void write_late_xfer(__u64 ts, __u32 pid, __u32 tid, __u32 cpu, __u64 object,
                                            __u32 kind, __u64 offset, __u64 len, __s32 fd,
                                            __s32 peer_pid, bool is_send) {
  struct cw_rec_xfer* rec = reserve(sizeof(*rec));
  if (!rec) return;
  fill_header_at(&rec->h, CW_REC_XFER, sizeof(*rec), ts);
  rec->h.pid = pid;
  rec->h.tid = tid;
  rec->h.cpu = cpu;
  rec->h.flags = CW_XFER_QUEUED | CW_XFER_LATE;
  rec->seq = 0;
  rec->object = object;
  rec->offset = offset;
  rec->len = len;
  rec->fd = fd;
  rec->peer_pid = peer_pid;
  rec->obj_kind = kind;
  rec->is_send = is_send;
  submit(rec);
}

static __always_inline void write_held_send(struct stream_offsets* entry, __u64 object,
                                            __u64 sent) {
  if (sent == 0 || __sync_val_compare_and_swap(&entry->pend_ts, sent, 0) != sent) return;
  const __u64 start = entry->pend_start, end = entry->pend_end;
  const __u32 kind = entry->pend_kind;
  entry->written_end = end;
  entry->written = 1;
  const __u64 len = kind == CW_OBJ_TCP ? (__u32)((__u32)end - (__u32)start) : end - start;
  write_late_xfer(sent, entry->pend_pid, entry->pend_tid, entry->pend_cpu, object, kind, start, len,
                  entry->pend_fd, entry->pend_peer, true);
}

// Keeps the send of `len` bytes at `offset` in stream `object`'s entry, made now by the
// current thread (`st`): a send right after the held one, by the same thread, adds its
// bytes to it (a request written in pieces); another replaces it, once the held one is
// written if it has waited long enough already.
static __always_inline void hold_send(struct stream_offsets* entry, struct inflight* st,
                                      __u64 object, __u32 kind, __u64 offset, __u64 len, __s32 fd,
                                      __s32 peer, __u64 now) {
  const __u64 id = current_ids();
  const __u64 held = entry->pend_ts;
  if (held != 0 && entry->pend_end == offset && entry->pend_tid == (__u32)id) {
    entry->pend_end = offset + len;
    return;
  }
  if (held != 0 && now - held >= min_wait_ns) write_held_send(entry, object, held);
  entry->pend_kind = kind;
  entry->pend_start = offset;
  entry->pend_end = offset + len;
  entry->pend_pid = id >> 32;
  entry->pend_tid = (__u32)id;
  entry->pend_fd = fd;
  entry->pend_peer = peer;
  entry->pend_cpu = bpf_get_smp_processor_id();
  entry->pend_ts = now;
  st->pend_object = object;
  st->pend_ts = now;
}

// A read of `len` bytes at `offset` in stream `object`: the send held there whose bytes it
// takes is written when they waited min_wait_ns or more, and forgotten when they did not.
static __always_inline void read_held_send(struct stream_offsets* entry, __u64 object, __u64 offset,
                                           __u64 len, bool tcp) {
  const __u64 sent = entry->pend_ts;
  if (sent == 0 || !offset_before(offset, entry->pend_end, tcp)) return;
  if (bpf_ktime_get_ns() - sent >= min_wait_ns)
    write_held_send(entry, object, sent);
  else if (!offset_before(offset + len, entry->pend_end, tcp))
    __sync_val_compare_and_swap(&entry->pend_ts, sent, 0);
}

// The recorder's periodic pass (kernel/probes.cc, pass_over_tasks): every task whose held
// wait has lasted min_wait_ns has it written now, while its records can still sort in
// among the others', and so has the send it last held back if its bytes are still unread
// after as long; a call left open for a thread that has left it since (calls_at_switch.bpf.h,
// resume_call) is closed. A thread still runnable inside it (preempted before it slept
// again, on a busy machine) may not have: its call stays open.
static __always_inline int pass_task(struct task_struct* task, struct inflight* st) {
  if (st->resumable &&
      (stopping || left_resumable(task, st) ||
       (!task->on_rq && bpf_ktime_get_ns() - st->resume_ts >= RESUME_CLOSE_AFTER_NS)))
    close_resumable(st, task->tgid, task->pid);
  if (!holding_waits()) return 0;
  // The thread's last held send, unread since: its reader is busy, or never reads.
  const __u64 sent = st->pend_ts;
  if (sent != 0 && bpf_ktime_get_ns() - sent >= min_wait_ns) {
    __u64 object = st->pend_object;
    struct stream_offsets* entry = bpf_map_lookup_elem(&streams, &object);
    if (entry && entry->pend_ts == sent) write_held_send(entry, object, sent);
    st->pend_ts = 0;
  }
  if (st->wait_phase != WAIT_HELD) return 0;
  if (bpf_ktime_get_ns() - st->wait_ts < min_wait_ns) return 0;
  if (claim_wait(st, WAIT_WRITTEN)) write_held_wait(st, task->tgid, task->pid);
  return 0;
}

SEC("iter/task")
int on_task_pass(struct bpf_iter__task* ctx) {
  struct task_struct* task = ctx->task;
  if (!task || !calls_at_switch) return 0;
  struct inflight* st = bpf_task_storage_get(&inflight, task, 0, 0);
  if (!st) return 0;
  keep_cpu();
  int result = pass_task(task, st);
  let_cpu();
  return result;
}
