// `causeway record [-o TRACE] [--pid P…] [--stacks MODE] [--call-graph fp|dwarf[,BYTES]]
// [--sample HZ] [--rules PACK…] [-- CMD…]`: a
// recording while CMD runs (or until Ctrl-C), instrumented as the packs say; `record
// start|stop|status`: an always-on recording in a ring of files; `causeway mark [TEXT]`: a marker
// in the running recording.
#include <fcntl.h>
#include <fmt/format.h>
#include <fnmatch.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "cli/commands.h"
#include "cli/duration.h"
#include "cli/exit_codes.h"
#include "cli/json_output.h"
#include "cli/pipeline_options.h"
#include "cli/progress.h"
#include "engine/session/pack_paths.h"
#include "kernel/records.h"
#include "kernel/watchpoints.h"
#include "recorder/daemon.h"
#include "recorder/foreground.h"
#include "recorder/pid_namespace.h"
#include "recorder/record_instrumentation.h"
#include "recorder/recorder_dir.h"
#include "recorder/session.h"
#include "rules/loader.h"
#include "trace/binary_format.h"
#include "trace/ring.h"

namespace cw::cli {

namespace {

// "2G", "512M", "10MiB", "4096" -> bytes; 0 when malformed.
uint64_t parse_size(const std::string& text) {
  size_t pos = 0;
  uint64_t n = 0;
  while (pos < text.size() && isdigit(static_cast<unsigned char>(text[pos])))
    n = n * 10 + static_cast<uint64_t>(text[pos++] - '0');
  if (pos == 0) return 0;
  std::string unit = text.substr(pos);
  if (unit.empty() || unit == "B") return n;
  if (unit == "K" || unit == "KiB" || unit == "k") return n << 10;
  if (unit == "M" || unit == "MiB") return n << 20;
  if (unit == "G" || unit == "GiB") return n << 30;
  return 0;
}

std::string human_bytes(uint64_t b) {
  if (b >= (1ull << 30)) return fmt::format("{:.1f} GiB", double(b) / (1ull << 30));
  if (b >= (1ull << 20)) return fmt::format("{:.1f} MiB", double(b) / (1ull << 20));
  return fmt::format("{:.1f} KiB", double(b) / 1024);
}

std::string lost_text(const SessionStatus& s) {
  // Switches the kernel never reported are not the buffer's fault: said apart.
  std::string unreported =
      s.switches_unreported == 0
          ? ""
          : fmt::format("; {} context switches were never reported by the kernel (counted as lost)",
                        s.switches_unreported);
  if (s.lost_total == 0)
    return (s.switches_unreported ? "no events lost in the kernel buffer" : "no events lost") +
           unreported;
  std::string per_cpu;
  for (size_t cpu = 0; cpu < s.lost_per_cpu.size(); ++cpu)
    if (s.lost_per_cpu[cpu])
      per_cpu += fmt::format("{}cpu{} {}", per_cpu.empty() ? "" : ", ", cpu, s.lost_per_cpu[cpu]);
  return fmt::format("{} events LOST (kernel buffer full: {}); try --buffer larger or --pid{}",
                     s.lost_total, per_cpu, unreported);
}

kernel::StackMode stack_mode(const std::string& s) {
  if (s == "none") return kernel::StackMode::None;
  if (s == "all") return kernel::StackMode::All;
  return kernel::StackMode::Blocking;
}

// Says why recording is impossible here and returns kExitEnvironment, or kExitOk.
int check_privileges() {
  std::string missing = kernel::missing_privileges();
  if (missing.empty()) {
    // Before anything is run or written: inside a PID namespace the kernel's pids and
    // /proc's disagree (recorder/pid_namespace.h).
    std::string problem = pid_namespace_problem();
    if (problem.empty()) return kExitOk;
    std::cerr << "causeway: " << problem << "\n";
    return kExitEnvironment;
  }
  std::cerr << "causeway: cannot record: " << missing << "\n";
  return kExitEnvironment;
}

// Waits per second a thread writes in full under --min-wait: as often as the programs one
// diagnoses wait for less than --min-wait (the real-program suite's and the topologies'
// threads diagnose alike with 50 and 200), a small part of a busy server's (pgbench's
// backends wait tens of thousands of times a second). Each wait written in full costs a
// busy server more than all of its held ones (bench/RESULTS.md): 200 a second cost pgbench
// -S a seventh of the recorder's run time.
constexpr uint32_t kDefaultWaitBudget = 50;
constexpr uint32_t kMaxWaitBudget = 1'000'000;
// Of which a thread may write this many at once (--wait-burst; by default the larger of this
// and a second's worth): a program's start-up, or the chain of short hand-offs of one
// request through a bus and a service's threads, comes in a burst after a quiet time.
constexpr uint32_t kDefaultWaitBurst = 50;

struct RecordArgs {
  std::string output = "causeway.cwt";
  std::vector<uint32_t> pids;
  std::string stacks = "blocking";
  std::string call_graph = "fp";
  uint32_t sample_hz = 0;
  std::string start_call_graph = "fp";  // the same, given to `record start`
  uint32_t start_sample_hz = 0;
  bool full = false;  // --full: every recorded call, every stack walked
  bool start_full = false;
  std::string calls = "syscalls";  // --calls: where calls are taken from
  std::string start_calls;         // "" until given: record start's default (always_on_calls)
  std::string min_wait;            // --min-wait: the shortest wait written one by one ("" for all)
  std::string start_min_wait;
  bool pipe_bytes = false;  // --pipe-bytes
  bool start_pipe_bytes = false;
  uint32_t wait_budget = kDefaultWaitBudget;  // --wait-budget
  uint32_t start_wait_budget = kDefaultWaitBudget;
  uint32_t wait_burst = 0;  // --wait-burst (0: not given)
  uint32_t start_wait_burst = 0;
  std::string buffer = "64M";
  std::string dir;
  double duration = 0;
  std::vector<std::string> command;
  std::vector<std::string> rules;
  bool no_stdlib = false;
  std::string flags = "auto";
  std::string hooks = "auto";
  std::string compress = "zstd";  // --compress: how trace files are written
  TraceWriterOptions writer;
  // record's and record start's --compress: when not given, the recorder writes at zstd's
  // fastest level (kRecordingLevel), not the level 3 of "zstd".
  CLI::Option* record_compress = nullptr;
  CLI::Option* start_compress = nullptr;
};

// zstd's fastest level: compressing was half of the recorder's own CPU time at level 3
// (pgbench's select-only load, bench/RESULTS.md), and level 1 writes about a tenth more.
constexpr int kRecordingLevel = 1;

// How the recorder writes its trace files: as --compress says, or kRecordingLevel.
TraceWriterOptions recording_writer(const RecordArgs& args, const CLI::Option* compress) {
  TraceWriterOptions writer = args.writer;
  if (compress == nullptr || compress->count() == 0) {
    writer.compression = TraceCompression::Zstd;
    writer.level = kRecordingLevel;
  }
  return writer;
}

constexpr uint32_t kDefaultStackCopy = 8192;
constexpr uint32_t kMaxSampleHz = 10000;

// --call-graph fp | dwarf[,BYTES] (perf's spelling) -> bytes of user stack to copy, 0 for
// frame pointers; nullopt, with the reason said, when malformed.
std::optional<uint32_t> parse_call_graph(const std::string& text) {
  if (text == "fp") return 0;
  if (text == "dwarf") return kDefaultStackCopy;
  if (text.rfind("dwarf,", 0) == 0) {
    std::string bytes_text = text.substr(6);
    uint64_t bytes = parse_size(bytes_text);
    if (bytes >= 8 && bytes <= CW_MAX_USTACK_BYTES && bytes % 8 == 0)
      return static_cast<uint32_t>(bytes);
    std::cerr << fmt::format(
        "causeway: --call-graph {}: the stack copy must be 8 to {} bytes, a multiple of 8 "
        "(e.g. dwarf,16384 or dwarf,16K), not '{}'\n",
        text, CW_MAX_USTACK_BYTES, bytes_text);
    return std::nullopt;
  }
  std::cerr << fmt::format("causeway: --call-graph {}: expected fp, dwarf or dwarf,BYTES\n", text);
  return std::nullopt;
}

// The stack and sampling options of `args` into `options`; false (said) when malformed.
bool stack_options(const RecordArgs& args, SessionOptions& options) {
  options.stacks = stack_mode(args.stacks);
  std::optional<uint32_t> copy = parse_call_graph(args.call_graph);
  if (!copy) return false;
  options.ustack_bytes = *copy;
  if (args.sample_hz > kMaxSampleHz) {
    std::cerr << fmt::format("causeway: --sample {}: at most {} samples per second\n",
                             args.sample_hz, kMaxSampleHz);
    return false;
  }
  options.sample_hz = args.sample_hz;
  options.full = args.full;
  options.calls_at_switch = args.calls == "scheduler";
  if (options.full && options.calls_at_switch) {
    std::cerr << "causeway: --full writes every call, which --calls scheduler does not see: "
                 "give one of them\n";
    return false;
  }
  if (args.pipe_bytes && !options.calls_at_switch) {
    std::cerr << "causeway: --pipe-bytes needs --calls scheduler: the syscall programs count "
                 "every call's bytes anyway\n";
    return false;
  }
  options.pipe_bytes = args.pipe_bytes;
  if (!args.min_wait.empty()) {
    std::optional<uint64_t> ns = parse_duration(args.min_wait);
    if (!ns) {
      std::cerr << fmt::format(
          "causeway: --min-wait {}: expected a duration such as 500us, 1ms or 20ms\n",
          args.min_wait);
      return false;
    }
    if (!options.calls_at_switch) {
      std::cerr << "causeway: --min-wait needs --calls scheduler: with the syscall programs "
                   "every call's entry and exit is seen anyway\n";
      return false;
    }
    if (*ns > kMaxMinWaitNs) {
      std::cerr << fmt::format("causeway: --min-wait {}: at most {} ms\n", args.min_wait,
                               kMaxMinWaitNs / 1'000'000);
      return false;
    }
    options.min_wait_ns = *ns;
    if (args.wait_budget > kMaxWaitBudget) {
      std::cerr << fmt::format("causeway: --wait-budget {}: at most {} waits a second\n",
                               args.wait_budget, kMaxWaitBudget);
      return false;
    }
    options.full_waits_per_s = args.wait_budget;
    if (args.wait_burst != 0 && args.wait_budget == 0) {
      std::cerr << "causeway: --wait-burst with --wait-budget 0: no wait is written in full, "
                   "so none can be at once\n";
      return false;
    }
    options.full_waits_burst =
        args.wait_burst != 0 ? args.wait_burst : std::max(kDefaultWaitBurst, args.wait_budget);
  } else if (args.wait_burst != 0) {
    std::cerr << "causeway: --wait-burst needs --min-wait: without it every wait is written\n";
    return false;
  }
  return true;
}

// What an always-on recording takes calls from when not told: the lean stream, calls from
// the scheduler with waits held until they last 1 ms (docs/recording.md, "Always on"). A
// recorder left running on a busy server must cost what a profiler does, or it is switched
// off before the hang it was for. --full (every call, from the syscall programs) and an
// explicit --calls or --min-wait (0: every wait) say otherwise.
constexpr const char* kAlwaysOnMinWait = "1ms";

void always_on_calls(const std::string& calls, const std::string& min_wait, RecordArgs& given) {
  given.calls = !calls.empty() ? calls : given.full ? "syscalls" : "scheduler";
  given.min_wait = min_wait;
  if (min_wait.empty() && calls.empty() && given.calls == "scheduler")
    given.min_wait = kAlwaysOnMinWait;
}

// The packs' active holder rules as the recorder reads them at the end (who holds what a
// thread still blocked then waits for). Both ways of recording take them from here.
std::vector<HolderField> holder_fields(const rules::LoadResult& loaded) {
  std::vector<HolderField> holders;
  for (const rules::HolderRule& h : loaded.rules.holders)
    if (h.origin.active())
      holders.push_back({h.origin.id, h.syscalls, h.find == rules::HolderRule::Find::Peer,
                         h.owner_offset, h.size});
  return holders;
}

// The packs with `applies` conditions that what is recorded shows before it starts: the
// command's program name, or a --pid's program name, executable or a library it maps.
std::vector<std::string> runtime_packs_shown(const rules::RuleSet& rules, const RecordArgs& args) {
  std::vector<std::string> programs, libraries;
  if (!args.command.empty())
    programs.push_back(std::filesystem::path(args.command[0]).filename().string());
  for (int pid : args.pids) {
    const std::string proc = "/proc/" + std::to_string(pid);
    std::ifstream comm(proc + "/comm");
    if (std::string name; std::getline(comm, name)) programs.push_back(name);
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink(proc + "/exe", ec);
    if (!ec) programs.push_back(exe.filename().string());
    std::ifstream maps(proc + "/maps");
    for (std::string line; std::getline(maps, line);) {
      const size_t slash = line.find('/');
      if (slash != std::string::npos)
        libraries.push_back(std::filesystem::path(line.substr(slash)).filename().string());
    }
  }
  auto any = [](const std::vector<std::string>& names, const std::string& glob) {
    return std::any_of(names.begin(), names.end(), [&](const std::string& n) {
      return fnmatch(glob.c_str(), n.c_str(), 0) == 0;
    });
  };
  std::vector<std::string> out;
  for (const rules::PackInfo& p : rules.packs)
    for (const rules::PackCondition& c : p.applies)
      if ((c.kind == rules::PackCondition::Kind::Program && any(programs, c.glob)) ||
          (c.kind == rules::PackCondition::Kind::Library && any(libraries, c.glob))) {
        out.push_back(p.id);
        break;
      }
  return out;
}

// The flags and functions the packs name; nullptr when they name none. `holders`: the
// packs' holder rules (holder_fields); `notes`: what the trace must say about how it
// traces them (a fallback).
std::unique_ptr<RecordInstrumentation> plan_from_packs(const RecordArgs& args, int& rc,
                                                       std::vector<HolderField>& holders,
                                                       std::vector<std::string>& notes) {
  rc = kExitOk;
  auto loaded = session::load_rule_packs(args.rules, args.no_stdlib);
  std::cerr << loaded.render();
  if (!loaded.ok()) {
    rc = kExitBadInput;
    return nullptr;
  }
  holders = holder_fields(loaded);
  instrument::InstrumentationPlan plan = instrument::plan_instrumentation(loaded.rules);
  // Packs for one runtime (with `applies` conditions) are all found here, before there is
  // a trace to choose them by. Their functions are hooked only when the pack was given
  // with --rules, or when what is recorded shows the runtime already: the command's
  // program, a --pid's program or a library it maps. Hooking means putting the hook
  // library into the recorded processes, which a recording must not pay for a runtime it
  // does not hold (docs/instrumentation.md). Where they are hooked, a function a process
  // lacks is not said (a pack names functions of many versions).
  const std::vector<std::string> asked = session::packs_from(loaded.rules, args.rules);
  const std::vector<std::string> shown = runtime_packs_shown(loaded.rules, args);
  auto pack_of = [](const std::string& rule) { return rule.substr(0, rule.find('/')); };
  auto conditional = [&](const std::string& pack) {
    return std::any_of(
        loaded.rules.packs.begin(), loaded.rules.packs.end(),
        [&](const rules::PackInfo& p) { return p.id == pack && !p.applies.empty(); });
  };
  auto in = [](const std::vector<std::string>& ids, const std::string& id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
  };
  std::erase_if(plan.functions, [&](const instrument::PlannedFunction& f) {
    return std::all_of(f.rules.begin(), f.rules.end(), [&](const std::string& rule) {
      const std::string pack = pack_of(rule);
      return conditional(pack) && !in(asked, pack) && !in(shown, pack);
    });
  });
  for (instrument::PlannedFunction& f : plan.functions)
    f.quiet = std::all_of(f.rules.begin(), f.rules.end(), [&](const std::string& rule) {
      return conditional(pack_of(rule)) && !in(asked, pack_of(rule));
    });
  if (plan.empty()) {
    for (const std::string& w : plan.warnings) std::cerr << "causeway: warning: " << w << "\n";
    return nullptr;
  }
  if (args.command.empty() && args.pids.empty()) {
    std::cerr << "causeway: the packs declare flags or functions to instrument, which needs the "
                 "processes: give --pid P or a command after --\n";
    rc = kExitBadInput;
    return nullptr;
  }
  FlagMethod flags = args.flags == "watch"   ? FlagMethod::Watch
                     : args.flags == "probe" ? FlagMethod::Probe
                                             : FlagMethod::Auto;
  // Some machines open a watchpoint and never fire it: find out before relying on one.
  if (flags != FlagMethod::Probe && !plan.flags.empty()) {
    kernel::WatchDecision d =
        kernel::decide_watchpoints(flags == FlagMethod::Watch, kernel::test_watchpoints());
    if (d.refuse) {
      std::cerr << "causeway: " << d.message << "\n";
      rc = kExitEnvironment;
      return nullptr;
    }
    if (!d.use_watchpoints) {
      std::cerr << "causeway: note: " << d.message << "\n";
      notes.push_back(d.message);
      flags = FlagMethod::Probe;
    }
  }
  HookMethod hooks = args.hooks == "inline"   ? HookMethod::Inline
                     : args.hooks == "uprobe" ? HookMethod::Uprobe
                                              : HookMethod::Auto;
  return std::make_unique<RecordInstrumentation>(std::move(plan), flags, hooks);
}

// "; the command exited with status 3" from waitpid's status; "" for a clean exit (and
// without a command).
std::string command_status_text(int wstatus) {
  if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) != 0)
    return fmt::format("; the command exited with status {}", WEXITSTATUS(wstatus));
  if (WIFSIGNALED(wstatus))
    return fmt::format("; the command was killed by signal {} ({})", WTERMSIG(wstatus),
                       strsignal(WTERMSIG(wstatus)));
  return {};
}

