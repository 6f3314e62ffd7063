// The loader's settings, set before load, and the maps that hold the recorder's state:
// where records go, which syscalls and processes are recorded, each thread's syscall in
// flight and each stream's byte count. Scratch space, timer owners and instrumentation
// have their maps with the code that uses them.
#pragma once

// Set by the loader before load.
const volatile __u32 self_tgid = 0;    // the recorder: never recorded
const volatile __u32 stack_mode = 0;   // 0 none, 1 blocking, 2 all (ProbeOptions::stacks)
const volatile __u32 filter_pids = 0;  // 1: only tgids in `traced_pids`
// record --full: every recorded call written, every blocked call's kernel stack walked.
const volatile __u32 full_stream = 0;
// --call-graph dwarf: bytes of user stack copied per stack (0: walk frame pointers instead).
const volatile __u32 ustack_bytes = 0;
// Object recognition: file_operations addresses, or (when the kernel does not list data
// symbols) the address of the f_op->release function each kind uses.
const volatile __u64 eventfd_fops = 0, timerfd_fops = 0, pipefifo_fops = 0, socket_fops = 0;
const volatile __u64 eventfd_release = 0, timerfd_release = 0, pipe_release = 0, sock_release = 0;
// Syscall numbers whose decoding differs within one class.
const volatile __u32 nr_flock = 0, nr_fcntl = 0, nr_waitid = 0, nr_tgkill = 0;
// CLOCK_REALTIME - CLOCK_MONOTONIC at load, to place absolute realtime timerfds.
const volatile __s64 realtime_offset_ns = 0;
// Waking the reader for every record costs more than writing it: the reader is woken once
// this much is waiting, and otherwise finds the records when its poll times out.
const volatile __u64 wakeup_bytes = 1 << 20;
// 1: records are staged per CPU and sent in blocks (output.bpf.h); 0: each one as written.
// Staging needs the timer tick's tracepoint to send a block that waits too long.
const volatile __u32 stage_records = 0;
// 1: no syscall programs. A call is taken from the saved user registers of a thread that
// blocks inside it (sched_switch) or wakes another from it (sched_waking), and ends when the
// thread next gets a CPU: attaching any program to the syscall tracepoints sends every
// syscall on the machine through the kernel's slow path (bench/RESULTS.md).
const volatile __u32 calls_at_switch = 0;
// With calls_at_switch: a wait is written only once it has lasted this long (0: all are);
// shorter ones are counted per thread (held_waits.bpf.h).
const volatile __u64 min_wait_ns = 0;
// With min_wait_ns: the waits a thread writes in full regardless, one per wait_budget_ns
// of its time and up to wait_burst at once (held_waits.bpf.h, hold_wait).
const volatile __u64 wait_budget_ns = 1;
const volatile __u64 wait_burst = 1;

// Calls are numbered (their records' seq) by each CPU on its own, strided by the number of
// possible CPUs so that no two give the same number: one counter for all would move between
// the CPUs' caches at every call. Set by the loader; 0: the shared counter.
const volatile __u32 possible_cpus = 0;
// 1: the kernel has bpf_preempt_disable (Linux 6.10 and later), and the programs that may be
// preempted hold their CPU while they run (output.bpf.h, keep_cpu).
const volatile __u32 preempt_guard = 0;
__u64 next_seq = 0;
// Set by the recorder before its last pass over the tasks: every call left open for a
// thread that may sleep in it again is closed now (calls_at_switch.bpf.h).
__u32 stopping = 0;

extern bool CONFIG_KASAN __kconfig __weak;

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 1 << 24);  // resized by the loader
} events SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} lost SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} calls_counted SEC(".maps");

