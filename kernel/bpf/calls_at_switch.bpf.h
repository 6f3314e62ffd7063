// Calls taken from the scheduler (calls_at_switch): no program on the syscall tracepoints.
// A thread that blocks inside a recorded call, or wakes another from one, is in the kernel
// with its user registers saved at the top of its stack; the call's number and arguments are
// read there, and decoded as its entry would have been (begin_call). The call ends when the
// thread next gets a CPU. What only the exit knows is not recorded: the return value (but a
// wait its own timer ended, below), the bytes a stream moved, the descriptors found ready.
#pragma once

// A syscall's frame, not an exception's: `syscall` leaves the user instruction pointer in
// rcx and the flags in r11, and the kernel saves both twice (as ip and flags, and as the
// registers cx and r11). An exception's frame (a page fault's) keeps its error code where a
// syscall's keeps the number, and an interrupt's keeps the negated vector.
// (Plain loads: the frame bpf_task_pt_regs gives is a typed pointer the verifier guards; a
// helper call per register cost more than the rest of taking the call.)
static __always_inline bool syscall_frame(const struct pt_regs* regs, long* nr) {
  long orig = regs->orig_ax;
  if (orig < 0 || orig >= CW_MAX_SYSCALLS) return false;
  if (regs->cx != regs->ip || regs->r11 != regs->flags) return false;
  *nr = orig;
  return true;
}

// Whether the current task `task` is inside a recorded call, from its saved registers:
// `regs` and the call's number and class.
static __always_inline bool in_recorded_call(struct task_struct* task, const struct pt_regs** regs,
                                             long* nr, __u32* cls) {
  if (task->flags & PF_KTHREAD_FLAG) return false;
  *regs = user_regs_of(task);
  if (!syscall_frame(*regs, nr)) return false;
  *cls = class_of(*nr);
  return *cls != CW_SYS_NONE;
}

// A woken thread may find nothing and sleep again inside the same call: a reader of a
// stream is woken whenever another reader of it drains bytes (the kernel wakes all who wait
// on the stream, writers for the room made and readers with them), looks, and sleeps on. It
// never left the kernel, and a recording of every syscall shows one call with two sleeps.
// Taken at the scheduler, the call would end as the thread ran and a second one begin as it
// slept again, cutting the one wait in two (the hang then seems to begin with the second
// sleep). So a call only such wake-ups ended is left open (`resumable`) at the switch in,
// and the thread's next sleep in a call of the same number and arguments (the same saved
// frame) is that call going on if the thread has not left it meanwhile; anything else the
// thread does first writes the exit, stamped when the thread ran again.
//
// Whether it left: a read or readv is counted in the thread's I/O accounting as it returns
// (the kernel's vfs_read and do_readv, task_io_accounting.syscr, CONFIG_TASK_XACCT), so an
// unchanged count means the same call. Other calls (recvmsg), or a kernel without the
// count, fall back on the thread's run time since it slept (it does not run while it
// sleeps): looking and sleeping again took up to 220 us of it on a busy 2-CPU VM, where the
// scheduler's and this recorder's own work at the switch is charged to the thread; a loop
// that returns, handles what it read and reads again within RESUME_WITHIN_NS is taken for
// one call.
#define RESUME_WITHIN_NS 1000000ULL
// A call left open this long (wall time) by a thread that is off every run queue is closed
// by the recorder's pass over the tasks (on_task_pass): the thread has left it.
#define RESUME_CLOSE_AFTER_NS 1000000ULL

// The reads and readvs thread `task` has finished, where the kernel counts them.
static __always_inline bool reads_done(const struct task_struct* task, __u64* done) {
  if (!bpf_core_field_exists(task->ioac.syscr)) return false;
  *done = BPF_CORE_READ(task, ioac.syscr);
  return true;
}

// Whether thread `task` has left the call `call` it slept in, since it ran again.
static __always_inline bool left_resumable(struct task_struct* task, const struct inflight* call) {
  __u64 done;
  if ((call->cls == CW_SYS_READ || call->cls == CW_SYS_READV) && reads_done(task, &done))
    return done != call->resume_reads;
  return task->se.sum_exec_runtime - call->resume_runtime >= RESUME_WITHIN_NS;
}

// Whether `call` reads a stream (a pipe, a socket, an eventfd): what drains it wakes its
// other readers as well as its writers.
static __always_inline bool stream_read(const struct inflight* call) {
  return (call->cls == CW_SYS_READ || call->cls == CW_SYS_READV || call->cls == CW_SYS_RECVMSG) &&
         !call->is_send && call->object != 0 && stream_kind(call->obj_kind);
}

// The exit of call `call` of thread `tid` of `tgid`, left open when it ran again: written
// now, stamped then. The claim makes it once, when the recorder's pass meets the thread.
static __always_inline void close_resumable(struct inflight* call, __u32 tgid, __u32 tid) {
  if (!call->resumable || __sync_val_compare_and_swap(&call->resumable, 1, 0) != 1) return;
  struct cw_rec_sys_exit* rec = reserve(sizeof(*rec));
  if (!rec) return;
  fill_header_at(&rec->h, CW_REC_SYS_EXIT, sizeof(*rec), call->resume_ts);
  rec->h.cpu = call->resume_cpu;
  rec->h.pid = tgid;
  rec->h.tid = tid;
  rec->h.flags |= CW_EXIT_NO_RET;
  rec->seq = call->seq;
  rec->nr = call->nr;
  rec->pad = 0;
  rec->ret = 0;
  submit(rec);
}

