// `causeway eval [NAME…] [--suite DIR] [--programs DIR] [--keep DIR | --from DIR] [--json]`
//
// Runs the scenario suite (tests/scenarios/README.md): records each scenario's programs
// with the real recorder (`causeway record`, as a child process), diagnoses the recording
// with the scenario's scripted answers, and prints the Argus paper's Table 2 columns and
// whether each root cause matches the ground truth (docs/scenarios.md).
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "base/temp_dir.h"
#include "cli/commands.h"
#include "cli/eval_latency.h"
#include "cli/exit_codes.h"
#include "cli/json_output.h"
#include "cli/terminal_reporter.h"
#include "engine/session/pack_paths.h"
#include "eval/command_run.h"
#include "eval/scenario.h"
#include "eval/scenario_run.h"
#include "eval/suite_summary.h"

namespace cw::cli {
namespace {

namespace fs = std::filesystem;
using eval::Scenario;
using eval::ScenarioResult;

// $CAUSEWAY_SCENARIOS, else share/causeway/scenarios under the binary's prefix (the
// build tree links BUILD/share/causeway/scenarios to tests/scenarios), never the source
// path the binary was built from.
std::string default_suite() {
  if (const char* env = std::getenv("CAUSEWAY_SCENARIOS"); env && *env) return env;
  return (fs::path(eval::self_exe()).parent_path().parent_path() / "share/causeway/scenarios")
      .lexically_normal()
      .string();
}

// BUILD/tests/scenarios beside BUILD/cli/causeway.
std::string default_programs() {
  return (fs::path(eval::self_exe()).parent_path().parent_path() / "tests" / "scenarios")
      .lexically_normal()
      .string();
}

}  // namespace

Command add_eval(CLI::App& app) {
  struct Args {
    std::vector<std::string> names;
    std::string suite;
    std::string programs;
    std::string keep, from;
    std::vector<std::string> record_options;
    uint32_t lose_switches = 0;
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
  cmd->add_option("--record-option", args->record_options,
                  "give OPTION to every recording too, after the scenario's own (repeat it for "
                  "more): --record-option=--full records the suite's full stream")
      ->type_name("OPTION")
      ->allow_extra_args(false)
      ->excludes("--from");
  cmd->add_option("--lose-switches", args->lose_switches,
                  "diagnose each recording N times more, each time with one context switch of "
                  "its program's threads lost as a kernel loses one (spread evenly over them), "
                  "as the recorder then writes it; a run that misses the truth fails the "
                  "suite")
      ->type_name("N")
      ->check(CLI::Range(0, 1000));
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
      "environment cannot do it, 3 a scenario did not match (or, with --lose-switches, a run "
      "with a switch lost did not). With --latency: 0 every pair ran "
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
            auto d = eval::find_folder(dirs, n, "scenario", &why);
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
          // One line per scenario, once it is done: reading the trace may print notes.
          const std::string progress =
              fmt::format("eval [{}/{}] {}: ", i + 1, scenarios.size(), s.name);
          TerminalReporter reporter;
          ScenarioResult r = eval::run_scenario(s,
                                                {args->programs, out_dir, args->from.empty(),
                                                 args->record_options, args->lose_switches},
                                                reporter);
          if (!r.error.empty())
            std::cerr << progress << "error: " << r.error << "\n";
          else
            std::cerr << progress
                      << fmt::format("{} ({} question{}{})\n", r.passed() ? "match" : "MISMATCH",
                                     r.with_rules->columns.questions,
                                     r.with_rules->columns.questions == 1 ? "" : "s",
                                     r.pack_dependent()
                                         ? "; without its pack: " + eval::without_pack_summary(r)
                                         : std::string());
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
        // Each run with a switch lost: how many still found the truth, and which did not.
        size_t lost_runs = 0, lost_matched = 0;
        std::string lost_misses;
        for (const ScenarioResult& r : results)
          for (const ScenarioResult::LostSwitchRun& l : r.lost_switch_runs) {
            ++lost_runs;
            if (l.match) {
              ++lost_matched;
              continue;
            }
            lost_misses += fmt::format("  - {}: the switch at {} ns ({} out, {} in) lost: {}\n",
                                       r.scenario.name, l.ts, l.out, l.in, l.result);
          }
        if (args->lose_switches > 0 && !args->json)
          std::cout << fmt::format(
              "\nWith one context switch lost: {} of {} runs match their ground truth.\n{}",
              lost_matched, lost_runs, lost_misses);
        eval::Summary sum = eval::summarize(results);
        return sum.passed == sum.scenarios && lost_matched == lost_runs ? kExitOk : kExitMismatch;
      }};
}

}  // namespace cw::cli
