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
#include <string>
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
// opener, else `event`), never after `event`; `loop`: the loop instance the item belongs
// to (the opener + 1 of the outermost open span its `within` held for, so at most
// `event` + 1; 0 for the thread's own event loop); `key`: its `per` value (0 without
// `per`).
struct BatchMatch {
  uint32_t event = 0;
  uint32_t at = 0;
  uint32_t loop = 0;
  int64_t key = 0;
};

// One rule's matches, in event order, kept compact: a trace of 19 M events has millions,
// held from the scan that finds them through the build's peak until the cache saves them.
// `bytes` holds, per match, unsigned LEB128 varints of what is usually small: the distance
// from the previous match's event (minus one: events only increase), then for a split the
// cut place (0: none; else the zigzag of at − event, plus one), for a batch event − at,
// the loop (0: the thread's; else event + 1 − loop, plus one) and the zigzag of the key.
// About 2 bytes a split and 5 a batch item, against 8 and 24 as structs.
struct CutMatches {
  // The list is whole (a build that could not tell every match, because evaluating the
  // rule outside the build's own evaluations failed, leaves it unknown).
  bool known = false;
  bool batch = false;  // a batch rule's, else a split rule's
  uint64_t count = 0;
  std::string bytes;

  // Known lists of these matches, which must be in increasing event order (else
  // std::invalid_argument).
  static CutMatches of(const std::vector<SplitMatch>& list);
  static CutMatches of(const std::vector<BatchMatch>& list);
  // The matches, read back (MatchReader's errors).
  std::vector<SplitMatch> split_list() const;
  std::vector<BatchMatch> batch_list() const;
};

// Appends matches to a list in event order.
class MatchWriter {
 public:
  explicit MatchWriter(CutMatches& out);  // `out` empty
  void add(const SplitMatch& m);
  void add(const BatchMatch& m);

 private:
  void event(uint32_t e);
  CutMatches& out_;
  uint32_t last_ = 0;
};

// Reads a list's matches in order. The bytes may come from a file: a varint that runs
// past the end or over 64 bits, an event past 2^32 − 2, a place that is not one, or bytes
// left after the last match throw std::invalid_argument.
class MatchReader {
 public:
  explicit MatchReader(const CutMatches& list);
  bool done() const { return left_ == 0; }
  SplitMatch split();  // for a split rule's list, while !done()
  BatchMatch batch();  // for a batch rule's

 private:
  uint64_t varint();
  uint32_t next_event();
  const unsigned char* p_;
  const unsigned char* end_;
  uint64_t left_;
  uint64_t last_ = 0;
  bool first_ = true;
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
