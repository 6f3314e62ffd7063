// File locks when calls are taken at the scheduler (calls_at_switch). A process that polls a
// lock (a try that fails, a sleep, another try) neither blocks in the lock call nor is woken
// by the holder's release: the scheduler sees only its sleeps. The file-lock tracepoints fire
// as an fcntl lock call ends (fcntl_setlk) and as flock takes or drops a lock
// (flock_lock_inode), with the result, in the caller's context. Written, as calls of their
// own with that result: every release, and the lock a thread gets after failing to get it,
// which the holder's release let it have (linux.kernel `lock.release`). The failed tries
// are left out: the sleeps between them say the thread polled.
#pragma once

#define CW_LOCK_DEFERRED 1  // FILE_LOCK_DEFERRED: flock will wait (the switch records it)
#define CW_F_UNLCK 2
#define CW_LOCK_UN 8

static __always_inline int file_lock_result(struct inode* inode, int ret, bool is_flock) {
  if (!calls_at_switch || ret == CW_LOCK_DEFERRED || !inode) return 0;
  if (!current_traced()) return 0;
  struct task_struct* task = bpf_get_current_task_btf();
  if (task->flags & PF_KTHREAD_FLAG) return 0;
  // The call itself, not a close or an exit that drops the process's locks.
  const struct pt_regs* regs = user_regs_of(task);
  long nr;
  if (!syscall_frame(regs, &nr) || nr != (is_flock ? nr_flock : nr_fcntl)) return 0;
  __u32 cls = class_of(nr);
  if (cls == CW_SYS_NONE) return 0;
  struct inflight* st = bpf_task_storage_get(&inflight, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (!st) return 0;
  const __u64 file = inode->i_ino;
  if (ret != 0) {
    st->lock_tried = file;
    return 0;
  }
  // fcntl's lock type is in the caller's struct flock: begin_call reads it (rec.value).
  begin_call_from(st, regs, nr, cls, bpf_ktime_get_ns());
  const bool unlock = is_flock ? (regs->si & CW_LOCK_UN) != 0 : st->rec.value == CW_F_UNLCK;
  // A release between the tries (of another byte range) does not end the polling.
  const bool after_try = !unlock && st->lock_tried == file;
  if (after_try) st->lock_tried = 0;
  if (!unlock && !after_try) {
    st->active = st->at_switch = 0;  // a lock that was free: nothing to write
    return 0;
  }
  write_own_short_waits(st, task);
  emit_enter(st);
  end_call_now(st, 0);
  return 0;
}

SEC("tp_btf/fcntl_setlk")
int BPF_PROG(on_fcntl_setlk, struct inode* inode, struct file_lock* fl, int ret) {
  return file_lock_result(inode, ret, false);
}

SEC("tp_btf/flock_lock_inode")
int BPF_PROG(on_flock_lock_inode, struct inode* inode, struct file_lock* fl, int ret) {
  return file_lock_result(inode, ret, true);
}