// The number of a call begun now on this CPU: never 0, never one another call has.
static __always_inline __u64 next_call_seq(void) {
  __u32 zero = 0;
  __u64* counted = bpf_map_lookup_elem(&calls_counted, &zero);
  if (!counted || possible_cpus == 0) return __sync_fetch_and_add(&next_seq, 1) + 1;
  return __sync_fetch_and_add(counted, 1) * possible_cpus + bpf_get_smp_processor_id() + 1;
}

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, CW_MAX_SYSCALLS);
  __type(key, __u32);
  __type(value, __u32);
} syscall_class SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 16384);
  __type(key, __u32);
  __type(value, __u8);
} traced_pids SEC(".maps");

// Per recorded process (--pid) with threads that have exited (sched_process_exit) but not
// yet left their CPU for the last time (their TASK_DEAD switch): how many, and whether the
// last thread of the group has exited. The process stays recorded until that switch of
// its last exiting thread: after sched_process_exit a thread still wakes its parent
// (exit_notify), may be preempted and runs again, and leaves its CPU; had the process been
// dropped at sched_process_exit, those went unrecorded and the decoder kept the thread on
// its CPU, running, until a recorded thread next took it.
struct exiting {
  __u32 pending;
  __u32 group_dead;
};
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 16384);
  __type(key, __u32);
  __type(value, struct exiting);
} exiting_pids SEC(".maps");

// A recorded syscall between its entry and its exit, per thread.
// A thread's budget of waits written in full in one class of call (held_waits.bpf.h):
// credit in ns, and when it was last counted.
#define CW_WAIT_BUDGETS 32  // a power of two above the number of syscall classes
// The budget slot of preemptions (held_waits.bpf.h, hold_preemption): no class of call's.
#define CW_PREEMPT_BUDGET (CW_WAIT_BUDGETS - 1)
struct wait_budget {
  __u64 credit;
  __u64 counted;
};

struct inflight {
  __u64 seq;
  __u64 enter_ts;
  __u64 object;
  __u64 user_buf;    // buffer or array read at exit (eventfd value, epoll/poll arrays)
  __u64 value;       // eventfd write value
  __u64 expires_ns;  // timerfd_settime: absolute expiry (0: cancel)
  __u64 interval_ns;
  __u32 nr;
  __u32 cls;
  __s32 fd;
  __u32 obj_kind;
  __u32 tcp_seq;
  __s32 peer_pid;
  __u32 count;
  __u8 is_send;
  __u8 stack_taken;
  __u8 emitted;  // `rec` is in the ring buffer
  __u8 active;   // the thread is inside this call
  // Taken from the scheduler (calls_at_switch): the call ends when the thread next gets a
  // CPU, with no return value known.
  __u8 at_switch;
  __u8 timed_out;  // at_switch: the thread's own timer woke it
  // At the scheduler: whether every wake-up of the call came from a reader draining a stream
  // (1), or anything else woke it too (2). Such a wake-up lets a reader of the same stream
  // look, find nothing and sleep again inside its call (calls_at_switch.bpf.h, resumable).
  __u8 wake_mark;
  // At the scheduler: a call left open when its thread ran again (resumable), its exit not
  // written yet: when and on which CPU the thread ran again, and its run time and count of
  // finished reads as it began to sleep; when it was last woken.
  __u32 resumable;
  __u32 resume_cpu;
  __u64 resume_ts;
  __u64 resume_runtime;
  __u64 resume_reads;
  __u64 woken_ts;
  // At the scheduler: whether the thread raised a wake-up inside a call since it last moved
  // bytes on a socket, and the last such call's number and descriptor (transfers.bpf.h).
  __u32 woke_since_xfer;
  __s64 wake_nr;
  __s32 wake_fd;
  // At the scheduler: the file whose lock the thread last tried and did not get (its inode
  // number; 0 none), file_locks.bpf.h.
  __u64 lock_tried;
  // Where the thread's last kernel stack was walked (CW_KSTACK_AS_BEFORE): the call's
  // number, operation, object kind and sleep state packed, the user instruction and stack
  // pointer, and that call's seq. Kept across calls.
  __u64 kstack_what;
  __u64 kstack_ip;
  __u64 kstack_sp;
  __u64 kstack_seq;
  // Where and when the thread's last user stack was walked by frame pointers: the user
  // instruction, stack and frame pointers, the two words at the frame pointer (the
  // caller's frame and return address), that call's seq and the time of the walk
  // (CW_USTACK_AS_BEFORE). Kept across calls.
  __u64 ustack_ip;
  __u64 ustack_sp;
  __u64 ustack_bp;
  __u64 ustack_frame[2];
  __u64 ustack_seq;
  __u64 ustack_ts;
  // The thread's last wait, held back until it has lasted min_wait_ns (held_waits.bpf.h):
  // when and on which CPU it began, its state letter and where it stands (WAIT_*).
  __u64 wait_ts;
  __u32 wait_cpu;
  __u32 wait_phase;
  __u8 wait_state;
  // Waits too short to write since short_since: how many, their time, and the part of it
  // in state D.
  __u32 short_count;
  __u64 short_ns;
  __u64 short_d_ns;
  // Of them, preemptions (held_waits.bpf.h, hold_preemption): how many, and their time.
  __u32 short_r_count;
  __u64 short_r_ns;
  __u32 short_waker;  // the thread that woke the last of them, 0 for an interrupt
  __u64 short_since;
  // The send this thread last held back in its stream's entry (hold_send): the stream and
  // when it was made, for the pass over the tasks to write it once it has waited.
  __u64 pend_object;
  __u64 pend_ts;
  // Its budgets of waits written in full (hold_wait), one per class of call.
  struct wait_budget budget[CW_WAIT_BUDGETS];
  // The entry record, written out only once the call turns out to matter (see lazy_class).
  struct cw_rec_sys_enter rec;
};

