// The overhead bench's alternation (bench/overhead/alternate.sh). On a VM the machine's
// speed drifts by more than the recorder costs within a minute, so runs a minute apart
// cannot resolve a few percent. With $CAUSEWAY_BENCH_ALTERNATE set, the always-on recorder
// attaches and detaches its hot programs (those of every context switch, wake-up and socket
// transfer) every few seconds, and the bench compares each stretch with its neighbours.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cw {

// Which hot programs stay attached in one stretch.
struct BenchState {
  std::string name;  // all, scheduler, sockets or none
  bool scheduler = false;
  bool sockets = false;
};

struct BenchAlternation {
  uint64_t period_ns = 0;  // each stretch's length
  std::vector<BenchState> states;
};

// Parses "SECONDS[:STATE,STATE...]" (STATE: all, scheduler, sockets, none; default
// all,none; SECONDS from 0.5 to 600). nullopt with `why` saying what is wrong.
std::optional<BenchAlternation> parse_bench_alternation(std::string_view text, std::string* why);

}  // namespace cw
