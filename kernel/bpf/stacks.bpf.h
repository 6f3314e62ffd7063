// Stacks: the user stack walked by frame pointers or, with --call-graph dwarf, copied
// raw with the user registers for user space to unwind; and the kernel stack.
#pragma once

// A dwarf-mode stack is built here (32 KiB is too big for the BPF stack). The slack after the
// record lets the copy loop below write a page at any offset the verifier can bound.
struct ustack_scratch {
  struct cw_rec_ustack rec;
  __u8 slack[4096];
  struct pt_regs regs;
};

// Two slots per CPU (a per-CPU array's values stop at 32 KiB): 2 * cpu for the tracepoints,
// 2 * cpu + 1 for the sampling program, whose tick may interrupt a syscall tracepoint on
// the same CPU halfway through its stack. Sized by the loader.
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 2);
  __type(key, __u32);
  __type(value, struct ustack_scratch);
} ustack_scratch SEC(".maps");

// One stack walked by the kernel (bpf_get_stack with `walk`: BPF_F_USER_STACK for the
// user stack by frame pointers, 0 for the kernel stack) as a cw_rec_stack of `type`.
static __always_inline int emit_walked_stack(void* ctx, __u32 type, __u64 walk, __u32 tid,
                                             __u32 tgid, __u64 seq, __u32 flags) {
  // Walked into the staged room itself; submit() keeps only the frames found.
  struct cw_rec_stack* rec = reserve(sizeof(*rec));
  if (!rec) return 0;
  long got = bpf_get_stack(ctx, rec->ips, sizeof(rec->ips), walk);
  // An empty user stack is still the event's (its thread ran no user code); an empty
  // kernel stack says nothing.
  if (got < 0 || (got == 0 && walk == 0)) {
    discard(rec);
    return 0;
  }
  __u32 n = (__u64)got / sizeof(__u64);
  if (n > CW_MAX_STACK) n = CW_MAX_STACK;
  __u64 size = sizeof(*rec) - sizeof(rec->ips) + (__u64)n * sizeof(__u64);
  rec->h.type = type;
  rec->h.size = size;
  rec->h.ts = bpf_ktime_get_ns();
  rec->h.pid = tgid;
  rec->h.tid = tid;
  rec->h.cpu = bpf_get_smp_processor_id();
  rec->h.flags = flags;
  rec->seq = seq;
  rec->n = n;
  rec->pad = 0;
  submit(rec);
  return 1;
}

static __always_inline int take_fp_stack(void* ctx, __u32 tid, __u32 tgid, __u64 seq, __u32 flags) {
  return emit_walked_stack(ctx, CW_REC_STACK, BPF_F_USER_STACK, tid, tgid, seq, flags);
}

// Copies up to `want` bytes of user memory from `sp` up. One read does it unless the
// stack's mapping ends sooner (a main thread near the top of its stack): then page by
// page, keeping what could be read.
static __always_inline __u32 copy_user_stack(__u8* dst, __u64 sp, __u32 want) {
  if (want > CW_MAX_USTACK_BYTES) want = CW_MAX_USTACK_BYTES;
  if (bpf_probe_read_user(dst, want, (void*)sp) == 0) return want;
  __u32 got = 0;
  for (int i = 0; i < CW_MAX_USTACK_BYTES / 4096 + 1; i++) {
    if (got >= want) break;
    __u64 addr = sp + got;
    __u32 chunk = 4096 - (__u32)(addr & 4095);
    if (chunk > want - got) chunk = want - got;
    if (chunk == 0 || chunk > 4096) break;
    if (bpf_probe_read_user(dst + (got & (CW_MAX_USTACK_BYTES - 1)), chunk, (void*)addr) != 0)
      break;
    got += chunk;
  }
  return got;
}

