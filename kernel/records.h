/* The records the eBPF programs write to the ring buffer and the recorder reads.
 *
 * Shared by kernel/causeway.bpf.c (C, compiled with clang -target bpf) and user space
 * (C++), so it uses fixed-width types only and no padding the two compilers could lay
 * out differently. Every record starts with cw_rec_header; `size` is the whole record
 * in bytes, so a reader can skip types it does not know. Thread ids are the kernel's
 * pid (a thread) and tgid (a process). Timestamps are bpf_ktime_get_ns(), i.e.
 * CLOCK_MONOTONIC, the clock user-space markers use too.
 *
 * The kernel side knows *mechanisms* (this fd is a unix socket; these bytes moved at
 * this stream offset); which syscalls matter for causality is said by rule packs.
 */
#ifndef CW_KERNEL_RECORDS_H
#define CW_KERNEL_RECORDS_H

#ifdef __BPF__
/* vmlinux.h provides __u8 .. __u64 */
#else
#include <linux/types.h>
#endif

#define CW_COMM_LEN 16
#define CW_PATH_LEN 256
#define CW_MAX_STACK 64   /* user frames kept per stack record */
#define CW_MAX_USTACK_BYTES 32768 /* user stack bytes a CW_REC_USTACK can carry */
#define CW_USTACK_REGS 17 /* x86-64 in DWARF order: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip */
#define CW_MAX_READY 16   /* ready descriptors reported per epoll/poll return */
#define CW_MAX_SYSCALLS 512 /* syscall numbers the class table covers */

enum cw_rec_type {
  CW_REC_SWITCH = 1,     /* cw_rec_switch */
  CW_REC_WAKING = 2,     /* cw_rec_wake: current thread made target runnable */
  CW_REC_WAKEUP_NEW = 3, /* cw_rec_wake: a new task became runnable */
  CW_REC_FORK = 4,       /* cw_rec_fork */
  CW_REC_EXEC = 5,       /* cw_rec_exec */
  CW_REC_EXIT = 6,       /* cw_rec_exit */
  CW_REC_COMM = 7,       /* cw_rec_comm: the thread was renamed */
  CW_REC_SYS_ENTER = 8,  /* cw_rec_sys_enter */
  CW_REC_SYS_EXIT = 9,   /* cw_rec_sys_exit */
  CW_REC_XFER = 10,      /* cw_rec_xfer: bytes moved on a stream */
  CW_REC_READY = 11,     /* cw_rec_ready: descriptors an epoll/poll call returned */
  CW_REC_TIMER = 12,     /* cw_rec_timer: arm, fire or cancel */
  CW_REC_IRQ = 13,       /* cw_rec_irq: hard or soft interrupt entry or exit */
  CW_REC_SIGNAL = 14,    /* cw_rec_signal: generate or deliver */
  CW_REC_STACK = 15,     /* cw_rec_stack: user stack of the thread's open syscall */
  CW_REC_CALL = 16,      /* cw_rec_call: an instrumented function was entered or returned */
  CW_REC_FLAG = 17,      /* cw_rec_flag: a data flag was read or written */
  /* 18 is unused */
  CW_REC_KSTACK = 19,    /* cw_rec_stack: kernel stack where the thread's syscall blocked */
  CW_REC_USTACK = 20,    /* cw_rec_ustack: registers and a copy of the top of the user stack */
  CW_REC_SAMPLE = 21,    /* cw_rec_sample: a cpu-clock tick found the thread running */
  CW_REC_SHORT_WAITS = 22, /* cw_rec_short_waits: waits too short to write, counted */
};

/* Syscall classes: how the kernel side decodes a syscall's arguments. User space fills
 * the class table (map `syscall_class`, indexed by syscall number) from
 * kernel/syscalls.cc; number 0 in the table means "not recorded". */
