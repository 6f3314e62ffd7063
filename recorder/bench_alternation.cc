#include "recorder/bench_alternation.h"

#include <cmath>
#include <cstdlib>

namespace cw {

std::optional<BenchAlternation> parse_bench_alternation(std::string_view text, std::string* why) {
  const size_t colon = text.find(':');
  const std::string seconds_text(text.substr(0, colon));
  char* end = nullptr;
  const double seconds = seconds_text.empty() ? NAN : std::strtod(seconds_text.c_str(), &end);
  if (std::isnan(seconds) || end != seconds_text.c_str() + seconds_text.size() || seconds < 0.5 ||
      seconds > 600) {
    *why = "the alternation's period '" + seconds_text +
           "' is not a number of seconds from 0.5 to 600 (SECONDS[:STATE,...])";
    return std::nullopt;
  }
  BenchAlternation out;
  out.period_ns = static_cast<uint64_t>(seconds * 1e9);
  std::string_view list = colon == std::string_view::npos ? "all,none" : text.substr(colon + 1);
  while (true) {
    const size_t comma = list.find(',');
    const std::string name(list.substr(0, comma));
    BenchState state{name};
    if (name == "all")
      state.scheduler = state.sockets = true;
    else if (name == "scheduler")
      state.scheduler = true;
    else if (name == "sockets")
      state.sockets = true;
    else if (name != "none") {
      *why = "unknown state '" + name + "' in the alternation (all, scheduler, sockets, none)";
      return std::nullopt;
    }
    out.states.push_back(state);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  if (out.states.size() < 2) {
    *why = "the alternation needs two states or more";
    return std::nullopt;
  }
  return out;
}

}  // namespace cw
