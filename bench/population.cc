#include "bench/population.h"

#include <stdexcept>
#include <utility>

namespace cw::bench {

namespace {

// Linux reports every CPU's idle task as tid 0; one tid per CPU above pid_max (4194304)
// keeps each CPU's interrupts on a timeline of their own without colliding with real tids.
constexpr Tid kIdleTidBase = 4194304;

struct ThreadSpec {
  const char* comm;
  Role role;
  int count = 1;
};

struct ProcessSpec {
  App app;
  const char* comm;
  const char* exe;
  std::vector<ThreadSpec> threads;
  int count = 1;
};

// The browser's children and the desktop around it. Renderers get the spare threads, so
// their pools grow until the thread total is reached.
std::vector<ProcessSpec> user_processes() {
  const Role L = Role::Loop, P = Role::Pool, S = Role::Sleeper, R = Role::Reader;
  return {
      {App::Daemon, "systemd", "/usr/lib/systemd/systemd", {{"systemd", L}}},
      {App::Daemon,
       "systemd-journal",
       "/usr/lib/systemd/systemd-journald",
       {{"systemd-journal", R}}},
      {App::Daemon, "systemd-logind", "/usr/lib/systemd/systemd-logind", {{"systemd-logind", L}}},
      {App::Daemon, "systemd-udevd", "/usr/lib/systemd/systemd-udevd", {{"systemd-udevd", L}}},
      {App::Bus, "dbus-daemon", "/usr/bin/dbus-daemon", {{"dbus-daemon", L}}, 2},
      {App::Daemon,
       "NetworkManager",
       "/usr/sbin/NetworkManager",
       {{"NetworkManager", L}, {"gmain", L}, {"gdbus", L}}},
      {App::Daemon, "wpa_supplicant", "/usr/sbin/wpa_supplicant", {{"wpa_supplicant", L}}},
      {App::Daemon,
       "polkitd",
       "/usr/lib/polkit-1/polkitd",
       {{"polkitd", L}, {"gmain", L}, {"gdbus", L}}},
      {App::Daemon,
       "accounts-daemon",
       "/usr/libexec/accounts-daemon",
       {{"accounts-daemon", L}, {"gmain", L}, {"gdbus", L}}},
      {App::Daemon,
       "upowerd",
       "/usr/libexec/upowerd",
       {{"upowerd", L}, {"gmain", L}, {"gdbus", L}}},
      {App::Daemon,
       "udisksd",
       "/usr/libexec/udisks2/udisksd",
       {{"udisksd", L}, {"gmain", L}, {"gdbus", L}, {"probing-thread", P}, {"cleanup", S}}},
      {App::Daemon,
       "rtkit-daemon",
       "/usr/libexec/rtkit-daemon",
       {{"rtkit-daemon", L}, {"rtkit-daemon", S, 2}}},
      {App::Daemon, "cupsd", "/usr/sbin/cupsd", {{"cupsd", L}}},
      {App::Daemon, "cron", "/usr/sbin/cron", {{"cron", S}}},
      {App::Daemon, "avahi-daemon", "/usr/sbin/avahi-daemon", {{"avahi-daemon", L}}},
      {App::Daemon, "colord", "/usr/libexec/colord", {{"colord", L}, {"gmain", L}, {"gdbus", L}}},
      {App::Daemon,
       "ModemManager",
       "/usr/sbin/ModemManager",
       {{"ModemManager", L}, {"gmain", L}, {"gdbus", L}}},
      {App::Daemon, "gdm3", "/usr/sbin/gdm3", {{"gdm3", L}, {"gmain", L}, {"gdbus", L}}},
      {App::Daemon, "systemd", "/usr/lib/systemd/systemd", {{"systemd", L}}},
      {App::Shell,
       "gnome-shell",
       "/usr/bin/gnome-shell",
       {{"gnome-shell", L},
        {"gmain", L},
        {"gdbus", L},
        {"dconf worker", P},
        {"pool-gnome-shel", P, 4},
        {"JS Helper", P, 2},
        {"KMS thread", L},
        {"gnome-s:disk$0", P}}},
      {App::Daemon,
       "Xwayland",
       "/usr/bin/Xwayland",
       {{"Xwayland", L}, {"Xwayland:gdrv0", P}, {"Xwayland:disk$0", P}}},
      {App::Ime,
       "ibus-daemon",
       "/usr/bin/ibus-daemon",
       {{"ibus-daemon", L}, {"gmain", L}, {"gdbus", L}, {"dconf worker", P}}},
      {App::ImeEngine,
       "ibus-engine-lib",
       "/usr/libexec/ibus-engine-libpinyin",
       {{"ibus-engine-lib", L}, {"gmain", L}, {"gdbus", L}}},
      {App::Daemon, "pipewire", "/usr/bin/pipewire", {{"pipewire", L}, {"data-loop.0", S}}},
      {App::Daemon,
       "pipewire-pulse",
       "/usr/bin/pipewire-pulse",
       {{"pipewire-pulse", L}, {"data-loop.0", S}}},
      {App::Daemon,
       "gnome-terminal-",
       "/usr/libexec/gnome-terminal-server",
       {{"gnome-terminal-", L}, {"gmain", L}, {"gdbus", L}, {"dconf worker", P}}},
      {App::Daemon, "bash", "/usr/bin/bash", {{"bash", R}}},
      {App::Daemon,
       "tracker-miner-f",
       "/usr/libexec/tracker-miner-fs-3",
       {{"tracker-miner-f", L}, {"gmain", L}, {"gdbus", L}, {"pool-tracker-mi", P, 5}}},
      {App::Daemon, "gvfsd", "/usr/libexec/gvfsd", {{"gvfsd", L}, {"gmain", L}, {"gdbus", L}}, 5},
      {App::Daemon,
       "evolution-sourc",
       "/usr/libexec/evolution-source-registry",
       {{"evolution-sourc", L},
        {"gmain", L},
        {"gdbus", L},
        {"dconf worker", P},
        {"evolution-sourc", P}},
       3},
      {App::Daemon,
       "at-spi-bus-laun",
       "/usr/libexec/at-spi-bus-launcher",
       {{"at-spi-bus-laun", L}, {"gmain", L}, {"gdbus", L}, {"dconf worker", P}}},
      {App::Daemon,
       "at-spi2-registr",
       "/usr/libexec/at-spi2-registryd",
       {{"at-spi2-registr", L}, {"gmain", L}, {"gdbus", L}}},
      {App::Daemon,
       "xdg-desktop-por",
       "/usr/libexec/xdg-desktop-portal",
       {{"xdg-desktop-por", L}, {"gmain", L}, {"gdbus", L}, {"pool-xdg-deskto", P}}},
      {App::Daemon,
       "xdg-document-po",
       "/usr/libexec/xdg-document-portal",
       {{"xdg-document-po", L},
        {"gmain", L},
        {"gdbus", L},
        {"fuse mainloop", R},
        {"pool-xdg-docume", P}}},
      {App::Daemon,
       "xdg-permission-",
       "/usr/libexec/xdg-permission-store",
       {{"xdg-permission-", L}, {"gmain", L}, {"gdbus", L}}},
      {App::Browser,
       "chrome",
       "/usr/lib/chromium/chromium",
       {{"chrome", L},
        {"Chrome_IOThread", L},
        {"ThreadPoolForeg", P, 8},
        {"ThreadPoolBackg", P, 2},
        {"ThreadPoolServi", L},
        {"Chrome_DevTools", L},
        {"inotify_reader", R},
        {"dconf worker", P},
        {"gmain", L},
        {"gdbus", L},
        {"BrowserWatchdog", S},
        {"CompositorTileW", P, 4},
        {"VizCompositorTh", L},
        {"CacheThread_Blo", L},
        {"Chrome_HistoryT", P},
        {"MemoryInfra", S},
        {"ThreadPoolSingl", P, 3}}},
      {App::Daemon, "chrome", "/usr/lib/chromium/chromium", {{"chrome", R}}, 2},  // zygotes
      {App::Gpu,
       "chrome",
       "/usr/lib/chromium/chromium",
       {{"chrome", L},
        {"Chrome_ChildIOT", L},
        {"VizCompositorTh", L},
        {"ThreadPoolForeg", P, 4},
        {"ThreadPoolServi", L},
        {"GpuWatchdog", S},
        {"CrGpuMain", L},
        {"gmain", L}}},
      {App::Utility,
       "chrome",
       "/usr/lib/chromium/chromium",
       {{"chrome", L},
        {"Chrome_ChildIOT", L},
        {"ThreadPoolForeg", P, 5},
        {"ThreadPoolServi", L},
        {"NetworkService", L},
        {"MemoryInfra", S}},
       3},
      {App::Renderer,
       "chrome",
       "/usr/lib/chromium/chromium",
       {{"chrome", L},
        {"Chrome_ChildIOT", L},
        {"Compositor", L},
        {"ThreadPoolForeg", P, 4},
        {"CompositorTileW", P, 2},
        {"ThreadPoolServi", L},
        {"Media", L},
        {"GpuMemoryThread", L}},
       10},
      {App::Daemon,
       "chrome_crashpad",
       "/usr/lib/chromium/chrome_crashpad_handler",
       {{"chrome_crashpad", R}, {"chrome_crashpad", L}},
       2},
  };
}

const char* const kSettingsDaemons[] = {
    "gsd-power",       "gsd-color",       "gsd-keyboard",    "gsd-media-keys",  "gsd-xsettings",
    "gsd-a11y-settin", "gsd-datetime",    "gsd-housekeepin", "gsd-print-notif", "gsd-rfkill",
    "gsd-screensaver", "gsd-sharing",     "gsd-smartcard",   "gsd-sound",       "gsd-wacom",
    "gsd-disk-utilit", "evolution-alarm", "evolution-calen", "evolution-addre", "goa-daemon",
    "goa-identity-se", "gvfs-udisks2-vo", "gvfs-afc-volume", "gvfs-mtp-volume", "gvfs-gphoto2-vo",
    "gvfs-goa-volume", "gnome-keyring-d", "gsd-printer",     "ibus-portal",     "ibus-x11",
    "ibus-extension-", "dconf-service",   "gnome-session-b", "tracker-extract",
};

}  // namespace

std::vector<uint32_t> Population::threads_of(App app) const {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < threads.size(); ++i)
    if (threads[i].app == app && threads[i].alive) out.push_back(i);
  return out;
}

