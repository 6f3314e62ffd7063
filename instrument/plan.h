// What a recording must instrument, read from the rule packs: the data flags they declare
// and the functions their boundary and batch rules name. Packs alone decide what is
// probed; this file only reads them (the recorder resolves and attaches, cli/).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rules/ruleset.h"

namespace cw::instrument {

struct PlannedFlag {
  std::string id;      // qualified rule id: the `flag` field of the events recorded
  std::string symbol;  // empty when the rule gives an address
  std::string binary;  // path or file name; empty: any mapped file defining `symbol`
  uint64_t address = 0;
  uint8_t size = 4;
  bool reads = true;   // `access` read or both
  bool writes = true;  // `access` write or both
  std::string where;   // "pack.cw:12:3", for messages
};

struct PlannedFunction {
  std::string name;
  std::vector<std::string> rules;  // qualified ids of the rules naming it
  // Named only by packs for one runtime that nobody asked for (they apply themselves to
  // traces of it): hooked where a process has it, and not said where none does.
  bool quiet = false;
};

struct InstrumentationPlan {
  std::vector<PlannedFlag> flags;
  std::vector<PlannedFunction> functions;  // sorted by name, each once
  // Rules about function calls the recorder cannot turn into probes (a pattern match,
  // no function named): "pack.cw:4:9: rule p/r: ...".
  std::vector<std::string> warnings;
  bool empty() const { return flags.empty() && functions.empty(); }
};

// Functions are named by `fn == "NAME"` and `fn in [...]` (or a named list) on a
// call_enter/call_exit event or on the open `call` span, in any rule's expressions.
InstrumentationPlan plan_instrumentation(const rules::RuleSet& rules);

}  // namespace cw::instrument
