// `causeway latency TRACE` and `causeway latency --base TRACE --buggy TRACE`
//
// Which functions a run spent its time in, inferred from the stacks recorded on kernel
// events (IntroPerf): the costliest calling contexts, each with its functions' own time
// and the distance of each from the costliest; or, given a normal and a slow run, the
// contexts that cost more in the slow one (docs/latency.md).
#include <fmt/format.h>

#include <charconv>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/output_file.h"
#include "cli/commands.h"
#include "cli/duration.h"
#include "cli/exit_codes.h"
#include "cli/json_output.h"
#include "cli/pipeline_options.h"
#include "cli/terminal_reporter.h"
#include "engine/export/latency_html.h"
#include "engine/latency/infer.h"
#include "engine/latency/rank.h"
#include "engine/latency/ranking_json.h"
#include "engine/session/trace_load.h"
#include "trace/command_marker.h"

namespace cw::cli {
namespace {

using latency::Mode;
using latency::Presence;
using latency::Profile;
using latency::RankedPath;

std::string ms(int64_t ns, bool sign = false) {
  const double value = static_cast<double>(ns) / 1e6;
  return sign ? fmt::format("{:+.3f} ms", value) : fmt::format("{:.3f} ms", value);
}

std::string profile_text(const std::string& name, const Profile& p) {
  return fmt::format(
      "{}: {} stacks on {} thread{}, {} frames ({} without a symbol), {} contexts, {} "
      "functions\n",
      name, p.stacks, p.threads, p.threads == 1 ? "" : "s", p.frames, p.unnamed_frames,
      p.cct.path_count(), p.cct.function_count() - 1);
}

void print_path(const RankedPath& p, size_t rank, bool differential) {
  std::string head = fmt::format("#{}  {}", rank, ms(p.cost, differential));
  if (p.presence == Presence::New) head += "  new in the slow run";
  if (p.presence == Presence::Vanished) head += "  only in the base run";
  if (differential && p.merged > 1)
    head += fmt::format(
        "  merges {} contexts that differ only below {} (the others' deeper "
        "frames: {})",
        p.merged, p.frames[p.hot_frame].function, ms(p.below_cost, true));
  std::cout << head << "\n";
  size_t width = 8;
  for (const auto& f : p.frames) width = std::max(width, f.function.size());
  width = std::min<size_t>(width, 60);
  for (const auto& f : p.frames) {
    std::string line = fmt::format("  {:>3}  {:<{}}  {:>12}", f.distance, f.function, width,
                                   ms(static_cast<int64_t>(f.own)));
    if (differential) line += fmt::format("  base {:>12}", ms(static_cast<int64_t>(f.base_own)));
    if (f.instances > 1) line += fmt::format("  {} instances", f.instances);
    std::cout << line << "\n";
  }
}

}  // namespace

Command add_latency(CLI::App& app) {
  struct Args {
    std::string trace, base, buggy;
    std::optional<Pid> pid;
    std::string comm;
    bool all_processes = false;
    size_t top = 10;
    std::string mode = "conservative";
    std::string threshold = "0";
    bool json = false;
    bool folded = false;
    bool normalize = false;
    std::string html;
    std::string format = "auto";
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "latency",
      "which functions a run spent its time in, inferred from the stacks on its events; "
      "or what a slow run spent more time in than a normal one");
  auto* trace = cmd->add_option("TRACE", args->trace,
                                "trace file (binary or text form, or perf script output)")
                    ->check(CLI::ExistingFile);
  auto* base = cmd->add_option("--base", args->base, "the normal run, to compare against")
                   ->type_name("TRACE")
                   ->check(CLI::ExistingFile);
  auto* buggy = cmd->add_option("--buggy", args->buggy, "the slow run")
                    ->type_name("TRACE")
                    ->check(CLI::ExistingFile);
  trace->excludes(base)->excludes(buggy);
  base->needs(buggy);
  buggy->needs(base);
  cmd->add_option("--pid", args->pid, "only the threads of this process")->type_name("PID");
  cmd->add_flag("--all-processes", args->all_processes,
                "every recorded process (by default, in a recording of a command, its processes "
                "only: the rest of the machine says nothing about it)");
  cmd->add_option("--comm", args->comm, "only the threads whose process or thread has this name")
      ->type_name("NAME");
  cmd->add_option("--top", args->top, "show at most N contexts")
      ->type_name("N")
      ->default_val(10)
      ->check(CLI::Range(size_t{1}, size_t{1000000}));
  cmd->add_option("--mode", args->mode,
                  "where an instance ends: at the last stack in its context (conservative) or "
                  "at the first outside it (aggressive)")
      ->default_val("conservative")
      ->check(CLI::IsMember({"conservative", "aggressive"}));
  cmd->add_option("--threshold", args->threshold,
                  "leave out contexts that cost (or changed by) less than this, e.g. 1ms")
      ->type_name("DURATION")
      ->default_val("0");
  cmd->add_flag("--normalize", args->normalize,
                "with --base: scale the base run's times so its total equals the slow run's "
                "before subtracting (as pprof -normalize): compare shares of the runs' time, so "
                "threads that wait for work all along do not rank as slower in the longer run")
      ->needs(base);
  add_trace_format_option(cmd, args->format);
  cmd->add_flag("--json", args->json, "print the ranking as JSON (docs/json.md)");
  cmd->add_option("--html", args->html,
                  "also write the ranking as one self-contained page: a heat map of the contexts "
                  "and their calling-context tree")
      ->type_name("FILE");
  cmd->add_flag("--folded", args->folded,
                "print each context's own time as folded stacks (flamegraph.pl, speedscope)");
  cmd->footer(
      "Stacks come from the events that carry one (system calls, perf samples); a function's "
      "latency is how long consecutive stacks keep its calling context. A perf recording is "
      "read from `perf script` output. See docs/latency.md.\n"
      "Exit status: 0 done, 1 the input was wrong, 2 the environment cannot do it.");
  return {
      cmd, [args] {
        const bool differential = !args->base.empty();
        if (!differential && args->trace.empty()) {
          std::cerr << "causeway latency: give a TRACE, or --base TRACE --buggy TRACE\n";
          return kExitBadInput;
        }
        const auto threshold = parse_duration(args->threshold);
        if (!threshold) {
          std::cerr << fmt::format(
              "causeway latency: --threshold '{}' is not a duration (e.g. 500us, 2ms, 1s)\n",
              args->threshold);
          return kExitBadInput;
        }
        latency::Selection selection;
        selection.pid = args->pid;
        if (!args->comm.empty()) selection.comm = args->comm;
        auto load = [&](const std::string& path, Profile& out) {
          Trace t;
          TerminalReporter reporter;
          session::read_trace(path, t, reporter, nullptr, args->format);
          latency::Selection chosen = selection;
          if (!args->all_processes && !chosen.pid && !chosen.comm)
            if (const Pid command = command_pid(t); command != 0) chosen.tree = command;
          out = latency::infer(t, chosen);
          if (out.selected_threads == 0 && (selection.pid || selection.comm)) {
            std::cerr << fmt::format("causeway latency: {}: no thread {}\n", path,
                                     selection.pid ? fmt::format("of process {}", *selection.pid)
                                                   : fmt::format("named '{}'", *selection.comm));
            return int(kExitBadInput);
          }
          return int(kExitOk);
        };
        Profile slow, normal;
        if (int rc = load(differential ? args->buggy : args->trace, slow); rc != kExitOk) return rc;
        if (differential)
          if (int rc = load(args->base, normal); rc != kExitOk) return rc;
        latency::RankOptions options{
            args->mode == "aggressive" ? Mode::Aggressive : Mode::Conservative, args->top,
            *threshold};
        options.normalize = args->normalize;
        if (args->folded) {
          std::cout << latency::folded(slow.cct, options.mode);
          return kExitOk;
        }
        const auto ranked = differential ? latency::diff_rank_paths(normal.cct, slow.cct, options)
                                         : latency::rank_paths(slow.cct, options);
        if (!args->html.empty()) {
          const std::string title =
              differential ? args->base + " against " + args->buggy : args->trace;
          const std::string page = engine::latency_html(
              latency::ranking_json(options, slow, differential ? &normal : nullptr, ranked),
              latency::ranked_tree_json(ranked, differential), title);
          std::string why;
          if (!write_output_file(args->html, page, 0644, &why)) {
            std::cerr << "causeway latency: " << why << "\n";
            return kExitEnvironment;
          }
          std::cerr << fmt::format("wrote {}: {} contexts\n", args->html, ranked.size());
        }
        if (args->json) {
          const auto j =
              latency::ranking_json(options, slow, differential ? &normal : nullptr, ranked);
          std::cout << with_schema_version(j).dump(2) << "\n";
          return kExitOk;
        }
        if (differential) {
          std::cout << profile_text("base", normal) << profile_text("buggy", slow);
          if (options.normalize)
            std::cout << fmt::format(
                "base run scaled by {:.3f} (--normalize): its times are shown and subtracted "
                "as shares of the slow run's\n",
                latency::base_scale(normal.cct, slow.cct, options.mode));
        } else {
          std::cout << profile_text("trace", slow);
        }
        if (slow.stacks == 0) {
          std::cout << "no stacks in the selected threads: nothing to infer from\n";
          return kExitOk;
        }
        std::cout << fmt::format(
            "{} calling contexts ({}: an instance ends at the {} stack {} its context); per "
            "function: distance from the costliest (0), own time{}\n",
            differential ? "changed" : "costliest", latency::mode_name(options.mode),
            options.mode == Mode::Conservative ? "last" : "first",
            options.mode == Mode::Conservative ? "in" : "outside",
            differential ? " in the slow run and in the base run" : "");
        for (size_t i = 0; i < ranked.size(); ++i) print_path(ranked[i], i + 1, differential);
        return kExitOk;
      }};
}

}  // namespace cw::cli