std::vector<uint32_t> Population::threads_of(App app, Role role) const {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < threads.size(); ++i)
    if (threads[i].app == app && threads[i].role == role && threads[i].alive) out.push_back(i);
  return out;
}

std::vector<uint32_t> Population::processes_of(App app) const {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < processes.size(); ++i)
    if (processes[i].app == app) out.push_back(i);
  return out;
}

uint32_t Population::thread_in(uint32_t p, Role role, Rng& rng) const {
  std::vector<uint32_t> matching;
  for (uint32_t t : processes[p].threads)
    if (threads[t].role == role && threads[t].alive) matching.push_back(t);
  return matching.empty() ? processes[p].threads.front() : matching[rng.index(matching.size())];
}

uint32_t Population::add_process(App app, Pid pid, Pid ppid, std::string comm, std::string exe) {
  SimProcess p;
  p.pid = pid;
  p.ppid = ppid;
  p.app = app;
  p.comm = std::move(comm);
  p.exe = std::move(exe);
  // Heap-like addresses, distinct per process.
  p.mutex_addr = 0x55d000000000ull + uint64_t{pid} * 0x10000 + 0x40;
  p.cond_addr = p.mutex_addr + 0x28;
  processes.push_back(std::move(p));
  return static_cast<uint32_t>(processes.size() - 1);
}