// Task-local storage: found through the task itself, no hashing, and freed with it.
struct {
  __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, struct inflight);
} inflight SEC(".maps");

// Bytes (eventfd: counter units) sent and received per stream object since recording
// began: the n-th byte written and the n-th byte read get the same offset.
struct stream_offsets {
  __u64 sent;
  __u64 received;
  // Calls taken at the scheduler (transfers.bpf.h): the end of the last send written (TCP:
  // its sequence number), whether one was, and the unix socket at the other end (a freed
  // socket's struct sock is reused by the next one).
  __u64 written_end;
  __u64 sender;
  __u32 written;
  // A unix stream or a pipe: the end of the bytes of the sends written when a read of them
  // was last written. A read of bytes all before it adds no edge (a shell's `read` takes
  // a line a byte at a time): it is not written.
  __u64 joined_end;
  // With held waits (transfers.bpf.h, hold_send): a send past its thread's budget that woke
  // nobody, kept here until its bytes have waited min_wait_ns unread (then it is written,
  // stamped when it was made) or are read sooner (then nothing is). When it was made (0:
  // none), its bytes (TCP: sequence numbers), its thread, CPU, descriptor and peer.
  __u32 pend_kind;
  __u64 pend_ts;
  __u64 pend_start;
  __u64 pend_end;
  __u32 pend_pid;
  __u32 pend_tid;
  __s32 pend_fd;
  __s32 pend_peer;
  __u32 pend_cpu;
  __u32 pad;
  // Calls taken at the scheduler, a unix stream: the end of the bytes whose sends' programs
  // have decided what to write of them, and the last read that took bytes before that
  // (transfers.bpf.h, note_early_read), for the send's program to settle. When (0: none),
  // the bytes, its thread, CPU and descriptor.
  __u64 settled_end;
  __u64 early_ts;
  __u64 early_start;
  __u64 early_end;
  __u32 early_pid;
  __u32 early_tid;
  __s32 early_fd;
  __u32 early_cpu;
};

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 65536);
  __type(key, __u64);
  __type(value, struct stream_offsets);
} streams SEC(".maps");

// Whether offset `a` comes before `b` in a stream (TCP: in sequence space, which wraps).
static __always_inline bool offset_before(__u64 a, __u64 b, bool tcp) {
  return tcp ? (__s32)((__u32)a - (__u32)b) < 0 : a < b;
}

#define PF_KTHREAD_FLAG 0x00200000
