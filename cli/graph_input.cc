#include "cli/graph_input.h"

#include <iostream>

#include "cli/exit_codes.h"
#include "cli/progress.h"
#include "rules/lua_sandbox.h"

namespace cw::cli {

int build_graph_input(const Trace& trace, const rules::RuleSet& rules, engine::BuildResult& out) {
  engine::BuildOptions options;
  ProgressLine progress("building graph");
  if (progress.enabled()) options.progress = progress.callback();
  try {
    out = engine::build_graph(trace, rules, options);
  } catch (const DiagnosticError& e) {
    progress.clear();
    std::cerr << e.what();
    return kExitBadInput;
  } catch (const rules::LuaError& e) {
    progress.clear();
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  }
  progress.clear();
  return kExitOk;
}

}  // namespace cw::cli
