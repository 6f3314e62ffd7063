// Syscall exit: its result, and what the call did: bytes moved on a stream (XFER),
// descriptors found ready (READY), a timerfd armed, cancelled or fired (TIMER).
#pragma once

#define MAX_POLL_SCAN 64

static __always_inline __u64 advance_stream(__u64 object, bool is_send, __u64 len) {
  struct stream_offsets* offsets = bpf_map_lookup_elem(&streams, &object);
  if (!offsets) {
    struct stream_offsets zero = {};
    bpf_map_update_elem(&streams, &object, &zero, BPF_NOEXIST);
    offsets = bpf_map_lookup_elem(&streams, &object);
    if (!offsets) return 0;
  }
  return is_send ? __sync_fetch_and_add(&offsets->sent, len)
                 : __sync_fetch_and_add(&offsets->received, len);
}

static __always_inline void emit_xfer(struct inflight* call, __u64 object, __s64 ret) {
  __u64 len = ret;
  if (call->obj_kind == CW_OBJ_EVENTFD) {
    if (ret != 8) return;
    if (call->is_send) {
      len = call->value;
    } else if (bpf_probe_read_user(&len, sizeof(len), (void*)call->user_buf) != 0) {
      return;
    }
  }
  if (object == 0) return;
  struct cw_rec_xfer* rec = reserve(sizeof(*rec));
  if (!rec) return;
  fill_header(&rec->h, CW_REC_XFER, sizeof(*rec));
  rec->seq = call->seq;
  rec->object = object;
  rec->offset =
      call->obj_kind == CW_OBJ_TCP ? call->tcp_seq : advance_stream(object, call->is_send, len);
  rec->len = len;
  rec->fd = call->fd;
  rec->peer_pid = call->peer_pid;
  rec->obj_kind = call->obj_kind;
  rec->is_send = call->is_send;
  submit(rec);
}

struct user_epoll_event {
  __u32 events;
  __u32 data_low;
  __u32 data_high;
} __attribute__((packed));

struct user_pollfd {
  __s32 fd;
  __s16 events;
  __s16 revents;
};

static __always_inline void emit_ready(struct inflight* call, __s64 ret) {
  struct cw_rec_ready* rec = reserve(sizeof(*rec));
  if (!rec) return;
  fill_header(&rec->h, CW_REC_READY, sizeof(*rec));
  rec->seq = call->seq;
  rec->pad = 0;
  __builtin_memset(rec->fds, 0, sizeof(rec->fds));
  __builtin_memset(rec->events, 0, sizeof(rec->events));
  rec->n = 0;
  if (call->cls == CW_SYS_EPOLL_WAIT || call->cls == CW_SYS_EPOLL_PWAIT2) {
    for (int i = 0; i < CW_MAX_READY; i++) {
      if (i >= ret) break;
      struct user_epoll_event event;
      if (bpf_probe_read_user(&event, sizeof(event), (void*)(call->user_buf + i * sizeof(event))) !=
          0)
        break;
      rec->fds[i] = event.data_low;
      rec->events[i] = event.events;
      rec->n = i + 1;
    }
  } else {
    // The count lives in the record, not a register: the verifier then sees one state per
    // iteration instead of one per (iteration, count) pair.
    for (int i = 0; i < MAX_POLL_SCAN; i++) {
      if (i >= call->count) break;
      struct user_pollfd entry;
      if (bpf_probe_read_user(&entry, sizeof(entry), (void*)(call->user_buf + i * sizeof(entry))) !=
          0)
        break;
      if (entry.revents == 0) continue;
      __u32 slot = rec->n;
      if (slot >= CW_MAX_READY) break;
      rec->fds[slot] = entry.fd;
      rec->events[slot] = (__u16)entry.revents;
      rec->n = slot + 1;
    }
  }
  submit(rec);
}

static __always_inline void emit_timer(__u32 op, __u64 timer, __u64 expires, __u64 interval) {
  struct cw_rec_timer* rec = reserve(sizeof(*rec));
  if (!rec) return;
  fill_header(&rec->h, CW_REC_TIMER, sizeof(*rec));
  rec->timer = timer;
  rec->expires_ns = expires;
  rec->interval_ns = interval;
  rec->op = op;
  rec->pad = 0;
  submit(rec);
}

// The stream behind `fd` was just made, maybe where a freed one was: both directions
// start at the same offset, past every byte (eventfd: unit) the freed one moved, so its
// first write pairs with its first read and with nothing of the old one's. A unix socket:
// the sock it receives on; once connected, also its peer's.
static __always_inline void start_stream(struct file* file, bool is_send) {
  struct object_info object;
  resolve_file(file, is_send, &object);
  if (!object.object || !stream_kind(object.kind) || object.kind == CW_OBJ_TCP) return;
  struct stream_offsets* offsets = bpf_map_lookup_elem(&streams, &object.object);
  if (!offsets) return;
  __u64 past = offsets->sent > offsets->received ? offsets->sent : offsets->received;
  offsets->sent = past;
  offsets->received = past;
}

