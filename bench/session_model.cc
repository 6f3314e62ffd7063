#include "bench/session_model.h"

#include <algorithm>
#include <iterator>
#include <string>

namespace cw::bench {

namespace {

constexpr uint64_t kUs = 1'000;
constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kS = 1'000'000'000;
constexpr int64_t kEtimedout = -110;
constexpr uint64_t kEpollIn = 1;
constexpr double kPreemptChance = 0.02;

// The Argus paper, §2.3: 126 processes and 679 threads over the session; these many of
// them are created while it runs (the rest exist from the start).
constexpr int kSpawnedProcesses = 8;
constexpr int kSpawnedThreads = 24;
// The Argus paper, §2.3: the renderer/browser circular wait, broken by a 1,500 ms timeout,
// once per key press of a five-minute session.
constexpr uint64_t kSpinTimeout = 1'500 * kMs;
constexpr uint64_t kSpinEvery = 20 * kS;

}  // namespace

uint64_t SessionShape::duration_ns() const {
  const double fraction = static_cast<double>(events) / 19'000'000.0;
  return std::max<uint64_t>(kS, static_cast<uint64_t>(fraction * 300.0 * kS));
}

struct SessionModel::Names {
  explicit Names(EventBuilder& ev)
#define N(x) x(ev.str(#x))
      : N(epoll_wait),
        N(poll),
        N(futex),
        N(clock_nanosleep),
        N(nanosleep),
        N(recvmsg),
        N(sendmsg),
        N(read),
        N(write),
        N(pread64),
        N(openat),
        N(close),
        N(mmap),
        N(timerfd_settime),
        N(clone),
        N(clone3),
        N(execve),
        N(exit_group),
        N(exit),
        N(wait4),
        N(set_robust_list),
        N(prctl),
        N(ioctl),
        N(fstat),
        N(wait),
        N(wait_bitset),
        N(wake),
#undef N
        local_timer(ev.str("local_timer")),
        nvme(ev.str("nvme0q3")),
        i915(ev.str("i915")),
        eth(ev.str("enp0s31f6")),
        xhci(ev.str("xhci_hcd")),
        i8042(ev.str("i8042")),
        net_rx(ev.str("NET_RX")),
        block(ev.str("BLOCK")),
        keyboard(ev.str("AT Translated Set 2 keyboard")),
        run_task(ev.str("base::TaskAnnotator::RunTaskImpl")),
        sync_message(ev.str("content::RenderFrameHostImpl::OnSyncMessage")),
        text_bounds(ev.str("content::RenderWidgetHostImpl::GetTextInputBounds")),
        g_main_dispatch(ev.str("g_main_dispatch")),
        dbus_iterate(ev.str("_dbus_loop_iterate")),
        clutter_event(ev.str("clutter_stage_process_event")),
        ibus_process_key(ev.str("ibus_engine_process_key_event")),
        queue_pool(ev.str("ThreadPool")),
        queue_io(ev.str("IOThread")),
        queue_main(ev.str("UIThread")) {
  }
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
  explicit Stacks(EventBuilder& ev)
      : chrome_main_loop(ev.stack({"_start", "__libc_start_main", "main", "ChromeMain",
                                   "content::ContentMainRunnerImpl::Run", "base::RunLoop::Run",
                                   "base::MessagePumpEpoll::Run", "epoll_wait"})),
        chrome_thread_loop(
            ev.stack({"clone3", "start_thread", "base::Thread::ThreadMain", "base::RunLoop::Run",
                      "base::MessagePumpEpoll::Run", "epoll_wait"})),
        glib_main_loop(ev.stack({"_start", "__libc_start_main", "main", "g_main_loop_run",
                                 "g_main_context_iterate", "g_main_context_poll", "poll"})),
        glib_thread_loop(ev.stack({"clone3", "start_thread", "g_thread_proxy", "g_main_loop_run",
                                   "g_main_context_iterate", "g_main_context_poll", "poll"})),
        bus_loop(ev.stack({"_start", "__libc_start_main", "main", "_dbus_loop_run",
                           "_dbus_loop_iterate", "_dbus_poll", "epoll_wait"})),
        chrome_pool_wait(
            ev.stack({"clone3", "start_thread", "base::internal::WorkerThread::RunWorker",
                      "base::WaitableEvent::TimedWait", "pthread_cond_timedwait"})),
        glib_pool_wait(
            ev.stack({"clone3", "start_thread", "g_thread_proxy", "g_thread_pool_thread_proxy",
                      "g_async_queue_timeout_pop", "pthread_cond_timedwait"})),
        chrome_pool_signal(ev.stack({"base::TaskAnnotator::RunTaskImpl",
                                     "base::internal::ThreadGroupImpl::WakeUpOneWorker",
                                     "base::WaitableEvent::Signal", "pthread_cond_signal"})),
        glib_pool_signal(ev.stack({"g_main_dispatch", "g_thread_pool_push", "g_async_queue_push",
                                   "pthread_cond_signal"})),
        mutex_lock(
            ev.stack({"clone3", "start_thread", "base::internal::WorkerThread::RunWorker",
                      "base::TaskAnnotator::RunTaskImpl", "disk_cache::SimpleBackendImpl::Index",
                      "base::Lock::Acquire", "pthread_mutex_lock", "__pthread_mutex_lock_full"})),
        mutex_unlock(ev.stack({"clone3", "start_thread", "base::internal::WorkerThread::RunWorker",
                               "base::TaskAnnotator::RunTaskImpl",
                               "disk_cache::SimpleBackendImpl::Index", "base::Lock::Release",
                               "pthread_mutex_unlock", "__pthread_mutex_unlock_usercnt"})),
        sync_wait(
            ev.stack({"_start", "__libc_start_main", "main", "content::RendererMain",
                      "blink::LocalFrame::GetTextInputBounds", "mojo::SyncHandleRegistry::Wait",
                      "base::WaitableEvent::TimedWait", "pthread_cond_timedwait"})),
        sync_signal(
            ev.stack({"clone3", "start_thread", "base::Thread::ThreadMain",
                      "mojo::core::ports::Node::AcceptEvent", "mojo::SyncHandleRegistry::Signal",
                      "base::WaitableEvent::Signal", "pthread_cond_signal"})),
        browser_timed_wait(ev.stack({"_start", "__libc_start_main", "main", "ChromeMain",
                                     "content::RenderWidgetHostImpl::GetTextInputBounds",
                                     "base::WaitableEvent::TimedWait", "pthread_cond_timedwait"})),
        sleeper(
            ev.stack({"clone3", "start_thread", "base::PlatformThread::Sleep", "clock_nanosleep"})),
        bus_client_wait(ev.stack({"g_main_dispatch", "g_dbus_connection_call_sync",
                                  "g_dbus_connection_send_message_with_reply_sync",
                                  "g_main_loop_run", "g_main_context_iterate", "poll"})),
        disk_read(ev.stack({"clone3", "start_thread", "g_thread_proxy", "g_file_load_contents",
                            "g_input_stream_read", "pread64"})),
        shell_wait(ev.stack({"_start", "__libc_start_main", "main", "reader_loop",
                             "execute_command", "waitchld", "wait4"})),
        reader(ev.stack({"clone3", "start_thread", "recvmsg"})),
        chrome_post(ev.stack({"clone3", "start_thread", "base::Thread::ThreadMain",
                              "base::RunLoop::Run", "base::TaskAnnotator::RunTaskImpl",
                              "base::internal::TaskRunnerImpl::PostTask",
                              "base::MessagePumpEpoll::ScheduleWork", "write"})),
        chrome_send(
            ev.stack({"clone3", "start_thread", "base::Thread::ThreadMain", "base::RunLoop::Run",
                      "base::MessagePumpEpoll::Run", "mojo::core::Channel::Write", "sendmsg"})),
        glib_send(ev.stack({"g_main_context_iterate", "g_main_dispatch",
                            "g_dbus_connection_send_message", "g_socket_send_message", "sendmsg"})),
        bus_send(ev.stack({"_dbus_loop_iterate", "_dbus_connection_do_iteration_unlocked",
                           "_dbus_transport_do_iteration", "sendmsg"})) {}
  StackId chrome_main_loop, chrome_thread_loop, glib_main_loop, glib_thread_loop, bus_loop,
      chrome_pool_wait, glib_pool_wait, chrome_pool_signal, glib_pool_signal, mutex_lock,
      mutex_unlock, sync_wait, sync_signal, browser_timed_wait, sleeper, bus_client_wait, disk_read,
      shell_wait, reader, chrome_post, chrome_send, glib_send, bus_send;
};

SessionModel::~SessionModel() = default;

SessionModel::SessionModel(const SessionShape& shape, Trace& tables, EventQueue& queue)
    : shape_(shape),
      tables_(tables),
      rng_(shape.seed),
      ev_(queue, tables),
      // Each spawned process brings one thread.
      pop_(make_population(rng_, shape.cpus, shape.processes, shape.threads, kSpawnedProcesses,
                           kSpawnedThreads + kSpawnedProcesses)) {
  n_ = std::make_unique<Names>(ev_);
  s_ = std::make_unique<Stacks>(ev_);
  for (const SimProcess& p : pop_.processes) describe_process(p, tables_);
  for (const SimThread& t : pop_.threads) describe_thread(t, tables_);
  tables_.rebuild_indexes();

  for (uint32_t i = 0; i < pop_.threads.size(); ++i) {
    const SimThread& t = pop_.threads[i];
    next_pid_ = std::max(next_pid_, t.tid < 4194304 ? t.tid + 1 : next_pid_);
    if (t.role == Role::Idle) idle_threads_.push_back(i);
    if (t.role == Role::Kernel && t.comm.rfind("kworker/", 0) == 0) kworkers_.push_back(i);
    if (t.role == Role::Sleeper) sleepers_.push_back(i);
    if (t.role == Role::Loop && uses_glib(t)) glib_loops_.push_back(i);
    if (t.role == Role::Pool &&
        (t.app == App::Daemon || t.comm == "Chrome_HistoryT" || t.comm == "ThreadPoolBackg"))
      disk_workers_.push_back(i);
  }
  next_pid_ += 200;
  for (uint32_t p = 0; p < pop_.processes.size(); ++p) {
    const SimProcess& proc = pop_.processes[p];
    const App app = proc.app;
    if (app == App::Browser || app == App::Renderer || app == App::Gpu || app == App::Utility)
      chrome_processes_.push_back(p);
    int pools = 0;
    for (uint32_t t : proc.threads) pools += pop_.threads[t].role == Role::Pool;
    if (pools >= 2) pool_processes_.push_back(p);
    if (app == App::Bus && bus_ == 0) bus_ = proc.threads.front();
    if (app == App::Shell) shell_ = p;
    if (app == App::Ime) ime_ = proc.threads.front();
    if (app == App::ImeEngine) ime_engine_ = proc.threads.front();
    if (app == App::Browser) browser_ = p;
    if (app == App::Renderer) renderers_.push_back(p);
    if (proc.comm == "bash") bash_ = proc.threads.front();
    if (proc.comm == "gnome-terminal-") terminal_ = proc.threads.front();
  }

  irq_booked_.resize(static_cast<size_t>(shape.cpus));
  now_ = shape.start_ns;
  end_ = shape.start_ns + shape.duration_ns();
  const uint64_t span = end_ - now_;
  // Forks, thread spawns and the spinning-cursor episodes happen at fixed points of the
  // session, so a shorter session still has each of them.
  for (int i = 0; i < kSpawnedProcesses; ++i)
    schedule_.push_back(
        {now_ + span * (2 * i + 1) / (2 * kSpawnedProcesses), Special::SpawnProcess});
  for (int i = 0; i < kSpawnedThreads; ++i) {
    const uint64_t at = now_ + span * (2 * i + 1) / (2 * kSpawnedThreads + 2);
    schedule_.push_back({at, Special::SpawnThread});
    if (i % 2 == 1) schedule_.push_back({at + span / 20, Special::ThreadExit});
  }
  for (uint64_t at = now_ + std::min(kSpinEvery, span / 2); at + kSpinTimeout < end_;
       at += kSpinEvery)
    schedule_.push_back({at, Special::Spin});
  std::stable_sort(schedule_.begin(), schedule_.end(),
                   [](const Scheduled& a, const Scheduled& b) { return a.at < b.at; });

  // The recording starts as every thread settles into its home wait.
  for (uint32_t i = 0; i < pop_.threads.size(); ++i) {
    if (pop_.threads[i].role == Role::Idle) continue;
    Act a{i, now_ + rng_.between(0, 2 * kMs)};
    go_home(a);
  }
  now_ += 2 * kMs;
}

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

// ---- mechanisms -------------------------------------------------------------------------

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

// ---- episodes ---------------------------------------------------------------------------

void SessionModel::run_next_episode() {
  ++episodes_;
  if (next_scheduled_ < schedule_.size() && schedule_[next_scheduled_].at <= now_) {
    switch (schedule_[next_scheduled_++].what) {
      case Special::SpawnProcess: spawn_process(); break;
      case Special::SpawnThread: spawn_thread(); break;
      case Special::ThreadExit: thread_exit(); break;
      case Special::Spin: renderer_sync_call(true); break;
    }
    return;
  }
  const uint64_t before = ev_.pushed();
  const uint64_t roll = rng_.between(0, 999);
  if (roll < 200) {
    chrome_task(pick(chrome_processes_));
  } else if (roll < 370) {
    const uint32_t a = pick(chrome_processes_);
    uint32_t b = pick(chrome_processes_);
    if (a == b) b = browser_ == a ? renderers_.front() : browser_;
    chrome_ipc(a, b, rng_.chance(0.45));
  } else if (roll < 395) {
    renderer_sync_call(false);
  } else if (roll < 490) {
    bus_calls();
  } else if (roll < 540) {
    bus_signal(pick(glib_loops_));
  } else if (roll < 645) {
    pool_contention(pick(pool_processes_));
  } else if (roll < 755) {
    sleeper_tick();
  } else if (roll < 825) {
    glib_timer();
  } else if (roll < 870) {
    disk_read();
  } else if (roll < 990) {
    device_interrupt();
  } else {
    key_press();
  }
  // Pace episodes so the session spans its duration: the gap follows the events still
  // to come at the average episode size so far.
  const uint64_t produced = ev_.pushed() - before;
  avg_episode_events_ = avg_episode_events_ * 0.99 + static_cast<double>(produced) * 0.01;
  const uint64_t remaining_events = shape_.events > ev_.pushed() ? shape_.events - ev_.pushed() : 0;
  uint64_t gap = 20 * kUs;
  if (now_ < end_ && remaining_events > 0) {
    const double episodes_left = static_cast<double>(remaining_events) / avg_episode_events_;
    gap = static_cast<uint64_t>(static_cast<double>(end_ - now_) / std::max(1.0, episodes_left));
  }
  now_ += rng_.around(std::max<uint64_t>(gap, 1));
}

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

// Several clients make blocking D-Bus calls at once; the bus daemon serves them all in
// one loop iteration (batching, the Argus paper, §3.1), forwards each call to its service,
// then relays the replies in another iteration.
void SessionModel::bus_calls() {
  const size_t clients_wanted = rng_.between(2, 5);
  std::vector<uint32_t> clients, services;
  for (size_t i = 0; i < clients_wanted * 4 && clients.size() < clients_wanted; ++i) {
    const uint32_t c = pick(glib_loops_), s = pick(glib_loops_);
    if (c == s || T(c).process == T(s).process) continue;
    if (std::find(clients.begin(), clients.end(), c) != clients.end() ||
        std::find(clients.begin(), clients.end(), s) != clients.end() ||
        std::find(services.begin(), services.end(), c) != services.end() ||
        std::find(services.begin(), services.end(), s) != services.end())
      continue;
    clients.push_back(c);
    services.push_back(s);
  }
  if (clients.empty()) return;
  const uint64_t base = std::max(now_, T(bus_).free_at);

  struct Call {
    Act client;
    Msg request;
    uint64_t blocked_at = 0;
  };
  std::vector<Call> calls;
  for (uint32_t c : clients) {
    Act a = timer_wakes_loop(c, base + rng_.around(30 * kUs));
    ev_.call_enter(at(a), n_->g_main_dispatch, 0x7f3a00112230);
    tick(a);
    work(a, 20 * kUs);
    // Requests reach the bus in client order: only the first finds it asleep.
    if (!calls.empty()) a.t = std::max(a.t, calls.back().request.sent_at + 300);
    Msg m = send_msg(a, bus_, 200 + rng_.between(0, 400), calls.empty(), T(bus_).free_at);
    SyscallArgs wait;
    wait.fd = channel(c, bus_).fd_src;  // the client's own end of the connection
    wait.count = 1;
    wait.timeout_ns = 25 * static_cast<int64_t>(kS);
    wait.stack = s_->bus_client_wait;
    ev_.syscall_enter(at(a), n_->poll, wait);
    tick(a);
    ev_.switch_out(at(a), 'S');
    const uint64_t blocked = a.t;
    tick(a);
    calls.push_back({a, m, blocked});
  }
  // The first request woke the bus; the others are read in the same iteration.
  const Msg& first = calls.front().request;
  Act bus = leave_home(bus_, first.sent_at, first.fd_dst, first.object);
  ev_.call_enter(at(bus), n_->dbus_iterate, 0x5612000a1b20);
  tick(bus);
  std::vector<Msg> forwarded;
  for (size_t i = 0; i < calls.size(); ++i) {
    recv_msg(bus, calls[i].request);
    work(bus, 6 * kUs);
    forwarded.push_back(
        send_msg(bus, services[i], calls[i].request.len + 80, true, T(services[i]).free_at));
  }
  ev_.call_exit(at(bus), n_->dbus_iterate);
  tick(bus);
  go_home(bus);

  std::vector<Msg> replies;
  for (size_t i = 0; i < calls.size(); ++i) {
    Act s = leave_home(services[i], forwarded[i].sent_at, forwarded[i].fd_dst, forwarded[i].object);
    recv_msg(s, forwarded[i]);
    ev_.call_enter(at(s), n_->g_main_dispatch, 0x7f3a00112230);
    tick(s);
    work(s, 70 * kUs);
    s.t = std::max(s.t, T(bus_).free_at + 500);
    if (!replies.empty()) s.t = std::max(s.t, replies.front().sent_at + 300);
    replies.push_back(
        send_msg(s, bus_, 100 + rng_.between(0, 300), replies.empty(), T(bus_).free_at));
    ev_.call_exit(at(s), n_->g_main_dispatch);
    tick(s);
    go_home(s);
  }
  // Only the earliest reply found the bus asleep; the rest arrive while it relays.
  std::vector<size_t> order(calls.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return replies[x].sent_at < replies[y].sent_at; });
  Act relay = leave_home(bus_, replies[0].sent_at, replies[0].fd_dst, replies[0].object);
  ev_.call_enter(at(relay), n_->dbus_iterate, 0x5612000a1b20);
  tick(relay);
  std::vector<Msg> answers(calls.size());
  for (size_t k : order) {
    recv_msg(relay, replies[k]);
    work(relay, 5 * kUs);
    answers[k] = send_msg(relay, clients[k], replies[k].len + 40, true, calls[k].blocked_at);
  }
  ev_.call_exit(at(relay), n_->dbus_iterate);
  tick(relay);
  go_home(relay);