enum cw_sys_class {
  CW_SYS_NONE = 0,
  CW_SYS_PLAIN = 1,      /* recorded with its raw arguments only */
  CW_SYS_READ = 2,       /* fd, buffer, count: a receive when the fd is a stream */
  CW_SYS_WRITE = 3,      /* fd, buffer, count: a send when the fd is a stream */
  CW_SYS_READV = 4,      /* fd, iovec, iovcnt: receive */
  CW_SYS_WRITEV = 5,     /* fd, iovec, iovcnt: send */
  CW_SYS_RECVMSG = 6,    /* fd, msghdr: receive */
  CW_SYS_SENDMSG = 7,    /* fd, msghdr: send */
  CW_SYS_FUTEX = 8,      /* uaddr, op, val, timeout */
  CW_SYS_EPOLL_WAIT = 9, /* epfd, events, maxevents, timeout ms (pwait2: timespec) */
  CW_SYS_POLL = 10,      /* pollfd array, nfds, timeout ms */
  CW_SYS_PPOLL = 11,     /* pollfd array, nfds, timespec */
  CW_SYS_SELECT = 12,    /* nfds, sets, timeval (select) or timespec (pselect6) */
  CW_SYS_NANOSLEEP = 13, /* timespec */
  CW_SYS_CLOCK_NANOSLEEP = 14, /* clock, flags, timespec */
  CW_SYS_TIMERFD_SETTIME = 15, /* fd, flags, itimerspec */
  CW_SYS_WAIT = 16,      /* wait4 (pid) / waitid (idtype, id) */
  CW_SYS_FD = 17,        /* first argument is an fd: resource = its object (flock, fcntl, connect, accept) */
  CW_SYS_KILL = 18,      /* kill(pid, sig), tkill(tid, sig), tgkill(tgid, tid, sig) */
  CW_SYS_PSELECT = 19,   /* pselect6: timespec timeout */
  CW_SYS_EPOLL_PWAIT2 = 20,
  /* Calls that make new stream objects; only their exit matters (the offsets of a new
     object start at 0, not where a freed one at the same address stopped). */
  CW_SYS_NEW_FD = 21,   /* eventfd, eventfd2, socket: the new fd is the result */
  CW_SYS_NEW_PAIR = 22, /* pipe, pipe2 (int[2] at arg 0), socketpair (int[2] at arg 3) */
};

/* What kind of kernel object an fd refers to (cw_rec_xfer.obj_kind, cw_rec_sys_enter). */
enum cw_obj_kind {
  CW_OBJ_NONE = 0,
  CW_OBJ_UNIX = 1,    /* unix socket; object = the receiving socket's struct sock */
  CW_OBJ_TCP = 2,     /* TCP; object = hash of the directed 4-tuple, offset = sequence */
  CW_OBJ_PIPE = 3,    /* pipe or FIFO; object = struct pipe_inode_info */
  CW_OBJ_EVENTFD = 4, /* eventfd; object = eventfd_ctx, offset/len in counter units */
  CW_OBJ_TIMERFD = 5, /* timerfd; object = timerfd_ctx */
  CW_OBJ_OTHER_SOCK = 6,
  CW_OBJ_FILE = 7,    /* anything else; object = inode number */
};

/* A CPU's staged records (kernel/bpf/output.bpf.h): whole records, back to back, sent to
 * the ring buffer a block at a time; what is left when recording stops is read from the
 * map `stages` (CW_STAGE_LEVELS values per CPU). */
#define CW_STAGE_CAP 8192
#define CW_STAGE_SLACK 1024
#define CW_STAGE_LEVELS 4
struct cw_stage {
  __s64 first_ts; /* the block's oldest record's time */
  __u32 len;      /* bytes staged: records from `sent` to here are still to send */
  __u32 sent;     /* bytes at the start already sent, by a writer interrupting this level's */
  __u32 records;      /* records staged */
  __u32 reserved;     /* bytes reserved by the record being written */
  __u32 flushing;     /* the level's owner is sending the block */
  __u32 sent_records; /* of `records`, the ones before `sent` */
  /* Twice the room used (CAP + SLACK): a send of the bytes from `sent` to `len` is then
   * within bounds the verifier can check from each one's own bound. */
  __u8 data[2 * (CW_STAGE_CAP + CW_STAGE_SLACK)];
};

struct cw_rec_header {
  __u32 type; /* enum cw_rec_type */
  __u32 size; /* bytes in the whole record, header included */
  __u64 ts;   /* CLOCK_MONOTONIC ns */
  __u32 pid;  /* tgid of the current task */
  __u32 tid;  /* pid of the current task */
  __u32 cpu;
  __u32 flags; /* per-type bits, below */
};

