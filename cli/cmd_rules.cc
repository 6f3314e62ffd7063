// `causeway rules check|test|fmt PACK…`, `causeway rules kinds`
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/json_output.h"
#include "dsl/parser.h"
#include "dsl/rule_kinds.h"
#include "engine/session/pack_paths.h"
#include "eval/pack_tests.h"
#include "rules/loader.h"

namespace fs = std::filesystem;

namespace cw::cli {

namespace {

struct PackArgs {
  std::vector<std::string> packs;
  bool no_stdlib = false;
};

void add_pack_args(CLI::App* cmd, PackArgs& args) {
  cmd->add_option("PACK", args.packs, "pack files or folders")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_flag("--no-stdlib", args.no_stdlib, "do not load stdlib-rules to resolve `requires`");
}

// What the checked packs (`ids`) change in others: rules turned off, and split rules that
// outrank load order.
void print_overrides(const rules::RuleSet& rules, const std::vector<std::string>& ids,
                     std::ostream& out) {
  auto checked = [&](const std::string& id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
  };
  for (const auto& d : rules.disabled)
    if (checked(d.by))
      out << fmt::format("{} disabled by {} ({}:{})\n", d.rule, d.by,
                         d.source ? d.source->path : std::string("?"), d.loc.line);
  for (const auto& s : rules.splits)
    if (s.priority != 0 && s.origin.active() && checked(s.origin.pack))
      out << fmt::format("{} has priority {}: it names the cuts it shares with other splits\n",
                         s.origin.id, s.priority);
}

}  // namespace

Command add_rules_check(CLI::App& rules) {
  auto args = std::make_shared<PackArgs>();
  auto* cmd = rules.add_subcommand("check", "parse, resolve, type-check and lint packs");
  add_pack_args(cmd, *args);
  cmd->footer(
      "The standard packs are loaded beside PACK to resolve `requires` (unless --no-stdlib); a "
      "PACK with the id of a standard pack replaces it.\nExit status: 0 when every pack is "
      "valid (warnings allowed), 1 on any error, 2 the standard packs are missing.");
  return {cmd, [args] {
            auto loaded = session::load_rule_packs(args->packs, args->no_stdlib);
            std::cerr << loaded.render();
            if (!loaded.ok()) return kExitBadInput;
            size_t warnings = loaded.diagnostics.size();
            auto ids = session::packs_from(loaded.rules, args->packs);
            std::cout << fmt::format("{} pack{} checked ({}), {} warning{}\n", ids.size(),
                                     ids.size() == 1 ? "" : "s", fmt::join(ids, ", "), warnings,
                                     warnings == 1 ? "" : "s");
            print_overrides(loaded.rules, ids, std::cout);
            return kExitOk;
          }};
}

Command add_rules_test(CLI::App& rules) {
  auto args = std::make_shared<PackArgs>();
  auto* cmd = rules.add_subcommand("test", "run the tests embedded in packs");
  add_pack_args(cmd, *args);
  cmd->footer(
      "Each test builds a graph from its trace with its pack and the packs it requires, "
      "nothing else.\nExit status: 0 when every test passes, 1 otherwise, 2 the standard packs "
      "are missing.");
  return {cmd, [args] {
            auto loaded = session::load_rule_packs(args->packs, args->no_stdlib);
            std::cerr << loaded.render();
            if (!loaded.ok()) return kExitBadInput;
            auto results =
                eval::run_pack_tests(loaded.rules, session::packs_from(loaded.rules, args->packs));
            std::cout << eval::render_pack_tests(results);
            bool passed = std::all_of(results.begin(), results.end(),
                                      [](const eval::PackTestResult& r) { return r.passed(); });
            return passed ? kExitOk : kExitBadInput;
          }};
}

Command add_rules_fmt(CLI::App& rules) {
  struct Args {
    std::vector<std::string> files;
    bool write = false;
    bool check = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = rules.add_subcommand("fmt", "print packs in canonical layout");
  cmd->add_option("PACK", args->files, ".cw files or folders")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_flag("-w,--write", args->write, "rewrite the files in place");
  cmd->add_flag("--check", args->check, "exit 1 if any file is not in canonical layout");
  cmd->footer(
      "Prints the files' canonical layout, rewrites them (-w), or lists those not in it "
      "(--check).\nExit status: 0 done, 1 a file does not parse or (--check) is not in "
      "canonical layout.");
  return {cmd, [args] {
            std::vector<std::string> files;
            for (const auto& p : args->files) {
              if (fs::is_directory(p)) {
                for (const auto& e : fs::recursive_directory_iterator(p))
                  if (e.path().extension() == ".cw") files.push_back(e.path().string());
              } else {
                files.push_back(p);
              }
            }
            std::sort(files.begin(), files.end());
            int status = kExitOk;
            for (const auto& f : files) {
              SourcePtr src;
              std::string formatted;
              try {
                src = read_source(f);
                formatted = dsl::format_source(src);
              } catch (const DiagnosticError& e) {
                std::cerr << e.what();
                status = kExitBadInput;
                continue;
              } catch (const std::exception& e) {
                std::cerr << e.what() << "\n";
                status = kExitBadInput;
                continue;
              }
              if (args->check) {
                if (formatted != src->text) {
                  std::cout << f << ": not in canonical layout\n";
                  status = kExitBadInput;
                }
              } else if (args->write) {
                if (formatted != src->text) std::ofstream(f, std::ios::binary) << formatted;
              } else {
                std::cout << formatted;
              }
            }
            return status;
          }};
}

Command add_rules_kinds(CLI::App& rules) {
  auto json = std::make_shared<bool>(false);
  auto* cmd = rules.add_subcommand("kinds", "list the rule kinds and the clauses each takes");
  cmd->add_flag("--json", *json, "print them as JSON (docs/json.md)");
  cmd->footer(
      "Each kind: its keyword and what it is for; its clauses (* required, 'alone' takes no "
      "value); whether `disable` can turn its rules off, and whether the graph build applies "
      "them (then a pack test's graph shows what they do). The parser and the checker read "
      "the same table (docs/rules.md \"Rules\").\nExit status: 0.");
  return {cmd, [json] {
            if (*json) {
              nlohmann::json kinds = nlohmann::json::array();
              auto words = [](std::span<const std::string_view> w) {
                return std::vector<std::string>(w.begin(), w.end());
              };
              for (const auto& k : dsl::kRuleKinds)
                kinds.push_back({{"keyword", k.keyword},
                                 {"description", k.description},
                                 {"disableable", k.disableable},
                                 {"builds_graph", k.builds_graph},
                                 {"clauses", words(k.clauses)},
                                 {"required", words(k.required)},
                                 {"bare", words(k.bare)}});
              std::cout << json_text(with_schema_version(nlohmann::json{{"kinds", kinds}})) << "\n";
              return kExitOk;
            }
            for (const auto& k : dsl::kRuleKinds) {
              std::vector<std::string> clauses;
              for (std::string_view c : k.clauses) {
                std::string text(c);
                if (std::find(k.required.begin(), k.required.end(), c) != k.required.end())
                  text += '*';
                if (std::find(k.bare.begin(), k.bare.end(), c) != k.bare.end()) text += " (alone)";
                clauses.push_back(std::move(text));
              }
              std::cout << fmt::format("{:<7} {}\n        clauses: {}\n        {}; {}\n", k.keyword,
                                       k.description, fmt::join(clauses, ", "),
                                       k.disableable ? "disable can turn it off" : "not disabled",
                                       k.builds_graph ? "the graph build applies it"
                                                      : "the graph build does not apply it");
            }
            return kExitOk;
          }};
}

}  // namespace cw::cli
