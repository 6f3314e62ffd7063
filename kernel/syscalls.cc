#include "kernel/syscalls.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/file.h>
#include <sys/syscall.h>

#include <algorithm>

#include "kernel/records.h"

namespace cw::kernel {
namespace {

std::vector<SyscallInfo> build_table() {
  std::vector<SyscallInfo> table = {
      {SYS_read, "read", CW_SYS_READ},
      {SYS_write, "write", CW_SYS_WRITE},
      {SYS_readv, "readv", CW_SYS_READV},
      {SYS_writev, "writev", CW_SYS_WRITEV},
      {SYS_pread64, "pread64", CW_SYS_READ},
      {SYS_pwrite64, "pwrite64", CW_SYS_WRITE},
      {SYS_preadv, "preadv", CW_SYS_READV},
      {SYS_pwritev, "pwritev", CW_SYS_WRITEV},
      {SYS_preadv2, "preadv2", CW_SYS_READV},
      {SYS_pwritev2, "pwritev2", CW_SYS_WRITEV},
      {SYS_recvfrom, "recvfrom", CW_SYS_READ},
      {SYS_sendto, "sendto", CW_SYS_WRITE},
      {SYS_recvmsg, "recvmsg", CW_SYS_RECVMSG},
      {SYS_sendmsg, "sendmsg", CW_SYS_SENDMSG},
      // Their return value counts messages, not bytes: recorded with the fd's object only.
      {SYS_recvmmsg, "recvmmsg", CW_SYS_FD},
      {SYS_sendmmsg, "sendmmsg", CW_SYS_FD},
      {SYS_futex, "futex", CW_SYS_FUTEX},
      {SYS_epoll_wait, "epoll_wait", CW_SYS_EPOLL_WAIT},
      {SYS_epoll_pwait, "epoll_pwait", CW_SYS_EPOLL_WAIT},
      {SYS_epoll_pwait2, "epoll_pwait2", CW_SYS_EPOLL_PWAIT2},
      {SYS_poll, "poll", CW_SYS_POLL},
      {SYS_ppoll, "ppoll", CW_SYS_PPOLL},
      {SYS_select, "select", CW_SYS_SELECT},
      {SYS_pselect6, "pselect6", CW_SYS_PSELECT},
      {SYS_nanosleep, "nanosleep", CW_SYS_NANOSLEEP},
      {SYS_clock_nanosleep, "clock_nanosleep", CW_SYS_CLOCK_NANOSLEEP},
      {SYS_timerfd_settime, "timerfd_settime", CW_SYS_TIMERFD_SETTIME},
      {SYS_wait4, "wait4", CW_SYS_WAIT},
      {SYS_waitid, "waitid", CW_SYS_WAIT},
      {SYS_flock, "flock", CW_SYS_FD},
      // Closing a file releases the locks its process holds on it (lock polling, linux.kernel).
      {SYS_close, "close", CW_SYS_FD},
      {SYS_fcntl, "fcntl", CW_SYS_FD},
      {SYS_connect, "connect", CW_SYS_FD},
      // Ends a stream as a close does (the reader's end of stream).
      {SYS_shutdown, "shutdown", CW_SYS_FD},
      {SYS_accept, "accept", CW_SYS_FD},
      {SYS_accept4, "accept4", CW_SYS_FD},
      // New streams: an object may be allocated where a freed one was, and its byte
      // offsets must start again from 0 or its writes and reads no longer pair.
      {SYS_eventfd, "eventfd", CW_SYS_NEW_FD},
      {SYS_eventfd2, "eventfd2", CW_SYS_NEW_FD},
      {SYS_socket, "socket", CW_SYS_NEW_FD},
      {SYS_pipe, "pipe", CW_SYS_NEW_PAIR},
      {SYS_pipe2, "pipe2", CW_SYS_NEW_PAIR},
      {SYS_socketpair, "socketpair", CW_SYS_NEW_PAIR},
      {SYS_kill, "kill", CW_SYS_KILL},
      {SYS_tkill, "tkill", CW_SYS_KILL},
      {SYS_tgkill, "tgkill", CW_SYS_KILL},
      {SYS_pause, "pause", CW_SYS_PLAIN},
      {SYS_rt_sigsuspend, "rt_sigsuspend", CW_SYS_PLAIN},
      {SYS_rt_sigtimedwait, "rt_sigtimedwait", CW_SYS_PLAIN},
      {SYS_msgrcv, "msgrcv", CW_SYS_PLAIN},
      {SYS_msgsnd, "msgsnd", CW_SYS_PLAIN},
      {SYS_semop, "semop", CW_SYS_PLAIN},
      {SYS_semtimedop, "semtimedop", CW_SYS_PLAIN},
      {SYS_mq_timedreceive, "mq_timedreceive", CW_SYS_PLAIN},
      {SYS_mq_timedsend, "mq_timedsend", CW_SYS_PLAIN},
      {SYS_sched_yield, "sched_yield", CW_SYS_PLAIN},
      // A wait for the disk: the thread sleeps until its writes reach the device.
      {SYS_fsync, "fsync", CW_SYS_FD},
      {SYS_fdatasync, "fdatasync", CW_SYS_FD},
      {SYS_sync_file_range, "sync_file_range", CW_SYS_FD},
      // Timers whose expiry signals the process (SIGALRM and its kind): the arming is the
      // cause of a signal that an interrupt delivers later.
      {SYS_alarm, "alarm", CW_SYS_PLAIN},
      {SYS_setitimer, "setitimer", CW_SYS_PLAIN},
      {SYS_timer_settime, "timer_settime", CW_SYS_PLAIN},
      // Calls that change a folder's entries: file notifications (inotify, fanotify) of a
      // create, a rename or a removal wake their watcher from inside them.
      {SYS_open, "open", CW_SYS_PLAIN},
      {SYS_openat, "openat", CW_SYS_PLAIN},
      {SYS_creat, "creat", CW_SYS_PLAIN},
      {SYS_mkdir, "mkdir", CW_SYS_PLAIN},
      {SYS_mkdirat, "mkdirat", CW_SYS_PLAIN},
      {SYS_rename, "rename", CW_SYS_PLAIN},
      {SYS_renameat, "renameat", CW_SYS_PLAIN},
      {SYS_renameat2, "renameat2", CW_SYS_PLAIN},
      {SYS_unlink, "unlink", CW_SYS_PLAIN},
      {SYS_unlinkat, "unlinkat", CW_SYS_PLAIN},
      {SYS_rmdir, "rmdir", CW_SYS_PLAIN},
      {SYS_link, "link", CW_SYS_PLAIN},
      {SYS_linkat, "linkat", CW_SYS_PLAIN},
      {SYS_symlink, "symlink", CW_SYS_PLAIN},
      {SYS_symlinkat, "symlinkat", CW_SYS_PLAIN},
  };
  std::sort(table.begin(), table.end(),
            [](const SyscallInfo& a, const SyscallInfo& b) { return a.nr < b.nr; });
  return table;
}

}  // namespace

const std::vector<SyscallInfo>& recorded_syscalls() {
  static const std::vector<SyscallInfo> table = build_table();
  return table;
}

std::string_view syscall_name(uint32_t nr) {
  const auto& table = recorded_syscalls();
  auto it = std::lower_bound(table.begin(), table.end(), nr,
                             [](const SyscallInfo& info, uint32_t n) { return info.nr < n; });
  return it != table.end() && it->nr == nr ? it->name : std::string_view{};
}

std::string_view futex_op_name(uint32_t op) {
  switch (op) {
    case FUTEX_WAIT: return "wait";
    case FUTEX_WAKE: return "wake";
    case FUTEX_FD: return "fd";
    case FUTEX_REQUEUE: return "requeue";
    case FUTEX_CMP_REQUEUE: return "cmp_requeue";
    case FUTEX_WAKE_OP: return "wake_op";
    case FUTEX_LOCK_PI: return "lock_pi";
    case FUTEX_UNLOCK_PI: return "unlock_pi";
    case FUTEX_TRYLOCK_PI: return "trylock_pi";
    case FUTEX_WAIT_BITSET: return "wait_bitset";
    case FUTEX_WAKE_BITSET: return "wake_bitset";
    case FUTEX_WAIT_REQUEUE_PI: return "wait_requeue_pi";
    case FUTEX_CMP_REQUEUE_PI: return "cmp_requeue_pi";
    case FUTEX_LOCK_PI2: return "lock_pi2";
    default: return "";
  }
}

std::string_view fcntl_cmd_name(uint32_t cmd) {
  switch (cmd) {
    case F_SETLK: return "setlk";
    case F_SETLKW: return "setlkw";
    case F_GETLK: return "getlk";
    case F_OFD_SETLK: return "ofd_setlk";
    case F_OFD_SETLKW: return "ofd_setlkw";
    case F_OFD_GETLK: return "ofd_getlk";
    default: return "";
  }
}

std::string_view flock_op_name(uint32_t op) {
  switch (op & ~static_cast<uint32_t>(LOCK_NB)) {
    case LOCK_SH: return "sh";
    case LOCK_EX: return "ex";
    case LOCK_UN: return "un";
    default: return "";
  }
}

std::string_view syscall_op_name(uint32_t nr, uint32_t op) {
  switch (nr) {
    case SYS_futex: return futex_op_name(op);
    case SYS_fcntl: return fcntl_cmd_name(op);
    case SYS_flock: return flock_op_name(op);
    default: return "";
  }
}

std::string_view softirq_name(uint32_t vec) {
  // The order of the kernel's softirq vectors (include/linux/interrupt.h).
  static constexpr std::string_view kNames[] = {"HI",       "TIMER",   "NET_TX", "NET_RX",  "BLOCK",
                                                "IRQ_POLL", "TASKLET", "SCHED",  "HRTIMER", "RCU"};
  return vec < std::size(kNames) ? kNames[vec] : std::string_view{};
}

}  // namespace cw::kernel