/* CW_REC_SWITCH: the header's task is `prev`. */
struct cw_rec_switch {
  struct cw_rec_header h;
  __u32 next_pid, next_tid;
  __u8 prev_state;  /* 'R' preempted or runnable, 'S', 'D', 'T', 't', 'X', 'Z', 'P', 'I' */
  __u8 prev_kernel; /* prev is a kernel thread */
  __u8 next_kernel;
  /* 1: `next` is recorded, so the record of its own switch out is due on this CPU (the
   * decoder notices a kernel that never reports it, recorder/record_decoder.cc) */
  __u8 next_recorded;
  __u8 pad[4];
};

/* The header flag of a CW_REC_SWITCH written for a held wait (record --min-wait): the
 * header's thread began waiting at h.ts on CPU h.cpu, and the record was written later,
 * once the wait had lasted long enough to matter. It says nothing of that CPU's next task
 * (next_tid 0). Switches of such records' threads are written only for waits that long:
 * a thread's switches no longer tell who is on a CPU. */
#define CW_SWITCH_HELD 1u

/* CW_REC_WAKING / CW_REC_WAKEUP_NEW: the header's task woke `target`. */
/* The header flag of a CW_REC_WAKING raised inside a send on a stream (a socket, a pipe, an
 * eventfd) whose transfer is not written (calls taken at the scheduler write none that a
 * wake-up explains): the wake-up is all the trace has of the bytes. */
#define CW_WAKE_DELIVERS 1u
struct cw_rec_wake {
  struct cw_rec_header h;
  __u32 target_pid, target_tid;
  __u32 in_irq; /* 1 when called from hard or soft interrupt context */
  /* In interrupt context, the thread that armed the hrtimer whose expiry is running on this
   * CPU (a timerfd, a POSIX or interval timer, a timed sleep's own timer): the one on whose
   * behalf the interrupt woke `target`. 0 when none is known. */
  __u32 cause_tid;
};

/* CW_REC_FORK: the header's task created child_tid (in process child_pid). */
struct cw_rec_fork {
  struct cw_rec_header h;
  __u32 child_pid, child_tid;
  __u32 is_thread; /* child shares the parent's address space (CLONE_THREAD) */
  __u32 child_kernel;
  char child_comm[CW_COMM_LEN];
};

/* CW_REC_EXEC: the header's process replaced its image. */
struct cw_rec_exec {
  struct cw_rec_header h;
  char comm[CW_COMM_LEN]; /* name after exec */
  char path[CW_PATH_LEN]; /* NUL-terminated, truncated */
};

/* CW_REC_EXIT: the header's thread ended. */
struct cw_rec_exit {
  struct cw_rec_header h;
  __s32 code; /* exit status as wait4 reports it */
  __u32 pad;
};

/* CW_REC_COMM: the header's thread was renamed to `comm`. */
struct cw_rec_comm {
  struct cw_rec_header h;
  char comm[CW_COMM_LEN];
};

/* CW_REC_SYS_ENTER. `seq` numbers the thread's syscalls so an exit, a transfer or a
 * stack can be tied to its entry. */
struct cw_rec_sys_enter {
  struct cw_rec_header h;
  __u64 seq;
  __u32 nr;
  __u32 sys_class; /* enum cw_sys_class */
  __u64 args[6];   /* raw arguments */
  __s32 fd;        /* the fd argument, -1 when none */
  __u32 obj_kind;  /* enum cw_obj_kind of fd, 0 when none */
  __u64 resource;  /* futex address, object identity of fd, target pid, ... */
  __u64 value;     /* futex val, signal number, ... */
  __u64 count;     /* byte count, nfds, maxevents */
  __s64 timeout_ns; /* -1 for none; relative unless flags & CW_ENTER_ABS_TIMEOUT */
  __u32 op;        /* futex op without FUTEX_PRIVATE_FLAG/CLOCK_REALTIME; fcntl cmd; flock op */
  __u32 pad;
};
#define CW_ENTER_ABS_TIMEOUT 1u

