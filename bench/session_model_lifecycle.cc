// Processes and threads that start and exit while the session runs: a shell command,
// a new pool worker, an idle worker that exits.
#include <algorithm>
#include <iterator>
#include <vector>

#include "bench/session_model_internal.h"

namespace cw::bench {

// The terminal's shell runs a short command: fork, exec, output through a pipe, exit,
// and the wait4 that reaps it.
void SessionModel::spawn_process() {
  static const char* const kCommands[][2] = {
      {"lsb_release", "/usr/bin/lsb_release"},
      {"xdg-settings", "/usr/bin/xdg-settings"},
      {"gio", "/usr/bin/gio"},
      {"ps", "/usr/bin/ps"},
      {"git", "/usr/bin/git"},
      {"ls", "/usr/bin/ls"},
      {"grep", "/usr/bin/grep"},
      {"cat", "/usr/bin/cat"},
  };
  const auto& command = kCommands[rng_.index(std::size(kCommands))];
  const uint32_t sh = bash_, term = terminal_;
  Act t = timer_wakes_loop(term, free_of({sh, term}));
  const Msg line = send_msg(t, sh, 12, true, T(sh).free_at);  // the typed command line
  go_home(t);
  Act a = leave_home(sh, line.sent_at, -1, 0, &line);
  work(a, 60 * kUs);

  const Pid pid = next_pid_;
  next_pid_ += static_cast<Pid>(rng_.between(2, 40));
  const uint32_t proc = pop_.add_process(App::Transient, pid, T(sh).pid, "bash", "/usr/bin/bash");
  const uint32_t child = pop_.add_thread(proc, pid, Role::Reader, "bash");
  T(child).cpu = static_cast<uint16_t>(rng_.index(static_cast<size_t>(pop_.cpus)));
  describe_process(pop_.processes[proc], tables_);
  describe_thread(T(child), tables_);
  // The table shows the name after exec, as a recorder that symbolises later would.
  tables_.processes.back().comm = ev_.str(command[0]);
  tables_.processes.back().exe = ev_.str(command[1]);
  tables_.threads.back().comm = ev_.str(command[0]);

  ev_.syscall_enter(at(a), n_->clone, SyscallArgs{});
  tick(a);
  ev_.fork(at(a), pid, pid, false);
  tick(a);
  ev_.wakeup_new(at(a), pid);
  const uint64_t born = a.t;
  tick(a);
  ev_.syscall_exit(at(a), n_->clone, pid);
  tick(a);
  SyscallArgs wait;
  wait.resource = static_cast<uint64_t>(-1);
  wait.stack = s_->shell_wait;
  ev_.syscall_enter(at(a), n_->wait4, wait);
  tick(a);
  ev_.switch_out(at(a), 'S');
  const uint64_t blocked = a.t;
  tick(a);

  Act c{child, born + latency()};
  ev_.switch_in(at(c));
  tick(c);
  ev_.thread_start(at(c), T(sh).tid);
  tick(c);
  ev_.syscall_enter(at(c), n_->execve, SyscallArgs{});
  c.t += rng_.around(300 * kUs);
  ev_.exec(at(c), ev_.str(command[1]));
  tick(c);
  ev_.syscall_exit(at(c), n_->execve, 0);
  tick(c);
  for (int i = 0, n = static_cast<int>(rng_.between(4, 12)); i < n; ++i) {
    syscall(c, n_->openat, SyscallArgs{}, 3, 4 * kUs);
    syscall(c, n_->fstat, SyscallArgs{3}, 0, kUs);
    syscall(c, n_->mmap, SyscallArgs{3}, 0x7f0000000000, 3 * kUs);
    syscall(c, n_->close, SyscallArgs{3}, 0, kUs);
  }
  work(c, 800 * kUs);
  // Output goes to the terminal through the pty.
  const Msg out = send_msg(c, term, 40 + rng_.between(0, 2000), true, T(term).free_at);
  ev_.syscall_enter(at(c), n_->exit_group, SyscallArgs{});
  tick(c);
  ev_.exit(at(c), 0);
  tick(c);
  c.t = std::max(c.t, blocked + 500);
  ev_.wakeup(at(c), T(sh).tid);  // SIGCHLD: the parent's wait4 returns
  const uint64_t reaped = c.t;
  tick(c);
  ev_.switch_out(at(c), 'X');
  T(child).alive = false;
  T(child).free_at = UINT64_MAX;

  a.t = reaped + latency();
  ev_.switch_in(at(a));
  tick(a);
  ev_.syscall_exit(at(a), n_->wait4, pid);
  tick(a);
  go_home(a);
  Act shown = leave_home(term, out.sent_at, out.fd_dst, out.object);
  recv_msg(shown, out);
  work(shown, 120 * kUs);
  go_home(shown);
}

// A Chromium thread pool grows: a worker starts a new worker thread.
void SessionModel::spawn_thread() {
  std::vector<uint32_t> growing = renderers_;
  growing.push_back(browser_);
  const uint32_t process = growing[rng_.index(growing.size())];
  const uint32_t creator = pop_.thread_in(process, Role::Pool, rng_);
  const uint64_t woken =
      timer_interrupt(creator, std::max(now_, T(creator).free_at + kUs), T(creator).timer);
  Act a = leave_home(creator, woken);
  const Tid tid = next_pid_++;
  const uint32_t child = pop_.add_thread(process, tid, Role::Pool, "ThreadPoolForeg");
  T(child).cpu = static_cast<uint16_t>(rng_.index(static_cast<size_t>(pop_.cpus)));
  describe_thread(T(child), tables_);
  dynamic_threads_.push_back(child);
  ev_.syscall_enter(at(a), n_->clone3, SyscallArgs{});
  tick(a);
  ev_.fork(at(a), tid, T(a.th).pid, true);
  tick(a);
  ev_.wakeup_new(at(a), tid);
  const uint64_t born = a.t;
  tick(a);
  ev_.syscall_exit(at(a), n_->clone3, tid);
  tick(a);
  go_home(a);

  Act c{child, born + latency()};
  ev_.switch_in(at(c));
  tick(c);
  ev_.thread_start(at(c), T(creator).tid);
  tick(c);
  syscall(c, n_->set_robust_list, SyscallArgs{}, 0, 500);
  syscall(c, n_->prctl, SyscallArgs{}, 0, 800);
  go_home(c);
}

// An idle pool worker's timed wait runs out and the thread exits.
void SessionModel::thread_exit() {
  for (size_t i = 0; i < dynamic_threads_.size(); ++i) {
    const uint32_t th = dynamic_threads_[i];
    if (!T(th).alive) continue;
    const uint64_t woken = timer_interrupt(th, std::max(now_, T(th).free_at + kUs), T(th).timer);
    Act a{th, woken + latency()};
    ev_.switch_in(at(a));
    tick(a);
    ev_.syscall_exit(at(a), n_->futex, kEtimedout);
    tick(a);
    work(a, 20 * kUs);
    ev_.syscall_enter(at(a), n_->exit, SyscallArgs{});
    tick(a);
    ev_.exit(at(a), 0);
    tick(a);
    ev_.switch_out(at(a), 'X');
    T(th).alive = false;
    T(th).free_at = UINT64_MAX;
    return;
  }
}

}  // namespace cw::bench
