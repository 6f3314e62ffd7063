// Pairs the events of one link rule into candidates (docs/rules.md `link`): by join key,
// with `pick next`, `pick latest` or `pick overlap`, and `within`. The link's `where` is
// applied by the builder afterwards, since it may look at spans and stacks.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "engine/eval.h"
#include "engine/flat_map.h"
#include "rules/ruleset.h"
#include "tracer/trace.h"

namespace cw::engine {

struct Candidate {
  EventCtx from, to;
  uint32_t link = 0;
};

class LinkPairer {
 public:
  static constexpr size_t kMaxJoin = 4;

  // Throws DiagnosticError at the rule when it joins on more than kMaxJoin fields.
  LinkPairer(const Trace& trace, const rules::LinkRule& rule, uint32_t link_index);

  // Feeds an event of the link's `to` and/or `from` kind, in trace order. `pid` is its
  // thread's process. Online picks append finished candidates to `out`.
  void on_event(const EventCtx& ctx, Pid pid, std::vector<Candidate>& out);
  // Emits what can only be paired once every event is seen (`pick overlap`).
  void finish(std::vector<Candidate>& out);

 private:
  struct Key {
    std::array<uint64_t, kMaxJoin> v{};
    // Spelled out: the defaulted comparison calls memcmp, a visible cost per event.
    bool operator==(const Key& o) const {
      return v[0] == o.v[0] && v[1] == o.v[1] && v[2] == o.v[2] && v[3] == o.v[3];
    }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  struct RangeEnd {
    uint32_t key;
    EventCtx ctx;
    uint64_t begin, end;
  };

  Key key_of(const Event& e, Pid pid, bool from_side) const;
  bool close_enough(uint32_t a, uint32_t b) const;
  uint32_t key_id(const Key& k);
  static void sort_by_key_offset(std::vector<RangeEnd>& ranges, size_t keys);

  const Trace& trace_;
  const rules::LinkRule& rule_;
  uint32_t index_;
  FlatMap<Key, std::vector<EventCtx>, KeyHash> pending_;  // pick next
  FlatMap<Key, EventCtx, KeyHash> latest_;                // pick latest
  FlatMap<Key, uint32_t, KeyHash> key_ids_;               // pick overlap: key -> id + 1
  std::vector<RangeEnd> range_from_, range_to_;
};

}  // namespace cw::engine
