// Episodes the kernel starts: a sleeper's timer, a GLib timeout, a disk read completed by
// its interrupt, a device interrupt handled by kernel workers.
#include <algorithm>

#include "bench/session_model_internal.h"

namespace cw::bench {

void SessionModel::sleeper_tick() {
  const uint32_t th = pick(sleepers_);
  const auto expiry = sleeper_expiry_.find(th);
  const uint64_t due = expiry == sleeper_expiry_.end() ? now_ : std::max(now_, expiry->second);
  const uint64_t woken = timer_interrupt(th, std::max(due, T(th).free_at + kUs), T(th).timer);
  Act a = leave_home(th, woken);
  work(a, 15 * kUs);
  if (rng_.chance(0.4)) {
    SyscallArgs args;
    args.fd = 20 + static_cast<int64_t>(rng_.between(0, 10));
    args.count = 1024;
    syscall(a, n_->openat, SyscallArgs{}, args.fd, 2 * kUs);
    syscall(a, n_->read, args, 700, 3 * kUs);
    syscall(a, n_->close, SyscallArgs{args.fd}, 0, 500);
  }
  go_home(a);
}

// A GLib timeout source fires in a daemon's main loop.
void SessionModel::glib_timer() {
  const uint32_t th = pick(glib_loops_);
  Act a = timer_wakes_loop(th, now_);
  ev_.call_enter(at(a), n_->g_main_dispatch, 0x7f3a00112230);
  tick(a);
  work(a, 40 * kUs);
  if (rng_.chance(0.3)) syscall(a, n_->ioctl, SyscallArgs{T(th).home_fd + 2}, 0, 4 * kUs);
  ev_.call_exit(at(a), n_->g_main_dispatch);
  tick(a);
  go_home(a);
}

// A pool worker reads a file: it sleeps in D state until the disk interrupt completes the
// request, directly or through a kernel worker.
void SessionModel::disk_read() {
  const uint32_t worker = pick(disk_workers_);
  const uint32_t process = T(worker).process;
  const uint32_t poster = pop_.thread_in(process, Role::Loop, rng_);
  const bool glib = uses_glib(T(poster));
  Act a = timer_wakes_loop(poster, free_of({poster, worker}));
  const uint64_t task = next_task();
  ev_.task_post(at(a), task, n_->queue_pool);
  tick(a);
  const uint64_t woken = futex_wake(a, pop_.processes[process].cond_addr, worker, T(worker).free_at,
                                    glib ? s_->glib_pool_signal : s_->chrome_pool_signal);
  go_home(a);

  Act w = leave_home(worker, woken);
  ev_.task_begin(at(w), task, n_->queue_pool);
  tick(w);
  SyscallArgs read;
  read.fd = 30 + static_cast<int64_t>(rng_.between(0, 20));
  read.count = 4096 * rng_.between(1, 16);
  read.stack = s_->disk_read;
  ev_.syscall_enter(at(w), n_->pread64, read);
  tick(w);
  ev_.switch_out(at(w), 'D');
  const uint64_t blocked = w.t;
  tick(w);

  const uint16_t cpu = static_cast<uint16_t>(rng_.index(static_cast<size_t>(pop_.cpus)));
  const uint32_t kw = kworkers_[cpu * 2 % kworkers_.size()];
  const bool via_kworker = rng_.chance(0.5);
  uint64_t when = blocked + 60 * kUs + rng_.around(150 * kUs);
  if (via_kworker) when = std::max(when, T(kw).free_at + 500);
  Act irq = interrupt_context(cpu, when);
  ev_.irq_enter(at(irq), 130, n_->nvme);
  tick(irq);
  uint64_t done;
  if (!via_kworker) {
    ev_.wakeup(at(irq), T(worker).tid);
    done = irq.t;
    tick(irq);
    ev_.irq_exit(at(irq), 130);
    tick(irq);
  } else {
    ev_.wakeup(at(irq), T(kw).tid);
    const uint64_t kw_woken = irq.t;
    tick(irq);
    ev_.irq_exit(at(irq), 130);
    tick(irq);
    Act k = leave_home(kw, kw_woken);
    work(k, 8 * kUs);
    ev_.wakeup(at(k), T(worker).tid);
    done = k.t;
    tick(k);
    go_home(k);
  }
  w.t = done + latency();
  maybe_migrate(worker);
  ev_.switch_in(at(w));
  tick(w);
  ev_.syscall_exit(at(w), n_->pread64, static_cast<int64_t>(read.count));
  tick(w);
  work(w, 30 * kUs);
  ev_.task_end(at(w), task);
  tick(w);
  go_home(w);
}

// A device interrupt on an idle CPU hands work to a kernel worker, which may pass some on
// to another: wake-ups with no user-visible cause (the Argus paper, §4.1).
void SessionModel::device_interrupt() {
  const uint16_t cpu = static_cast<uint16_t>(rng_.index(static_cast<size_t>(pop_.cpus)));
  const uint32_t kw = kworkers_[(cpu * 2 + rng_.index(2)) % kworkers_.size()];
  Act irq = interrupt_context(cpu, std::max(now_, T(kw).free_at + kUs));
  const StrId names[] = {n_->i915, n_->eth, n_->xhci};
  const int64_t numbers[] = {145, 128, 126};
  const size_t which = rng_.index(3);
  ev_.irq_enter(at(irq), numbers[which], names[which]);
  tick(irq);
  ev_.wakeup(at(irq), T(kw).tid);
  const uint64_t woken = irq.t;
  tick(irq);
  ev_.irq_exit(at(irq), numbers[which]);
  tick(irq);
  if (which == 1) {  // network receive processing in the softirq on the way out
    ev_.softirq_enter(at(irq), 3, n_->net_rx);
    irq.t += rng_.around(6 * kUs);
    ev_.softirq_exit(at(irq), 3);
  }
  Act k = leave_home(kw, woken);
  work(k, 12 * kUs);
  if (rng_.chance(0.3)) {
    const uint32_t other = pick(kworkers_);
    if (other != kw) {
      k.t = std::max(k.t, T(other).free_at + 500);
      ev_.wakeup(at(k), T(other).tid);
      const uint64_t w2 = k.t;
      tick(k);
      Act o = leave_home(other, w2);
      work(o, 10 * kUs);
      go_home(o);
    }
  }
  go_home(k);
}

}  // namespace cw::bench
