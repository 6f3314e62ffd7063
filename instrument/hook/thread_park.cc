#include "instrument/hook/thread_park.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <time.h>

#include <cerrno>
#include <cstdio>

#include "instrument/hook/atomic_word.h"
#include "instrument/hook/raw_syscall.h"

namespace cw::hook {
namespace {

constexpr size_t kMaxParked = 4096;

struct Slot {
  int tid;
  uint32_t generation;  // the park this slot was filled in
  ucontext_t* context;
};

// Shared with the handler; written by the parking thread only between parks.
struct Session {
  uint32_t generation;  // current park; a signal carrying another one is stale
  uint32_t active;      // 1 while stop_all() wants threads to stay
  uint32_t arrived;     // futex: threads that have answered this park
  uint32_t released;    // futex: the latest park released (compared as serial numbers)
  Slot slots[kMaxParked];
};
Session session;
int park_signal = 0;
unsigned timeout_ms = 1000;

void park_handler(int, siginfo_t* info, void* context) {
  const uint32_t generation = static_cast<uint32_t>(info->si_value.sival_int);
  if (info->si_code != SI_QUEUE || generation != load_acquire(&session.generation) ||
      !load_acquire(&session.active))
    return;  // a late answer to a park that gave up
  const uint32_t index = __atomic_fetch_add(&session.arrived, 1, __ATOMIC_ACQ_REL);
  if (index < kMaxParked) {
    Slot& slot = session.slots[index];
    slot.tid = sys::gettid();
    slot.context = static_cast<ucontext_t*>(context);
    store_release(&slot.generation, generation);
  }
  sys::futex_wake(&session.arrived, 1);
  for (;;) {
    const uint32_t released = load_acquire(&session.released);
    if (static_cast<int32_t>(released - generation) >= 0) break;
    sys::futex_wait(&session.released, released, nullptr);
  }
}

// The first real-time signal from the top with no handler installed, taken for parking.
bool install_handler(char* reason, size_t reason_size) {
  if (park_signal) return true;
  for (int signal = SIGRTMAX; signal >= SIGRTMIN + 2; --signal) {
    struct sigaction old {};
    if (sigaction(signal, nullptr, &old) != 0) continue;
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler != SIG_DFL) continue;
    if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction != nullptr) continue;
    struct sigaction action {};
    action.sa_sigaction = park_handler;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigfillset(&action.sa_mask);
    if (sigaction(signal, &action, nullptr) != 0) continue;
    park_signal = signal;
    return true;
  }
  snprintf(reason, reason_size, "no free real-time signal to stop threads with");
  return false;
}

uint64_t now_ms() {
  timespec ts{};
  sys::call(SYS_clock_gettime, CLOCK_MONOTONIC, reinterpret_cast<long>(&ts));
  return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1000000;
}

bool has_arrived(int tid, uint32_t generation) {
  const uint32_t arrived = load_acquire(&session.arrived);
  for (uint32_t i = 0; i < arrived && i < kMaxParked; ++i)
    if (load_acquire(&session.slots[i].generation) == generation && session.slots[i].tid == tid)
      return true;
  return false;
}

bool alive(int tid) {
  return sys::call(SYS_tgkill, sys::getpid(), tid, 0) != -ESRCH;
}