// The recorder's folder given by `option` (recorder_dir), opened and checked
// (RecorderDir::open); `dir` is empty when it does not exist (and is not to be created) or
// cannot be used, which `rc` then says (and the message).
struct OpenedDir {
  std::optional<RecorderDir> dir;
  int rc = kExitOk;
};
OpenedDir open_recorder_dir(const std::string& option, bool create) {
  try {
    return {RecorderDir::open(recorder_dir(option), create), kExitOk};
  } catch (const RecorderDirError& e) {
    std::cerr << "causeway: " << e.what() << "\n";
    return {std::nullopt, e.unsafe() ? kExitBadInput : kExitEnvironment};
  }
}

int record_foreground(const RecordArgs& args) {
  if (int rc = check_privileges(); rc != kExitOk) return rc;
  uint64_t buffer = parse_size(args.buffer);
  if (buffer == 0) {
    std::cerr << fmt::format("causeway: --buffer {}: expected a size like 64M or 1G\n",
                             args.buffer);
    return kExitBadInput;
  }
  SessionOptions options;
  options.pids = args.pids;
  if (!stack_options(args, options)) return kExitBadInput;
  options.buffer_bytes = buffer;
  options.output = args.output;
  options.writer = recording_writer(args, args.record_compress);

  for (uint32_t pid : args.pids)
    if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      std::cerr << fmt::format("causeway: --pid {}: no such process\n", pid);
      return kExitBadInput;
    }
  int plan_rc = kExitOk;
  std::vector<std::string> notes;
  std::unique_ptr<RecordInstrumentation> instrumentation =
      plan_from_packs(args, plan_rc, options.holders, notes);
  if (plan_rc != kExitOk) return plan_rc;
  std::vector<std::pair<std::string, std::string>> command_env;
  if (instrumentation && !args.command.empty()) {
    try {
      command_env = instrumentation->command_environment();
    } catch (const kernel::ProbeError& e) {
      std::cerr << "causeway: cannot instrument: " << e.what() << "\n";
      return kExitEnvironment;
    }
  }
  // An instrumented command stops at its exec (ptrace), so flags and functions are
  // resolved in its maps and attached before its first instruction runs.
  bool stop_at_exec = instrumentation != nullptr && !args.command.empty();

  // Markers reach the recording through the recorder's folder: one given (--dir,
  // $CAUSEWAY_DIR) that cannot be trusted is refused before anything runs; the default
  // one, only left out.
  std::optional<RecorderDir> dir;
  const bool dir_given =
      !args.dir.empty() || (std::getenv("CAUSEWAY_DIR") && *std::getenv("CAUSEWAY_DIR"));
  try {
    dir = RecorderDir::open(recorder_dir(args.dir), true);
  } catch (const RecorderDirError& e) {
    if (dir_given) {
      std::cerr << "causeway: " << e.what() << "\n";
      return e.unsafe() ? kExitBadInput : kExitEnvironment;
    }
    std::cerr << "causeway: note: no markers ('causeway mark') for this recording: " << e.what()
              << "\n";
  }

  ForegroundRecording recording;
  recording.options = options;
  recording.command = args.command;
  recording.pids = args.pids;
  recording.duration = args.duration;
  recording.dir = std::move(dir);
  recording.instrumentation = std::move(instrumentation);
  recording.command_env = std::move(command_env);
  recording.stop_at_exec = stop_at_exec;
  recording.notes = std::move(notes);
  std::optional<ForegroundResult> recorded = record_in_foreground(std::move(recording));
  if (!recorded) return kExitEnvironment;
  SessionStatus s = recorded->status;
  if (recorded->write_error) {
    // The environment's failure (a full disk, an I/O error), not the input's; the command's
    // status is said even when it is 0, since nothing else shows how it ended.
    const int ws = recorded->command_wstatus;
    std::string command = command_status_text(ws);
    if (command.empty() && !args.command.empty()) command = "; the command exited with status 0";
    std::cerr << fmt::format(
        "causeway: {} is incomplete: it holds the {} events written before the error and no end "
        "chunk{}\n",
        args.output, s.events, command);
    return kExitEnvironment;
  }
  std::string sampled;
  if (args.sample_hz > 0)
    sampled = s.sampling_problem.empty()
                  ? fmt::format(", {} cpu-clock samples", s.samples)
                  : ", no cpu-clock samples (perf events could not be opened)";
  const std::string command =
      recorded->command_running
          ? fmt::format("; the command (pid {}) still runs", *recorded->command_running)
          : command_status_text(recorded->command_wstatus);
  std::cerr << fmt::format("causeway: wrote {}: {} events{}, {}{}\n", args.output, s.events,
                           sampled, lost_text(s), command);
  if (s.stacks_lost > 0)
    std::cerr << fmt::format(
        "causeway: {} stack record{} could not be attached (the call or the stack {} named "
        "was lost); those calls show no stack\n",
        s.stacks_lost, s.stacks_lost == 1 ? "" : "s", s.stacks_lost == 1 ? "it" : "they");
  // Where dwarf mode's time goes (docs/latency.md): said apart, after the usual line.
  if (s.unwound_stacks > 0)
    std::cerr << fmt::format(
        "causeway: unwound {} stacks with CFI ({:.1f} frames each) in {:.0f} ms of the "
        "recorder's time\n",
        s.unwound_stacks, double(s.unwound_frames) / double(s.unwound_stacks),
        double(s.unwind_ns) / 1e6);
  if (s.jit_symbols > 0)
    std::cerr << fmt::format(
        "causeway: copied {} JIT symbols from {} perf map{} (/tmp/perf-PID.map)\n", s.jit_symbols,
        s.perf_maps, s.perf_maps == 1 ? "" : "s");
  // The command's status is said, not passed on: its 1 or 2 would read as causeway's own
  // (the input was wrong, the environment cannot do it).
  return kExitOk;
}

