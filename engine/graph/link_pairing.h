// Pairs the events of one link rule into candidates (docs/rules.md `link`): by join key,
// with `pick next`, `pick latest` or `pick overlap`, and `within`. The link's `where` is
// applied by the builder afterwards, since it may look at spans and stacks.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "engine/graph/expr_eval.h"
#include "engine/graph/flat_map.h"
#include "engine/graph/span_tree.h"
#include "rules/ruleset.h"
#include "trace/trace.h"

namespace cw::engine {

struct Candidate {
  EventCtx from, to;
  uint32_t link = 0;
};

class LinkPairer {
 public:
  static constexpr size_t kMaxJoin = 4;

  // Throws DiagnosticError at the rule when it joins on more than kMaxJoin fields.
  // `spans` resolves joins on a span's field (`to.syscall.resource`). From
  // `parallel_from` ranges on, finish() sorts the two sides on two threads.
  LinkPairer(const Trace& trace, const SpanTree& spans, const rules::LinkRule& rule,
             uint32_t link_index, uint64_t parallel_from = uint64_t{1} << 16);

  // Feeds an event of the link's `to` and/or `from` kind, in trace order. `pid` is its
  // thread's process; `as_from`/`as_to`: whether it passed the link's from_where/to_where.
  // Online picks append finished candidates to `out`.
  void on_event(const EventCtx& ctx, Pid pid, std::vector<Candidate>& out, bool as_from = true,
                bool as_to = true);
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
  struct WordHash {
    size_t operator()(uint64_t k) const;
  };
  // The pairing tables of one key type. A single-field join (every stdlib link) keys them
  // by the field's value itself: a probe hashes and compares one word, and a slot of a
  // large table (one per task id) is a quarter of the size.
  template <class K, class H>
  struct Tables {
    FlatMap<K, std::vector<EventCtx>, H> pending;  // pick next
    FlatMap<K, EventCtx, H> latest;                // pick latest
    FlatMap<K, uint32_t, H> key_ids;               // pick overlap: key -> id + 1
    uint32_t key_id(const K& k);
  };
  struct RangeEnd {
    uint32_t key;
    EventCtx ctx;
    uint64_t begin, end;
  };

  Key key_of(const EventCtx& ctx, Pid pid, bool from_side) const;
  uint64_t span_field(const EventCtx& ctx, const rules::FieldRef& ref) const;
  bool close_enough(uint32_t a, uint32_t b) const;
  template <class K, class H>
  void pair(Tables<K, H>& tables, const EventCtx& ctx, Pid pid, std::vector<Candidate>& out,
            bool as_from, bool as_to);
  static void sort_by_key_offset(std::vector<RangeEnd>& ranges, size_t keys);

  const Trace& trace_;
  const SpanTree& spans_;
  const rules::LinkRule& rule_;
  uint32_t index_;
  uint64_t parallel_from_;
  Tables<Key, KeyHash> wide_;
  Tables<uint64_t, WordHash> narrow_;
  std::vector<RangeEnd> range_from_, range_to_;
};

}  // namespace cw::engine
