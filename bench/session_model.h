// A synthetic desktop session shaped like the Argus paper's Chromium trace (§2.3): event
// loops passing tasks and IPC messages, a message bus serving many clients in one loop
// iteration, mutex contention in thread pools, timers, interrupts waking kernel workers,
// disk reads, key presses through an input method, forks and exits.
//
// The model runs *episodes* (one request or one timer tick, across a few threads) in
// order of start time. Between episodes every thread sits in its home wait (see Role);
// an episode wakes the threads it needs, and each goes home again when it is done. An
// episode's events all lie at or after its start, so everything earlier than the next
// episode's start can be written out (EventQueue::drain_before).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "bench/event_builder.h"
#include "bench/event_queue.h"
#include "bench/population.h"
#include "bench/rng.h"
#include "trace/trace.h"

namespace cw::bench {

struct SessionShape {
  uint64_t events = 19'000'000;  // about how many events the session should produce
  uint64_t seed = 1;
  int cpus = 8;
  int processes = 126;
  int threads = 679;
  uint64_t start_ns = 4'000'000'000'000ull;  // CLOCK_MONOTONIC at the first event
  // The Argus paper: 19 M events in about five minutes; shorter sessions scale with `events`.
  uint64_t duration_ns() const;
};

class SessionModel {
 public:
  // Adds the session's processes, threads and stacks to `tables`; events go to `queue`.
  SessionModel(const SessionShape& shape, Trace& tables, EventQueue& queue);
  ~SessionModel();

  // The start of the next episode: no event before it is still to be pushed.
  uint64_t next_episode_time() const { return now_; }
  void run_next_episode();

  uint64_t events_pushed() const { return ev_.pushed(); }
  uint64_t messages_sent() const { return ev_.sends(); }
  uint64_t episodes() const { return episodes_; }
  const Population& population() const { return pop_; }

 private:
  struct Act {  // a thread on a CPU, and how far its timeline has got
    uint32_t th;
    uint64_t t;
  };
  struct Msg {  // bytes in flight on a stream
    uint64_t object, offset, len;
    int64_t fd_dst;
    Pid from_pid;
    uint64_t sent_at;
  };
  struct Channel {
    uint64_t object = 0, offset = 0;
    int64_t fd_src = 0, fd_dst = 0;
  };
  enum class Special : uint8_t { SpawnProcess, SpawnThread, ThreadExit, Spin };
  struct Scheduled {
    uint64_t at;
    Special what;
  };

  // Threads and time.
  SimThread& T(uint32_t th) { return pop_.threads[th]; }
  At at(const Act& a) { return At{a.t, pop_.threads[a.th].tid, pop_.threads[a.th].cpu}; }
  void tick(Act& a) { a.t += rng_.between(150, 1200); }
  void work(Act& a, uint64_t mean_ns);
  void preempt(Act& a);
  void maybe_migrate(uint32_t th);
  uint64_t latency() { return 2'000 + rng_.around(6'000); }
  uint64_t free_of(std::initializer_list<uint32_t> threads) const;
  uint32_t pick(const std::vector<uint32_t>& from) { return from[rng_.index(from.size())]; }

  // Home waits.
  void go_home(Act& a);
  Act leave_home(uint32_t th, uint64_t woken, int64_t ready_fd = -1, uint64_t ready_object = 0,
                 const Msg* msg = nullptr);
  StrId home_syscall(const SimThread& t) const;
  StackId home_stack(const SimThread& t) const;
  bool uses_glib(const SimThread& t) const;

  // Mechanisms.
  void syscall(Act& a, StrId name, SyscallArgs args, int64_t ret, uint64_t mean_ns = 1'500);
  Channel& channel(uint32_t from, uint32_t to);
  Msg send_msg(Act& a, uint32_t to, uint64_t len, bool wake, uint64_t blocked_since);
  void recv_msg(Act& a, const Msg& m);
  // A same-process wake-up through the target's eventfd; `wake` when it sleeps in epoll.
  Msg post_eventfd(Act& a, uint32_t to, uint64_t blocked_since, bool wake = true);
  void read_eventfd(Act& a, const Msg& m);
  uint64_t futex_wake(Act& a, uint64_t addr, uint32_t target, uint64_t blocked_since,
                      StackId stack);
  uint64_t timer_interrupt(uint32_t target, uint64_t when, uint64_t timer);
  Act timer_wakes_loop(uint32_t loop, uint64_t when);
  // Interrupt context on `cpu`'s idle thread, at the first free moment from `when`.
  Act interrupt_context(uint16_t cpu, uint64_t when);
  uint64_t next_task() { return ++task_counter_; }

  // Episodes.
  void chrome_task(uint32_t process);
  void chrome_ipc(uint32_t from_process, uint32_t to_process, bool reply);
  void renderer_sync_call(bool spinning);
  void bus_calls();
  void bus_signal(uint32_t sender_loop);
  void pool_contention(uint32_t process);
  void sleeper_tick();
  void glib_timer();
  void disk_read();
  void device_interrupt();
  void key_press();
  void spawn_process();
  void spawn_thread();
  void thread_exit();

  SessionShape shape_;
  Trace& tables_;
  Rng rng_;
  EventBuilder ev_;
  Population pop_;
  uint64_t now_ = 0;
  double avg_episode_events_ = 40.0;
  uint64_t end_ = 0;
  uint64_t episodes_ = 0;
  uint64_t task_counter_ = 0;
  uint64_t object_counter_ = 0;
  Pid next_pid_ = 0;
  std::unordered_map<uint64_t, Channel> channels_;
  std::vector<Scheduled> schedule_;  // sorted by time, consumed from the front
  size_t next_scheduled_ = 0;
  std::vector<uint32_t> idle_threads_, kworkers_, sleepers_, glib_loops_, chrome_processes_,
      pool_processes_, disk_workers_, dynamic_threads_;
  uint32_t bus_ = 0, shell_ = 0, ime_ = 0, ime_engine_ = 0, browser_ = 0, bash_ = 0, terminal_ = 0;
  std::vector<uint32_t> renderers_;
  std::unordered_map<uint32_t, uint64_t> sleeper_expiry_;
  // Per CPU, the interrupt spans booked on its idle thread (start -> end): timers are
  // booked ahead of time, so a single "free from" time would block the CPU until then.
  std::vector<std::map<uint64_t, uint64_t>> irq_booked_;

  struct Names;
  std::unique_ptr<Names> n_;
  struct Stacks;
  std::unique_ptr<Stacks> s_;
};

}  // namespace cw::bench
