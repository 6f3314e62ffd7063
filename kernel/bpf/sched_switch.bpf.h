// Context switches. A recorded syscall that blocks here is where its stacks are taken:
// they show where the thread waits.
#pragma once

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

SEC("tp_btf/sched_switch")
int BPF_PROG(on_sched_switch, bool preempt, struct task_struct* prev, struct task_struct* next,
             unsigned int prev_state) {
  __u32 prev_tid = prev->pid, prev_tgid = prev->tgid;
  __u32 next_tid = next->pid, next_tgid = next->tgid;
  bool prev_recorded = prev_tid != 0 && traced_tgid(prev_tgid);
  bool next_recorded = next_tid != 0 && traced_tgid(next_tgid);
  // An exited thread of a recorded process leaves its CPU for good (TASK_DEAD): when it
  // was the last one of its process to do so, the process stops being recorded after this
  // switch (maps.bpf.h, exiting_pids).
  if (prev_recorded && filter_pids && (prev_state & 0x80)) {
    struct exiting* x = bpf_map_lookup_elem(&exiting_pids, &prev_tgid);
    // (A thread that exited before recording began was never counted: no count below 0.)
    if (x && x->pending > 0 && __sync_fetch_and_add(&x->pending, -1) == 1 && x->group_dead) {
      bpf_map_delete_elem(&traced_pids, &prev_tgid);
      bpf_map_delete_elem(&exiting_pids, &prev_tgid);
    }
  }
  if (!prev_recorded && !next_recorded) {
    if (next->pid == 0) flush_cpu(false);  // going idle: what it staged goes now
    return 0;
  }
  // The idle task and the recorder itself never appear, whichever side they are on.
  if (prev_tid == 0 || prev_tgid == self_tgid) prev_tid = prev_tgid = 0;
  if (next_tid == 0 || next_tgid == self_tgid) next_tid = next_tgid = 0;

  const __u64 now = bpf_ktime_get_ns();
  bool sleeps = !preempt && prev_state != 0;
  // Held waits (held_waits.bpf.h): a thread that blocks, or is preempted, is written only
  // once its wait has lasted; one whose wait was too short to write does not show coming
  // back either.
  if (holding_waits()) {
    if (prev_recorded && prev_tid != 0 && sleeps && !(prev_state & 0x80) &&
        hold_wait(prev, state_letter(preempt, prev_state), now)) {
      prev_tid = prev_tgid = 0;
      prev_recorded = false;
    } else if (prev_recorded && prev_tid != 0 && !sleeps && hold_preemption(prev, now)) {
      prev_tid = prev_tgid = 0;
      prev_recorded = false;
    }
    if (next_recorded && next_tid != 0 && switch_in_left_out(next, now)) {
      next_tid = next_tgid = 0;
      next_recorded = false;
    }
    if (prev_tid == 0 && next_tid == 0) {
      if (next->pid == 0) flush_cpu(false);
      return 0;
    }
  }
  if (prev_recorded && sleeps) {
    struct inflight* call = calls_at_switch ? call_from_registers(prev, now)
                                            : bpf_task_storage_get(&inflight, prev, 0, 0);
    if (call && call->active) {
      emit_enter(call);  // a call that blocks always matters
      if (stack_mode != 0 && !call->stack_taken) {
        call->stack_taken = 1;
        const struct user_place at = user_place_of(prev);
        take_call_stack(ctx, at, call, prev_tid, prev_tgid);
        take_kstack(ctx, at, call, prev_state, prev_tid, prev_tgid);
      }
    }
  }

  struct cw_rec_switch* rec = reserve(sizeof(*rec));
  if (!rec) return 0;
  fill_header_at(&rec->h, CW_REC_SWITCH, sizeof(*rec), now);
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
  // The call a thread blocked in, taken at the scheduler, ends as it runs again.
  if (calls_at_switch && next_recorded && next_tid != 0) {
    struct inflight* call = bpf_task_storage_get(&inflight, next, 0, 0);
    if (call && call->active && call->at_switch) run_again_in_call(call, next, next_tgid, next_tid);
  }
  // A CPU going idle writes nothing for a while: what it staged goes now.
  if (next->pid == 0) flush_cpu(false);
  return 0;
}
