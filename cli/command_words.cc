#include "cli/command_words.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace cw::cli {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::vector<std::string> close_names(const std::string& word,
                                     const std::vector<std::string>& known) {
  // A third of the word's letters may be wrong (at least one): "grpah", "debgu", "rule".
  const size_t limit = std::max<size_t>(1, word.size() / 3);
  std::vector<std::pair<size_t, std::string>> hits;
  for (const std::string& name : known) {
    size_t dist = edit_distance(word, name);
    bool prefix = word.size() >= 2 && name.compare(0, word.size(), word) == 0;
    if (dist <= limit || prefix) hits.emplace_back(prefix ? 0 : dist, name);
  }
  std::stable_sort(hits.begin(), hits.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (auto& h : hits) out.push_back(std::move(h.second));
  return out;
}

namespace {

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  return names;
}

}  // namespace

CommandWords read_command_words(const CLI::App& app, int argc, const char* const* argv) {
  CommandWords out;
  out.group = &app;
  out.path = app.get_name();
  for (int i = 1;; ++i) {
    if (i >= argc) {
      out.missing = true;
      return out;
    }
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-') return out;  // --help, --version: CLI11's
    const CLI::App* sub = nullptr;
    for (const CLI::App* s : out.group->get_subcommands({}))
      if (s->check_name(word)) sub = s;
    if (!sub) {
      out.unknown = word;
      return out;
    }
    // A command that runs by itself (`record` runs CMD) takes the rest of the line.
    if (sub->get_require_subcommand_min() == 0) return out;
    out.group = sub;
    out.path += " " + word;
  }
}

std::string unknown_command_message(const CommandWords& words) {
  const std::vector<std::string> known = command_names(*words.group);
  const std::vector<std::string> close = close_names(words.unknown, known);
  std::string msg = fmt::format("{}: unknown command '{}'", words.path, words.unknown);
  if (close.size() == 1)
    msg += fmt::format("; did you mean '{}'?", close[0]);
  else if (!close.empty())
    msg += fmt::format("; did you mean one of: {}?", fmt::join(close, ", "));
  else
    msg += fmt::format(" (the commands: {})", fmt::join(known, ", "));
  return msg + fmt::format("\nrun '{} --help' for what each does\n", words.path);
}

}  // namespace cw::cli
