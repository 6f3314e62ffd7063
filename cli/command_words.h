// The words of a command line that name commands: an unknown one is named, with the close
// known one suggested ("did you mean 'graph'?"), before CLI11 would say only that a
// subcommand is required.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace cw::cli {

// The edit distance of `a` and `b` with adjacent transpositions ("grpah" is 1 from "graph").
size_t edit_distance(const std::string& a, const std::string& b);

// The known names close to `word` (a typo or a prefix), closest first.
std::vector<std::string> close_names(const std::string& word,
                                     const std::vector<std::string>& known);

struct CommandWords {
  const CLI::App* group = nullptr;  // the deepest command reached that needs a sub-command
  std::string path;                 // its words: "causeway", "causeway rules"
  std::string unknown;              // the first word that names no command, or ""
  bool missing = false;             // the line ends where a sub-command is required
};

// Walks argv's leading words through `app`'s commands.
CommandWords read_command_words(const CLI::App& app, int argc, const char* const* argv);

// The message for an unknown word: "causeway: unknown command 'grpah'; did you mean 'graph'?".
std::string unknown_command_message(const CommandWords& words);

}  // namespace cw::cli
