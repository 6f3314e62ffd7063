#include "engine/graph/span_tree.h"

#include <stdexcept>

namespace cw::engine {

SpanTree::SpanTree(const Schema& schema)
    : opens_(schema.size(), kNoSpan), closes_(schema.size(), kNoSpan), nodes_(1) {
  for (size_t k = 0; k < schema.size(); ++k) {
    const KindDef& def = schema.kind(static_cast<KindId>(k));
    if (def.span_role == SpanRole::None) continue;
    SpanId id = span_id(def.span);
    if (id == kNoSpan) {
      id = static_cast<SpanId>(names_.size());
      names_.push_back(def.span);
    }
    (def.span_role == SpanRole::Open ? opens_ : closes_)[k] = id;
  }
}

SpanId SpanTree::span_id(std::string_view name) const {
  for (size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return static_cast<SpanId>(i);
  return kNoSpan;
}

uint32_t SpanTree::push(uint32_t parent, uint32_t opener_event, SpanId span) {
  if (nodes_[parent].depth >= kMaxDepth) return parent;
  if (nodes_.size() >= 0xffffffffu) throw std::length_error("too many open spans");
  nodes_.push_back({opener_event, parent, span, static_cast<uint16_t>(nodes_[parent].depth + 1),
                    nodes_[parent].batch_mask});
  return static_cast<uint32_t>(nodes_.size() - 1);
}

uint32_t SpanTree::pop(uint32_t node, SpanId span) const {
  for (uint32_t n = node; n != kRoot; n = nodes_[n].parent)
    if (nodes_[n].span == span) return nodes_[n].parent;
  return node;
}

uint32_t SpanTree::innermost(uint32_t node, SpanId span) const {
  for (uint32_t n = node; n != kRoot; n = nodes_[n].parent)
    if (nodes_[n].span == span) return n;
  return kRoot;
}

}  // namespace cw::engine
