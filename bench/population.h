// The processes and threads of a synthetic desktop session shaped like the Argus paper's
// (§2.3) Chromium session (126 processes, 679 threads): the browser and its children, desktop
// daemons, a message bus, an input method, kernel workers and per-CPU idle contexts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/rng.h"
#include "trace/trace.h"

namespace cw::bench {

// How a thread waits when it has nothing to do: its "home" wait, which the session
// model leaves it blocked in between activations.
enum class Role : uint8_t {
  Idle,     // a CPU's idle context: only interrupts happen on it
  Kernel,   // a kernel worker: sleeps outside any syscall, woken from interrupts
  Loop,     // an event loop blocked in epoll_wait on its sockets, eventfd and timerfd
  Pool,     // a pool worker blocked in futex wait on its pool's condition variable
  Sleeper,  // a periodic thread blocked in clock_nanosleep
  Reader,   // a thread blocked in recvmsg on one socket
};

enum class App : uint8_t {
  Idle,
  Kernel,
  Browser,
  Renderer,
  Gpu,
  Utility,
  Bus,
  Ime,
  ImeEngine,
  Shell,
  Daemon,
  Transient
};

struct SimThread {
  Tid tid = 0;
  Pid pid = 0;
  uint32_t process = 0;  // index into Population::processes
  Role role = Role::Loop;
  App app = App::Daemon;
  std::string comm;
  uint16_t cpu = 0;
  uint64_t free_at = 0;  // blocked in its home wait since then
  uint64_t timer = 0;    // Sleeper / Loop: its timer's identity
  int home_fd = 0;       // Loop: epoll fd; Reader: socket fd
  bool alive = true;
};

struct SimProcess {
  Pid pid = 0;
  Pid ppid = 0;
  App app = App::Daemon;
  std::string comm;
  std::string exe;
  std::vector<uint32_t> threads;  // indexes into Population::threads
  uint64_t mutex_addr = 0;        // a lock its pool workers contend on
  uint64_t cond_addr = 0;         // its pool's condition variable
};

struct Population {
  std::vector<SimProcess> processes;
  std::vector<SimThread> threads;
  int cpus = 0;

  // Threads of an app with a role (all of them when role is not given).
  std::vector<uint32_t> threads_of(App app) const;
  std::vector<uint32_t> threads_of(App app, Role role) const;
  std::vector<uint32_t> processes_of(App app) const;
  // A thread of process `p` with `role`, or the process's first thread.
  uint32_t thread_in(uint32_t p, Role role, Rng& rng) const;

  uint32_t add_process(App app, Pid pid, Pid ppid, std::string comm, std::string exe);
  uint32_t add_thread(uint32_t process, Tid tid, Role role, std::string comm);
};

// Builds the session's population at its start: `processes` and `threads` in total
// minus `spare_processes` / `spare_threads`, which the session creates later by fork.
Population make_population(Rng& rng, int cpus, int processes, int threads, int spare_processes,
                           int spare_threads);

// Adds a process or thread to the trace's tables (kernel threads are flagged).
void describe_process(const SimProcess& p, Trace& trace);
void describe_thread(const SimThread& t, Trace& trace);

}  // namespace cw::bench
