// CPU-time samples (record --sample).
#pragma once

// record --sample HZ: a cpu-clock tick on one CPU (one perf event per online CPU). The
// thread it interrupted is recorded with its user stack, as at a blocking syscall.
SEC("perf_event")
int on_cpu_clock(struct bpf_perf_event_data* ctx) {
  __u64 id = current_ids();
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
