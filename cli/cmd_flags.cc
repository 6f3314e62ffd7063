// `causeway flags suggest --pid P [--tid T] [--duration SECONDS] [--json]`
//
// Samples a spinning thread's program counters, finds the loop it spins in and prints the
// memory read by the loop's exit conditions as ready-to-paste `flag` rules (docs/flags.md).
#include <dirent.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/json_output.h"
#include "dsl/parser.h"
#include "instrument/pc_sampler.h"
#include "instrument/proc_maps.h"
#include "instrument/spin_report.h"
#include "instrument/x86_decoder.h"

namespace cw::cli {
namespace {

using instrument::ExitReadReport;
using instrument::LoopReport;
using instrument::SpinReport;

struct SuggestArgs {
  int pid = 0;
  int tid = 0;
  double duration = 1.0;
  bool json = false;
};

struct ThreadInfo {
  pid_t tid = 0;
  std::string comm;
  uint64_t cpu_ticks = 0;  // utime + stime
};

// /proc/PID/task/TID/stat: the name in parentheses, then utime and stime as fields 14, 15.
std::optional<ThreadInfo> read_thread(pid_t pid, pid_t tid) {
  std::ifstream in(fmt::format("/proc/{}/task/{}/stat", pid, tid));
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  const size_t open = stat.find('('), close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  ThreadInfo t;
  t.tid = tid;
  t.comm = stat.substr(open + 1, close - open - 1);
  std::istringstream rest(stat.substr(close + 1));
  std::string field;
  uint64_t utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  t.cpu_ticks = utime + stime;
  return t;
}

std::vector<ThreadInfo> threads_of(pid_t pid) {
  std::vector<ThreadInfo> threads;
  DIR* dir = opendir(fmt::format("/proc/{}/task", pid).c_str());
  if (!dir) return threads;
  while (dirent* entry = readdir(dir)) {
    char* end = nullptr;
    long tid = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || tid <= 0) continue;
    if (auto t = read_thread(pid, static_cast<pid_t>(tid))) threads.push_back(*t);
  }
  closedir(dir);
  return threads;
}

// A rule id from a symbol: letters, digits and '_' ("counter.0" → "counter_0").
std::string flag_id(const std::string& symbol) {
  std::string id;
  for (char c : symbol) id += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0]))) id = "flag_" + id;
  return id;
}

std::string declaration(const ExitReadReport& r) {
  return fmt::format("flag {} {{\n  symbol {}\n  binary {}\n  size {}\n}}\n", flag_id(r.symbol),
                     dsl::string_literal(r.symbol), dsl::string_literal(r.binary), r.size);
}

// One suggested flag: a named datum read by the exits of one or more sampled loops.
struct Suggestion {
  ExitReadReport read;  // the first read naming it
  std::vector<std::pair<const LoopReport*, std::vector<const ExitReadReport*>>> loops;
  uint64_t score = 0;  // samples of the loops whose exits read it
};

// Flags read by the exits of more (and hotter) loops first: the flag a spin waits on is
// read wherever the spin can end, a mode switch inside it only in an inner loop.
std::vector<Suggestion> suggestions(const SpinReport& report) {
  std::vector<Suggestion> out;
  std::map<std::pair<std::string, std::string>, size_t> index;
  for (const LoopReport& loop : report.loops) {
    for (const ExitReadReport& r : loop.reads) {
      if (!r.resolved) continue;
      auto [it, added] = index.emplace(std::pair{r.binary_path, r.symbol}, out.size());
      if (added) out.push_back({r, {}, 0});
      Suggestion& s = out[it->second];
      if (s.loops.empty() || s.loops.back().first != &loop) {
        s.loops.push_back({&loop, {}});
        s.score += loop.samples;
      }
      s.loops.back().second.push_back(&r);
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Suggestion& a, const Suggestion& b) { return a.score > b.score; });
  return out;
}

std::string percent(uint64_t part, uint64_t whole) {
  return fmt::format("{}%", whole ? (part * 100 + whole / 2) / whole : 0);
}

std::string loop_where(const LoopReport& l) {
  return fmt::format("{}() at 0x{:x}", l.function, l.head);
}