/* CW_REC_SYS_EXIT. With CW_EXIT_NO_RET in the header's flags the return value was not seen
 * (a call taken at the scheduler, kernel/bpf/calls_at_switch.bpf.h): `ret` is 0 and means
 * nothing. */
#define CW_EXIT_NO_RET 1u
struct cw_rec_sys_exit {
  struct cw_rec_header h;
  __u64 seq;
  __u32 nr;
  __u32 pad;
  __s64 ret;
};

/* CW_REC_XFER: written at the syscall's exit, when the byte count is known. Both ends
 * of one stream give the same `object`; `offset` counts bytes (eventfd: counter units)
 * since recording began, or is the TCP sequence number. */
struct cw_rec_xfer {
  struct cw_rec_header h;
  __u64 seq;      /* the syscall it belongs to */
  __u64 object;
  __u64 offset;
  __u64 len;
  __s32 fd;
  __s32 peer_pid; /* process at the other end, -1 when unknown */
  __u32 obj_kind; /* enum cw_obj_kind */
  __u32 is_send;  /* 1 send, 0 receive */
};
/* The header flag of a CW_REC_XFER written because no wake-up handed its bytes over (calls
 * taken at the scheduler write only such transfers): they waited in the stream. */
#define CW_XFER_QUEUED 1u
/* Written later than it happened, stamped then, with its thread and CPU then in the header;
 * no call around it: a send held back until its bytes had waited (record --min-wait), or a
 * read that took a send's bytes before the send's own program had counted them. */
#define CW_XFER_LATE 2u

/* CW_REC_READY: up to CW_MAX_READY descriptors an epoll_wait/poll/ppoll returned. For
 * epoll, `fds` holds the low 32 bits of epoll_event.data (an fd by convention). */
struct cw_rec_ready {
  struct cw_rec_header h;
  __u64 seq;
  __u32 n;
  __u32 pad;
  __s32 fds[CW_MAX_READY];
  __u32 events[CW_MAX_READY];
};

/* CW_REC_TIMER */
enum cw_timer_op { CW_TIMER_ARM = 1, CW_TIMER_FIRE = 2, CW_TIMER_CANCEL = 3 };
struct cw_rec_timer {
  struct cw_rec_header h;
  __u64 timer;       /* timerfd_ctx address */
  __u64 expires_ns;  /* absolute, CLOCK_MONOTONIC (arm only) */
  __u64 interval_ns; /* period (arm only) */
  __u32 op;          /* enum cw_timer_op */
  __u32 pad;
};

/* CW_REC_IRQ */
enum cw_irq_op { CW_HARDIRQ_ENTER = 1, CW_HARDIRQ_EXIT = 2, CW_SOFTIRQ_ENTER = 3, CW_SOFTIRQ_EXIT = 4 };
struct cw_rec_irq {
  struct cw_rec_header h;
  __u32 op;   /* enum cw_irq_op */
  __s32 irq;  /* irq number or softirq vector */
  char name[CW_COMM_LEN]; /* handler name (hard irq entry only) */
};

/* CW_REC_SIGNAL */
enum cw_signal_op { CW_SIGNAL_GENERATE = 1, CW_SIGNAL_DELIVER = 2 };
struct cw_rec_signal {
  struct cw_rec_header h;
  __u32 op; /* enum cw_signal_op */
  __s32 sig;
  __u32 target_pid, target_tid; /* generate only */
  /* Generate only, as cw_rec_wake.cause_tid: raised by the expiry of a timer this thread
   * armed. Absent from records of older recorders (8 bytes shorter). */
  __u32 cause_tid;
  __u32 pad;
};

/* CW_REC_STACK: the user stack of the header's thread, taken when its syscall `seq`
 * blocked (or at entry with --stacks all). Frames are innermost first; `n` of them
 * follow the fixed part, so the record's size is variable.
 * CW_REC_KSTACK has the same layout: the kernel stack of the thread where its syscall
 * `seq` blocked (the function it sleeps in, down to the syscall entry), sent just after
 * that syscall's CW_REC_STACK. */
struct cw_rec_stack {
  struct cw_rec_header h;
  __u64 seq;
  __u32 n;
  __u32 pad;
  __u64 ips[CW_MAX_STACK];
};

