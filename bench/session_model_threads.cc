// Threads and time: work, preemption and moves between CPUs; and the home wait every
// thread sits in between episodes (see Role), which it leaves when woken and goes back to
// when its part is done.
#include <algorithm>

#include "bench/session_model_internal.h"

namespace cw::bench {

namespace {

constexpr double kPreemptChance = 0.02;

}  // namespace

// ---- threads and time -----------------------------------------------------------------

void SessionModel::work(Act& a, uint64_t mean_ns) {
  a.t += rng_.around(mean_ns);
  if (rng_.chance(kPreemptChance)) preempt(a);
}

void SessionModel::preempt(Act& a) {
  ev_.switch_out(at(a), 'R');
  a.t += rng_.around(40 * kUs);
  maybe_migrate(a.th);
  ev_.switch_in(at(a));
  tick(a);
}

void SessionModel::maybe_migrate(uint32_t th) {
  SimThread& t = T(th);
  if (t.role == Role::Kernel || t.role == Role::Idle) return;  // per-CPU threads stay put
  if (rng_.chance(0.15)) t.cpu = static_cast<uint16_t>(rng_.index(static_cast<size_t>(pop_.cpus)));
}

uint64_t SessionModel::free_of(std::initializer_list<uint32_t> threads) const {
  uint64_t t = now_;
  for (uint32_t th : threads) t = std::max(t, pop_.threads[th].free_at);
  return t;
}

// ---- home waits -------------------------------------------------------------------------

bool SessionModel::uses_glib(const SimThread& t) const {
  return t.app != App::Browser && t.app != App::Renderer && t.app != App::Gpu &&
         t.app != App::Utility && t.app != App::Bus;
}

StrId SessionModel::home_syscall(const SimThread& t) const {
  switch (t.role) {
    case Role::Loop: return uses_glib(t) ? n_->poll : n_->epoll_wait;
    case Role::Pool: return n_->futex;
    case Role::Sleeper: return t.tid % 3 == 0 ? n_->nanosleep : n_->clock_nanosleep;
    case Role::Reader: return n_->recvmsg;
    case Role::Kernel:
    case Role::Idle: break;
  }
  return 0;
}

StackId SessionModel::home_stack(const SimThread& t) const {
  const bool main =
      pop_.processes[t.process].threads.front() == static_cast<uint32_t>(&t - pop_.threads.data());
  switch (t.role) {
    case Role::Loop:
      if (t.app == App::Bus) return s_->bus_loop;
      if (uses_glib(t)) return main ? s_->glib_main_loop : s_->glib_thread_loop;
      return main ? s_->chrome_main_loop : s_->chrome_thread_loop;
    case Role::Pool: return uses_glib(t) ? s_->glib_pool_wait : s_->chrome_pool_wait;
    case Role::Sleeper: return s_->sleeper;
    case Role::Reader: return s_->reader;
    case Role::Kernel:
    case Role::Idle: break;
  }
  return 0;
}

void SessionModel::go_home(Act& a) {
  SimThread& t = T(a.th);
  if (t.role == Role::Idle) {
    t.free_at = a.t;
    return;
  }
  if (t.role != Role::Kernel) {
    SyscallArgs args;
    args.stack = home_stack(t);
    switch (t.role) {
      case Role::Loop:
        args.fd = uses_glib(t) ? -1 : t.home_fd;
        args.count = uses_glib(t) ? 3 + t.tid % 6 : 32;
        break;
      case Role::Pool:
        args.resource = pop_.processes[t.process].cond_addr;
        args.op = n_->wait_bitset;
        // Idle workers give up after a while (GLib 15 s, Chromium's reclaim time 30 s).
        args.timeout_ns = (uses_glib(t) ? 15 : 30) * static_cast<int64_t>(kS);
        break;
      case Role::Sleeper: args.timeout_ns = static_cast<int64_t>(rng_.between(1, 100) * kMs); break;
      case Role::Reader:
        args.fd = t.home_fd;
        args.count = 4096;
        break;
      default: break;
    }
    ev_.syscall_enter(at(a), home_syscall(t), args);
    tick(a);
    if (t.role == Role::Sleeper) {  // the sleep arms an hrtimer
      const uint64_t expires = a.t + static_cast<uint64_t>(args.timeout_ns);
      ev_.timer_arm(at(a), t.timer, expires, 0);
      tick(a);
      sleeper_expiry_[a.th] = expires;
    }
  }
  ev_.switch_out(at(a), t.role == Role::Kernel ? 'I' : 'S');
  tick(a);
  t.free_at = a.t;
}

SessionModel::Act SessionModel::leave_home(uint32_t th, uint64_t woken, int64_t ready_fd,
                                           uint64_t ready_object, const Msg* msg) {
  SimThread& t = T(th);
  Act a{th, std::max(woken, t.free_at) + latency()};
  maybe_migrate(th);
  ev_.switch_in(at(a));
  tick(a);
  switch (t.role) {
    case Role::Loop:
      if (ready_fd >= 0) {
        ev_.ready(at(a), ready_fd, ready_object, kEpollIn);
        tick(a);
      }
      ev_.syscall_exit(at(a), home_syscall(t), 1);
      tick(a);
      break;
    case Role::Reader:
      if (msg) {
        ev_.recv(at(a), msg->object, msg->offset, msg->len, msg->from_pid, msg->fd_dst);
        tick(a);
      }
      ev_.syscall_exit(at(a), home_syscall(t), msg ? static_cast<int64_t>(msg->len) : 0);
      tick(a);
      break;
    case Role::Pool:
    case Role::Sleeper:
      ev_.syscall_exit(at(a), home_syscall(t), 0);
      tick(a);
      break;
    case Role::Kernel:
    case Role::Idle: break;
  }
  return a;
}

}  // namespace cw::bench
