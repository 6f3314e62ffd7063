// causeway: find why a Linux application hung or was slow.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <optional>
#include <string_view>
#include <vector>

#include "base/huge_pages.h"
#include "base/terminal_text.h"
#include "cli/command_words.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cw_commit.h"
#include "cw_version.h"
#include "engine/session/pack_paths.h"
#include "engine/session/session_error.h"
#include "instrument/hook/preload_path.h"
#include "trace/binary_format.h"

namespace {

// `causeway --version`: the version, the commit, and where this binary finds its data.
std::string version_text() {
  std::string preload = cw::hook::find_preload_library();
  return fmt::format(
      "causeway {} (commit {})\nstandard packs: {}\npreload library: {}", CW_VERSION, CW_GIT_COMMIT,
      cw::session::stdlib_dir(),
      preload.empty() ? std::string("not found (functions are probed with uprobes)") : preload);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace cw::cli;
  // The commands that build a graph fill hundreds of MB: on transparent huge pages where
  // the machine gives them on request (base/huge_pages.h). Not the recorder, whose
  // programs and children see its environment.
  if (argc > 1) {
    const std::string_view command = argv[1];
    if (command == "graph" || command == "debug" || command == "hangs" || command == "export" ||
        command == "latency" || command == "ui")
      cw::restart_with_huge_pages(argv);
  }
  CLI::App app{
      "causeway: find why a Linux application hung or was slow.\n"
      "Builds an event graph from a trace with rule packs and walks it back to the cause.",
      "causeway"};
  app.set_version_flag("--version", version_text);

  // Sub-commands copy their parent's footer when they are made (CLI11): each sets its own,
  // and the top-level footer is set once they are all made.
  std::vector<Command> commands;
  commands.push_back(add_graph(app));
  commands.push_back(add_debug(app));
  commands.push_back(add_ui(app));
  commands.push_back(add_hangs(app));
  commands.push_back(add_export(app));
  commands.push_back(add_latency(app));
  commands.push_back(add_convert(app));
  commands.push_back(add_eval(app));
  for (auto& c : add_record(app)) commands.push_back(std::move(c));
  auto* rules = app.add_subcommand("rules", "check, test and format rule packs");
  rules->require_subcommand(1);
  commands.push_back(add_rules_check(*rules));
  commands.push_back(add_rules_test(*rules));
  commands.push_back(add_rules_fmt(*rules));
  commands.push_back(add_rules_kinds(*rules));
  commands.push_back(add_rules_list(*rules));
  commands.push_back(add_rules_which(*rules));
  commands.push_back(add_rules_new(*rules));
  commands.push_back(add_rules_install(*rules));
  auto* flags = app.add_subcommand("flags", "find the data flags a program's threads wait on");
  flags->require_subcommand(1);
  commands.push_back(add_flags_suggest(*flags));
  auto* cache = app.add_subcommand("cache", "show and remove what the derived cache keeps");
  cache->require_subcommand(1);
  for (auto& c : add_cache(*cache)) commands.push_back(std::move(c));
  auto* fleet = app.add_subcommand(
      "fleet", "diagnose many traces into a store of hangs with signatures, and ask it");
  fleet->require_subcommand(1);
  for (auto& c : add_fleet(*fleet)) commands.push_back(std::move(c));
  app.require_subcommand(1);
  app.footer(
      "Exit status: 0 done, 1 the input was wrong (the message says where), 2 the environment "
      "cannot do it (the message says what is missing).\nRule packs: the standard packs "
      "(share/causeway/rules beside the binary, or $CAUSEWAY_STDLIB) are loaded unless "
      "--no-stdlib; CAUSEWAY_RULES_PATH (colon-separated) adds more; a command's --rules adds "
      "more.\nSee man causeway, man causeway-rules, and docs/ for the JSON output.");

  {
    // What the parser says quotes the arguments it could not take, which may come from
    // anywhere (a file name in a shared folder): they reach the terminal with their
    // control bytes shown as \xNN, like everything a command prints.
    cw::TerminalGuard out_guard(std::cout), err_guard(std::cerr);
    // An unknown command is named (with the close one), and a bare command group shows its
    // usage, before CLI11 would only say that a sub-command is required.
    CommandWords words = read_command_words(app, argc, argv);
    if (!words.unknown.empty()) {
      std::cerr << unknown_command_message(words);
      return kExitBadInput;
    }
    if (words.missing) {
      // help(PREV) names the command after PREV: "causeway rules", not "rules".
      const size_t last = words.path.rfind(' ');
      std::cerr << words.group->help(last == std::string::npos ? "" : words.path.substr(0, last));
      return kExitBadInput;
    }

    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      if (e.get_exit_code() == 0) {  // --help, --help-all, --version
        app.exit(e);
        return kExitOk;
      }
      // As every other error: prefixed with the command it is about, then where to look.
      std::string command = "causeway";
      for (const CLI::App* sub = &app;;) {
        const std::vector<CLI::App*> parsed = sub->get_subcommands();
        if (parsed.empty()) break;
        sub = parsed.front();
        command += " " + sub->get_name();
      }
      std::cerr << command << ": " << e.what() << "\n"
                << "run '" << command << " --help' for the options\n";
      return kExitBadInput;
    }
  }
  for (auto& c : commands)
    if (c.app->parsed()) {
      // Names, paths and markers from a trace reach the terminal in reports, questions and
      // messages: everything a command prints goes out with control bytes and bytes that
      // are not UTF-8 shown as \xNN: a recorded program chooses those bytes, and must not
      // command the terminal. Not `rules fmt`, whose output is the pack itself.
      std::optional<cw::TerminalGuard> out_guard, err_guard;
      if (c.app->get_name() != "fmt") {
        out_guard.emplace(std::cout);
        err_guard.emplace(std::cerr);
      }
      try {
        return c.run();
      } catch (const cw::TraceWriteError& e) {
        // A full disk or an I/O error: the environment's failure, not the input's.
        std::cerr << "causeway: " << e.what() << "\n";
        return kExitEnvironment;
      } catch (const cw::session::SessionError& e) {
        // Whole lines, or nothing when already said (a pack's errors).
        const std::string text = e.what();
        std::cerr << text << (text.empty() || text.back() == '\n' ? "" : "\n");
        return e.kind() == cw::session::SessionError::Kind::Environment ? kExitEnvironment
                                                                        : kExitBadInput;
      } catch (const std::exception& e) {
        std::cerr << "causeway: " << e.what() << "\n";
        return kExitBadInput;
      }
    }
  return kExitBadInput;
}
