// The mechanisms episodes are made of: a syscall, a message on a socket, an eventfd
// post, a futex wake, an interrupt on an idle CPU, a timer that wakes a thread or a loop.
#include <algorithm>
#include <iterator>

#include "bench/session_model_internal.h"

namespace cw::bench {

void SessionModel::syscall(Act& a, StrId name, SyscallArgs args, int64_t ret, uint64_t mean_ns) {
  ev_.syscall_enter(at(a), name, args);
  a.t += rng_.around(mean_ns);
  ev_.syscall_exit(at(a), name, ret);
  tick(a);
}

SessionModel::Channel& SessionModel::channel(uint32_t from, uint32_t to) {
  Channel& c = channels_[(uint64_t{from} << 32) | to];
  if (c.object == 0) {
    // Kernel-object-like identities: one per direction of a connection.
    c.object = 0xffff888100000000ull + (++object_counter_) * 0x240;
    c.fd_src = 10 + static_cast<int64_t>(rng_.between(0, 90));
    c.fd_dst = 10 + static_cast<int64_t>(rng_.between(0, 90));
  }
  return c;
}

SessionModel::Msg SessionModel::send_msg(Act& a, uint32_t to, uint64_t len, bool wake,
                                         uint64_t blocked_since) {
  Channel& c = channel(a.th, to);
  if (wake) a.t = std::max(a.t, blocked_since + 500);  // only a sleeping thread is woken
  SyscallArgs args;
  args.fd = c.fd_src;
  args.count = len;
  const SimThread& from = T(a.th);
  args.stack = from.app == App::Bus ? s_->bus_send
               : uses_glib(from)    ? s_->glib_send
                                    : s_->chrome_send;
  ev_.syscall_enter(at(a), n_->sendmsg, args);
  tick(a);
  ev_.send(at(a), c.object, c.offset, len, T(to).pid, c.fd_src);
  Msg m{c.object, c.offset, len, c.fd_dst, T(a.th).pid, a.t};
  c.offset += len;
  tick(a);
  if (wake) {
    ev_.wakeup(at(a), T(to).tid);
    m.sent_at = a.t;
    tick(a);
  }
  ev_.syscall_exit(at(a), n_->sendmsg, static_cast<int64_t>(len));
  tick(a);
  return m;
}

void SessionModel::recv_msg(Act& a, const Msg& m) {
  a.t = std::max(a.t, m.sent_at + 300);
  // Now and then a reader takes a message in two reads (matched by byte range).
  const int parts = m.len >= 64 && rng_.chance(0.1) ? 2 : 1;
  uint64_t offset = m.offset;
  for (int i = 0; i < parts; ++i) {
    const uint64_t len = parts == 1 ? m.len : (i == 0 ? m.len / 2 : m.len - m.len / 2);
    SyscallArgs args;
    args.fd = m.fd_dst;
    args.count = parts == 1 ? 4096 : len;
    ev_.syscall_enter(at(a), n_->recvmsg, args);
    tick(a);
    ev_.recv(at(a), m.object, offset, len, m.from_pid, m.fd_dst);
    tick(a);
    ev_.syscall_exit(at(a), n_->recvmsg, static_cast<int64_t>(len));
    tick(a);
    offset += len;
  }
}

SessionModel::Msg SessionModel::post_eventfd(Act& a, uint32_t to, uint64_t blocked_since,
                                             bool wake) {
  // A task runner's wake-up eventfd: any thread of the process writes 8 bytes to it.
  Channel& c = channel(to, to);
  if (wake) a.t = std::max(a.t, blocked_since + 500);
  SyscallArgs args;
  args.fd = c.fd_dst;
  args.count = 8;
  args.stack = s_->chrome_post;
  ev_.syscall_enter(at(a), n_->write, args);
  tick(a);
  ev_.send(at(a), c.object, c.offset, 8, T(to).pid, c.fd_dst);
  tick(a);
  if (wake) {
    ev_.wakeup(at(a), T(to).tid);
    tick(a);
  }
  Msg m{c.object, c.offset, 8, c.fd_dst, T(a.th).pid, a.t};
  c.offset += 8;
  ev_.syscall_exit(at(a), n_->write, 8);
  tick(a);
  return m;
}

void SessionModel::read_eventfd(Act& a, const Msg& m) {
  a.t = std::max(a.t, m.sent_at + 300);
  SyscallArgs args;
  args.fd = m.fd_dst;
  args.count = 8;
  ev_.syscall_enter(at(a), n_->read, args);
  tick(a);
  ev_.recv(at(a), m.object, m.offset, 8, m.from_pid, m.fd_dst);
  tick(a);
  ev_.syscall_exit(at(a), n_->read, 8);
  tick(a);
}

uint64_t SessionModel::futex_wake(Act& a, uint64_t addr, uint32_t target, uint64_t blocked_since,
                                  StackId stack) {
  a.t = std::max(a.t, blocked_since + 500);
  SyscallArgs args;
  args.resource = addr;
  args.op = n_->wake;
  args.value = 1;
  args.stack = stack;
  ev_.syscall_enter(at(a), n_->futex, args);
  tick(a);
  ev_.wakeup(at(a), T(target).tid);
  const uint64_t woken = a.t;
  tick(a);
  ev_.syscall_exit(at(a), n_->futex, 1);
  tick(a);
  return woken;
}

SessionModel::Act SessionModel::interrupt_context(uint16_t cpu, uint64_t when) {
  constexpr uint64_t kSpan = 64 * kUs;  // longer than any interrupt span emitted here
  auto& booked = irq_booked_[cpu % irq_booked_.size()];
  while (!booked.empty() && booked.begin()->second + kSpan < now_) booked.erase(booked.begin());
  uint64_t t = when;
  auto it = booked.upper_bound(t);
  if (it != booked.begin() && std::prev(it)->second > t) t = std::prev(it)->second;
  for (; it != booked.end() && it->first < t + kSpan; ++it) t = std::max(t, it->second);
  booked[t] = t + kSpan;
  return Act{idle_threads_[cpu % idle_threads_.size()], t};
}

uint64_t SessionModel::timer_interrupt(uint32_t target, uint64_t when, uint64_t timer) {
  // The timer interrupt arrives on the CPU the sleeper last ran on, usually idle then.
  Act i = interrupt_context(T(target).cpu, when);
  ev_.irq_enter(at(i), 236, n_->local_timer);
  tick(i);
  ev_.timer_fire(at(i), timer);
  tick(i);
  ev_.wakeup(at(i), T(target).tid);
  const uint64_t woken = i.t;
  tick(i);
  ev_.irq_exit(at(i), 236);
  return woken;
}

SessionModel::Act SessionModel::timer_wakes_loop(uint32_t loop, uint64_t when) {
  // An event loop's timerfd: the timer fires, epoll reports it, the loop reads it and
  // re-arms it before running what was due.
  const uint64_t timer = T(loop).timer;
  const uint64_t woken = timer_interrupt(loop, std::max(when, T(loop).free_at + kUs), timer);
  const int64_t timerfd = T(loop).home_fd + 1;
  Act a = leave_home(loop, woken, timerfd, timer);
  SyscallArgs args;
  args.fd = timerfd;
  args.count = 8;
  syscall(a, n_->read, args, 8, 800);
  const uint64_t next = rng_.between(1, 50) * kMs;
  ev_.syscall_enter(at(a), n_->timerfd_settime, SyscallArgs{timerfd});
  tick(a);
  ev_.timer_arm(at(a), timer, a.t + next, 0);
  tick(a);
  ev_.syscall_exit(at(a), n_->timerfd_settime, 0);
  tick(a);
  return a;
}

}  // namespace cw::bench
