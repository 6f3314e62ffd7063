// Processes and threads coming and going: fork (the children of a recorded process are
// recorded too), exec, exit and renames.
#pragma once

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
  // A new program: the places where its stacks were last walked are not its own.
  struct inflight* call = bpf_task_storage_get(&inflight, p, 0, 0);
  if (call) call->kstack_seq = call->ustack_seq = 0;
  struct cw_rec_exec* rec = reserve(sizeof(*rec));
  if (!rec) return 0;
  fill_header(&rec->h, CW_REC_EXEC, sizeof(*rec));
  bpf_probe_read_kernel_str(rec->comm, sizeof(rec->comm), p->comm);
  const char* filename = BPF_CORE_READ(bprm, filename);
  if (bpf_probe_read_kernel_str(rec->path, sizeof(rec->path), filename) < 0) rec->path[0] = 0;
  submit(rec);
  flush_cpu_waking();
  return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_sched_process_exit, struct task_struct* p, bool group_dead) {
  __u32 tgid = p->tgid;
  if (!traced_tgid(tgid)) return 0;
  if (calls_at_switch) {  // a call it left open ended before its exit, and its short waits
    struct inflight* call = bpf_task_storage_get(&inflight, p, 0, 0);
    if (call) close_resumable(call, tgid, p->pid);
    write_own_short_waits(call, p);
  }
  struct cw_rec_exit* rec = reserve(sizeof(*rec));
  if (rec) {
    fill_header(&rec->h, CW_REC_EXIT, sizeof(*rec));
    rec->code = p->exit_code;
    rec->pad = 0;
    submit(rec);
  }
  // A later process given the same pid is not one of ours: the process is dropped when
  // its last exiting thread leaves its CPU for good (exiting_pids, on_sched_switch).
  if (filter_pids) {
    struct exiting fresh = {0, 0};
    bpf_map_update_elem(&exiting_pids, &tgid, &fresh, BPF_NOEXIST);
    struct exiting* x = bpf_map_lookup_elem(&exiting_pids, &tgid);
    if (!x) {
      if (group_dead) bpf_map_delete_elem(&traced_pids, &tgid);
      return 0;
    }
    __sync_fetch_and_add(&x->pending, 1);
    if (group_dead) x->group_dead = 1;
  }
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
