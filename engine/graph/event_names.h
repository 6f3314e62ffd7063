// Every event of a trace listed under its kind and its name, so that a rule that selects
// events by kind and name (`split … at syscall_enter where name == "recvmsg"`) is
// evaluated at the events it can match rather than at every event of the trace. The
// derived cache keeps the lists (engine/cache: made by the run that builds a trace's
// first graph, read by the rebuilds after a rule is added).
//
// An event's name is its kind's first field when that field is a string: the call a
// syscall_enter or syscall_exit is of, the function of a call_enter, a marker's text, the
// state a switch_out left in. A kind whose first field is not a string has one list.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rules/ruleset.h"
#include "trace/trace.h"

namespace cw::engine {

// The index of the field that names `kind`'s events, or -1 (its first field when a string).
int naming_field(const Schema& schema, KindId kind);

// What a rule's `where` says of the name of the event it is evaluated at: one of `names`
// (`by_name`), or nothing (every event of its kind may match). Read from the name tests
// `name == "X"`, `"X" == name` and `name in ["X", "Y"]` on the rule's own event's naming
// field: a conjunction is bounded by the first conjunct that is (none before it may fail),
// a disjunction by the union of its disjuncts' names when each has some. The compiled
// evaluator answers false from the name alone outside them (expr_eval.h, the guard).
struct NameSelector {
  bool by_name = false;
  std::vector<std::string> names;
  // The test is the whole `where`: every event of the kind with one of the names matches.
  bool whole = false;
};
NameSelector name_selector(const rules::CompiledExpr& where, KindId kind, const Schema& schema);

// The lists: one per (kind, name) a trace's events have, each its events in increasing
// order as LEB128 varints of the distance from the previous one (the first from -1) minus
// one. The bytes are the index's own or a mapped cache entry's: `keep` keeps them either way.
class EventNames {
 public:
  struct List {
    KindId kind = kNoKind;
    bool named = false;  // the kind has a naming field; `name` is its value
    std::string name;
    uint64_t count = 0;  // events in the list
    uint64_t at = 0;     // its bytes: bytes()[at, at + size)
    uint64_t size = 0;
  };

  EventNames() = default;
  // Lists read back (the cache's): the counts must add up to `events`, each list's bytes lie
  // inside `bytes`, and no (kind, name) twice (else std::invalid_argument). The lists'
  // contents are checked when read (events()).
  EventNames(std::vector<List> lists, std::string_view bytes, std::shared_ptr<const void> keep,
             uint64_t events);

  // Lists every event of `trace` (one pass).
  static EventNames of(const Trace& trace);

  // The events of `kind` whose name is one of the selector's (`by_name`), or every event
  // of the kind: each list's in increasing order, the lists one after the other (by name).
  // Throws std::invalid_argument when a list's bytes do not decode to increasing events
  // below the trace's count.
  std::vector<uint32_t> events(KindId kind, const NameSelector& selector) const;

  const std::vector<List>& lists() const { return lists_; }
  std::string_view bytes() const { return bytes_; }
  uint64_t total() const { return events_; }

 private:
  void decode(const List& list, std::vector<uint32_t>& out) const;

  std::vector<List> lists_;
  std::string_view bytes_;
  std::shared_ptr<const void> keep_;
  uint64_t events_ = 0;
};

}  // namespace cw::engine
