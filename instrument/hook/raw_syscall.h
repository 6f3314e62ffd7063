// System calls without libc: no errno, no lazy PLT binding, no locks. The thread-parking
// window, the signal handler and the recording slow path use only these, since any other
// thread may be stopped holding a libc lock. Results are the kernel's: -errno on failure.
#pragma once

#include <sys/syscall.h>

#include <cstdint>

namespace cw::hook::sys {

inline long call6(long nr, long a, long b, long c, long d, long e, long f) {
  long result;
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  register long r9 __asm__("r9") = f;
  __asm__ volatile("syscall"
                   : "=a"(result)
                   : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return result;
}

inline long call(long nr, long a = 0, long b = 0, long c = 0, long d = 0) {
  return call6(nr, a, b, c, d, 0, 0);
}

inline int gettid() {
  return static_cast<int>(call(SYS_gettid));
}
inline int getpid() {
  return static_cast<int>(call(SYS_getpid));
}

inline long mprotect(void* address, uint64_t length, int prot) {
  return call(SYS_mprotect, reinterpret_cast<long>(address), static_cast<long>(length), prot);
}

// FUTEX_WAIT_PRIVATE / FUTEX_WAKE_PRIVATE on a 32-bit word; `timeout` may be null.
inline long futex_wait(const void* word, uint32_t expected, const void* timeout) {
  return call(SYS_futex, reinterpret_cast<long>(word), 128 /* FUTEX_WAIT_PRIVATE */,
              static_cast<long>(expected), reinterpret_cast<long>(timeout));
}
inline long futex_wake(const void* word, int count) {
  return call(SYS_futex, reinterpret_cast<long>(word), 129 /* FUTEX_WAKE_PRIVATE */, count);
}

}  // namespace cw::hook::sys