/* The header flag of a CW_REC_STACK or CW_REC_USTACK taken on a sample: `seq` is then the
 * sample's timestamp (h.ts of its cw_rec_sample), not a syscall's number. */
#define CW_STACK_OF_SAMPLE 1u

/* The header flag of a CW_REC_KSTACK that repeats the thread's previous kernel stack: its
 * syscall blocked in the same call, operation and kind of object, with a timeout or
 * without as that one, in the same state, from the same user instruction and stack
 * pointer as the call whose kernel stack the thread's previous CW_REC_KSTACK carried,
 * whose `seq` is ips[0] (`n` is 0). A server's loop blocks the same way thousands of times
 * a second, and walking the kernel stack is most of what recording a blocking call costs. */
#define CW_KSTACK_AS_BEFORE 2u

/* The header flag of a CW_REC_STACK that repeats the thread's previous user stack walked
 * by frame pointers: its syscall came from the same user instruction, with the same stack
 * and frame pointers and the same two words (the caller's frame pointer and return
 * address) at the frame pointer, as the call whose stack the thread's previous walked
 * CW_REC_STACK carried, whose `seq` is ips[0] (`n` is 0), walked less than 10 ms before
 * (frames further out can change under a JIT). */
#define CW_USTACK_AS_BEFORE 2u

/* CW_REC_USTACK (--call-graph dwarf): what user space needs to unwind the thread's user
 * stack with the CFI of the mapped files (recorder/dwarf_unwind.h), in place of a
 * frame-pointer walk. `size` bytes of the stack from regs[7] (rsp) up follow the fixed
 * part; fewer than asked when the stack's mapping ends sooner. */
struct cw_rec_ustack {
  struct cw_rec_header h;
  __u64 seq; /* as cw_rec_stack's */
  __u64 regs[CW_USTACK_REGS];
  __u32 size;
  __u32 pad;
  __u8 data[CW_MAX_USTACK_BYTES];
};

/* CW_REC_SAMPLE: a cpu-clock tick (record --sample HZ) interrupted the header's thread. Its
 * stack, if taken, follows as a stack record with CW_STACK_OF_SAMPLE and seq = h.ts. */
struct cw_rec_sample {
  struct cw_rec_header h;
  __u64 period; /* ns of CPU time per sample */
  __u32 user;   /* 1: the tick interrupted user code, 0: kernel code on the thread's behalf */
  __u32 pad;
};

/* CW_REC_SHORT_WAITS (record --min-wait): the header's thread waited `count` times since
 * `since` (ns, the start of the first), `total_ns` in all (`uninterruptible_ns` of it in the
 * kernel's uninterruptible sleep, state D), each time for less than the shortest wait
 * written; those waits' switches and wake-ups were left out. `waker_tid` woke the last of
 * them (0: an interrupt). Written as the count's span passes a limit, and before the
 * thread's next wait written. */
struct cw_rec_short_waits {
  struct cw_rec_header h;
  __u64 since;
  __u64 total_ns;
  __u64 uninterruptible_ns;
  __u32 count;
  __u32 waker_tid;
  /* Of those, the times the thread was preempted (it stayed runnable, state R) and their
   * time: part of count and total_ns. */
  __u64 runnable_ns;
  __u32 preempted;
  __u32 pad;
};

/* CW_REC_CALL: a uprobe at a function's entry (is_exit 0) or a uretprobe at its return
 * (is_exit 1) fired in the header's thread. fn_index is the attachment's cookie: the
 * recorder's index into its list of probed functions. */
struct cw_rec_call {
  struct cw_rec_header h;
  __u32 fn_index;
  __u32 is_exit;
  __u64 address; /* entry: the function's runtime address; exit: 0 (not known there) */
};

/* CW_REC_FLAG: a data flag was accessed, seen by an instruction probe or a hardware
 * watchpoint. */