// The recorder running in `dir`, if one is (recorder_state). A pid file left by one that
// was killed (or died), or forged, is removed, and `stale` tells of it: otherwise it would
// pass for a running recorder, and `record start` would refuse to start another.
RecorderState live_recorder(const RecorderDir& dir, std::string* stale) {
  RecorderState state = recorder_state(dir);
  if (!state.stale_pid || !remove_stale_pid_file(dir, state.stale_pid)) {
    state.stale_pid = 0;
    return state;
  }
  *stale = fmt::format(
      "the recorder that ran in {} (pid {}) is not running: {}; removed its stale pid file "
      "(its log: {})",
      dir.paths().dir, state.stale_pid, state.stale_why, dir.paths().log);
  return state;
}

// "pid N holds the recorder's lock in DIR but is not causeway" when it does.
std::string foreign_text(const RecorderDir& dir, int pid) {
  return fmt::format(
      "pid {} holds the recorder's lock in {} but is not causeway: not taking it for the "
      "recorder",
      pid, dir.paths().dir);
}

int record_start(const RecordArgs& args, const std::string& size_text) {
  if (int rc = check_privileges(); rc != kExitOk) return rc;
  uint64_t size = parse_size(size_text);
  if (size < (1u << 20)) {
    std::cerr << fmt::format("causeway: --size {}: expected a size of at least 1M, like 2G\n",
                             size_text);
    return kExitBadInput;
  }
  // The packs' holder rules, read when the recording stops, as `record -- CMD` does; loaded
  // here, before the recorder detaches, so a broken pack is reported to the user.
  auto loaded = session::load_rule_packs(args.rules, args.no_stdlib);
  std::cerr << loaded.render();
  if (!loaded.ok()) return kExitBadInput;
  std::vector<HolderField> holders = holder_fields(loaded);
  OpenedDir opened = open_recorder_dir(args.dir, true);
  if (!opened.dir) return opened.rc;
  const RecorderDir& dir = *opened.dir;
  const RecorderPaths& paths = dir.paths();
  std::string stale;
  RecorderState state = live_recorder(dir, &stale);
  if (!stale.empty()) std::cerr << "causeway: note: " << stale << "\n";
  if (state.foreign_pid) {
    std::cerr << "causeway: " << foreign_text(dir, state.foreign_pid) << "\n";
    return kExitEnvironment;
  }
  if (auto pid = state.running) {
    std::cerr << fmt::format(
        "causeway: a recording is already running in {} (pid {}); stop it with 'causeway record "
        "stop'\n",
        paths.dir, *pid);
    return kExitEnvironment;
  }
  SessionOptions checked;
  if (!stack_options(args, checked)) return kExitBadInput;
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) throw std::runtime_error(std::strerror(errno));
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    close(ready[0]);
    SessionOptions options;
    options.pids = args.pids;
    stack_options(args, options);  // checked above
    options.buffer_bytes = parse_size(args.buffer);
    options.ring = RingOptions{paths.ring, size};
    options.ring->writer = recording_writer(args, args.start_compress);
    options.holders = std::move(holders);
    run_daemon(options, dir, ready[1], kExitEnvironment);
  }
  close(ready[1]);
  std::string answer;
  char buf[512];
  ssize_t n;
  while ((n = read(ready[0], buf, sizeof buf)) > 0) answer.append(buf, static_cast<size_t>(n));
  close(ready[0]);
  if (answer != "K") {
    waitpid(pid, nullptr, 0);
    std::cerr << "causeway: cannot record: "
              << (answer.size() > 1 ? answer.substr(1) : "the recorder died while starting")
              << "\n";
    return kExitEnvironment;
  }
  const std::string pipes = args.pipe_bytes ? ", pipes' bytes (--pipe-bytes)" : "";
  const std::string stream =
      args.calls == "syscalls"
          ? (args.full ? "every system call, from the syscall programs (--full)"
                       : "system calls from the syscall programs (--calls syscalls)")
      : args.min_wait.empty() || parse_duration(args.min_wait) == uint64_t{0}
          ? "calls from the scheduler, every wait" + pipes
          : fmt::format(
                "calls from the scheduler, a busy thread's waits once they last {}{} "
                "(--full for every call)",
                args.min_wait, pipes);
  std::cout << fmt::format(
      "recording {} into {} (pid {}): at most {}, the newest events are kept\n"
      "  {}\n"
      "  causeway mark TEXT                 adds a marker\n"
      "  causeway record status             shows what it holds\n"
      "  causeway record stop -o TRACE      stops it and saves the trace\n",
      args.pids.empty() ? "system-wide" : "the given processes", paths.ring, pid, human_bytes(size),
      stream);
  return kExitOk;
}