// --call-graph dwarf: the thread's user registers (saved where it entered the kernel) and
// the top of its user stack, for user space to unwind with the files' CFI.
static __always_inline int take_dwarf_stack(__u32 tid, __u32 tgid, __u64 seq, __u32 flags) {
  __u32 slot = bpf_get_smp_processor_id() * 2 + ((flags & CW_STACK_OF_SAMPLE) ? 1 : 0);
  struct ustack_scratch* scratch = bpf_map_lookup_elem(&ustack_scratch, &slot);
  if (!scratch) return 0;
  struct task_struct* task = bpf_get_current_task_btf();
  if (task->flags & PF_KTHREAD_FLAG) return 0;
  struct pt_regs* user = (struct pt_regs*)bpf_task_pt_regs(task);
  if (bpf_probe_read_kernel(&scratch->regs, sizeof(scratch->regs), user) != 0) return 0;
  struct pt_regs* r = &scratch->regs;
  if ((r->cs & 3) != 3) return 0;  // not a frame of user code
  struct cw_rec_ustack* rec = &scratch->rec;
  rec->regs[0] = r->ax;
  rec->regs[1] = r->dx;
  rec->regs[2] = r->cx;
  rec->regs[3] = r->bx;
  rec->regs[4] = r->si;
  rec->regs[5] = r->di;
  rec->regs[6] = r->bp;
  rec->regs[7] = r->sp;
  rec->regs[8] = r->r8;
  rec->regs[9] = r->r9;
  rec->regs[10] = r->r10;
  rec->regs[11] = r->r11;
  rec->regs[12] = r->r12;
  rec->regs[13] = r->r13;
  rec->regs[14] = r->r14;
  rec->regs[15] = r->r15;
  rec->regs[16] = r->ip;
  __u32 got = copy_user_stack(rec->data, r->sp, ustack_bytes);
  __u64 size = sizeof(*rec) - sizeof(rec->data) + (__u64)got;
  if (size > sizeof(*rec)) return 0;
  rec->h.type = CW_REC_USTACK;
  rec->h.size = size;
  rec->h.ts = bpf_ktime_get_ns();
  rec->h.pid = tgid;
  rec->h.tid = tid;
  rec->h.cpu = bpf_get_smp_processor_id();
  rec->h.flags = flags;
  rec->seq = seq;
  rec->size = got;
  rec->pad = 0;
  flush_cpu(false);  // too big to stage: after the records staged before it
  if (bpf_ringbuf_output(&events, rec, size, wakeup_flag()) != 0) count_lost();
  return 1;
}

// The current thread's user stack: `seq` is its syscall's number (flags 0) or its sample's
// timestamp (CW_STACK_OF_SAMPLE).
static __always_inline int take_stack(void* ctx, __u32 tid, __u32 tgid, __u64 seq, __u32 flags) {
  if (ustack_bytes != 0) return take_dwarf_stack(tid, tgid, seq, flags);
  return take_fp_stack(ctx, tid, tgid, seq, flags);
}

// A record that stands for a stack the thread walked before (CW_USTACK_AS_BEFORE,
// CW_KSTACK_AS_BEFORE): `original` is the seq of the call that stack was walked for.
static __always_inline void emit_stack_as_before(__u32 type, __u32 tid, __u32 tgid, __u64 seq,
                                                 __u64 original) {
  struct as_before {
    struct cw_rec_header h;
    __u64 seq;
    __u32 n;
    __u32 pad;
    __u64 as_before;
  };
  struct as_before* rec = reserve(sizeof(*rec));
  if (!rec) return;
  fill_header(&rec->h, type, sizeof(*rec));
  rec->h.pid = tgid;
  rec->h.tid = tid;
  rec->h.flags = type == CW_REC_KSTACK ? CW_KSTACK_AS_BEFORE : CW_USTACK_AS_BEFORE;
  rec->seq = seq;
  rec->n = 0;
  rec->pad = 0;
  rec->as_before = original;
  submit(rec);
}

