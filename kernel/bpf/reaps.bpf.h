// Children reaped when calls are taken at the scheduler (calls_at_switch). A parent that
// polls for its children (wait4 with WNOHANG between sleeps: GNU parallel's reaper loop)
// does not block in the wait, and a child that ended between two looks wakes nobody: the
// scheduler sees only the sleeps, and nothing says which look found the child. The
// sched_process_wait tracepoint fires as a wait begins, in the caller's context. When one of
// the caller's children has exited and has not been reaped, the call reaps the first such
// child in the caller's list of children (the order the kernel looks at them in). The call
// is then written as one of its own, with that child's pid as its return value
// (linux.kernel `exit.reaped` joins the child's exit to it). Looks that find nothing are
// left out: the sleeps between them say the thread polled.
#pragma once

#define CW_EXIT_ZOMBIE 0x20
// Children looked at, at most, for one wait.
#define CW_MAX_CHILDREN_SEEN 64

SEC("tp_btf/sched_process_wait")
int BPF_PROG(on_sched_process_wait, struct pid* pid) {
  if (!calls_at_switch || !current_traced()) return 0;
  struct task_struct* task = bpf_get_current_task_btf();
  if (task->flags & PF_KTHREAD_FLAG) return 0;
  const struct pt_regs* regs = user_regs_of(task);
  long nr;
  // wait4 returns the pid it reaped; waitid returns 0, which joins nothing.
  if (!syscall_frame(regs, &nr) || nr == nr_waitid) return 0;
  __u32 cls = class_of(nr);
  if (cls != CW_SYS_WAIT) return 0;
  const __u64 sibling = bpf_core_field_offset(struct task_struct, sibling);
  const __u64 head = (__u64)task + bpf_core_field_offset(struct task_struct, children);
  __u64 at = (__u64)BPF_CORE_READ(task, children.next);
  __u32 reaped = 0;
  for (int i = 0; i < CW_MAX_CHILDREN_SEEN && at != 0 && at != head; i++) {
    struct task_struct* child = (struct task_struct*)(at - sibling);
    // A wait for one pid (wait4 with a pid above 0) takes only that child; one for a
    // process group is left as it was.
    if (BPF_CORE_READ(child, exit_state) == CW_EXIT_ZOMBIE &&
        (!pid || BPF_CORE_READ(child, thread_pid) == pid)) {
      reaped = BPF_CORE_READ(child, tgid);
      break;
    }
    at = (__u64)BPF_CORE_READ(child, sibling.next);
  }
  if (reaped == 0) return 0;
  struct inflight* st = bpf_task_storage_get(&inflight, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (!st) return 0;
  write_own_short_waits(st, task);
  begin_call_now(st, regs, nr, cls, bpf_ktime_get_ns());
  end_call_now(st, reaped);
  return 0;
}