int record_stop(const std::string& dir_option, const std::string& output,
                const TraceWriterOptions& writer) {
  OpenedDir opened = open_recorder_dir(dir_option, false);
  if (opened.rc != kExitOk) return opened.rc;
  if (!opened.dir) {
    std::cerr << fmt::format(
        "causeway: no recording is running in {}; start one with 'causeway record start'\n",
        recorder_dir(dir_option));
    return kExitEnvironment;
  }
  const RecorderDir& dir = *opened.dir;
  const RecorderPaths& paths = dir.paths();
  std::string stale;
  RecorderState state = live_recorder(dir, &stale);
  if (!stale.empty()) std::cerr << "causeway: note: " << stale << "\n";
  if (state.foreign_pid) {
    std::cerr << "causeway: " << foreign_text(dir, state.foreign_pid) << "\n";
    return kExitEnvironment;
  }
  struct stat ring_stat {};
  if (auto pid = state.running) {
    // Only the process holding the folder's lock, checked to be causeway, is signalled:
    // never the pid a file names.
    std::string why;
    if (!signal_recorder(dir, *pid, SIGTERM, &why)) {
      std::cerr << "causeway: " << why << "\n";
      return kExitEnvironment;
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    // A recorder killed meanwhile leaves its pid file: live_recorder removes it, and says so.
    while (live_recorder(dir, &stale).running && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!stale.empty()) std::cerr << "causeway: note: " << stale << "\n";
    if (live_recorder(dir, &stale).running) {
      std::cerr << fmt::format("causeway: the recorder (pid {}) did not stop within 60 s\n", *pid);
      return kExitEnvironment;
    }
  } else if (fstatat(dir.fd(), "ring", &ring_stat, AT_SYMLINK_NOFOLLOW) != 0 ||
             !S_ISDIR(ring_stat.st_mode)) {
    std::cerr << fmt::format(
        "causeway: no recording is running in {}; start one with 'causeway record start'\n",
        paths.dir);
    return kExitEnvironment;
  }
  if (output.empty()) {
    std::cout << fmt::format("stopped; the ring stays in {}\n", paths.ring);
    return kExitOk;
  }
  Trace trace;
  ReadReport report;
  ProgressLine progress("record stop");  // a ring of gigabytes takes a while
  auto show = progress.callback();
  if (progress.enabled()) show("reading the ring", 0, 0);
  try {
    report = read_ring(paths.ring, trace);
  } catch (const std::exception& e) {
    progress.clear();
    std::cerr << "causeway: " << e.what() << "\n";
    return kExitBadInput;
  }
  progress.clear();
  for (const auto& s : report.skipped)
    std::cerr << fmt::format("causeway: {}: skipped {} bytes at offset {}: {}\n", paths.ring,
                             s.size, s.offset, s.reason);
  for (const auto& note : report.notes) std::cerr << "causeway: " << note << "\n";
  if (progress.enabled()) show("writing " + output, 0, 0);
  write_trace(trace, output, writer);
  progress.clear();
  uint64_t span = trace.events.empty() ? 0 : trace.events.back().ts - trace.events.front().ts;
  std::cout << fmt::format("wrote {}: {} events over {:.3f} s, {} lost\n", output,
                           trace.events.size(), double(span) / 1e9, trace.lost_events());
  return kExitOk;
}

int record_status(const std::string& dir_option, bool json) {
  OpenedDir opened = open_recorder_dir(dir_option, false);
  if (opened.rc != kExitOk) return opened.rc;
  const std::string shown = recorder_dir(dir_option);
  nlohmann::json j = nlohmann::json::object();
  std::string stale;
  RecorderState state;
  if (opened.dir) {
    state = live_recorder(*opened.dir, &stale);
    j = read_status_file(*opened.dir);
  }
  const std::optional<int> pid = state.running;
  const nlohmann::json last_pid = j.value("pid", nlohmann::json());
  j["running"] = pid.has_value();
  j["dir"] = shown;
  if (pid)
    j["pid"] = *pid;
  else
    j.erase("pid");  // the status file's, of a recorder that is gone
  if (state.stale_pid) j["stale_pid"] = state.stale_pid;
  if (json) {
    std::cout << json_text(with_schema_version(std::move(j))) << "\n";
    return kExitOk;
  }
  if (!pid) {
    std::cout << fmt::format("no recording is running in {}\n", shown);
    if (!stale.empty()) std::cout << "  " << stale << "\n";
    if (state.foreign_pid && opened.dir)
      std::cout << "  " << foreign_text(*opened.dir, state.foreign_pid) << "\n";
    // One that stopped itself (a full disk) left nobody else to tell.
    if (j.value("stopped", false) && j.contains("stop_error"))
      std::cout << fmt::format(
          "  the recorder{} stopped itself at {}: {}\n",
          last_pid.is_number_integer() ? fmt::format(" (pid {})", last_pid.get<int64_t>()) : "",
          j.value("stopped_at", std::string("an unknown time")),
          j.value("stop_error", std::string()));
    return kExitOk;
  }
  const RecorderPaths& paths = opened.dir->paths();
  std::cout << fmt::format("recording in {} (pid {})\n", paths.dir, *pid);
  if (j.contains("events")) {
    uint64_t first = j.value("first_ts", uint64_t{0}), newest = j.value("newest_ts", uint64_t{0});
    std::cout << fmt::format("  events written  {} over {:.1f} s\n", j.value("events", uint64_t{0}),
                             newest > first ? double(newest - first) / 1e9 : 0.0);
    std::cout << fmt::format("  events lost     {}\n", j.value("lost_events", uint64_t{0}));
  }
  if (j.contains("ring")) {
    const auto& r = j["ring"];
    std::cout << fmt::format("  ring            {} files, {} of {}\n", r.value("files", 0),
                             human_bytes(r.value("bytes", uint64_t{0})),
                             human_bytes(r.value("max_bytes", uint64_t{0})));
    std::cout << fmt::format("  overwritten     {} older events\n",
                             r.value("events_overwritten", uint64_t{0}));
  }
  return kExitOk;
}

}  // namespace

