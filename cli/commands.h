// One function per command; each registers its sub-command and options on the app and
// runs when chosen. They return the process exit code (cli/exit_codes.h).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <vector>

namespace cw::cli {

// Set by each command's registration; main() runs the chosen one.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Command add_rules_check(CLI::App& rules);
Command add_rules_test(CLI::App& rules);
Command add_rules_fmt(CLI::App& rules);
// `rules kinds`: the table of rule kinds (dsl/rule_kinds.h).
Command add_rules_kinds(CLI::App& rules);
// `rules list [TRACE]`, `rules which ID`: the packs found and where a rule is written.
Command add_rules_list(CLI::App& rules);
Command add_rules_which(CLI::App& rules);
Command add_rules_new(CLI::App& rules);
Command add_rules_install(CLI::App& rules);
Command add_graph(CLI::App& app);
Command add_convert(CLI::App& app);
// `debug`: diagnose a hang (docs/diagnosis.md).
Command add_debug(CLI::App& app);
// `export`: the graph and its diagnosis as Perfetto, Chrome JSON or DOT (docs/export.md).
Command add_export(CLI::App& app);
// `latency`: function latencies inferred from stacks, ranked by context (docs/latency.md).
Command add_latency(CLI::App& app);
// `hangs`: the candidates for `debug --hang auto`, ranked (docs/diagnosis.md).
Command add_hangs(CLI::App& app);
// `ui`: the diagnosis in a browser, served on 127.0.0.1 (docs/ui.md).
Command add_ui(CLI::App& app);
// `record` (with start, stop, status) and `mark`.
std::vector<Command> add_record(CLI::App& app);
// `eval`: the scenario suite against its ground truth (docs/scenarios.md).
Command add_eval(CLI::App& app);
// `flags suggest`: the flags a spinning thread waits on (docs/flags.md).
Command add_flags_suggest(CLI::App& flags);
// `cache size` and `cache clean`: the derived cache's folders (docs/cache.md).
std::vector<Command> add_cache(CLI::App& cache);
// `fleet diagnose`, `fleet top`, `fleet query`, `fleet schema`: many traces' hangs in a
// store (docs/fleet.md).
std::vector<Command> add_fleet(CLI::App& fleet);

}  // namespace cw::cli