void print_text(const SpinReport& report, const std::vector<Suggestion>& found) {
  for (const Suggestion& s : found) {
    const LoopReport& loop = *s.loops.front().first;
    std::string reads;
    for (const ExitReadReport* r : s.loops.front().second)
      reads += fmt::format("{}0x{:x} {}", reads.empty() ? "" : ", ", r->instruction, r->text);
    std::cout << fmt::format(
        "# {}: {} loops ({} of {} samples); its exit reads {}{} ({})\n", loop.binary,
        loop_where(loop), percent(loop.samples, report.samples), report.samples, s.read.symbol,
        s.read.symbol_offset ? fmt::format("+{}", s.read.symbol_offset) : "", reads);
    for (size_t i = 1; i < s.loops.size(); ++i)
      std::cout << fmt::format("#   and so does {}: {} ({})\n", s.loops[i].first->binary,
                               loop_where(*s.loops[i].first),
                               percent(s.loops[i].first->samples, report.samples));
    if (s.read.symbol_offset != 0)
      std::cout << fmt::format("#   (the read is {} bytes into {}: declare the whole symbol)\n",
                               s.read.symbol_offset, s.read.symbol);
    std::cout << declaration(s.read) << "\n";
  }
  for (const LoopReport& loop : report.loops)
    for (const ExitReadReport& r : loop.reads)
      if (!r.resolved)
        std::cout << fmt::format("# {}: {} also exits on 0x{:x} {}: not named ({})\n", loop.binary,
                                 loop_where(loop), r.instruction, r.text, r.unresolved);
}

nlohmann::ordered_json read_json(const ExitReadReport& r) {
  return {{"instruction", fmt::format("0x{:x}", r.instruction)}, {"text", r.text}};
}

nlohmann::ordered_json loop_json(const LoopReport& l, uint64_t total) {
  return {{"binary", l.binary},
          {"binary_path", l.binary_path},
          {"function", l.function},
          {"head", fmt::format("0x{:x}", l.head)},
          {"end", fmt::format("0x{:x}", l.end)},
          {"samples", l.samples},
          {"share", total ? static_cast<double>(l.samples) / static_cast<double>(total) : 0.0}};
}

nlohmann::ordered_json to_json(const SpinReport& report, const std::vector<Suggestion>& found) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const Suggestion& s : found) {
    nlohmann::ordered_json loops = nlohmann::ordered_json::array();
    for (const auto& [loop, reads] : s.loops) {
      nlohmann::ordered_json l = loop_json(*loop, report.samples);
      l["reads"] = nlohmann::ordered_json::array();
      for (const ExitReadReport* r : reads) l["reads"].push_back(read_json(*r));
      loops.push_back(std::move(l));
    }
    out.push_back({{"resolved", true},
                   {"id", flag_id(s.read.symbol)},
                   {"symbol", s.read.symbol},
                   {"offset", s.read.symbol_offset},
                   {"binary", s.read.binary},
                   {"binary_path", s.read.binary_path},
                   {"size", s.read.size},
                   {"vaddr", fmt::format("0x{:x}", s.read.data_vaddr)},
                   {"address", fmt::format("0x{:x}", s.read.runtime_address)},
                   {"samples", report.samples},
                   {"score", s.score},
                   {"loops", std::move(loops)},
                   {"declaration", declaration(s.read)}});
  }
  for (const LoopReport& loop : report.loops)
    for (const ExitReadReport& r : loop.reads) {
      if (r.resolved) continue;
      nlohmann::ordered_json l = loop_json(loop, report.samples);
      l["reads"] = nlohmann::ordered_json::array({read_json(r)});
      out.push_back({{"resolved", false},
                     {"size", r.size},
                     {"reason", r.unresolved},
                     {"samples", report.samples},
                     {"loops", nlohmann::ordered_json::array({std::move(l)})}});
    }
  return out;
}

std::string frames_seen(const SpinReport& report) {
  std::string seen;
  for (const auto& [frame, count] : report.hot_frames)
    seen += fmt::format("\n  {} ({} of {} samples)", frame, percent(count, report.samples),
                        report.samples);
  return seen.empty() ? "\n  (no frame in a mapped file)" : seen;
}