uint32_t Population::add_thread(uint32_t process, Tid tid, Role role, std::string comm) {
  SimThread t;
  t.tid = tid;
  t.pid = processes[process].pid;
  t.process = process;
  t.role = role;
  t.app = processes[process].app;
  t.comm = std::move(comm);
  t.cpu = static_cast<uint16_t>(tid % static_cast<Tid>(cpus));
  t.timer = 0xffff900000000000ull + uint64_t{tid} * 0x100;
  t.home_fd = 3 + static_cast<int>(tid % 5);
  threads.push_back(std::move(t));
  processes[process].threads.push_back(static_cast<uint32_t>(threads.size() - 1));
  return static_cast<uint32_t>(threads.size() - 1);
}

Population make_population(Rng& rng, int cpus, int process_total, int thread_total,
                           int spare_processes, int spare_threads) {
  Population pop;
  pop.cpus = cpus;

  uint32_t idle = pop.add_process(App::Idle, 0, 0, "swapper", "");
  for (int c = 0; c < cpus; ++c) {
    uint32_t t = pop.add_thread(idle, kIdleTidBase + static_cast<Tid>(c), Role::Idle,
                                "swapper/" + std::to_string(c));
    pop.threads[t].cpu = static_cast<uint16_t>(c);
  }

  // Kernel threads are processes of their own, children of kthreadd (pid 2).
  Pid next_kernel_pid = 2;
  auto kernel_thread = [&](const std::string& comm, int cpu) {
    Pid pid = next_kernel_pid++;
    uint32_t p = pop.add_process(App::Kernel, pid, pid == 2 ? 0 : 2, comm, "");
    uint32_t t = pop.add_thread(p, pid, Role::Kernel, comm);
    if (cpu >= 0) pop.threads[t].cpu = static_cast<uint16_t>(cpu);
  };
  kernel_thread("kthreadd", -1);
  kernel_thread("rcu_preempt", -1);
  for (int c = 0; c < cpus; ++c) kernel_thread("ksoftirqd/" + std::to_string(c), c);
  for (int c = 0; c < cpus; ++c)
    for (int k = 0; k < 2; ++k)
      kernel_thread("kworker/" + std::to_string(c) + ":" + std::to_string(k), c);
  for (int k = 0; k < 4; ++k)
    kernel_thread("kworker/u" + std::to_string(2 * cpus) + ":" + std::to_string(k), -1);
  kernel_thread("jbd2/nvme0n1p2-8", -1);
  kernel_thread("kswapd0", -1);

  Pid next_pid = 420;
  auto add_user_process = [&](App app, const char* comm, const char* exe,
                              const std::vector<ThreadSpec>& threads) {
    Pid pid = next_pid;
    uint32_t p = pop.add_process(app, pid, 1, comm, exe);
    Tid tid = pid;
    for (const ThreadSpec& spec : threads)
      for (int i = 0; i < spec.count; ++i) pop.add_thread(p, tid++, spec.role, spec.comm);
    next_pid = tid + static_cast<Pid>(rng.between(1, 60));
  };

  for (const ProcessSpec& spec : user_processes())
    for (int i = 0; i < spec.count; ++i)
      add_user_process(spec.app, spec.comm, spec.exe, spec.threads);

  // Settings daemons fill the process count; renderer pools fill the thread count.
  const int static_processes = process_total - spare_processes;
  const int static_threads = thread_total - spare_threads;
  const int settings_daemons = static_processes - static_cast<int>(pop.processes.size());
  const int settings_threads = 3 * settings_daemons;
  const int renderer_extra =
      static_threads - static_cast<int>(pop.threads.size()) - settings_threads;
  if (settings_daemons < 0 || renderer_extra < 0)
    throw std::invalid_argument("population too small for the session's fixed processes");
  for (int i = 0; i < settings_daemons; ++i) {
    const char* comm = kSettingsDaemons[i % std::size(kSettingsDaemons)];
    std::string exe = std::string("/usr/libexec/") + comm;
    add_user_process(App::Daemon, comm, exe.c_str(),
                     {{comm, Role::Loop}, {"gmain", Role::Loop}, {"gdbus", Role::Loop}});
  }
  // Renderer threads take consecutive tids; extra pool workers get tids past the rest.
  std::vector<uint32_t> renderers = pop.processes_of(App::Renderer);
  for (int i = 0; i < renderer_extra; ++i) {
    uint32_t p = renderers[static_cast<size_t>(i) % renderers.size()];
    pop.add_thread(p, next_pid++, Role::Pool, "ThreadPoolForeg");
  }
  return pop;
}

void describe_process(const SimProcess& p, Trace& trace) {
  ProcessInfo info;
  info.pid = p.pid;
  info.ppid = p.ppid;
  info.comm = trace.strings.intern(p.comm);
  info.exe = trace.strings.intern(p.exe);
  trace.processes.push_back(info);
}

void describe_thread(const SimThread& t, Trace& trace) {
  ThreadInfo info;
  info.tid = t.tid;
  info.pid = t.pid;
  info.comm = trace.strings.intern(t.comm);
  info.kernel = t.role == Role::Kernel || t.role == Role::Idle;
  trace.threads.push_back(info);
}

}  // namespace cw::bench
