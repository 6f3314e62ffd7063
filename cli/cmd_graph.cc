// `causeway graph TRACE [--rules PACK…] [--no-stdlib] [--json] [--dot FILE]`
#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "base/output_file.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/json_output.h"
#include "cli/pipeline_options.h"
#include "cli/terminal_reporter.h"
#include "engine/export/graph_report.h"
#include "engine/graph/builder.h"
#include "engine/session/trace_session.h"
#include "rules/loader.h"

namespace cw::cli {

Command add_graph(CLI::App& app) {
  struct Args : TraceArgs {
    bool json = false;
    bool edges = false;
    std::string dot;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("graph", "build the event graph of a trace with rule packs");
  cmd->add_option("TRACE", args->trace,
                  "trace file (binary or text form), or an always-on recorder's ring folder")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_option("--rules", args->rules, "add rule packs (files or folders), in order")
      ->check(CLI::ExistingPath);
  cmd->add_flag("--no-stdlib", args->no_stdlib, "do not load stdlib-rules");
  add_trace_format_option(cmd, args->format);
  cmd->add_flag("--json", args->json, "print the graph's counts as JSON (docs/json.md)");
  cmd->add_flag("--edges", args->edges,
                "with --json: also list every cross-thread edge with its evidence events");
  cmd->add_option("--dot", args->dot, "also write the graph as Graphviz DOT to FILE");
  add_no_cache_option(cmd, args->no_cache);
  cmd->footer(
      "Packs: the standard packs unless --no-stdlib, then $CAUSEWAY_RULES_PATH, then --rules.\n"
      "Cache: a binary trace's decoded events and the graph are kept in TRACE.cwcache/ (else "
      "~/.cache/causeway) and used when the trace (and for the graph the packs) and causeway are "
      "the same (docs/cache.md); --no-cache or CAUSEWAY_CACHE=off turns it off.\n"
      "Exit status: 0 done, 1 the input was wrong (bad trace or pack), 2 the environment cannot "
      "do it (no standard packs, cannot write the --dot file).");
  return {cmd, [args] {
            TerminalReporter reporter;
            session::TraceSession session(session_config(*args), reporter);
            session.load_packs();
            const Trace& trace = session.trace();
            const ReadReport& report = session.read_report();
            const engine::BuildResult& result = session.graph();

            if (!args->dot.empty()) {
              std::ostringstream dot;
              engine::write_dot(dot, trace, result.graph);
              std::string why;
              if (!write_output_file(args->dot, dot.str(), 0644, &why)) {
                std::cerr << "causeway: " << why << "\n";
                return kExitEnvironment;
              }
            }
            if (args->json) {
              auto json = engine::graph_json(trace, result);
              json["trace"]["skipped_chunks"] = report.skipped.size();
              json["trace"]["skipped"] = nlohmann::json::array();
              for (const auto& s : report.skipped)
                json["trace"]["skipped"].push_back(
                    {{"offset", s.offset}, {"size", s.size}, {"reason", s.reason}});
              if (args->edges) json["edge_list"] = engine::edge_list_json(trace, result.graph);
              std::cout << json_text(with_schema_version(std::move(json))) << "\n";
            } else {
              std::cout << engine::text_summary(trace, result);
            }
            return kExitOk;
          }};
}

}  // namespace cw::cli