static __always_inline void start_stream_fd(int fd) {
  start_stream(fd_file(fd), false);
}

static __always_inline void start_new_streams(struct inflight* call, long ret) {
  if (ret < 0) return;
  if (call->cls == CW_SYS_NEW_FD) {
    start_stream_fd(ret);
    return;
  }
  int fds[2];
  if (bpf_probe_read_user(fds, sizeof(fds), (void*)call->user_buf) != 0) return;
  start_stream_fd(fds[0]);
  start_stream_fd(fds[1]);
}

// Whether the exit of a call reports something of its own (see the switch in on_sys_exit).
static __always_inline bool exit_has_news(struct inflight* call, long ret) {
  if (io_class(call->cls))
    return (ret > 0 && stream_kind(call->obj_kind)) ||
           (ret == 8 && call->obj_kind == CW_OBJ_TIMERFD && call->cls == CW_SYS_READ);
  switch (call->cls) {
    // A loop's wait that returned ready descriptors at once is still the loop's turn: the
    // rules cut there (a select as much as a poll).
    case CW_SYS_EPOLL_WAIT:
    case CW_SYS_EPOLL_PWAIT2:
    case CW_SYS_POLL:
    case CW_SYS_PPOLL:
    case CW_SYS_SELECT:
    case CW_SYS_PSELECT: return ret > 0;
    default: return false;
  }
}

// The end of the recorded call `call`, number `nr`, that returned `ret`.
static __always_inline void exit_recorded_call(struct inflight* call, __u32 nr, long ret) {
  call->active = 0;
  if (call->nr != nr) return;
  if (call->cls == CW_SYS_NEW_FD || call->cls == CW_SYS_NEW_PAIR) start_new_streams(call, ret);
  // A unix stream's connect makes the server's end of it (which accept returns later):
  // that sock receives the client's bytes from here on.
  if (call->cls == CW_SYS_FD && ret == 0 && call->obj_kind == CW_OBJ_UNIX &&
      call->nr == CW_NR_CONNECT)
    start_stream(fd_file(call->fd), true);
  if (!call->emitted && !exit_has_news(call, ret)) return;  // it did nothing worth a record
  emit_enter(call);

  struct cw_rec_sys_exit* rec = reserve(sizeof(*rec));
  if (rec) {
    fill_header(&rec->h, CW_REC_SYS_EXIT, sizeof(*rec));
    rec->seq = call->seq;
    rec->nr = nr;
    rec->pad = 0;
    rec->ret = ret;
    submit(rec);
  }

  switch (call->cls) {
    case CW_SYS_READ:
    case CW_SYS_WRITE:
    case CW_SYS_READV:
    case CW_SYS_WRITEV:
    case CW_SYS_RECVMSG:
    case CW_SYS_SENDMSG:
      if (ret > 0 && stream_kind(call->obj_kind)) emit_xfer(call, call->object, ret);
      if (ret == 8 && call->obj_kind == CW_OBJ_TIMERFD && call->cls == CW_SYS_READ)
        emit_timer(CW_TIMER_FIRE, call->object, 0, 0);
      break;
    case CW_SYS_EPOLL_WAIT:
    case CW_SYS_EPOLL_PWAIT2:
    case CW_SYS_POLL:
    case CW_SYS_PPOLL:
      if (ret > 0) emit_ready(call, ret);
      break;
    case CW_SYS_TIMERFD_SETTIME:
      if (ret == 0 && call->obj_kind == CW_OBJ_TIMERFD) {
        if (call->expires_ns == 0)
          emit_timer(CW_TIMER_CANCEL, call->object, 0, 0);
        else
          emit_timer(CW_TIMER_ARM, call->object, call->expires_ns, call->interval_ns);
      }
      break;
    default: break;
  }
}

SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs* regs, long ret) {
  __u32 nr = regs->orig_ax;
  if (nr >= CW_MAX_SYSCALLS) return 0;
  __u32* cls_slot = bpf_map_lookup_elem(&syscall_class, &nr);
  if (!cls_slot || *cls_slot == CW_SYS_NONE) return 0;
  struct inflight* call = bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), 0, 0);
  if (!call || !call->active) return 0;
  keep_cpu();
  exit_recorded_call(call, nr, ret);
  let_cpu();
  return 0;
}