  for (size_t k = 0; k < calls.size(); ++k) {
    Act& a = calls[k].client;
    a.t = answers[k].sent_at + latency();
    maybe_migrate(a.th);
    ev_.switch_in(at(a));
    tick(a);
    ev_.ready(at(a), answers[k].fd_dst, answers[k].object, kEpollIn);
    tick(a);
    ev_.syscall_exit(at(a), n_->poll, 1);
    tick(a);
    recv_msg(a, answers[k]);
    work(a, 25 * kUs);
    ev_.call_exit(at(a), n_->g_main_dispatch);
    tick(a);
    go_home(a);
  }
}

// A daemon emits a D-Bus signal; the bus fans it out to its subscribers.
void SessionModel::bus_signal(uint32_t sender) {
  const size_t fanout = rng_.between(1, 4);
  std::vector<uint32_t> subscribers;
  for (size_t i = 0; i < fanout * 3 && subscribers.size() < fanout; ++i) {
    const uint32_t s = pick(glib_loops_);
    if (T(s).process == T(sender).process) continue;
    if (std::find(subscribers.begin(), subscribers.end(), s) == subscribers.end())
      subscribers.push_back(s);
  }
  Act a = timer_wakes_loop(sender, std::max(now_, T(bus_).free_at));
  ev_.call_enter(at(a), n_->g_main_dispatch, 0x7f3a00112230);
  tick(a);
  work(a, 40 * kUs);
  const Msg signal = send_msg(a, bus_, 180, true, T(bus_).free_at);
  ev_.call_exit(at(a), n_->g_main_dispatch);
  tick(a);
  go_home(a);

  Act bus = leave_home(bus_, signal.sent_at, signal.fd_dst, signal.object);
  ev_.call_enter(at(bus), n_->dbus_iterate, 0x5612000a1b20);
  tick(bus);
  recv_msg(bus, signal);
  std::vector<Msg> copies;
  for (uint32_t s : subscribers) copies.push_back(send_msg(bus, s, 220, true, T(s).free_at));
  ev_.call_exit(at(bus), n_->dbus_iterate);
  tick(bus);
  go_home(bus);
  for (size_t i = 0; i < subscribers.size(); ++i) {
    Act s = leave_home(subscribers[i], copies[i].sent_at, copies[i].fd_dst, copies[i].object);
    recv_msg(s, copies[i]);
    ev_.call_enter(at(s), n_->g_main_dispatch, 0x7f3a00112230);
    tick(s);
    work(s, 30 * kUs);
    ev_.call_exit(at(s), n_->g_main_dispatch);
    tick(s);
    go_home(s);
  }
}

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
