// Syscall entry: the arguments decoded by class (kernel/syscalls.cc), kept per thread in
// `inflight` until the exit.
#pragma once

struct user_timespec {
  __s64 sec;
  __s64 nsec;
};

// -1 when `ptr` is NULL or unreadable.
static __always_inline __s64 read_timespec(__u64 ptr) {
  struct user_timespec ts;
  if (!ptr || bpf_probe_read_user(&ts, sizeof(ts), (void*)ptr) != 0) return -1;
  return ts.sec * 1000000000LL + ts.nsec;
}

static __always_inline __s64 read_timeval(__u64 ptr) {
  struct user_timespec tv;
  if (!ptr || bpf_probe_read_user(&tv, sizeof(tv), (void*)ptr) != 0) return -1;
  return tv.sec * 1000000000LL + tv.nsec * 1000;
}

static __always_inline __s64 millis_timeout(__s64 ms) {
  return ms < 0 ? -1 : ms * 1000000LL;
}

struct user_iovec {
  __u64 base;
  __u64 len;
};

#define MAX_IOVECS 8

// Bytes the first MAX_IOVECS entries of an iovec array describe.
static __always_inline __u64 iovec_bytes(__u64 iov, __u64 iovcnt) {
  __u64 total = 0;
#pragma unroll
  for (int i = 0; i < MAX_IOVECS; i++) {
    if (i >= iovcnt) break;
    struct user_iovec entry;
    if (bpf_probe_read_user(&entry, sizeof(entry), (void*)(iov + i * sizeof(entry))) != 0) break;
    total += entry.len;
  }
  return total;
}

struct user_msghdr_head {
  __u64 name;
  __u32 namelen;
  __u32 pad;
  __u64 iov;
  __u64 iovlen;
};

// x86-64 numbers of calls whose arguments the programs below tell apart (the recorder is
// x86-64 only, docs/instrumentation.md "Limits").
#define CW_NR_CONNECT 42
#define CW_NR_SOCKETPAIR 53

#define FUTEX_CMD_MASK_BITS 127  // ~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME)

