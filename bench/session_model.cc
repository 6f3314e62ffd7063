// SessionModel's set-up (the population and its tables, the forks, spawns and stalls
// scheduled ahead, every thread settling into its home wait) and the choice of the next
// episode, paced so that the session spans its duration.
#include "bench/session_model.h"

#include <algorithm>

#include "bench/session_model_internal.h"

namespace cw::bench {

namespace {

// The Argus paper, §2.3: 126 processes and 679 threads over the session; these many of
// them are created while it runs (the rest exist from the start).
constexpr int kSpawnedProcesses = 8;
constexpr int kSpawnedThreads = 24;

}  // namespace

uint64_t SessionShape::duration_ns() const {
  const double fraction = static_cast<double>(events) / 19'000'000.0;
  return std::max<uint64_t>(kS, static_cast<uint64_t>(fraction * 300.0 * kS));
}

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

}  // namespace cw::bench
