// Chromium episodes: a task handed to a pool worker and back, IPC between processes, and
// the renderer's synchronous call to the browser, with its circular-wait variant.
#include "bench/session_model_internal.h"

namespace cw::bench {

// A task runs on a loop thread, hands work to a pool worker, and gets the result back.
void SessionModel::chrome_task(uint32_t process) {
  const uint32_t loop = pop_.thread_in(process, Role::Loop, rng_);
  const uint32_t worker = pop_.thread_in(process, Role::Pool, rng_);
  if (T(worker).role != Role::Pool) return;
  const SimProcess& p = pop_.processes[process];
  Act a = timer_wakes_loop(loop, free_of({loop, worker}));
  const uint64_t task = next_task();
  ev_.call_enter(at(a), n_->run_task, 0x55d0001234a0);
  tick(a);
  work(a, 30 * kUs);
  ev_.task_post(at(a), task, n_->queue_pool);
  tick(a);
  const uint64_t woken =
      futex_wake(a, p.cond_addr, worker, T(worker).free_at, s_->chrome_pool_signal);
  work(a, 10 * kUs);
  ev_.call_exit(at(a), n_->run_task);
  tick(a);
  go_home(a);

  Act w = leave_home(worker, woken);
  ev_.task_begin(at(w), task, n_->queue_pool);
  tick(w);
  work(w, 60 * kUs);
  if (rng_.chance(0.3)) {
    SyscallArgs args;
    args.fd = 40 + static_cast<int64_t>(rng_.between(0, 30));
    args.count = 4096;
    syscall(w, n_->read, args, 4096, 3 * kUs);
  }
  const uint64_t reply = next_task();
  ev_.task_post(at(w), reply, n_->queue_main);
  tick(w);
  const Msg m = post_eventfd(w, loop, T(loop).free_at);
  ev_.task_end(at(w), task);
  tick(w);
  go_home(w);

  Act b = leave_home(loop, m.sent_at, m.fd_dst, m.object);
  read_eventfd(b, m);
  ev_.call_enter(at(b), n_->run_task, 0x55d0001234a0);
  tick(b);
  ev_.task_begin(at(b), reply, n_->queue_main);
  tick(b);
  work(b, 40 * kUs);
  ev_.task_end(at(b), reply);
  tick(b);
  ev_.call_exit(at(b), n_->run_task);
  tick(b);
  go_home(b);
}

// A Mojo message from one Chromium process to another: main thread -> its IO thread ->
// socket -> the other IO thread -> the other main thread, and maybe a reply back.
void SessionModel::chrome_ipc(uint32_t from_process, uint32_t to_process, bool reply) {
  const auto& fp = pop_.processes[from_process].threads;
  const auto& tp = pop_.processes[to_process].threads;
  const uint32_t fm = fp[0], fio = fp[1], tm = tp[0], tio = tp[1];
  Act a = timer_wakes_loop(fm, free_of({fm, fio, tm, tio}));
  ev_.call_enter(at(a), n_->run_task, 0x55d0001234a0);
  tick(a);
  work(a, 50 * kUs);
  const uint64_t t1 = next_task();
  ev_.task_post(at(a), t1, n_->queue_io);
  tick(a);
  Msg m = post_eventfd(a, fio, T(fio).free_at);
  ev_.call_exit(at(a), n_->run_task);
  tick(a);
  go_home(a);

  // Hop: an IO thread forwards over the socket; the far IO thread posts to its main.
  auto hop = [&](uint32_t io, const Msg& in, uint64_t task, uint32_t far_io, uint32_t far_main,
                 bool via_eventfd) {
    Act b = leave_home(io, in.sent_at, in.fd_dst, in.object);
    if (via_eventfd) {
      read_eventfd(b, in);
      ev_.task_begin(at(b), task, n_->queue_io);
      tick(b);
    } else {
      recv_msg(b, in);
    }
    work(b, 8 * kUs);
    const Msg wire = send_msg(b, far_io, 64 + rng_.between(0, 900), true, T(far_io).free_at);
    if (via_eventfd) {
      ev_.task_end(at(b), task);
      tick(b);
    }
    go_home(b);
    Act c = leave_home(far_io, wire.sent_at, wire.fd_dst, wire.object);
    recv_msg(c, wire);
    const uint64_t t2 = next_task();
    ev_.task_post(at(c), t2, n_->queue_main);
    tick(c);
    const Msg post = post_eventfd(c, far_main, T(far_main).free_at);
    go_home(c);
    Act d = leave_home(far_main, post.sent_at, post.fd_dst, post.object);
    read_eventfd(d, post);
    ev_.call_enter(at(d), n_->run_task, 0x55d0001234a0);
    tick(d);
    ev_.task_begin(at(d), t2, n_->queue_main);
    tick(d);
    work(d, 80 * kUs);
    return d;
  };
  Act d = hop(fio, m, t1, tio, tm, true);
  if (!reply) {
    ev_.call_exit(at(d), n_->run_task);
    tick(d);
    go_home(d);
    return;
  }
  const uint64_t t3 = next_task();
  ev_.task_post(at(d), t3, n_->queue_io);
  tick(d);
  const Msg back = post_eventfd(d, tio, T(tio).free_at);
  ev_.call_exit(at(d), n_->run_task);
  tick(d);
  go_home(d);
  Act e = hop(tio, back, t3, fio, fm, true);
  ev_.call_exit(at(e), n_->run_task);
  tick(e);
  go_home(e);
}

// The Argus paper, §2.3: a renderer's main thread asks the browser something synchronously
// and waits on a WaitableEvent. In the spinning variant the browser's main thread is itself
// waiting for that renderer (text input bounds) and only goes on when its 1.5 s timed
// wait expires: a circular wait turned into a stall.
void SessionModel::renderer_sync_call(bool spinning) {
  const uint32_t r = renderers_[rng_.index(renderers_.size())];
  const auto& rp = pop_.processes[r].threads;
  const auto& bp = pop_.processes[browser_].threads;
  const uint32_t rm = rp[0], rio = rp[1], bm = bp[0], bio = bp[1];
  const uint64_t sync_event = pop_.processes[r].mutex_addr + 0x100;

  Act a = timer_wakes_loop(rm, free_of({rm, rio, bm, bio}));
  ev_.call_enter(at(a), n_->run_task, 0x55d0001234a0);
  tick(a);
  work(a, 120 * kUs);
  const uint64_t t1 = next_task();
  ev_.task_post(at(a), t1, n_->queue_io);
  tick(a);
  const Msg to_io = post_eventfd(a, rio, T(rio).free_at);
  SyscallArgs wait;
  wait.resource = sync_event;
  wait.op = n_->wait_bitset;
  wait.stack = s_->sync_wait;
  ev_.syscall_enter(at(a), n_->futex, wait);
  tick(a);
  ev_.switch_out(at(a), 'S');
  const uint64_t rm_blocked = a.t;
  tick(a);

  Act b = leave_home(rio, to_io.sent_at, to_io.fd_dst, to_io.object);
  read_eventfd(b, to_io);
  const Msg wire = send_msg(b, bio, 256, true, T(bio).free_at);
  go_home(b);
  Act c = leave_home(bio, wire.sent_at, wire.fd_dst, wire.object);
  recv_msg(c, wire);
  const Msg to_main = post_eventfd(c, bm, T(bm).free_at);
  go_home(c);

  Act d = leave_home(bm, to_main.sent_at, to_main.fd_dst, to_main.object);
  read_eventfd(d, to_main);
  ev_.call_enter(at(d), n_->sync_message, 0x55d000445560);
  tick(d);
  work(d, 150 * kUs);
  Msg queued{};
  if (spinning) {
    // The browser asks the blocked renderer for the text bounds and waits 1.5 s for them.
    const Msg ask = post_eventfd(d, bio, T(bio).free_at);
    SyscallArgs timed;
    timed.resource = pop_.processes[browser_].mutex_addr + 0x200;
    timed.op = n_->wait_bitset;
    timed.timeout_ns = static_cast<int64_t>(kSpinTimeout);
    timed.stack = s_->browser_timed_wait;
    ev_.syscall_enter(at(d), n_->futex, timed);
    tick(d);
    const uint64_t timer = T(bm).timer + 1;
    ev_.timer_arm(at(d), timer, d.t + kSpinTimeout, 0);
    tick(d);
    ev_.switch_out(at(d), 'S');
    const uint64_t bm_blocked = d.t;
    tick(d);
    T(bm).free_at = bm_blocked;  // not home, but asleep: nothing else may wake it
    Act e = leave_home(bio, ask.sent_at, ask.fd_dst, ask.object);
    read_eventfd(e, ask);
    const Msg ask_wire = send_msg(e, rio, 128, true, T(rio).free_at);
    go_home(e);
    Act f = leave_home(rio, ask_wire.sent_at, ask_wire.fd_dst, ask_wire.object);
    recv_msg(f, ask_wire);
    // The renderer's main thread is blocked in its sync wait: the request just queues.
    queued = post_eventfd(f, rm, 0, false);
    go_home(f);
    const uint64_t woken = timer_interrupt(bm, bm_blocked + kSpinTimeout, timer);
    d.t = woken + latency();
    ev_.switch_in(at(d));
    tick(d);
    ev_.syscall_exit(at(d), n_->futex, kEtimedout);
    tick(d);
    work(d, 200 * kUs);
  }
  const Msg back = post_eventfd(d, bio, T(bio).free_at);
  ev_.call_exit(at(d), n_->sync_message);
  tick(d);
  go_home(d);
  Act e = leave_home(bio, back.sent_at, back.fd_dst, back.object);
  read_eventfd(e, back);
  const Msg reply = send_msg(e, rio, 512, true, T(rio).free_at);
  go_home(e);
  Act f = leave_home(rio, reply.sent_at, reply.fd_dst, reply.object);
  recv_msg(f, reply);
  const uint64_t woken = futex_wake(f, sync_event, rm, rm_blocked, s_->sync_signal);
  go_home(f);

  a.t = woken + latency();
  maybe_migrate(rm);
  ev_.switch_in(at(a));
  tick(a);
  ev_.syscall_exit(at(a), n_->futex, 0);
  tick(a);
  work(a, 100 * kUs);
  ev_.call_exit(at(a), n_->run_task);
  tick(a);
  if (spinning) {
    // Too late: the renderer answers the browser's question, which nobody awaits now.
    read_eventfd(a, queued);
    ev_.call_enter(at(a), n_->text_bounds, 0x55d000556670);
    tick(a);
    work(a, 80 * kUs);
    const Msg answer = post_eventfd(a, rio, T(rio).free_at);
    ev_.call_exit(at(a), n_->text_bounds);
    tick(a);
    Act g = leave_home(rio, answer.sent_at, answer.fd_dst, answer.object);
    read_eventfd(g, answer);
    const Msg late = send_msg(g, bio, 64, true, T(bio).free_at);
    go_home(g);
    Act h = leave_home(bio, late.sent_at, late.fd_dst, late.object);
    recv_msg(h, late);
    go_home(h);
  }
  go_home(a);
}

}  // namespace cw::bench
