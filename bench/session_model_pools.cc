// Lock contention among a thread pool's workers.
#include <algorithm>
#include <utility>
#include <vector>

#include "bench/session_model_internal.h"

namespace cw::bench {

// A loop posts tasks to several pool workers that then contend on one lock: each unlock
// that finds a waiter wakes it (mutual exclusion, not causality; the Argus paper, §3.1).
void SessionModel::pool_contention(uint32_t process) {
  const SimProcess& p = pop_.processes[process];
  std::vector<uint32_t> workers;
  for (uint32_t t : p.threads)
    if (T(t).role == Role::Pool && T(t).alive) workers.push_back(t);
  const size_t wanted = std::min<size_t>(workers.size(), rng_.between(2, 4));
  for (size_t i = 0; i < wanted; ++i)
    std::swap(workers[i], workers[i + rng_.index(workers.size() - i)]);
  workers.resize(wanted);
  const uint32_t poster = pop_.thread_in(process, Role::Loop, rng_);
  const bool glib = uses_glib(T(poster));

  uint64_t start = T(poster).free_at;
  for (uint32_t w : workers) start = std::max(start, T(w).free_at);
  Act a = timer_wakes_loop(poster, std::max(now_, start));
  ev_.call_enter(at(a), glib ? n_->g_main_dispatch : n_->run_task, 0x55d0001234a0);
  tick(a);
  struct Worker {
    Act act;
    uint64_t task;
  };
  std::vector<Worker> running;
  for (uint32_t w : workers) {
    const uint64_t task = next_task();
    ev_.task_post(at(a), task, n_->queue_pool);
    tick(a);
    const uint64_t woken = futex_wake(a, p.cond_addr, w, T(w).free_at,
                                      glib ? s_->glib_pool_signal : s_->chrome_pool_signal);
    Act act = leave_home(w, woken);
    ev_.task_begin(at(act), task, n_->queue_pool);
    tick(act);
    work(act, 20 * kUs);  // until it reaches the lock
    running.push_back({act, task});
  }
  ev_.call_exit(at(a), glib ? n_->g_main_dispatch : n_->run_task);
  tick(a);
  go_home(a);

  std::stable_sort(running.begin(), running.end(),
                   [](const Worker& x, const Worker& y) { return x.act.t < y.act.t; });
  // Hand the lock down the line in arrival order.
  Worker* holder = nullptr;
  for (Worker& w : running) {
    if (holder && holder->act.t > w.act.t) {
      // Held: wait on the lock word until the holder's unlock wakes us.
      SyscallArgs wait;
      wait.resource = p.mutex_addr;
      wait.op = n_->wait;
      wait.value = 2;
      wait.stack = s_->mutex_lock;
      ev_.syscall_enter(at(w.act), n_->futex, wait);
      tick(w.act);
      ev_.switch_out(at(w.act), 'S');
      const uint64_t blocked = w.act.t;
      const uint64_t woken =
          futex_wake(holder->act, p.mutex_addr, w.act.th, blocked, s_->mutex_unlock);
      w.act.t = woken + latency();
      maybe_migrate(w.act.th);
      ev_.switch_in(at(w.act));
      tick(w.act);
      ev_.syscall_exit(at(w.act), n_->futex, 0);
      tick(w.act);
    }
    if (holder) {
      ev_.task_end(at(holder->act), holder->task);
      tick(holder->act);
      go_home(holder->act);
    }
    work(w.act, 50 * kUs);  // the critical section
    holder = &w;
  }
  if (holder) {
    ev_.task_end(at(holder->act), holder->task);
    tick(holder->act);
    go_home(holder->act);
  }
}

}  // namespace cw::bench
