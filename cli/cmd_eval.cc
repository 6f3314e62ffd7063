// `causeway eval [NAME…] [--suite DIR] [--programs DIR] [--keep DIR | --from DIR] [--json]`
//
// Runs the scenario suite (tests/scenarios/README.md): records each scenario's programs
// with the real recorder (`causeway record`, as a child process), diagnoses the recording
// with the scenario's scripted answers, and prints the Argus paper's Table 2 columns and
// whether each root cause matches the ground truth (docs/scenarios.md).
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "base/temp_dir.h"
#include "cli/commands.h"
#include "cli/eval_latency.h"
#include "cli/eval_run.h"
#include "cli/exit_codes.h"
#include "cli/json_output.h"
#include "cli/terminal_reporter.h"
#include "engine/diagnosis/diagnose.h"
#include "engine/session/pack_paths.h"
#include "engine/session/session_error.h"
#include "engine/session/trace_load.h"
#include "eval/evaluate.h"
#include "eval/report.h"
#include "eval/scenario.h"
#include "rules/loader.h"
#include "rules/lua_sandbox.h"
#include "trace/command_marker.h"

namespace cw::cli {
namespace {

namespace fs = std::filesystem;
using eval::Scenario;
using eval::ScenarioResult;

// How long one scenario's recording may take before it is stopped.
constexpr auto kRecordTimeout = std::chrono::seconds(120);

// $CAUSEWAY_SCENARIOS, else share/causeway/scenarios under the binary's prefix (the
// build tree links BUILD/share/causeway/scenarios to tests/scenarios), never the source
// path the binary was built from.
std::string default_suite() {
  if (const char* env = std::getenv("CAUSEWAY_SCENARIOS"); env && *env) return env;
  return (fs::path(self_exe()).parent_path().parent_path() / "share/causeway/scenarios")
      .lexically_normal()
      .string();
}

// BUILD/tests/scenarios beside BUILD/cli/causeway.
std::string default_programs() {
  return (fs::path(self_exe()).parent_path().parent_path() / "tests" / "scenarios")
      .lexically_normal()
      .string();
}

// `causeway record -o TRACE [--rules PACK] RECORD... -- COMMAND`, its stderr in LOG.
// Returns "" or why it failed.
std::string record(const Scenario& s, const std::string& programs, const std::string& trace,
                   const std::string& log) {
  std::vector<std::string> options;
  if (!s.pack.empty()) options.insert(options.end(), {"--rules", s.pack});
  options.insert(options.end(), s.record.begin(), s.record.end());
  std::vector<std::string> command = s.command;
  if (command[0].find('/') == std::string::npos && fs::exists(fs::path(programs) / command[0]))
    command[0] = (fs::path(programs) / command[0]).string();
  return record_command(options, command, trace, log, {}, programs, kRecordTimeout);
}

std::string log_of(const std::string& out_dir, const Scenario& s) {
  return (fs::path(out_dir) / (s.name + ".record.log")).string();
}

// Why the scenario's command failed, from the trace (its process's exit) and the
// recorder's log when there is one; "" when it exited 0 or is still running. `record`
// says the command's status rather than passing it on, and a driver that could not make
// its hang happen leaves a recording of something else.
std::string command_failure(const Trace& trace, const std::string& log) {
  std::optional<int> code = command_exit_code(trace);
  if (!code || *code == 0) return {};
  std::string how = (*code & 0x7f) != 0 ? fmt::format("signal {}", *code & 0x7f)
                                        : fmt::format("exit {}", (*code >> 8) & 0xff);
  std::error_code ec;
  if (!fs::exists(log, ec)) return fmt::format("the scenario's command failed ({})", how);
  return fmt::format("the scenario's command failed ({}): {} (log: {})", how, failure_line(log),
                     log);
}

// The id of the pack loaded from `path` (a file or a folder), "" if none.
std::string pack_id_of(const rules::RuleSet& rules, const std::string& path) {
  std::error_code ec;
  const fs::path want = fs::weakly_canonical(path, ec);
  for (const rules::PackInfo& p : rules.packs)
    for (const std::string& f : p.files) {
      fs::path have = fs::weakly_canonical(f, ec);
      if (have == want || have.parent_path() == want) return p.id;
    }
  return {};
}

// Diagnoses one recording under the standard packs and `packs`; the error goes into
// `r.error`.
std::optional<eval::Outcome> diagnose(const Scenario& s, const Trace& trace,
                                      const std::vector<std::string>& packs, ScenarioResult& r) {
  auto loaded = session::load_rule_packs(packs, false);
  if (!loaded.ok()) {
    r.error = "rules: " + loaded.render();
    return std::nullopt;
  }
  try {
    return eval::evaluate(s, trace, loaded.rules,
                          s.pack.empty() ? "" : pack_id_of(loaded.rules, s.pack));
  } catch (const engine::DiagnoseError& e) {
    r.error = std::string("no hang: ") + e.what();
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return std::nullopt;
}

}  // namespace

Command add_eval(CLI::App& app) {
  struct Args {
    std::vector<std::string> names;
    std::string suite;
    std::string programs;
    std::string keep, from;
    bool json = false;
    bool show = false;
    bool latency = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "eval",
      "run the scenario suite: record each hang pattern, diagnose it, compare with its "
      "ground truth, print the Argus paper's Table 2 columns");
  cmd->add_option("NAME", args->names,
                  "scenarios to run (a folder name or a unique part of one); default: all");
  cmd->add_option("--suite", args->suite,
                  "the scenario folders' parent (default: $CAUSEWAY_SCENARIOS, else "
                  "share/causeway/scenarios beside the binary's folder, which the build "
                  "links to tests/scenarios)")
      ->check(CLI::ExistingDirectory)
      ->type_name("DIR");
  cmd->add_option("--programs", args->programs,
                  "where the cw-scn-* programs are (default: tests/scenarios beside the "
                  "binary's folder, as the build makes them)")
      ->type_name("DIR");
  auto* keep = cmd->add_option("--keep", args->keep,
                               "record into DIR and keep the recordings (DIR/NAME.cwt) and "
                               "the recorder's logs")
                   ->type_name("DIR");
  cmd->add_option("--from", args->from,
                  "do not record: diagnose the recordings a --keep run left in DIR again "
                  "(after changing a rule)")
      ->type_name("DIR")
      ->check(CLI::ExistingDirectory)
      ->excludes(keep);
  cmd->add_flag("--json", args->json, "print the results as JSON (docs/scenarios.md)");
  cmd->add_flag("--latency", args->latency,
                "run the latency pairs instead (tests/latency-pairs): record each program's "
                "normal and slow run, rank with `latency --base --buggy`, score against the "
                "function a fix would touch (p_min, f_min); the suite defaults to "
                "$CAUSEWAY_LATENCY_PAIRS, else share/causeway/latency-pairs");
  cmd->add_flag("--show", args->show,
                "after the table, print each scenario's diagnosis as `causeway debug` does");
  cmd->footer(
      "Recording needs root (or CAP_BPF and CAP_PERFMON). Progress goes to stderr.\nExit "
      "status: 0 every scenario matched its ground truth (and each rule-dependent one missed "
      "without its rule), 1 the input was wrong (unknown scenario, bad scenario.json), 2 the "
      "environment cannot do it, 3 a scenario did not match. With --latency: 0 every pair ran "
      "and its truth was ranked, 3 a pair failed to run or its truth was in no context.");
  return {
      cmd, [args] {
        if (args->latency)
          return run_latency_eval({args->names, args->suite, args->keep, args->from, args->json});
        if (args->suite.empty()) args->suite = default_suite();
        if (args->programs.empty()) args->programs = default_programs();
        std::error_code missing;
        if (!fs::is_directory(args->suite, missing)) {
          std::cerr << fmt::format(
              "causeway: eval: no scenario suite at {}: give --suite DIR (tests/scenarios "
              "of a checkout) or set CAUSEWAY_SCENARIOS\n",
              args->suite);
          return kExitEnvironment;
        }
        session::pack_paths({}, false);  // the standard packs are there, before recording
        std::vector<std::string> dirs = eval::scenario_dirs(args->suite);
        if (dirs.empty()) {
          std::cerr << fmt::format("causeway: eval: no scenario folders in {}\n", args->suite);
          return kExitBadInput;
        }
        if (!args->names.empty()) {
          std::vector<std::string> chosen;
          for (const std::string& n : args->names) {
            std::string why;
            auto d = find_folder(dirs, n, "scenario", &why);
            if (!d) {
              std::cerr << "causeway: eval: " << why << "\n";
              return kExitBadInput;
            }
            chosen.push_back(*d);
          }
          dirs = std::move(chosen);
        }
        std::vector<Scenario> scenarios;
        for (const std::string& d : dirs) {
          try {
            scenarios.push_back(eval::load_scenario(d));
          } catch (const eval::ScenarioError& e) {
            std::cerr << "causeway: " << e.what() << "\n";
            return kExitBadInput;
          }
        }
        std::optional<TempDir> temp;
        std::string out_dir = !args->from.empty() ? args->from : args->keep;
        if (out_dir.empty()) {
          temp.emplace("causeway-eval");
          out_dir = temp->path();
        }
        std::error_code ec;
        fs::create_directories(out_dir, ec);

        std::vector<ScenarioResult> results;
        for (size_t i = 0; i < scenarios.size(); ++i) {
          const Scenario& s = scenarios[i];
          ScenarioResult r;
          r.scenario = s;
          r.trace = (fs::path(out_dir) / (s.name + ".cwt")).string();
          // One line per scenario, once it is done: reading the trace may print notes.
          const std::string progress =
              fmt::format("eval [{}/{}] {}: ", i + 1, scenarios.size(), s.name);
          if (args->from.empty()) {
            auto t0 = std::chrono::steady_clock::now();
            r.error = record(s, args->programs, r.trace, log_of(out_dir, s));
            r.record_seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          }
          Trace trace;
          TerminalReporter reporter;
          ReadReport report;
          // Taken, not printed: a note on frames left unnamed names every process of
          // the machine (a JIT's /memfd: region in an unrelated one), not this scenario.
          SymbolizeReport symbols;
          if (r.error.empty()) {
            try {
              report = session::read_trace(r.trace, trace, reporter, &symbols);
            } catch (const session::SessionError& e) {
              reporter.message(e.what());
              r.error = "cannot read the recording " + r.trace;
            }
          }
          if (r.error.empty()) r.error = command_failure(trace, log_of(out_dir, s));
          if (r.error.empty()) {
            std::vector<std::string> with;
            if (!s.pack.empty()) with.push_back(s.pack);
            r.with_rules = diagnose(s, trace, with, r);
            if (r.error.empty() && s.needs_pack) r.without_pack = diagnose(s, trace, {}, r);
          }
          if (!r.error.empty())
            std::cerr << progress << "error: " << r.error << "\n";
          else
            std::cerr << progress
                      << fmt::format("{} ({} question{}{})\n", r.passed() ? "match" : "MISMATCH",
                                     r.with_rules->columns.questions,
                                     r.with_rules->columns.questions == 1 ? "" : "s",
                                     s.needs_pack ? (r.without_pack && !r.without_pack->match
                                                         ? "; misses without its pack"
                                                         : "; MATCHES WITHOUT ITS PACK")
                                                  : "");
          results.push_back(std::move(r));
        }
        if (args->json)
          std::cout << json_text(with_schema_version(eval::render_json(results))) << "\n";
        else
          std::cout << eval::render_markdown(results);
        if (args->show && !args->json)
          for (const ScenarioResult& r : results)
            if (r.with_rules)
              std::cout << fmt::format("\n## {}: {}\n\n{}", r.scenario.name, r.scenario.title,
                                       r.with_rules->report);
        eval::Summary sum = eval::summarize(results);
        return sum.passed == sum.scenarios ? kExitOk : kExitMismatch;
      }};
}

}  // namespace cw::cli
