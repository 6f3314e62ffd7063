// Hard and soft interrupts that land on a recorded thread. Every device interrupt also
// tells timers.bpf.h that it interrupts a timer's callback, if one is running.
#pragma once

static __always_inline int record_irq(__u32 op, int irq, struct irqaction* action) {
  if (op == CW_HARDIRQ_ENTER || op == CW_HARDIRQ_EXIT) mask_expiry(op == CW_HARDIRQ_ENTER);
  __u64 id = current_ids();
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