int run_suggest(const SuggestArgs& args) {
  const std::string where = "causeway: flags suggest";
  struct stat st;
  if (args.pid <= 0 || ::stat(fmt::format("/proc/{}", args.pid).c_str(), &st) != 0) {
    std::cerr << fmt::format("{}: no process {}\n", where, args.pid);
    return kExitBadInput;
  }
  std::optional<ThreadInfo> thread;
  if (args.tid != 0) {
    thread = read_thread(args.pid, args.tid);
    if (!thread) {
      std::cerr << fmt::format("{}: no thread {} in process {}\n", where, args.tid, args.pid);
      return kExitBadInput;
    }
  } else {
    for (const ThreadInfo& t : threads_of(args.pid))
      if (!thread || t.cpu_ticks > thread->cpu_ticks) thread = t;
    if (!thread) {
      std::cerr << fmt::format("{}: process {} has no threads left\n", where, args.pid);
      return kExitBadInput;
    }
  }
  if (!(args.duration > 0 && args.duration <= 600)) {
    std::cerr << fmt::format("{}: --duration must be in (0, 600] seconds, got {}\n", where,
                             args.duration);
    return kExitBadInput;
  }
  std::cerr << fmt::format("sampling thread {} ({}) of process {} for {} s\n", thread->tid,
                           thread->comm, args.pid, args.duration);

  const auto duration = std::chrono::milliseconds(static_cast<int64_t>(args.duration * 1000));
  instrument::SampleRun run = instrument::sample_user_pcs(thread->tid, duration);
  if (run.failure != instrument::SampleFailure::None) {
    std::cerr << fmt::format("{}: {}\n", where, run.error);
    return run.failure == instrument::SampleFailure::NoSuchThread ? kExitBadInput
                                                                  : kExitEnvironment;
  }
  if (run.samples.empty()) {
    std::cerr << fmt::format(
        "{}: no sample of thread {} ({}) with user registers in {} s ({} lost): it did not run; "
        "a thread blocked in one long wait is not spinning\n",
        where, thread->tid, thread->comm, args.duration, run.lost);
    return kExitBadInput;
  }
  std::string error;
  auto maps = instrument::read_proc_maps(args.pid, &error);
  if (!maps) {
    std::cerr << fmt::format("{}: {} (did the process exit?)\n", where, error);
    return kExitBadInput;
  }
  instrument::ProcessImages images(args.pid, std::move(*maps));
  instrument::X86Decoder decoder;
  SpinReport report = instrument::analyse_spin(run.samples, images, decoder);
  if (report.loops.empty()) {
    std::cerr << fmt::format(
        "{}: no loop holds the {} samples of thread {} ({}); they were in:{}\n", where,
        report.samples, thread->tid, thread->comm, frames_seen(report));
    return kExitBadInput;
  }
  auto found = suggestions(report);
  if (args.json) {
    nlohmann::ordered_json out = {{"schema_version", kJsonSchemaVersion},
                                  {"suggestions", to_json(report, found)}};
    std::cout << json_text(out) << "\n";
  } else {
    print_text(report, found);
  }
  if (found.empty()) {
    std::cerr << fmt::format(
        "{}: thread {} ({}) spins in {} loop(s), but none of their exit conditions reads memory "
        "that has a symbol{}\n",
        where, thread->tid, thread->comm, report.loops.size(),
        args.json ? "" : " (the reads are listed above)");
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace

Command add_flags_suggest(CLI::App& flags) {
  auto args = std::make_shared<SuggestArgs>();
  auto* cmd = flags.add_subcommand(
      "suggest", "sample a spinning thread and suggest the flags its loop waits on");
  cmd->add_option("--pid", args->pid, "the process")->required();
  cmd->add_option("--tid", args->tid,
                  "the spinning thread (default: the process's thread with the most CPU time)");
  cmd->add_option("--duration", args->duration, "seconds to sample (default 1)");
  cmd->add_flag("--json", args->json, "print the suggestions as JSON (docs/flags.md)");
  cmd->footer(
      "Needs root or CAP_PERFMON. Exit status: 0 flags suggested, 1 no such process or thread, "
      "no samples or no loop with a named exit condition, 2 sampling is not possible here.");
  return {cmd, [args] { return run_suggest(*args); }};
}

}  // namespace cw::cli
