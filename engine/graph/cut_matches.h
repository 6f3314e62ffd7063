// Where each cut rule (a split at an event, a batch) matched a trace, with what its cut
// needs from the thread's spans there: kept so that a rebuild after a rule edit evaluates
// only the rules it has not seen, and replays every thread's cuts from the matches instead
// of scanning every event with every rule (docs/cache.md, "A rule added").
//
// A cut rule's `where` at an event reads the event and its thread's open spans, and which
// events open and close spans is the schema's: so its matches are the trace's and the
// rule's alone. What the rules do with them together (a cut hidden by an earlier one at
// the same event, a thread in its event loop from its first `loop` cut on, consecutive
// items of one descriptor) is the replay's.
#pragma once

#include <cstdint>
#include <vector>

namespace cw::engine {

// A split rule's `where` held at `event`. `at`: where its cut goes, from the rule's cut
// place alone: `event`; the opener of the innermost open `cut SPAN` (none: kNoEvent); for
// `cut after`, the thread's next event (none: kNoEvent).
struct SplitMatch {
  uint32_t event = 0;
  uint32_t at = 0;
};

// A batch rule's item matched at `event` (for `within loop`, whether or not the thread was
// in its loop yet: the replay decides). `at`: where the item starts (its `cut SPAN`'s
// opener, else `event`); `loop`: the loop instance the item belongs to (the opener + 1 of
// the outermost open span its `within` held for; 0 for the thread's own event loop);
// `key`: its `per` value (0 without `per`).
struct BatchMatch {
  uint32_t event = 0;
  uint32_t at = 0;
  uint32_t loop = 0;
  uint32_t unused = 0;  // kept as is in the cache: no padding left unwritten
  int64_t key = 0;
};

// One rule's matches, in event order. `known`: the list is whole (a build that could not
// tell every match, because evaluating the rule outside the build's own evaluations
// failed, leaves it unknown).
struct CutMatches {
  bool known = false;
  std::vector<SplitMatch> splits;   // a split rule's
  std::vector<BatchMatch> batches;  // a batch rule's
};

// Per rule of a rule set (indexed like RuleSet::splits and RuleSet::batches): the matches
// a build found, or those a rebuild is given (null: not known).
struct CutMatchSet {
  std::vector<CutMatches> splits, batches;
};
struct KnownCutMatches {
  std::vector<const CutMatches*> splits, batches;
};

}  // namespace cw::engine
