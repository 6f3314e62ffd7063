// causeway's kernel side: scheduler, syscall, interrupt and signal hooks that write the
// records of kernel/records.h to one ring buffer. Loaded by kernel/probes.cc.
// vmlinux.h first: it defines the types the libbpf headers use.
// clang-format off
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
// clang-format on

#include "kernel/records.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

// A BPF object is one compilation unit: the parts below are headers, each using what the
// ones before it define. The order also fixes the order of the maps and programs in the
// object, and so in the skeleton probes.cc loads. (clang-format would sort them.)
// clang-format off
#include "kernel/bpf/maps.bpf.h"          // the loader's settings, the shared maps
#include "kernel/bpf/current.bpf.h"       // the current thread's ids, saved user registers
#include "kernel/bpf/output.bpf.h"        // the pid filter, the ring buffer, lazy entries
#include "kernel/bpf/stacks.bpf.h"        // user and kernel stacks
#include "kernel/bpf/timers.bpf.h"        // interrupt context, whose timer expires
#include "kernel/bpf/files.bpf.h"         // what object a file descriptor names
#include "kernel/bpf/sys_enter.bpf.h"     // syscall entry: arguments by class
#include "kernel/bpf/calls_at_switch.bpf.h"  // calls from the scheduler, no syscall programs
#include "kernel/bpf/held_waits.bpf.h"  // waits written once they have lasted
#include "kernel/bpf/sched_switch.bpf.h"  // context switches
#include "kernel/bpf/wake.bpf.h"          // wake-ups
#include "kernel/bpf/transfers.bpf.h"     // bytes on sockets, no syscall programs
#include "kernel/bpf/file_locks.bpf.h"    // file locks taken and dropped, no syscall programs
#include "kernel/bpf/reaps.bpf.h"         // children reaped, no syscall programs
#include "kernel/bpf/tasks.bpf.h"         // fork, exec, exit, rename
#include "kernel/bpf/sys_exit.bpf.h"      // syscall exit: transfers, ready fds, timers
#include "kernel/bpf/irqs.bpf.h"          // hard and soft interrupts
#include "kernel/bpf/signals.bpf.h"       // signals raised and delivered
#include "kernel/bpf/instrument.bpf.h"    // uprobes and watchpoints packs ask for
#include "kernel/bpf/sample.bpf.h"        // cpu-clock samples
// clang-format on