// The user stack of the current thread's recorded call (blocked, or entered with --stacks
// all). Walking it by frame pointers is most of what is left of a blocking switch's cost
// once the kernel stack is walked once per place (2 us of 2.4 on pgbench's select-only
// load): the walker reads user memory frame by frame, and code built without frame
// pointers sends it to addresses that fault. A loop blocks from the same place every
// turn, so when the user instruction, stack and frame pointers and the caller's frame and
// return address saved at the frame pointer are those of the thread's last walked stack,
// a record saying "as before" (CW_USTACK_AS_BEFORE) takes its place, for USTACK_REPEAT_NS
// after the walk: the registers and the innermost frame say nothing of frames further out,
// which a JIT changes when it compiles a function again (V8 moving a loop from its
// interpreter to compiled code keeps the same stack depth), so the stack is walked again
// that often (pgbench's backends block every 0.5 ms: a twentieth of their blocks). A frame
// pointer that does not point into the stack above the stack pointer (code built without
// them uses the register for data) is not read.
#define USTACK_REPEAT_NS 10000000ULL

// Where a thread entered the kernel from: its user instruction, stack and frame pointers,
// read once for both stacks' "as before" checks.
struct user_place {
  __u64 ip, sp, bp;
};

static __always_inline struct user_place user_place_of(struct task_struct* task) {
  struct pt_regs* user = (struct pt_regs*)bpf_task_pt_regs(task);
  struct user_place at = {BPF_CORE_READ(user, ip), BPF_CORE_READ(user, sp),
                          BPF_CORE_READ(user, bp)};
  return at;
}

static __always_inline int take_call_stack(void* ctx, struct user_place at, struct inflight* call,
                                           __u32 tid, __u32 tgid) {
  if (ustack_bytes != 0) return take_dwarf_stack(tid, tgid, call->seq, 0);
  __u64 ip = at.ip, sp = at.sp, bp = at.bp;
  __u64 frame[2] = {0, 0};
  if (bp >= sp && bp - sp < (1 << 20)) bpf_probe_read_user(frame, sizeof(frame), (void*)bp);
  __u64 now = bpf_ktime_get_ns();
  if (!full_stream && call->ustack_seq != 0 && now - call->ustack_ts < USTACK_REPEAT_NS &&
      call->ustack_ip == ip && call->ustack_sp == sp && call->ustack_bp == bp &&
      call->ustack_frame[0] == frame[0] && call->ustack_frame[1] == frame[1]) {
    emit_stack_as_before(CW_REC_STACK, tid, tgid, call->seq, call->ustack_seq);
    return 1;
  }
  if (!take_fp_stack(ctx, tid, tgid, call->seq, 0)) return 0;
  call->ustack_ip = ip;
  call->ustack_sp = sp;
  call->ustack_bp = bp;
  call->ustack_frame[0] = frame[0];
  call->ustack_frame[1] = frame[1];
  call->ustack_seq = call->seq;
  call->ustack_ts = now;
  return 1;
}

// The kernel stack where a syscall blocked (CW_REC_KSTACK): which kernel function the
// thread sleeps in (a pipe read, a futex wait, a poll), which the user stack cannot say.
// Walking it costs more than the rest of a context switch's recording together (4 us of
// 6.5 on pgbench's), and a loop blocks in the same place every turn: when the call, its
// operation, its object's kind, the sleep state and the user instruction and stack pointer
// it came from are those of the thread's last walked stack, a record that says so
// (CW_KSTACK_AS_BEFORE) takes its place.
static __always_inline void take_kstack(void* ctx, struct user_place at, struct inflight* call,
                                        unsigned int state, __u32 tid, __u32 tgid) {
  __u64 ip = at.ip, sp = at.sp;
  // A timeout takes another way to sleep (schedule_hrtimeout_range, not schedule): part
  // of the place too.
  __u64 what = (__u64)call->nr | (__u64)(call->rec.timeout_ns >= 0) << 15 |
               (__u64)(call->rec.op & 0xff) << 16 | (__u64)(call->obj_kind & 0xff) << 24 |
               (__u64)state << 32;
  if (!full_stream && call->kstack_seq != 0 && call->kstack_what == what && call->kstack_ip == ip &&
      call->kstack_sp == sp) {
    emit_stack_as_before(CW_REC_KSTACK, tid, tgid, call->seq, call->kstack_seq);
    return;
  }
  if (!emit_walked_stack(ctx, CW_REC_KSTACK, 0, tid, tgid, call->seq, 0)) return;
  call->kstack_what = what;
  call->kstack_ip = ip;
  call->kstack_sp = sp;
  call->kstack_seq = call->seq;
}