static __always_inline void end_call_at(struct inflight* call, __u32 tgid, __u32 tid, __u64 ts);

// Whether `call`, taken at the scheduler, was woken by nothing but readers draining its
// stream: its thread may have looked, found nothing, and slept on in it.
static __always_inline bool drained_only(const struct inflight* call) {
  return call->wake_mark == 1 && !call->timed_out && call->emitted && stream_read(call);
}

// Whether the current thread, about to begin call `nr` with `args`, is sleeping again in
// the call it blocked in before: then that call goes on. The call was left open when the
// thread ran again (resumable), or is still open because the switch that ran it again was
// never reported: some kernels deliver no sched_switch in the context of some threads (a
// Firecracker VM's, from its pid 1's threads), and the thread then sleeps again, or wakes
// another, with no sign that it ran. Such a call is judged now, as its switch in would have
// judged it, and ended when it was woken if it does not go on.
static __always_inline bool resume_call(struct inflight* call, long nr, const __u64* args) {
  const bool unseen = call->active && call->at_switch;
  if (!call->resumable && !unseen) return false;
  struct task_struct* current = bpf_get_current_task_btf();
  bool same = call->nr == nr && !left_resumable(current, call) && (!unseen || drained_only(call));
#pragma unroll
  for (int i = 0; i < 6; i++) same = same && call->rec.args[i] == args[i];
  if (!same) {
    if (unseen)
      end_call_at(call, current->tgid, current->pid, call->woken_ts);
    else
      close_resumable(call, current->tgid, current->pid);
    return false;
  }
  if (!unseen && __sync_val_compare_and_swap(&call->resumable, 1, 0) != 1) return false;
  call->active = call->at_switch = 1;
  call->timed_out = call->wake_mark = 0;
  return true;
}

static __always_inline void begin_call_from(struct inflight* call, const struct pt_regs* regs,
                                            long nr, __u32 cls, __u64 ts) {
  __u64 args[6];
  args_of(regs, args);
  if (resume_call(call, nr, args)) return;
  begin_call(call, nr, cls, args, ts);
  call->at_switch = 1;
  call->timed_out = call->wake_mark = 0;
  call->woken_ts = 0;
  // What tells, when the thread next sleeps, whether it left the call (left_resumable):
  // neither changes while it sleeps.
  struct task_struct* current = bpf_get_current_task_btf();
  call->resume_runtime = current->se.sum_exec_runtime;
  call->resume_reads = 0;
  reads_done(current, &call->resume_reads);
}

