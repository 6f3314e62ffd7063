// `causeway rules list [TRACE]`: every pack found, where from, and whether it applies;
// `causeway rules which ID`: where a rule or a pack is written.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/json_output.h"
#include "cli/pipeline_options.h"
#include "cli/terminal_reporter.h"
#include "dsl/rule_kinds.h"
#include "engine/session/pack_paths.h"
#include "engine/session/pack_selection.h"
#include "engine/session/trace_session.h"

namespace cw::cli {

namespace {

// Where a pack was found: its first file's folder (a folder pack) or file.
std::string pack_place(const rules::PackInfo& pack) {
  if (pack.header_source) return pack.header_source->path;
  return pack.files.empty() ? std::string("?") : pack.files.front();
}

std::string conditions_text(const rules::PackInfo& pack) {
  std::vector<std::string> out;
  for (const rules::PackCondition& c : pack.applies)
    out.push_back(fmt::format("{}(\"{}\")", rules::condition_kind_name(c.kind), c.glob));
  return out.empty() ? "-" : fmt::format("{}", fmt::join(out, ", "));
}

}  // namespace

Command add_rules_list(CLI::App& rules) {
  struct Args {
    std::string trace;
    std::vector<std::string> packs;
    bool no_stdlib = false;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = rules.add_subcommand(
      "list", "list every pack found: where from, its version, and whether it applies to TRACE");
  cmd->add_option("TRACE", args->trace, "a trace: say which packs apply to it, and why")
      ->check(CLI::ExistingFile);
  cmd->add_option("--rules", args->packs, "add rule packs (files or folders), as other commands")
      ->check(CLI::ExistingPath);
  cmd->add_flag("--no-stdlib", args->no_stdlib, "do not load stdlib-rules");
  cmd->add_flag("--json", args->json, "print the packs as JSON (docs/json.md)");
  cmd->footer(
      "Packs are found in the standard folder, the user's ~/.local/share/causeway/rules, the "
      "project's .causeway/rules, $CAUSEWAY_RULES_PATH and --rules (docs/rules.md \"Where "
      "packs are found\"). A pack whose header says `applies ...` is loaded for a trace that "
      "shows one of its conditions.\nExit status: 0 done, 1 a pack or the trace is wrong, 2 "
      "the environment cannot do it.");
  return {cmd, [args] {
            auto loaded = session::load_rule_packs(args->packs, args->no_stdlib);
            std::cerr << loaded.render();
            if (!loaded.ok()) return kExitBadInput;
            std::optional<session::TraceSession> session;
            TerminalReporter reporter;
            if (!args->trace.empty()) {
              session::SessionConfig config;
              config.trace_path = args->trace;
              session.emplace(std::move(config), reporter);
            }
            nlohmann::json out = nlohmann::json::array();
            for (const rules::PackInfo& pack : loaded.rules.packs) {
              std::string applies;
              if (session) {
                applies = session::applies_because(pack, session->trace());
                if (applies.empty()) applies = "no: none of its conditions holds";
              } else {
                applies = pack.applies.empty() ? "always (no conditions)"
                                               : "when a trace shows one of its conditions";
              }
              if (args->json) {
                nlohmann::json conditions = nlohmann::json::array();
                for (const rules::PackCondition& c : pack.applies)
                  conditions.push_back(
                      {{"kind", rules::condition_kind_name(c.kind)}, {"glob", c.glob}});
                out.push_back({{"id", pack.id},
                               {"version", pack.version},
                               {"from", pack_place(pack)},
                               {"description", pack.description},
                               {"applies", conditions},
                               {"applies_to_trace", applies}});
                continue;
              }
              std::cout << fmt::format("{} {}  {}\n  conditions: {}\n  applies: {}\n", pack.id,
                                       pack.version, pack_place(pack), conditions_text(pack),
                                       applies);
            }
            if (args->json)
              std::cout << json_text(with_schema_version(nlohmann::json{{"packs", out}})) << "\n";
            return kExitOk;
          }};
}

Command add_rules_which(CLI::App& rules) {
  struct Args {
    std::string id;
    std::vector<std::string> packs;
    bool no_stdlib = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd =
      rules.add_subcommand("which", "say where a rule (PACK/RULE or RULE) or a pack is written");
  cmd->add_option("ID", args->id, "a rule id, qualified or not, or a pack id")->required();
  cmd->add_option("--rules", args->packs, "add rule packs (files or folders), as other commands")
      ->check(CLI::ExistingPath);
  cmd->add_flag("--no-stdlib", args->no_stdlib, "do not load stdlib-rules");
  cmd->footer(
      "Prints FILE:LINE: KIND ID (PACK VERSION) for each match, and who disabled a rule that is "
      "off.\nExit status: 0 found, 1 nothing has that id (or a pack is wrong), 2 the environment "
      "cannot do it.");
  return {cmd, [args] {
            auto loaded = session::load_rule_packs(args->packs, args->no_stdlib);
            std::cerr << loaded.render();
            if (!loaded.ok()) return kExitBadInput;
            int found = 0;
            for (const auto& k : dsl::kRuleKinds) {
              for (const rules::RuleOrigin* o : loaded.rules.origins(k.kind)) {
                if (o->id != args->id && o->local != args->id) continue;
                const rules::PackInfo* pack = loaded.rules.pack(o->pack);
                std::cout << fmt::format(
                    "{}:{}: {} {} ({} {}){}\n", o->source ? o->source->path : std::string("?"),
                    o->loc.line, k.keyword, o->id, o->pack, pack ? pack->version : std::string("?"),
                    o->active() ? "" : ", disabled by " + o->disabled_by);
                ++found;
              }
            }
            for (const rules::PackInfo& pack : loaded.rules.packs) {
              if (pack.id != args->id) continue;
              std::cout << fmt::format("{}:{}: pack {} {}\n", pack_place(pack),
                                       pack.header_loc.line, pack.id, pack.version);
              ++found;
            }
            if (found == 0) {
              std::cerr << fmt::format("causeway: no rule or pack has the id '{}'\n", args->id);
              return kExitBadInput;
            }
            return kExitOk;
          }};
}

}  // namespace cw::cli
