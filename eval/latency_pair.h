// A base/slow pair of the latency evaluation (tests/latency-pairs/README.md), as IntroPerf's
// Table 2 measures one: a real program run on a normal input and on one that makes it slow,
// with the function a fix would touch as ground truth, scored by where the differential
// ranking of `causeway latency --base --buggy` puts that function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/latency/rank.h"
#include "trace/trace.h"

namespace cw::eval {

struct LatencyPair {
  std::string name;                 // the folder's name, "01-bzip2-repetitive"
  std::string dir;                  // the folder; its run.sh takes prepare, base or slow
  std::string kind;                 // "internal" (an input makes one function slow) or "external"
  std::string program;              // the process name the analysis selects (`latency --comm`)
  std::string description;          // what the two runs do
  std::string why;                  // why the truth is the truth, from what the program does
  std::vector<std::string> truth;   // the functions a fix would touch (any of them counts)
  std::string truth_binary;         // the file they are in, for the table
  std::vector<std::string> record;  // more `record` options than the suite's
};

// Reads DIR/pair.json; errors (a ScenarioError) name the file and the key.
LatencyPair load_latency_pair(const std::string& dir);

// The pair folders under `suite` (those with a pair.json), sorted by name.
std::vector<std::string> latency_pair_dirs(const std::string& suite);

// IntroPerf's two distances. p_min: the rank (1 = first) of the costliest context that
// contains a truth function; f_min: in that context, how many frames that function is from
// the context's costliest one (0: it is the costliest). Both empty when no ranked context
// has a truth function.
struct PairScore {
  std::optional<size_t> p_min;
  std::optional<uint32_t> f_min;
  std::string function;  // the truth function found, as the ranking names it
};

// Contexts only in the base run (Presence::Vanished) are not candidates: a fix is looked
// for where the slow run spent more. A frame names a truth function when its name is the
// function's, or the function's followed by a space (a source location, a note).
PairScore score_pair(const std::vector<latency::RankedPath>& ranking,
                     const std::vector<std::string>& truth);

// The size of what was ranked, as Table 2's columns: |I| program binaries and libraries
// mapped executable by the selected processes, |P| distinct contexts, |F| functions, and l
// the mean context length in frames.
struct ContextShape {
  size_t binaries = 0;
  size_t contexts = 0;
  size_t functions = 0;
  double mean_length = 0;
};
ContextShape context_shape(const Trace& trace, const latency::Cct& cct, const std::string& comm);

}  // namespace cw::eval