// The recorded call the current task `task` is in, begun at `now` from its saved registers;
// NULL when it is in none (a kernel thread, a fault, a call not recorded).
static __always_inline struct inflight* call_from_registers(struct task_struct* task, __u64 now) {
  const struct pt_regs* regs;
  long nr;
  __u32 cls;
  if (!in_recorded_call(task, &regs, &nr, &cls)) return NULL;
  struct inflight* call = bpf_task_storage_get(&inflight, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (!call) return NULL;
  begin_call_from(call, regs, nr, cls, now);
  return call;
}

static __always_inline bool readiness_wait(__u32 cls) {
  return cls == CW_SYS_EPOLL_WAIT || cls == CW_SYS_EPOLL_PWAIT2 || cls == CW_SYS_POLL ||
         cls == CW_SYS_PPOLL || cls == CW_SYS_SELECT || cls == CW_SYS_PSELECT;
}

// A wait ended by the expiry of the thread's own timer timed out: the return value such a
// call gives then. Unknown (CW_EXIT_NO_RET) otherwise.
static __always_inline bool timed_out_return(const struct inflight* call, __s64* ret) {
  if (!call->timed_out) return false;
  if (call->cls == CW_SYS_FUTEX) {
    *ret = -110;  // -ETIMEDOUT
    return true;
  }
  if (!readiness_wait(call->cls) && call->cls != CW_SYS_NANOSLEEP &&
      call->cls != CW_SYS_CLOCK_NANOSLEEP)
    return false;
  *ret = 0;  // nothing ready, or the whole sleep slept
  return true;
}

// The end of a call taken at the scheduler, as thread `tid` of `tgid`'s exit record,
// stamped `ts` (0: now).
static __always_inline void end_call_at(struct inflight* call, __u32 tgid, __u32 tid, __u64 ts) {
  call->active = 0;
  call->at_switch = 0;
  if (!call->emitted) return;
  struct cw_rec_sys_exit* rec = reserve(sizeof(*rec));
  if (!rec) return;
  if (ts != 0)
    fill_header_at(&rec->h, CW_REC_SYS_EXIT, sizeof(*rec), ts);
  else
    fill_header(&rec->h, CW_REC_SYS_EXIT, sizeof(*rec));
  rec->h.pid = tgid;
  rec->h.tid = tid;
  rec->seq = call->seq;
  rec->nr = call->nr;
  rec->pad = 0;
  rec->ret = 0;
  if (!timed_out_return(call, &rec->ret)) rec->h.flags |= CW_EXIT_NO_RET;
  submit(rec);
}

static __always_inline void end_call_at_switch(struct inflight* call, __u32 tgid, __u32 tid) {
  end_call_at(call, tgid, tid, 0);
}

// At the switch in of `next` (thread `tid` of `tgid`) in the call `call` taken at the
// scheduler: ends the call, or leaves it open when only drains woke it (resume_call).
static __always_inline void run_again_in_call(struct inflight* call, struct task_struct* next,
                                              __u32 tgid, __u32 tid) {
  if (!drained_only(call)) {
    end_call_at_switch(call, tgid, tid);
    return;
  }
  call->active = call->at_switch = 0;
  call->resume_ts = bpf_ktime_get_ns();
  call->resume_cpu = bpf_get_smp_processor_id();
  call->resumable = 1;
}

// A call that neither blocked nor woke anyone, which a tracepoint inside it (a socket's
// transfer, a file lock's result) shows to matter: its entry, from the saved registers,
// written now; end_call_now() writes its exit with the return value that tracepoint saw.
static __always_inline void begin_call_now(struct inflight* call, const struct pt_regs* regs,
                                           long nr, __u32 cls, __u64 ts) {
  begin_call_from(call, regs, nr, cls, ts);
  emit_enter(call);
}

static __always_inline void end_call_now(struct inflight* call, __s64 ret) {
  call->active = call->at_switch = 0;
  struct cw_rec_sys_exit* rec = reserve(sizeof(*rec));
  if (!rec) return;
  fill_header(&rec->h, CW_REC_SYS_EXIT, sizeof(*rec));
  rec->seq = call->seq;
  rec->nr = call->nr;
  rec->pad = 0;
  rec->ret = ret;
  submit(rec);
}

// Whether `file` is a TCP socket whose peer is on this machine: its packets go through the
// loopback device, whose receive path runs in a softirq on the sending CPU at once.
static __always_inline bool local_tcp(struct file* file) {
  if (!file) return false;
  file = KERNEL_CAST(struct file, file);
  struct inode* inode = file->f_inode;
  if (!inode || (inode->i_mode & S_IFMT_BITS) != S_IFSOCK_BITS) return false;
  struct sock* sk = KERNEL_CAST(struct socket, file->private_data)->sk;
  if (!sk || sk->sk_protocol != IPPROTO_TCP_NUM) return false;
  __u16 family = sk->__sk_common.skc_family;
  if (family == AF_INET_FAMILY) return sk->__sk_common.skc_daddr == sk->__sk_common.skc_rcv_saddr;
  if (family != AF_INET6_FAMILY) return false;
  __u32 local[4] = {}, remote[4] = {};
  BPF_CORE_READ_INTO(&local, sk, __sk_common.skc_v6_rcv_saddr.in6_u.u6_addr32);
  BPF_CORE_READ_INTO(&remote, sk, __sk_common.skc_v6_daddr.in6_u.u6_addr32);
  return local[0] == remote[0] && local[1] == remote[1] && local[2] == remote[2] &&
         local[3] == remote[3];
}

// Whether a wake-up raised in interrupt context is the current thread's own delivery. A
// send (or a connect) to a TCP peer on this machine hands its packet to the receive path in
// a softirq that runs at once on the sender's CPU, inside the sender's call: the wake-ups it
// raises, of a thread blocked on a TCP socket or waiting for readiness, are that call's. A
// send on a stream the woken thread blocked receiving from is its delivery too, whatever
// carries it. With no transfer recorded (no syscall programs) nothing else would join the
// two. Any other interrupt's wake-up (a device's, a timer's) stays nobody's.
static __always_inline bool own_delivery(struct task_struct* woken) {
  struct inflight* blocked = bpf_task_storage_get(&inflight, woken, 0, 0);
  if (!blocked || !blocked->active || !blocked->at_switch || blocked->is_send) return false;
  struct task_struct* current = bpf_get_current_task_btf();
  if (current->flags & PF_KTHREAD_FLAG) return false;
  const struct pt_regs* regs = user_regs_of(current);
  long nr;
  if (!syscall_frame(regs, &nr)) return false;
  __u32 cls = class_of(nr);
  bool sends = cls == CW_SYS_WRITE || cls == CW_SYS_WRITEV || cls == CW_SYS_SENDMSG;
  if (!sends && nr != CW_NR_CONNECT) return false;
  struct file* file = fd_file((int)regs->di);
  if ((blocked->obj_kind == CW_OBJ_TCP || readiness_wait(blocked->cls)) && local_tcp(file))
    return true;
  if (!sends || blocked->object == 0) return false;
  struct object_info object;
  resolve_file(file, true, &object);
  return object.object == blocked->object && object.kind == blocked->obj_kind;
}
