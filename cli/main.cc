// causeway: find why a Linux application hung or was slow.
#include <CLI/CLI.hpp>
#include <iostream>
#include <vector>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cw_version.h"

int main(int argc, char** argv) {
  using namespace cw::cli;
  CLI::App app{
      "causeway: find why a Linux application hung or was slow.\n"
      "Builds an event graph from a trace with rule packs and walks it back to the cause.",
      "causeway"};
  app.set_version_flag("--version", CW_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Exit status: 0 done, 1 the input was wrong (the message says where), 2 the environment "
      "cannot do it.\nRule packs: stdlib-rules are loaded unless --no-stdlib; --rules adds "
      "packs; CAUSEWAY_RULES_PATH (colon-separated) adds more.\nSee docs/ for the rule "
      "language, the trace formats and the JSON output.");

  std::vector<Command> commands;
  commands.push_back(add_graph(app));
  commands.push_back(add_debug(app));
  commands.push_back(add_hangs(app));
  commands.push_back(add_convert(app));
  commands.push_back(add_eval(app));
  for (auto& c : add_record(app)) commands.push_back(std::move(c));
  auto* rules = app.add_subcommand("rules", "check, test and format rule packs");
  rules->require_subcommand(1);
  commands.push_back(add_rules_check(*rules));
  commands.push_back(add_rules_test(*rules));
  commands.push_back(add_rules_fmt(*rules));
  auto* flags = app.add_subcommand("flags", "find the data flags a program's threads wait on");
  flags->require_subcommand(1);
  commands.push_back(add_flags_suggest(*flags));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitBadInput;
  }
  for (auto& c : commands)
    if (c.app->parsed()) {
      try {
        return c.run();
      } catch (const std::exception& e) {
        std::cerr << "causeway: " << e.what() << "\n";
        return kExitBadInput;
      }
    }
  return kExitBadInput;
}