// Fills `call` for syscall `nr` of class `cls` entered at `ts` with arguments `args`, as
// the current task's: its descriptors and user memory are read. From the syscall's entry, or
// from the scheduler (calls_at_switch): the saved user registers of a task that blocks or
// wakes another inside a call.
static __always_inline void begin_call(struct inflight* call, __u32 nr, __u32 cls,
                                       const __u64* args, __u64 ts) {
  // Every field is set below or here: no clearing of the whole entry on the hot path.
  call->object = call->user_buf = call->value = call->expires_ns = call->interval_ns = 0;
  call->obj_kind = call->tcp_seq = call->count = 0;
  call->is_send = call->stack_taken = call->emitted = 0;
  call->active = 1;
  call->at_switch = 0;
  struct cw_rec_sys_enter* rec = &call->rec;
  call->seq = next_call_seq();
  call->enter_ts = ts;
  call->nr = nr;
  call->cls = cls;
  call->fd = -1;
  call->peer_pid = -1;

  fill_header_at(&rec->h, CW_REC_SYS_ENTER, sizeof(*rec), ts);
  rec->seq = call->seq;
  rec->nr = nr;
  rec->sys_class = cls;
#pragma unroll
  for (int i = 0; i < 6; i++) rec->args[i] = args[i];
  rec->resource = 0;
  rec->value = 0;
  rec->count = 0;
  rec->timeout_ns = -1;
  rec->op = 0;
  rec->pad = 0;
  bool is_send = cls == CW_SYS_WRITE || cls == CW_SYS_WRITEV || cls == CW_SYS_SENDMSG;
  struct object_info object;
  if (io_class(cls) || cls == CW_SYS_FD || cls == CW_SYS_TIMERFD_SETTIME) {
    call->fd = (__s32)args[0];
    resolve_file(fd_file(call->fd), is_send, &object);
    call->object = object.object;
    call->obj_kind = object.kind;
    call->peer_pid = object.peer_pid;
    call->tcp_seq = object.tcp_seq;
    rec->resource = object.object;
  }
  call->is_send = is_send;

  switch (cls) {
    case CW_SYS_NEW_PAIR:
      // pipe/pipe2 write the two fds at their first argument, socketpair at its fourth.
      call->user_buf = nr == CW_NR_SOCKETPAIR ? args[3] : args[0];
      break;
    case CW_SYS_READ:
    case CW_SYS_WRITE:
      rec->count = args[2];
      call->user_buf = args[1];
      if (call->obj_kind == CW_OBJ_EVENTFD && is_send && args[2] >= 8)
        bpf_probe_read_user(&call->value, sizeof(call->value), (void*)args[1]);
      break;
    case CW_SYS_READV:
    case CW_SYS_WRITEV: rec->count = iovec_bytes(args[1], args[2]); break;
    case CW_SYS_RECVMSG:
    case CW_SYS_SENDMSG: {
      struct user_msghdr_head msg;
      if (bpf_probe_read_user(&msg, sizeof(msg), (void*)args[1]) == 0)
        rec->count = iovec_bytes(msg.iov, msg.iovlen);
      break;
    }
    case CW_SYS_FUTEX: {
      __u32 cmd = (__u32)args[1] & FUTEX_CMD_MASK_BITS;
      rec->resource = args[0];
      rec->op = cmd;
      rec->value = (__u32)args[2];
      // wait (relative), wait_bitset, lock_pi, wait_requeue_pi, lock_pi2 (absolute) take a
      // timespec; the other commands use that argument as a number.
      if (cmd == 0) {
        rec->timeout_ns = read_timespec(args[3]);
      } else if (cmd == 9 || cmd == 6 || cmd == 11 || cmd == 13) {
        rec->timeout_ns = read_timespec(args[3]);
        if (rec->timeout_ns >= 0) rec->h.flags |= CW_ENTER_ABS_TIMEOUT;
      }
      break;
    }
    case CW_SYS_EPOLL_WAIT:
    case CW_SYS_EPOLL_PWAIT2:
      call->fd = (__s32)args[0];
      rec->count = (__u32)args[2];
      call->user_buf = args[1];
      rec->timeout_ns =
          cls == CW_SYS_EPOLL_WAIT ? millis_timeout((__s32)args[3]) : read_timespec(args[3]);
      break;
    case CW_SYS_POLL:
    case CW_SYS_PPOLL:
      rec->count = (__u32)args[1];
      call->user_buf = args[0];
      call->count = (__u32)args[1];
      rec->timeout_ns =
          cls == CW_SYS_POLL ? millis_timeout((__s32)args[2]) : read_timespec(args[2]);
      break;
    case CW_SYS_SELECT:
      rec->count = (__u32)args[0];
      rec->timeout_ns = read_timeval(args[4]);
      break;
    case CW_SYS_PSELECT:
      rec->count = (__u32)args[0];
      rec->timeout_ns = read_timespec(args[4]);
      break;
    case CW_SYS_NANOSLEEP: rec->timeout_ns = read_timespec(args[0]); break;
    case CW_SYS_CLOCK_NANOSLEEP:
      rec->timeout_ns = read_timespec(args[2]);
      if (args[1] & 1) rec->h.flags |= CW_ENTER_ABS_TIMEOUT;  // TIMER_ABSTIME
      break;
    case CW_SYS_TIMERFD_SETTIME: {
      struct user_timespec spec[2];  // it_interval, it_value
      if (call->obj_kind != CW_OBJ_TIMERFD ||
          bpf_probe_read_user(&spec, sizeof(spec), (void*)args[2]) != 0)
        break;
      __s64 interval = spec[0].sec * 1000000000LL + spec[0].nsec;
      __s64 value = spec[1].sec * 1000000000LL + spec[1].nsec;
      call->interval_ns = interval;
      if (value == 0) {
        call->expires_ns = 0;
      } else if (args[1] & 1) {  // TFD_TIMER_ABSTIME, in the timer's clock
        struct timerfd_ctx* timer = (struct timerfd_ctx*)call->object;
        int clockid = BPF_CORE_READ(timer, clockid);
        if (clockid == 0 || clockid == 8)  // CLOCK_REALTIME(_ALARM)
          value -= realtime_offset_ns;
        else if (clockid == 7 || clockid == 9)  // CLOCK_BOOTTIME(_ALARM)
          value -= bpf_ktime_get_boot_ns() - bpf_ktime_get_ns();
        call->expires_ns = value;
      } else {
        call->expires_ns = call->enter_ts + value;
      }
      break;
    }
    case CW_SYS_WAIT:
      if (nr == nr_waitid) {
        rec->resource = args[1];
        rec->op = (__u32)args[0];
      } else {
        rec->resource = (__s64)(__s32)args[0];
      }
      break;
    case CW_SYS_FD:
      if (nr == nr_flock || nr == nr_fcntl) rec->op = (__u32)args[1];
      // Lock calls, so rules can tell a try from a wait and a lock from an unlock: flock's
      // whole operation (LOCK_NB included); F_SETLK*'s l_type, the first field of struct
      // flock (F_RDLCK 0, F_WRLCK 1, F_UNLCK 2).
      if (nr == nr_flock) rec->value = (__u32)args[1];
      if (nr == nr_fcntl && (args[1] == 6 || args[1] == 7 || args[1] == 37 || args[1] == 38)) {
        __s16 type = -1;
        if (args[2] && bpf_probe_read_user(&type, sizeof(type), (void*)args[2]) == 0)
          rec->value = (__u16)type;
      }
      break;
    case CW_SYS_KILL:
      if (nr == nr_tgkill) {
        rec->resource = (__s64)(__s32)args[1];
        rec->value = (__u32)args[2];
      } else {
        rec->resource = (__s64)(__s32)args[0];
        rec->value = (__u32)args[1];
      }
      break;
    default: break;
  }
  rec->fd = call->fd;
  rec->obj_kind = call->obj_kind;
}

