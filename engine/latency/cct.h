// The calling-context tree with path ids (IntroPerf, §3.2, Algorithm 1), annotated with
// inferred function latencies: the performance-annotated CCT (PA-CCT).
//
// A node is a function in one calling context: the same function called from two places
// is two nodes. A path id names a whole context (root to a node), so a stack seen again
// gets the id it had the first time.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cw::latency {

using FunctionId = uint32_t;
using NodeId = uint32_t;
using PathId = uint32_t;

inline constexpr NodeId kRoot = 0;
inline constexpr FunctionId kNoFunction = UINT32_MAX;
inline constexpr PathId kNoPath = UINT32_MAX;

// Latencies are inferred two ways (IntroPerf, §3.3): a function instance ends at the last
// stack that still shows its context (conservative), or at the first that does not
// (aggressive). Both are kept everywhere.
enum class Mode : uint8_t { Conservative, Aggressive };
std::string_view mode_name(Mode m);

// Per-mode sums, in nanoseconds.
struct Latency {
  uint64_t conservative = 0;
  uint64_t aggressive = 0;
  uint64_t get(Mode m) const { return m == Mode::Conservative ? conservative : aggressive; }
};

struct CctNode {
  FunctionId function = 0;
  NodeId parent = kRoot;
  uint32_t depth = 0;  // the root is 0, a stack's outermost frame 1
  std::vector<NodeId> children;
  PathId path = kNoPath;  // set when some stack ended at this node

  // The PA-CCT annotations (infer.cc fills them, normalize() derives `own`).
  uint64_t instances = 0;  // function instances inferred in this context
  Latency total;           // summed over the instances, callees included
  Latency own;             // total minus the callees' totals (top-down normalisation)
};

class Cct {
 public:
  Cct();

  FunctionId intern(std::string_view name);
  const std::string& function_name(FunctionId f) const { return functions_[f]; }
  size_t function_count() const { return functions_.size(); }

  // The child of `parent` for function `f`, made on first use (Algorithm 1, GetNode).
  NodeId child(NodeId parent, FunctionId f);
  // The node of a whole stack, outermost frame first; `nodes` (when given) receives the
  // node of each frame. Marks the node as the end of a path (Algorithm 1, PathToID).
  PathId path_id(std::span<const FunctionId> outer_first, std::vector<NodeId>* nodes = nullptr);
  // The nodes from the outermost frame down to `leaf` (Algorithm 1, IDToPath).
  std::vector<NodeId> nodes_to(NodeId leaf) const;
  NodeId path_end(PathId p) const { return path_ends_[p]; }
  size_t path_count() const { return path_ends_.size(); }

  const CctNode& node(NodeId n) const { return nodes_[n]; }
  CctNode& node(NodeId n) { return nodes_[n]; }
  size_t node_count() const { return nodes_.size(); }
  // The function names from the outermost frame down to `n`.
  std::vector<std::string> names_to(NodeId n) const;

  // Top-down normalisation (IntroPerf, §3.4.1): each node's own latency is its total less
  // its children's totals. Totals, not the per-instance means of the paper: a caller's
  // one instance spans many of its callee's, so subtracting means would leave the caller
  // charged for time its callee spent.
  void normalize();

 private:
  std::vector<CctNode> nodes_;
  std::vector<std::string> functions_;
  std::unordered_map<std::string, FunctionId> function_ids_;
  std::unordered_map<uint64_t, NodeId> child_of_;  // (parent << 32 | function) -> child
  std::vector<NodeId> path_ends_;
};

}  // namespace cw::latency