std::vector<Command> add_record(CLI::App& app) {
  auto args = std::make_shared<RecordArgs>();
  auto* cmd = app.add_subcommand(
      "record",
      "record what every thread does (eBPF): while CMD runs, until Ctrl-C, or always-on with "
      "'record start'");
  cmd->add_option("-o,--output", args->output, "trace file to write (default causeway.cwt)");
  // One value per --pid (repeat it, or give a comma list as perf -p takes): a list of
  // values would run on into `-- CMD` and take the command's options for causeway's.
  cmd->add_option("-p,--pid", args->pids,
                  "record only these processes (and their children): --pid 1,2 or --pid 1 --pid 2")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->type_name("PID");
  cmd->add_option("--stacks", args->stacks,
                  "call stacks: 'blocking' the user and kernel stacks when a syscall blocks "
                  "(default), 'all' also the user stack at every "
                  "recorded syscall, 'none'")
      ->check(CLI::IsMember({"none", "blocking", "all"}));
  auto call_graph_help =
      "how user stacks are taken: 'fp' walks frame pointers in the kernel (default; code "
      "built without them gives stacks of 1-2 frames), 'dwarf[,BYTES]' copies BYTES of the "
      "stack (default 8192, at most 32768) with the registers and unwinds them here with the "
      "files' CFI, as perf --call-graph dwarf does (deep stacks through Debian's libraries; "
      "costs more per stack)";
  cmd->add_option("--call-graph", args->call_graph, call_graph_help);
  auto sample_help =
      "also sample the recorded threads that are on a CPU, HZ times a second (cpu-clock), "
      "each sample with its user stack: 'sample' events, so busy time has stacks too (where "
      "cpu-clock events cannot be opened, causeway says so and records without samples)";
  cmd->add_option("-F,--sample", args->sample_hz, sample_help);
  cmd->add_option("--buffer", args->buffer, "kernel ring buffer size (default 64M)");
  auto full_help =
      "write every recorded system call and walk every blocked call's kernel and user stacks "
      "(by default a call in which nothing happened, a read that did not block or a futex "
      "wake that found no waiter, is left out, and a stack the thread last walked from the "
      "same place is repeated, not walked again: docs/recording.md)";
  cmd->add_flag("--full", args->full, full_help);
  auto calls_help =
      "where system calls are taken from: 'syscalls' (default) hooks every call's entry and "
      "exit; 'scheduler' hooks none, and takes the call a thread blocks in, or wakes another "
      "from, from its saved registers when it does: no cost on calls that do neither, but no "
      "return values (a wait its own timer ended excepted), bytes moved or ready descriptors "
      "(docs/recording.md)";
  cmd->add_option("--calls", args->calls, calls_help)
      ->check(CLI::IsMember({"syscalls", "scheduler"}));
  auto min_wait_help =
      "with --calls scheduler: past a thread's --wait-budget, write a wait (its switches, call "
      "and wake-up) only once it has lasted DURATION (500us, 1ms; at most 100ms); shorter ones "
      "are counted per thread in short_waits events, and the thread seems to run on through "
      "them (docs/recording.md)";
  cmd->add_option("--min-wait", args->min_wait, min_wait_help)->type_name("DURATION");
  auto pipe_bytes_help =
      "with --calls scheduler: also count the bytes read and written on pipes and FIFOs, so "
      "that a write to a pipe whose reader was not waiting (it polled, and its timeout had "
      "come) gets its message edge; their tracepoints put every system call on the machine "
      "on the kernel's slow path while recording (docs/recording.md, \"Bytes on pipes\")";
  cmd->add_flag("--pipe-bytes", args->pipe_bytes, pipe_bytes_help);
  auto wait_budget_help =
      "with --min-wait: the waits per second each thread writes in full in each class of "
      "call, whatever their length, before its shorter ones are only counted (default 50; "
      "0: none)";
  cmd->add_option("--wait-budget", args->wait_budget, wait_budget_help)->type_name("N");
  auto wait_burst_help =
      "with --min-wait: of the --wait-budget, the most a thread writes at once after a quiet "
      "time (default 50, or a second's worth if more; at least 1)";
  cmd->add_option("--wait-burst", args->wait_burst, wait_burst_help)
      ->type_name("N")
      ->check(CLI::Range(1u, kMaxWaitBudget));
  args->record_compress = add_compress_option(cmd, args->compress, args->writer, "zstd=1");
  cmd->add_option("--duration", args->duration, "stop after this many seconds");
  cmd->add_option("CMD", args->command, "command to run and record (after --)");
  cmd->add_option("--rules", args->rules,
                  "packs (files or folders) whose data flags and named functions are traced "
                  "(the standard packs and $CAUSEWAY_RULES_PATH are loaded too)");
  cmd->add_flag("--no-stdlib", args->no_stdlib, "do not load the standard packs");
  cmd->add_option("--flags", args->flags,
                  "how data flags are traced: 'watch' (hardware watchpoints, 4 per thread), "
                  "'probe' (uprobes on the instructions that access them), 'auto' (default: "
                  "watch up to 4 per process, probe the rest)")
      ->check(CLI::IsMember({"auto", "watch", "probe"}));
  cmd->add_option("--hooks", args->hooks,
                  "how named functions are traced: 'inline' (hooks in the command's process, "
                  "through LD_PRELOAD), 'uprobe', 'auto' (default: inline for a command, "
                  "uprobes for --pid)")
      ->check(CLI::IsMember({"auto", "inline", "uprobe"}));
  cmd->add_option("--dir", args->dir,
                  "folder whose socket 'causeway mark' writes to (default $CAUSEWAY_DIR or "
                  "/var/lib/causeway)");
  cmd->footer(
      "Needs root, or CAP_BPF and CAP_PERFMON. The trace file is created 0600; a symbolic link at "
      "its path is refused.\n"
      "Stacks are walked by frame pointers (code built without them gives short stacks) unless "
      "--call-graph dwarf (docs/recording.md, docs/latency.md).\nCtrl-C reaches CMD too, and the "
      "recording ends when CMD does; if CMD goes on (it ignores Ctrl-C, or hangs), a second Ctrl-C "
      "(or a SIGTERM to causeway) stops the recording at once and writes the trace, leaving CMD "
      "running (its pid is said).\nThe --dir folder must be yours and writable by nobody else "
      "(else it is refused, exit 1).\nExit status: 0 the trace was "
      "written (CMD's own exit status, "
      "when not 0, is printed: it is not causeway's), 1 the input was wrong, 2 the environment "
      "cannot record (the message says what is missing), or the trace could not be written (a "
      "full disk: the file keeps what was written, without its end chunk, and CMD's status is "
      "printed).");

  auto dir_option = [&](CLI::App* sub) {
    sub->add_option("--dir", args->dir,
                    "the recorder's folder (default $CAUSEWAY_DIR or /var/lib/causeway)");
  };
  auto size = std::make_shared<std::string>("2G");
  auto* start = cmd->add_subcommand("start", "start an always-on recording in a ring of files");
  start->add_option("--size", *size, "bound of the ring on disk (default 2G)");
  start
      ->add_option("-p,--pid", args->pids,
                   "record only these processes (and their children): --pid 1,2 or --pid 1 --pid 2")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->type_name("PID");
  start->add_option("--stacks", args->stacks, "user call stacks: blocking, all or none")
      ->check(CLI::IsMember({"none", "blocking", "all"}));
  // Bound to variables of their own: sharing record's made CLI11 (2.1) refuse them in
  // `record --pid P --sample HZ -- CMD`; record_start copies them over.
  start->add_option("--call-graph", args->start_call_graph, call_graph_help);
  start->add_option("-F,--sample", args->start_sample_hz, sample_help);
  start->add_option("--buffer", args->buffer, "kernel ring buffer size (default 64M)");
  start->add_flag("--full", args->start_full,
                  "write every system call, from the syscall programs (--calls syscalls), and "
                  "walk every blocked call's stacks: what 'record -- CMD --full' writes, at "
                  "several times the default's cost on a busy server");
  start
      ->add_option("--calls", args->start_calls,
                   "where system calls are taken from: 'scheduler' (default; no syscall "
                   "programs: the call a thread blocks in, or wakes another from, read from "
                   "its saved registers) or 'syscalls' (every call's entry and exit hooked: "
                   "return values, bytes moved and ready descriptors too, at several times "
                   "the cost; docs/recording.md)")
      ->check(CLI::IsMember({"syscalls", "scheduler"}));
  start
      ->add_option("--min-wait", args->start_min_wait,
                   "with calls from the scheduler: past a thread's --wait-budget, write a "
                   "wait only once it has lasted DURATION (default 1ms unless --calls is "
                   "given; 0 writes every wait; at most 100ms); shorter ones are counted per "
                   "thread in short_waits events (docs/recording.md, \"Held waits\")")
      ->type_name("DURATION");
  start->add_option("--wait-budget", args->start_wait_budget, wait_budget_help)->type_name("N");
  start->add_option("--wait-burst", args->start_wait_burst, wait_burst_help)
      ->type_name("N")
      ->check(CLI::Range(1u, kMaxWaitBudget));
  start->add_flag("--pipe-bytes", args->start_pipe_bytes, pipe_bytes_help);
  args->start_compress = add_compress_option(start, args->compress, args->writer, "zstd=1");
  start->add_option("--rules", args->rules,
                    "packs (files or folders) whose holder rules name, when the recording "
                    "stops, who holds what a thread still waits for (the standard packs and "
                    "$CAUSEWAY_RULES_PATH are loaded too; data flags and named functions are "
                    "traced by 'record -- CMD' only)");
  start->add_flag("--no-stdlib", args->no_stdlib, "do not load the standard packs");
  dir_option(start);
  start->footer(
      "Needs root, or CAP_BPF and CAP_PERFMON. The recorder runs in the background until "
      "'causeway record stop'.\nBy default it writes the lean stream a diagnosis needs "
      "(--calls scheduler --min-wait 1ms): no syscall program, and a busy thread's waits "
      "written only once they last 1 ms; --full writes every call (docs/recording.md, "
      "\"Always on\").\nExit status: 0 started, 1 the input was wrong, 2 it cannot "
      "record here or a recording is already running.\nThe folder (--dir) is created 0700; one "
      "that is a symbolic link, not yours, writable by others or inside a folder others can "
      "change is refused (exit 1).");
  auto stop_output = std::make_shared<std::string>();
  auto* stop = cmd->add_subcommand("stop", "stop the always-on recording and save it");
  stop->add_option("-o,--output", *stop_output, "save the ring's events as one trace file");
  add_compress_option(stop, args->compress, args->writer);
  dir_option(stop);
  stop->footer(
      "Without -o the ring stays in the recorder's folder.\nExit status: 0 stopped (and "
      "saved), 1 the ring cannot be read or the folder cannot be trusted, 2 no recording is "
      "running or it did not stop.\nOnly the process holding the folder's lock, and running "
      "causeway, is sent SIGTERM: never a pid the pid file names.");
  auto json = std::make_shared<bool>(false);
  auto* status = cmd->add_subcommand("status", "show the always-on recording's state");
  status->add_flag("--json", *json, "as JSON");
  dir_option(status);
  status->footer(
      "Reads the status the recorder writes each second (docs/json.md); a recorder that "
      "stopped itself (a full disk) is said, with when and why.\nExit status: 0, also when no "
      "recording is running (it says so), 1 the folder cannot be trusted.");

  // Sub-commands come first: main() runs the first parsed one, and `record` is parsed too.
  std::vector<Command> out;
  out.push_back({start, [args, size] {
                   RecordArgs given = *args;
                   given.call_graph = args->start_call_graph;
                   given.sample_hz = args->start_sample_hz;
                   given.full = args->start_full;
                   always_on_calls(args->start_calls, args->start_min_wait, given);
                   given.wait_budget = args->start_wait_budget;
                   given.wait_burst = args->start_wait_burst;
                   given.pipe_bytes = args->start_pipe_bytes;
                   return record_start(given, *size);
                 }});
  out.push_back(
      {stop, [args, stop_output] { return record_stop(args->dir, *stop_output, args->writer); }});
  out.push_back({status, [args, json] { return record_status(args->dir, *json); }});

  auto mark_text = std::make_shared<std::vector<std::string>>();
  auto* mark = app.add_subcommand("mark", "write a marker into the running recording");
  mark->add_option("TEXT", *mark_text, "the marker's text");
  mark->add_option("--dir", args->dir,
                   "the recorder's folder (default $CAUSEWAY_DIR or /var/lib/causeway)");
  mark->footer(
      "The marker lands on this thread's timeline in the running recording ('causeway record' "
      "or 'record start').\nExit status: 0 sent, 2 no recording is listening.");
  out.push_back({mark, [args, mark_text] {
                   std::string text;
                   for (const auto& w : *mark_text) text += (text.empty() ? "" : " ") + w;
                   OpenedDir opened = open_recorder_dir(args->dir, false);
                   if (opened.rc != kExitOk) return opened.rc;
                   RecorderPaths paths(recorder_dir(args->dir));
                   errno = ENOENT;
                   if (!opened.dir || !send_marker(paths.socket, text)) {
                     std::cerr << fmt::format(
                         "causeway: no recording is listening on {} ({}); start one with "
                         "'causeway record start' or 'causeway record -o TRACE -- CMD'\n",
                         paths.socket, std::strerror(errno));
                     return kExitEnvironment;
                   }
                   return kExitOk;
                 }});
  out.push_back({cmd, [args] { return record_foreground(*args); }});
  return out;
}

}  // namespace cw::cli
