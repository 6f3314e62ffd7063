#include "kernel/syscalls.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sys/file.h>
#include <sys/syscall.h>

#include <set>

#include "kernel/records.h"

using namespace cw::kernel;

namespace {
uint32_t class_of(std::string_view name) {
  for (const auto& info : recorded_syscalls())
    if (info.name == name) return info.sys_class;
  return CW_SYS_NONE;
}
}  // namespace

TEST_CASE("the syscall table is in number order, fits the class map and names each call once") {
  const auto& table = recorded_syscalls();
  REQUIRE(table.size() == 76);
  std::set<std::string_view> names;
  for (size_t i = 0; i < table.size(); ++i) {
    CHECK(table[i].nr < CW_MAX_SYSCALLS);
    CHECK(table[i].sys_class != CW_SYS_NONE);
    if (i > 0) CHECK(table[i - 1].nr < table[i].nr);
    CHECK(names.insert(table[i].name).second);
  }
}

TEST_CASE("syscalls are looked up by their x86_64 numbers") {
  CHECK(syscall_name(SYS_read) == "read");
  CHECK(syscall_name(SYS_futex) == "futex");
  CHECK(syscall_name(SYS_epoll_pwait2) == "epoll_pwait2");
  CHECK(syscall_name(SYS_sched_yield) == "sched_yield");
  CHECK(syscall_name(SYS_getpid).empty());
  CHECK(syscall_name(100000).empty());
}

TEST_CASE("each syscall has the class its arguments are decoded with") {
  CHECK(class_of("read") == CW_SYS_READ);
  CHECK(class_of("recvfrom") == CW_SYS_READ);
  CHECK(class_of("sendto") == CW_SYS_WRITE);
  CHECK(class_of("pwritev2") == CW_SYS_WRITEV);
  CHECK(class_of("recvmsg") == CW_SYS_RECVMSG);
  CHECK(class_of("sendmsg") == CW_SYS_SENDMSG);
  CHECK(class_of("sendmmsg") == CW_SYS_FD);
  CHECK(class_of("epoll_pwait") == CW_SYS_EPOLL_WAIT);
  CHECK(class_of("epoll_pwait2") == CW_SYS_EPOLL_PWAIT2);
  CHECK(class_of("ppoll") == CW_SYS_PPOLL);
  CHECK(class_of("pselect6") == CW_SYS_PSELECT);
  CHECK(class_of("clock_nanosleep") == CW_SYS_CLOCK_NANOSLEEP);
  CHECK(class_of("timerfd_settime") == CW_SYS_TIMERFD_SETTIME);
  CHECK(class_of("waitid") == CW_SYS_WAIT);
  CHECK(class_of("flock") == CW_SYS_FD);
  CHECK(class_of("fdatasync") == CW_SYS_FD);
  CHECK(class_of("setitimer") == CW_SYS_PLAIN);
  CHECK(class_of("tgkill") == CW_SYS_KILL);
  CHECK(class_of("semtimedop") == CW_SYS_PLAIN);
  CHECK(class_of("eventfd2") == CW_SYS_NEW_FD);
  CHECK(class_of("socket") == CW_SYS_NEW_FD);
  CHECK(class_of("pipe2") == CW_SYS_NEW_PAIR);
  CHECK(class_of("socketpair") == CW_SYS_NEW_PAIR);
  CHECK(class_of("getpid") == CW_SYS_NONE);
}

TEST_CASE("futex commands are named without flags") {
  CHECK(futex_op_name(FUTEX_WAIT) == "wait");
  CHECK(futex_op_name(FUTEX_WAKE) == "wake");
  CHECK(futex_op_name(FUTEX_CMP_REQUEUE) == "cmp_requeue");
  CHECK(futex_op_name(FUTEX_WAIT_BITSET) == "wait_bitset");
  CHECK(futex_op_name(FUTEX_WAIT_REQUEUE_PI) == "wait_requeue_pi");
  CHECK(futex_op_name(FUTEX_LOCK_PI2) == "lock_pi2");
  CHECK(futex_op_name(FUTEX_WAIT_PRIVATE).empty());  // the caller masks the flags first
  CHECK(futex_op_name(14).empty());
}

TEST_CASE("fcntl lock commands and flock operations are named") {
  CHECK(fcntl_cmd_name(F_SETLKW) == "setlkw");
  CHECK(fcntl_cmd_name(F_OFD_GETLK) == "ofd_getlk");
  CHECK(fcntl_cmd_name(F_GETFL).empty());
  CHECK(flock_op_name(LOCK_EX) == "ex");
  CHECK(flock_op_name(LOCK_SH | LOCK_NB) == "sh");
  CHECK(flock_op_name(LOCK_UN) == "un");
  CHECK(flock_op_name(0).empty());
}

TEST_CASE("syscall_op_name uses the table of the syscall's own operations") {
  CHECK(cw::kernel::syscall_op_name(SYS_futex, FUTEX_WAIT) == "wait");
  CHECK(cw::kernel::syscall_op_name(SYS_fcntl, F_SETLKW) == "setlkw");
  CHECK(cw::kernel::syscall_op_name(SYS_flock, LOCK_EX | LOCK_NB) == "ex");
  CHECK(cw::kernel::syscall_op_name(SYS_read, 0) == "");
}

TEST_CASE("softirq vectors are named as the kernel names them") {
  CHECK(cw::kernel::softirq_name(1) == "TIMER");
  CHECK(cw::kernel::softirq_name(3) == "NET_RX");
  CHECK(cw::kernel::softirq_name(9) == "RCU");
  CHECK(cw::kernel::softirq_name(10) == "");
}
