// Wake-ups: who woke whom, and inside which syscall. A wake-up raised by an interrupt is
// the thread's whose timer expired (timers.bpf.h), or no thread's.
#pragma once

// A send that woke its reader needs no transfer of its own (transfers.bpf.h): the thread's
// last wake-up raised inside a call, from which call and descriptor.
static __always_inline void note_wake_in_call(struct inflight* st, __s64 nr, __s32 fd) {
  st->woke_since_xfer = 1;
  st->wake_nr = nr;
  st->wake_fd = fd;
}

// The same for a wake-up left out with the short wait it ended (held waits): the send's
// transfer is left out with it, as the hand-off is.
static __always_inline void note_short_wake_in_call(void) {
  struct task_struct* current = bpf_get_current_task_btf();
  if (current->flags & PF_KTHREAD_FLAG) return;
  const struct pt_regs* regs = user_regs_of(current);
  long nr;
  if (!syscall_frame(regs, &nr)) return;
  struct inflight* st = bpf_task_storage_get(&inflight, current, 0, 0);
  if (st) note_wake_in_call(st, nr, io_class(class_of(nr)) ? (__s32)regs->di : -1);
}

static __always_inline int record_wake(void* ctx, __u32 type, struct task_struct* p) {
  __u32 target_tgid = p->tgid;
  bool recorder = current_is_recorder();
  const bool target_traced = traced_tgid(target_tgid);
  if (!target_traced && (recorder || !current_traced())) return 0;
  bool in_irq = in_interrupt_context(ctx);
  // A loopback send's bytes are delivered in the softirq its own call runs: that wake-up is
  // the call's. Not one a timer's expiry raises on this CPU meanwhile (a poller's timeout
  // landing during the send): that is the timer's, whoever it woke.
  if (in_irq && calls_at_switch && !recorder && current_traced() &&
      !expiring_owner(bpf_ktime_get_ns()) && own_delivery(p))
    in_irq = false;
  // A wait too short to write is counted, and its wake-up left out, before anything else.
  if (holding_waits() && target_traced &&
      wakes_short_wait(p, in_irq || recorder ? 0 : (__u32)current_ids())) {
    if (!in_irq && !recorder && current_traced()) note_short_wake_in_call();
    return 0;
  }
  struct inflight* waker_call = NULL;
  // The recorder's own wake-ups are left out; an interrupt that happened to land on it
  // woke someone on nobody's behalf, and is kept as woken by no thread (tid 0).
  if (recorder && !in_irq) return 0;
  if (!recorder && !in_irq) {
    // The wake-up happened inside the waker's syscall: that call matters. Not so for an
    // interrupt's: it has nothing to do with the call of the task it landed on, and may have
    // landed while on_sys_enter was still filling that call's record (an interrupt comes
    // between any two instructions), which emitting it here would cut short: a poll with
    // no descriptors and no timeout in the trace.
    struct task_struct* current = bpf_get_current_task_btf();
    if (calls_at_switch) {
      waker_call = current_traced() ? call_from_registers(current, bpf_ktime_get_ns()) : NULL;
      if (current_traced()) write_own_short_waits(waker_call, current);
      if (waker_call) {
        emit_enter(waker_call);
        note_wake_in_call(waker_call, waker_call->nr, waker_call->fd);
      }
    } else {
      struct inflight* call = bpf_task_storage_get(&inflight, current, 0, 0);
      if (call && call->active) emit_enter(call);
    }
  }
  // What woke a call taken at the scheduler: only readers draining its stream, or more.
  if (calls_at_switch && target_traced) {
    struct inflight* woken = bpf_task_storage_get(&inflight, p, 0, 0);
    if (woken && woken->active && woken->at_switch) {
      woken->woken_ts = bpf_ktime_get_ns();
      if (!in_irq && waker_call && stream_read(waker_call))
        woken->wake_mark = woken->wake_mark == 0 ? 1 : woken->wake_mark;
      else
        woken->wake_mark = 2;
    }
  }
  struct cw_rec_wake* rec = reserve(sizeof(*rec));
  if (!rec) {
    if (waker_call) waker_call->active = waker_call->at_switch = 0;
    return 0;
  }
  fill_header(&rec->h, type, sizeof(*rec));
  if (recorder) rec->h.pid = rec->h.tid = 0;
  if (waker_call && waker_call->is_send && waker_call->object != 0 &&
      stream_kind(waker_call->obj_kind))
    rec->h.flags |= CW_WAKE_DELIVERS;
  rec->target_pid = target_tgid;
  rec->target_tid = p->pid;
  rec->in_irq = in_irq;
  rec->cause_tid = 0;
  struct timer_owner* owner = in_irq ? expiring_owner(rec->h.ts) : NULL;
  if (owner) {
    rec->cause_tid = owner->tid;
    // A call taken at the scheduler that its own thread's timer ends has timed out.
    if (calls_at_switch && owner->tid == rec->target_tid) {
      struct inflight* woken = bpf_task_storage_get(&inflight, p, 0, 0);
      if (woken && woken->active && woken->at_switch) woken->timed_out = 1;
    }
    // On an idle CPU (or the recorder) no recorded thread was interrupted: another thread's
    // timer wakes on that thread's behalf, so the record is its. A thread's own timer (a
    // timed sleep) stays a wake-up by no thread, as before.
    if (rec->h.tid == 0 && owner->tid != rec->target_tid) {
      rec->h.pid = owner->tgid;
      rec->h.tid = owner->tid;
    }
  }
  __u32 waker_tgid = rec->h.pid, waker_tid = rec->h.tid;
  submit(rec);
  // The waker's call is known only while it runs inside it: it ends with the wake-up.
  if (waker_call) end_call_at_switch(waker_call, waker_tgid, waker_tid);
  return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(on_sched_waking, struct task_struct* p) {
  return record_wake(ctx, CW_REC_WAKING, p);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(on_sched_wakeup_new, struct task_struct* p) {
  return record_wake(ctx, CW_REC_WAKEUP_NEW, p);
}