enum cw_flag_access {
  CW_FLAG_UNKNOWN = 0, /* a read/write watch: the instruction in insn says which */
  CW_FLAG_READ = 1,
  CW_FLAG_WRITE = 2,
};
enum cw_flag_source {
  CW_FLAG_PROBE = 1, /* a uprobe on an instruction that accesses the flag */
  CW_FLAG_WATCH = 2, /* a hardware watchpoint: the trap comes after the instruction */
};
#define CW_INSN_BEFORE 15 /* bytes kept before a watch hit's ip: the longest x86 insn */
struct cw_rec_flag {
  struct cw_rec_header h;
  __u32 flag_index;
  __u8 access;   /* enum cw_flag_access */
  __u8 source;   /* enum cw_flag_source */
  __u8 size;     /* the flag's bytes: 1, 2, 4 or 8 */
  __u8 insn_len; /* watch: bytes of insn that are valid (fewer near an unmapped page) */
  __u64 addr;    /* the flag's runtime address */
  __u64 value;   /* probe read: the value about to be read; probe write: the value just
                    written; watch: the value in memory after the access */
  __u64 ip;      /* probe: the accessing instruction's address; watch: the address after
                    it (where the trap left the thread) */
  __u8 insn[16]; /* watch: the insn_len bytes that end at ip, oldest first */
};

/* The cookie of a flag-site uprobe (bpf_cookie, 64 bits):
 *
 *   bits  0..31  delta, signed: the flag's (RIP-relative) or its GOT slot's (GOT) link-time
 *                address minus the probed instruction's, so that at run time
 *                RIP-relative: addr = ip + delta, GOT: addr = *(u64 *)(ip + delta)
 *   bits 32..51  flag index (the recorder's list of flags)
 *   bits 52..53  site kind, enum cw_site_kind
 *   bit  54      GOT: delta points at a slot holding the flag's address
 *   bits 55..56  log2 of the flag's size (1, 2, 4, 8 bytes)
 *   bits 57..60  instruction length (WRITE_ARM, READ_ARM: the next instruction is at ip + length)
 *   bits 61..63  zero
 *
 * READ: read the flag now (the instruction has not run yet) and record a read.
 * WRITE_ARM (on a store): remember, for the thread, the flag's address and where the next
 * instruction is. WRITE_AFTER (on that next instruction): when this thread armed for
 * this very ip, read the value the store left and record a write. READ_ARM (on a load):
 * the same, recording a read at the next instruction with the value then in memory: a
 * READ reads just before the load and misses a store that lands in between, so a poll that
 * ends a loop would be recorded with the old value. */
enum cw_site_kind {
  CW_SITE_READ = 0,
  CW_SITE_WRITE_ARM = 1,
  CW_SITE_WRITE_AFTER = 2, /* the site after a WRITE_ARM or a READ_ARM */
  CW_SITE_READ_ARM = 3,
};
#define CW_SITE_MAX_FLAGS (1u << 20)

static inline __u64 cw_site_cookie(__s32 delta, __u32 flag_index, __u32 kind, __u32 via_got,
                                   __u32 size_log2, __u32 length) {
  return (__u64)(__u32)delta | (__u64)(flag_index & 0xfffff) << 32 | (__u64)(kind & 3) << 52 |
         (__u64)(via_got & 1) << 54 | (__u64)(size_log2 & 3) << 55 | (__u64)(length & 15) << 57;
}
static inline __s64 cw_site_delta(__u64 cookie) { return (__s32)(__u32)cookie; }
static inline __u32 cw_site_flag(__u64 cookie) { return (cookie >> 32) & 0xfffff; }
static inline __u32 cw_site_kind(__u64 cookie) { return (cookie >> 52) & 3; }
static inline __u32 cw_site_via_got(__u64 cookie) { return (cookie >> 54) & 1; }
static inline __u32 cw_site_size(__u64 cookie) { return 1u << ((cookie >> 55) & 3); }
static inline __u32 cw_site_length(__u64 cookie) { return (cookie >> 57) & 15; }

/* A hardware watchpoint, as the watch program finds it: by the process and the watched
 * address (map `watched`). Inherited watchpoints of threads created later are copies
 * whose attach cookie the kernel does not carry over, and perf swaps the events of a
 * process's threads at context switches, so neither the cookie nor the event says which
 * watch fired. */
struct cw_watch_key {
  __u32 tgid;
  __u32 pad;
  __u64 addr;
};
struct cw_watch_info {
  __u32 flag_index;
  __u8 size;
  __u8 writes_only;
  __u8 pad[2];
};

#endif /* CW_KERNEL_RECORDS_H */
