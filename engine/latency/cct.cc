#include "engine/latency/cct.h"

#include <algorithm>

namespace cw::latency {

std::string_view mode_name(Mode m) {
  return m == Mode::Conservative ? "conservative" : "aggressive";
}

Cct::Cct() {
  nodes_.emplace_back();  // the root: no function of its own
  intern("");
}

FunctionId Cct::intern(std::string_view name) {
  auto [it, added] = function_ids_.try_emplace(std::string(name), FunctionId(functions_.size()));
  if (added) functions_.emplace_back(name);
  return it->second;
}

NodeId Cct::child(NodeId parent, FunctionId f) {
  const uint64_t key = uint64_t(parent) << 32 | f;
  if (auto it = child_of_.find(key); it != child_of_.end()) return it->second;
  const NodeId id = NodeId(nodes_.size());
  CctNode n;
  n.function = f;
  n.parent = parent;
  n.depth = nodes_[parent].depth + 1;
  nodes_.push_back(std::move(n));
  nodes_[parent].children.push_back(id);
  child_of_.emplace(key, id);
  return id;
}

PathId Cct::path_id(std::span<const FunctionId> outer_first, std::vector<NodeId>* nodes) {
  if (nodes) nodes->clear();
  NodeId v = kRoot;
  for (FunctionId f : outer_first) {
    v = child(v, f);
    if (nodes) nodes->push_back(v);
  }
  if (nodes_[v].path == kNoPath) {
    nodes_[v].path = PathId(path_ends_.size());
    path_ends_.push_back(v);
  }
  return nodes_[v].path;
}

std::vector<NodeId> Cct::nodes_to(NodeId leaf) const {
  std::vector<NodeId> out;
  for (NodeId v = leaf; v != kRoot; v = nodes_[v].parent) out.push_back(v);
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<std::string> Cct::names_to(NodeId n) const {
  std::vector<std::string> out;
  for (NodeId v : nodes_to(n)) out.push_back(functions_[nodes_[v].function]);
  return out;
}

void Cct::normalize() {
  // Children always have larger ids than their parent: one pass from the leaves up.
  for (auto& n : nodes_) n.own = n.total;
  for (NodeId v = NodeId(nodes_.size()); v-- > 1;) {
    const CctNode& n = nodes_[v];
    CctNode& p = nodes_[n.parent];
    // A callee's instances lie inside its caller's (infer.cc), so this never goes below
    // zero; clamp anyway so a hand-made tree cannot wrap around.
    p.own.conservative -= std::min(p.own.conservative, n.total.conservative);
    p.own.aggressive -= std::min(p.own.aggressive, n.total.aggressive);
  }
}

}  // namespace cw::latency
