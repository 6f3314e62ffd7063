// Signals raised and delivered. A timer's signal is its owner's (timers.bpf.h).
#pragma once

SEC("tp_btf/signal_generate")
int BPF_PROG(on_signal_generate, int sig, struct kernel_siginfo* info, struct task_struct* task,
             int group, int result) {
  __u32 target_tgid = task->tgid;
  bool recorder = current_is_recorder();
  if (!recorder && !current_traced() && !traced_tgid(target_tgid)) return 0;
  // A timer's signal raised in an interrupt that landed on the recorder is its owner's;
  // the recorder's own signals are left out.
  struct timer_owner* owner = NULL;
  const bool in_irq = in_interrupt_context(ctx);
  if (in_irq) owner = expiring_owner(bpf_ktime_get_ns());
  if (recorder && (!owner || !traced_tgid(target_tgid))) return 0;
  // The sender's short waits before its signal, as before a wake-up it raises.
  if (!in_irq && !recorder && current_traced())
    write_own_short_waits(NULL, bpf_get_current_task_btf());
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
