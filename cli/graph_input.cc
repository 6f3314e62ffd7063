#include "cli/graph_input.h"

#include <fmt/format.h>

#include <iostream>

#include "cli/exit_codes.h"
#include "cli/progress.h"
#include "engine/cache/cache.h"
#include "rules/lua_sandbox.h"

namespace cw::cli {

int build_graph_input(const Trace& trace, const rules::RuleSet& rules, engine::BuildResult& out,
                      const CacheSession* cache) {
  engine::BuildOptions options;
  std::optional<cache::Key> key;
  if (cache && cache->on) {
    key = cache::Key{cache->trace_key, cache::packs_key(rules),
                     cache::options_key(options, cache->format, trace), cache::engine_key()};
    std::string why;
    if (auto loaded = cache::load_graph(cache->dir, *key, &why)) {
      cache->note(fmt::format("graph loaded from {}", cache::graph_entry_path(cache->dir, *key)));
      out = std::move(*loaded);
      return kExitOk;
    }
    if (!why.empty())
      cache->note(fmt::format("{} not used ({}); building the graph again",
                              cache::graph_entry_path(cache->dir, *key), why));
  }
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
  if (key) {
    // A trace rewritten while it was read: the graph is of neither content for sure.
    if (cache::trace_key(cache->trace_path) != cache->trace_key) {
      cache->note("the trace changed while it was read; graph not saved");
      return kExitOk;
    }
    // By a copy of this process, beside the diagnosis (CacheSession::in_background).
    cache->in_background([&] {
      std::string why;
      if (cache::save_graph(cache->dir, *key, out, &why))
        return fmt::format("graph saved to {}", cache::graph_entry_path(cache->dir, *key));
      return fmt::format("graph not saved: {}", why);
    });
  }
  return kExitOk;
}

void add_graph_input_options(CLI::App* cmd, std::string& trace, std::vector<std::string>& rules,
                             bool& no_stdlib) {
  cmd->add_option("TRACE", trace, "trace file (binary or text form)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--rules", rules, "add rule packs (files or folders), in order")
      ->type_name("PACK")
      ->check(CLI::ExistingPath);
  cmd->add_flag("--no-stdlib", no_stdlib, "do not load stdlib-rules");
}

}  // namespace cw::cli
