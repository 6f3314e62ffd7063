// What the files of SessionModel (bench/session_model.h) share: time units and constants,
// and the names and call stacks its events use. Its member functions are defined by job,
// one file each:
//   session_model.cc             set-up, and which episode runs next
//   session_model_names.cc       the names and stacks, interned once
//   session_model_threads.cc     threads and time, home waits
//   session_model_mechanisms.cc  syscalls, messages, eventfds, futexes, interrupts, timers
//   session_model_chrome.cc      Chromium tasks, IPC and the renderer's sync call
//   session_model_bus.cc         D-Bus calls and signals
//   session_model_pools.cc       lock contention in a thread pool
//   session_model_interrupts.cc  timer ticks, disk reads, device interrupts
//   session_model_input.cc       a key press through the input method
//   session_model_lifecycle.cc   processes and threads that start and exit
// Internal to bench/: nothing outside includes this.
#pragma once

#include <cstdint>

#include "bench/session_model.h"

namespace cw::bench {

constexpr uint64_t kUs = 1'000;
constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kS = 1'000'000'000;
constexpr int64_t kEtimedout = -110;
constexpr uint64_t kEpollIn = 1;
// The Argus paper, §2.3: the renderer/browser circular wait, broken by a 1,500 ms timeout,
// once per key press of a five-minute session.
constexpr uint64_t kSpinTimeout = 1'500 * kMs;
constexpr uint64_t kSpinEvery = 20 * kS;

struct SessionModel::Names {
  explicit Names(EventBuilder& ev);
  StrId epoll_wait, poll, futex, clock_nanosleep, nanosleep, recvmsg, sendmsg, read, write, pread64,
      openat, close, mmap, timerfd_settime, clone, clone3, execve, exit_group, exit, wait4,
      set_robust_list, prctl, ioctl, fstat, wait, wait_bitset, wake;
  StrId local_timer, nvme, i915, eth, xhci, i8042, net_rx, block, keyboard;
  StrId run_task, sync_message, text_bounds, g_main_dispatch, dbus_iterate, clutter_event,
      ibus_process_key;
  StrId queue_pool, queue_io, queue_main;
};

// Call stacks recorded on blocking waits and on the wake-ups that end them (innermost
// frames are what rule packs match: pthread_cond_signal, __pthread_mutex_unlock_usercnt...).
struct SessionModel::Stacks {
  explicit Stacks(EventBuilder& ev);
  StackId chrome_main_loop, chrome_thread_loop, glib_main_loop, glib_thread_loop, bus_loop,
      chrome_pool_wait, glib_pool_wait, chrome_pool_signal, glib_pool_signal, mutex_lock,
      mutex_unlock, sync_wait, sync_signal, browser_timed_wait, sleeper, bus_client_wait, disk_read,
      shell_wait, reader, chrome_post, chrome_send, glib_send, bus_send;
};

}  // namespace cw::bench
