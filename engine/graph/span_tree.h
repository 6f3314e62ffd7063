// Open spans (syscall, call, irq, task …) of every thread, as one persistent tree.
//
// A thread's span stack at any event is a single node index: pushing makes a child of the
// current node, popping moves back to an ancestor. Remembering an event's span context
// therefore costs one integer, and only events that rules look at later keep one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trace/schema.h"

namespace cw::engine {

using SpanId = uint16_t;
inline constexpr SpanId kNoSpan = 0xffff;

struct SpanNode {
  uint32_t opener = 0xffffffffu;  // event index of the opening event
  uint32_t parent = 0;
  SpanId span = kNoSpan;
  uint16_t depth = 0;       // number of open spans including this one
  uint64_t batch_mask = 0;  // batch rules whose loop is open here or in an ancestor
};

class SpanTree {
 public:
  static constexpr uint32_t kRoot = 0;  // no span open

  explicit SpanTree(const Schema& schema);

  // The span a kind opens or closes, or kNoSpan.
  SpanId opens(KindId kind) const { return kind < opens_.size() ? opens_[kind] : kNoSpan; }
  SpanId closes(KindId kind) const { return kind < closes_.size() ? closes_[kind] : kNoSpan; }
  SpanId span_id(std::string_view name) const;  // kNoSpan if no kind opens it
  const std::string& span_name(SpanId id) const { return names_[id]; }

  // Opens a span; returns `parent` unchanged when kMaxDepth spans are already open (a
  // trace that lost its close events must not make every lookup walk forever).
  static constexpr uint16_t kMaxDepth = 1024;
  uint32_t push(uint32_t parent, uint32_t opener_event, SpanId span);
  // Marks the newest node as the loop of batch rules `bits` (inherited by its children).
  void add_batch_bits(uint32_t newest, uint64_t bits) { nodes_[newest].batch_mask |= bits; }
  // The node after closing the innermost open `span` (and any spans opened inside it);
  // `node` itself when no such span is open.
  uint32_t pop(uint32_t node, SpanId span) const;
  // The innermost open node of `span` at `node`, or kRoot.
  uint32_t innermost(uint32_t node, SpanId span) const;
  const SpanNode& at(uint32_t node) const { return nodes_[node]; }
  // Room for `opens` more pushes: a tree sized up front is never copied while it grows.
  void reserve(uint64_t opens) { nodes_.reserve(nodes_.size() + opens); }
  // Pushes that fit before the tree would move.
  uint64_t room() const { return nodes_.capacity() - nodes_.size(); }
  // Drops every node but the root, once no event context refers to them any more.
  void release() {
    nodes_.resize(1);
    nodes_.shrink_to_fit();
  }
  size_t size() const { return nodes_.size(); }

 private:
  std::vector<std::string> names_;
  std::vector<SpanId> opens_, closes_;
  std::vector<SpanNode> nodes_;
};

}  // namespace cw::engine