// The class of syscall `nr`, CW_SYS_NONE when it is not recorded.
static __always_inline __u32 class_of(__u64 nr) {
  if (nr >= CW_MAX_SYSCALLS) return CW_SYS_NONE;
  __u32 key = nr;
  __u32* cls_slot = bpf_map_lookup_elem(&syscall_class, &key);
  return cls_slot ? *cls_slot : CW_SYS_NONE;
}

static __always_inline void args_of(const struct pt_regs* regs, __u64* args) {
  args[0] = regs->di;
  args[1] = regs->si;
  args[2] = regs->dx;
  args[3] = regs->r10;
  args[4] = regs->r8;
  args[5] = regs->r9;
}

// A call of a recorded thread, of class `cls`: its entry kept (and written, unless lazy).
static __always_inline void enter_recorded_call(unsigned long long* ctx, struct pt_regs* regs,
                                                long id, __u32 cls, __u64 pid_tgid) {
  __u32 tid = (__u32)pid_tgid, tgid = pid_tgid >> 32;
  struct inflight* call = bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), 0,
                                               BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (!call) return;
  __u64 args[6];
  args_of(regs, args);
  begin_call(call, (__u32)id, cls, args, bpf_ktime_get_ns());
  if (!lazy_class(cls) || stack_mode == 2 || full_stream) emit_enter(call);
  if (stack_mode == 2)
    call->stack_taken =
        take_call_stack(ctx, user_place_of(bpf_get_current_task_btf()), call, tid, tgid);
}

SEC("tp_btf/sys_enter")
int BPF_PROG(on_sys_enter, struct pt_regs* regs, long id) {
  // The hot path: every syscall on the machine comes here.
  __u32 cls = class_of(id);
  if (cls == CW_SYS_NONE) return 0;
  __u64 pid_tgid = current_ids();
  if (!traced_tgid(pid_tgid >> 32)) return 0;
  keep_cpu();
  enter_recorded_call(ctx, regs, id, cls, pid_tgid);
  let_cpu();
  return 0;
}