// Whether /proc/self/task/TID/status says the thread blocks `signal`.
bool blocks_signal(int tid, int signal) {
  // Formatted by hand: other threads are stopped, maybe inside stdio.
  char path[64] = "/proc/self/task/";
  size_t length = 16;
  char digits[12];
  size_t count = 0;
  for (unsigned n = static_cast<unsigned>(tid); n || !count; n /= 10)
    digits[count++] = '0' + n % 10;
  while (count) path[length++] = digits[--count];
  const char suffix[] = "/status";
  for (char c : suffix) path[length++] = c;
  int fd = static_cast<int>(
      sys::call(SYS_openat, AT_FDCWD, reinterpret_cast<long>(path), O_RDONLY | O_CLOEXEC));
  if (fd < 0) return false;
  char text[4096];
  long got = sys::call(SYS_read, fd, reinterpret_cast<long>(text), sizeof text - 1);
  sys::call(SYS_close, fd);
  if (got <= 0) return false;
  text[got] = '\0';
  for (char* p = text; *p; ++p) {
    if ((p == text || p[-1] == '\n') && p[0] == 'S' && p[1] == 'i' && p[2] == 'g' && p[3] == 'B' &&
        p[4] == 'l' && p[5] == 'k' && p[6] == ':') {
      uint64_t mask = 0;
      for (p += 7; *p == '\t' || *p == ' '; ++p) {
      }
      for (; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'); ++p)
        mask = mask * 16 + static_cast<uint64_t>(*p <= '9' ? *p - '0' : *p - 'a' + 10);
      return (mask >> (signal - 1)) & 1;
    }
  }
  return false;
}

struct Signaled {
  int tids[kMaxParked];
  size_t count = 0;
  bool contains(int tid) const {
    for (size_t i = 0; i < count; ++i)
      if (tids[i] == tid) return true;
    return false;
  }
};
Signaled signaled;

// Signals every thread of /proc/self/task not signaled yet; returns how many were new, or
// -1 if the directory cannot be read or there are too many threads.
long signal_new_threads(uint32_t generation, int self) {
  int fd =
      static_cast<int>(sys::call(SYS_openat, AT_FDCWD, reinterpret_cast<long>("/proc/self/task"),
                                 O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd < 0) return -1;
  const int pid = sys::getpid();
  long fresh = 0;
  alignas(8) char buffer[4096];
  for (;;) {
    long got = sys::call(SYS_getdents64, fd, reinterpret_cast<long>(buffer), sizeof buffer);
    if (got <= 0) {
      if (got < 0) fresh = -1;
      break;
    }
    for (long at = 0; at < got;) {
      auto* entry = reinterpret_cast<dirent64*>(buffer + at);
      at += entry->d_reclen;
      int tid = 0;
      const char* name = entry->d_name;
      if (*name < '0' || *name > '9') continue;
      for (; *name >= '0' && *name <= '9'; ++name) tid = tid * 10 + (*name - '0');
      if (tid == self || signaled.contains(tid)) continue;
      if (signaled.count == kMaxParked) {
        sys::call(SYS_close, fd);
        return -1;
      }
      siginfo_t info{};
      info.si_signo = park_signal;
      info.si_code = SI_QUEUE;
      info.si_pid = pid;
      info.si_uid = static_cast<uid_t>(sys::call(SYS_getuid));
      info.si_value.sival_int = static_cast<int>(generation);
      long sent =
          sys::call(SYS_rt_tgsigqueueinfo, pid, tid, park_signal, reinterpret_cast<long>(&info));
      if (sent == -ESRCH) continue;  // it has just exited
      signaled.tids[signaled.count++] = tid;
      if (sent == 0) ++fresh;
    }
  }
  sys::call(SYS_close, fd);
  return fresh;
}

}  // namespace

void set_park_timeout_ms(unsigned milliseconds) {
  timeout_ms = milliseconds;
}
unsigned park_timeout_ms() {
  return timeout_ms;
}

bool ThreadPark::stop_all(char* reason, size_t reason_size) {
  if (!install_handler(reason, reason_size)) return false;
  const uint32_t generation = session.generation + 1;
  store_release(&session.arrived, 0u);
  store_release(&session.generation, generation);
  store_release(&session.active, 1u);
  stopped_ = true;
  // No signal handler may run on this thread while the others are stopped: it could wait
  // for a lock a stopped thread holds, or run code the patch has made non-executable.
  uint64_t all = ~uint64_t{0};
  sys::call(SYS_rt_sigprocmask, SIG_BLOCK, reinterpret_cast<long>(&all),
            reinterpret_cast<long>(&saved_mask_), sizeof all);
  signaled.count = 0;
  const int self = sys::gettid();
  const uint64_t deadline = now_ms() + timeout_ms;
  for (;;) {
    const long fresh = signal_new_threads(generation, self);
    if (fresh < 0) {
      release();
      snprintf(reason, reason_size,
               "cannot stop the other threads: /proc/self/task unreadable or more than %zu "
               "threads",
               kMaxParked);
      return false;
    }
    // Wait until every signaled thread has answered or is gone.
    for (;;) {
      int missing = 0;
      for (size_t i = 0; i < signaled.count && !missing; ++i)
        if (!has_arrived(signaled.tids[i], generation) && alive(signaled.tids[i]))
          missing = signaled.tids[i];
      if (!missing) break;
      const uint64_t now = now_ms();
      if (now >= deadline) {
        const bool blocked = blocks_signal(missing, park_signal);
        release();
        if (blocked)
          snprintf(reason, reason_size,
                   "thread %d blocks signal %d, so it cannot be stopped for patching", missing,
                   park_signal);
        else
          snprintf(reason, reason_size,
                   "thread %d did not stop within %u ms for patching (signal %d)", missing,
                   timeout_ms, park_signal);
        return false;
      }
      const uint32_t arrived = load_acquire(&session.arrived);
      timespec wait{0, 5 * 1000000};  // recheck for exited threads every 5 ms
      sys::futex_wait(&session.arrived, arrived, &wait);
    }
    if (fresh == 0) return true;  // an enumeration that found nothing new: all stopped
  }
}

size_t ThreadPark::size() const {
  const uint32_t arrived = load_acquire(&session.arrived);
  return arrived < kMaxParked ? arrived : kMaxParked;
}

ParkedThread ThreadPark::operator[](size_t i) const {
  return {session.slots[i].tid, session.slots[i].context};
}

void ThreadPark::release() {
  if (!stopped_) return;
  stopped_ = false;
  store_release(&session.active, 0u);
  store_release(&session.released, load_acquire(&session.generation));
  sys::futex_wake(&session.released, 0x7fffffff);
  sys::call(SYS_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&saved_mask_), 0,
            sizeof saved_mask_);
}

}  // namespace cw::hook
