// A key press, from the keyboard interrupt through the input method to the renderer.
#include "bench/session_model_internal.h"

namespace cw::bench {

// A key press travels keyboard interrupt -> gnome-shell -> ibus-daemon -> the input
// method engine and back -> the browser -> the renderer (the Argus paper, §2.3, on Linux).
void SessionModel::key_press() {
  const uint32_t shell = pop_.processes[shell_].threads.front();
  const auto& bp = pop_.processes[browser_].threads;
  const uint32_t r = renderers_[rng_.index(renderers_.size())];
  const auto& rp = pop_.processes[r].threads;
  const uint32_t bm = bp[0], bio = bp[1], rm = rp[0], rio = rp[1];

  Act irq = interrupt_context(static_cast<uint16_t>(rng_.index(static_cast<size_t>(pop_.cpus))),
                              free_of({shell, ime_, ime_engine_, bm, bio, rm, rio}));
  ev_.irq_enter(at(irq), 1, n_->i8042);
  tick(irq);
  ev_.wakeup(at(irq), T(shell).tid);
  const uint64_t woken = irq.t;
  tick(irq);
  ev_.irq_exit(at(irq), 1);

  Act s = leave_home(shell, woken, 25, 0xffff888007a10000ull);
  SyscallArgs evdev;
  evdev.fd = 25;
  evdev.count = 72;
  ev_.syscall_enter(at(s), n_->read, evdev);
  tick(s);
  ev_.input(at(s), n_->keyboard, 30 + static_cast<int64_t>(rng_.between(0, 20)));
  tick(s);
  ev_.syscall_exit(at(s), n_->read, 48);
  tick(s);
  ev_.call_enter(at(s), n_->clutter_event, 0x7f5b00223340);
  tick(s);
  const Msg to_ime = send_msg(s, ime_, 160, true, T(ime_).free_at);
  ev_.call_exit(at(s), n_->clutter_event);
  tick(s);
  go_home(s);

  Act i = leave_home(ime_, to_ime.sent_at, to_ime.fd_dst, to_ime.object);
  recv_msg(i, to_ime);
  const Msg to_engine = send_msg(i, ime_engine_, 160, true, T(ime_engine_).free_at);
  go_home(i);
  Act e = leave_home(ime_engine_, to_engine.sent_at, to_engine.fd_dst, to_engine.object);
  recv_msg(e, to_engine);
  ev_.call_enter(at(e), n_->ibus_process_key, 0x7f1c00334450);
  tick(e);
  work(e, 600 * kUs);  // pinyin lookup
  ev_.call_exit(at(e), n_->ibus_process_key);
  tick(e);
  const Msg preedit = send_msg(e, ime_, 300, true, T(ime_).free_at);
  go_home(e);
  Act i2 = leave_home(ime_, preedit.sent_at, preedit.fd_dst, preedit.object);
  recv_msg(i2, preedit);
  const Msg result = send_msg(i2, shell, 300, true, T(shell).free_at);
  go_home(i2);
  Act s2 = leave_home(shell, result.sent_at, result.fd_dst, result.object);
  recv_msg(s2, result);
  ev_.call_enter(at(s2), n_->clutter_event, 0x7f5b00223340);
  tick(s2);
  const Msg wayland = send_msg(s2, bm, 96, true, T(bm).free_at);  // text-input to the browser
  ev_.call_exit(at(s2), n_->clutter_event);
  tick(s2);
  go_home(s2);

  Act b = leave_home(bm, wayland.sent_at, wayland.fd_dst, wayland.object);
  recv_msg(b, wayland);
  ev_.call_enter(at(b), n_->run_task, 0x55d0001234a0);
  tick(b);
  work(b, 90 * kUs);
  const Msg post = post_eventfd(b, bio, T(bio).free_at);
  ev_.call_exit(at(b), n_->run_task);
  tick(b);
  go_home(b);
  Act io = leave_home(bio, post.sent_at, post.fd_dst, post.object);
  read_eventfd(io, post);
  const Msg wire = send_msg(io, rio, 200, true, T(rio).free_at);
  go_home(io);
  Act ri = leave_home(rio, wire.sent_at, wire.fd_dst, wire.object);
  recv_msg(ri, wire);
  const Msg to_main = post_eventfd(ri, rm, T(rm).free_at);
  go_home(ri);
  Act m = leave_home(rm, to_main.sent_at, to_main.fd_dst, to_main.object);
  read_eventfd(m, to_main);
  ev_.call_enter(at(m), n_->run_task, 0x55d0001234a0);
  tick(m);
  work(m, 1500 * kUs);  // layout and paint of the edited text field
  ev_.call_exit(at(m), n_->run_task);
  tick(m);
  go_home(m);
}

}  // namespace cw::bench
