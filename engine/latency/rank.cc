#include "engine/latency/rank.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace cw::latency {

std::string_view presence_name(Presence p) {
  switch (p) {
    case Presence::Both: return "both";
    case Presence::New: return "new";
    case Presence::Vanished: return "vanished";
  }
  return "both";
}

namespace {

// Leaves of the tree: the contexts getPathSet of Algorithm 3 enumerates.
std::vector<NodeId> leaves(const Cct& cct) {
  std::vector<NodeId> out;
  for (NodeId v = 1; v < cct.node_count(); ++v)
    if (cct.node(v).children.empty()) out.push_back(v);
  return out;
}

std::string key_of(const Cct& cct, NodeId leaf) {
  std::string key;
  for (const std::string& name : cct.names_to(leaf)) {
    key += name;
    key += '\0';
  }
  return key;
}

RankedPath path_of(const Cct& cct, NodeId leaf, Mode mode) {
  RankedPath p;
  for (NodeId v : cct.nodes_to(leaf)) {
    const CctNode& n = cct.node(v);
    RankedFrame f;
    f.function = cct.function_name(n.function);
    f.own = n.own.get(mode);
    f.total = n.total.get(mode);
    f.cost = static_cast<int64_t>(f.own);
    f.instances = n.instances;
    p.frames.push_back(std::move(f));
  }
  return p;
}

// Sums the cost, finds the costliest frame (for a context that vanished: the one that
// lost the most) and marks every frame's distance from it.
void finish(RankedPath& p) {
  const bool losses = p.presence == Presence::Vanished;
  p.cost = 0;
  p.costliest = 0;
  for (size_t i = 0; i < p.frames.size(); ++i) {
    p.cost += p.frames[i].cost;
    const int64_t c = p.frames[i].cost, best = p.frames[p.costliest].cost;
    if (losses ? c < best : c > best) p.costliest = i;
  }
  for (size_t i = 0; i < p.frames.size(); ++i)
    p.frames[i].distance =
        static_cast<uint32_t>(i > p.costliest ? i - p.costliest : p.costliest - i);
}

// Drops the contexts under the noise threshold and keeps the `top` with the largest
// cost (or, for `losses`, the most negative), in a fixed order among equals.
std::vector<RankedPath> keep_top(std::vector<RankedPath> paths, const RankOptions& o,
                                 bool losses = false) {
  std::erase_if(paths, [&](const RankedPath& p) {
    return static_cast<uint64_t>(p.cost < 0 ? -p.cost : p.cost) < o.threshold_ns;
  });
  std::stable_sort(paths.begin(), paths.end(), [&](const RankedPath& a, const RankedPath& b) {
    if (a.cost != b.cost) return losses ? a.cost < b.cost : a.cost > b.cost;
    return std::lexicographical_compare(
        a.frames.begin(), a.frames.end(), b.frames.begin(), b.frames.end(),
        [](const RankedFrame& x, const RankedFrame& y) { return x.function < y.function; });
  });
  if (paths.size() > o.top) paths.resize(o.top);
  return paths;
}

uint64_t total_own(const Cct& cct, Mode mode) {
  uint64_t sum = 0;
  for (NodeId v = 1; v < cct.node_count(); ++v) sum += cct.node(v).own.get(mode);
  return sum;
}

uint64_t scaled(uint64_t ns, double scale) {
  return static_cast<uint64_t>(static_cast<double>(ns) * scale + 0.5);
}

}  // namespace

double base_scale(const Cct& base, const Cct& slow, Mode mode) {
  const uint64_t b = total_own(base, mode), s = total_own(slow, mode);
  return b == 0 || s == 0 ? 1.0 : static_cast<double>(s) / static_cast<double>(b);
}

std::vector<RankedPath> rank_paths(const Cct& cct, const RankOptions& options) {
  std::vector<RankedPath> paths;
  for (NodeId leaf : leaves(cct)) {
    paths.push_back(path_of(cct, leaf, options.mode));
    finish(paths.back());
  }
  return keep_top(std::move(paths), options);
}

namespace {

// The frame of a context where its run spent the most own time (the innermost of equals,
// which keeps the most of the context).
size_t hot_frame(const Cct& cct, const std::vector<NodeId>& nodes, Mode mode) {
  size_t hot = 0;
  for (size_t i = 1; i < nodes.size(); ++i)
    if (cct.node(nodes[i]).own.get(mode) >= cct.node(nodes[hot]).own.get(mode)) hot = i;
  return hot;
}

// A context's child by its function's name, in one CCT: built once, as a differential
// ranking looks up every frame of every context of one run in the other.
class ChildByName {
 public:
  explicit ChildByName(const Cct& cct) {
    for (FunctionId f = 0; f < cct.function_count(); ++f)
      function_.emplace(cct.function_name(f), f);
    for (NodeId v = 1; v < cct.node_count(); ++v)
      child_.emplace(key(cct.node(v).parent, cct.node(v).function), v);
  }
  // The child of `parent` named `name`, or kRoot when it has none.
  NodeId operator()(NodeId parent, const std::string& name) const {
    const auto f = function_.find(name);
    if (f == function_.end()) return kRoot;
    const auto c = child_.find(key(parent, f->second));
    return c == child_.end() ? kRoot : c->second;
  }

 private:
  static uint64_t key(NodeId parent, FunctionId f) {
    return (static_cast<uint64_t>(parent) << 32) | f;
  }
  std::unordered_map<std::string_view, FunctionId> function_;
  std::unordered_map<uint64_t, NodeId> child_;
};

// One row of a differential ranking: a context down to its hot frame, the whole context
// shown for it (the merged one whose frames below the hot one took the most), and the
// frames below the hot one that the merged contexts had, in each run (each node once).
struct DiffRow {
  std::vector<std::string> names;  // outermost first, the hot frame last
  std::vector<std::string> shown;  // a whole context that starts with `names`
  uint64_t shown_below = 0;        // its frames' own time below the hot frame, in its run
  bool shown_from_slow = false;    // a slow context is shown rather than a base one
  std::set<NodeId> slow_below, base_below;
  std::set<std::string> contexts;  // the whole contexts merged (key_of), either run's
};

// The function names of `nodes` in `cct`.
std::vector<std::string> names_of(const Cct& cct, const std::vector<NodeId>& nodes, size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back(cct.function_name(cct.node(nodes[i]).function));
  return out;
}

}  // namespace

std::vector<RankedPath> diff_rank_paths(const Cct& base, const Cct& slow,
                                        const RankOptions& options) {
  const Mode mode = options.mode;
  const double scale = options.normalize ? base_scale(base, slow, mode) : 1.0;
  const ChildByName slow_child(slow), base_child(base);
  std::vector<DiffRow> rows;
  std::map<std::vector<std::string>, size_t> row_of_names;
  // Which row each slow node belongs to: the row whose hot frame it is, or lies below.
  std::map<NodeId, size_t> slow_row_below;

  // Adds the context of `leaf` (its nodes `nodes`, hot frame at `hot`) to row `r`.
  auto merge = [&](size_t r, const Cct& cct, NodeId leaf, const std::vector<NodeId>& nodes,
                   size_t hot, bool from_slow) {
    DiffRow& row = rows[r];
    row.contexts.insert(key_of(cct, leaf));
    std::set<NodeId>& below = from_slow ? row.slow_below : row.base_below;
    uint64_t own_below = 0;
    for (size_t i = hot + 1; i < nodes.size(); ++i) {
      below.insert(nodes[i]);
      own_below += cct.node(nodes[i]).own.get(mode);
    }
    if (row.shown_from_slow && !from_slow) return;
    if (row.shown.empty() || from_slow != row.shown_from_slow || own_below > row.shown_below) {
      row.shown = names_of(cct, nodes, nodes.size());
      row.shown_below = own_below;
      row.shown_from_slow = from_slow;
    }
  };
  auto row_for = [&](std::vector<std::string> names) -> size_t {
    auto [it, added] = row_of_names.try_emplace(names, rows.size());
    if (added) rows.push_back({std::move(names), {}, 0, false, {}, {}, {}});
    return it->second;
  };
  for (NodeId leaf : leaves(slow)) {
    const std::vector<NodeId> nodes = slow.nodes_to(leaf);
    const size_t hot = hot_frame(slow, nodes, mode);
    const size_t r = row_for(names_of(slow, nodes, hot + 1));
    for (size_t i = hot; i < nodes.size(); ++i) slow_row_below.try_emplace(nodes[i], r);
    merge(r, slow, leaf, nodes, hot, true);
  }
  for (NodeId leaf : leaves(base)) {
    const std::vector<NodeId> nodes = base.nodes_to(leaf);
    // As deep as the slow run has the same context: at or below a row's hot frame, this
    // context is that row's; else it is a row of its own, down to its own hot frame.
    NodeId at = kRoot;
    size_t depth = 0;
    for (; depth < nodes.size(); ++depth) {
      const NodeId next = slow_child(at, base.function_name(base.node(nodes[depth]).function));
      if (next == kRoot) break;
      at = next;
    }
    size_t r;
    size_t hot;
    if (auto it = depth > 0 ? slow_row_below.find(at) : slow_row_below.end();
        it != slow_row_below.end()) {
      r = it->second;
      hot = rows[r].names.size() - 1;
    } else {
      hot = hot_frame(base, nodes, mode);
      r = row_for(names_of(base, nodes, hot + 1));
    }
    merge(r, base, leaf, nodes, hot, false);
  }

  std::vector<RankedPath> changed, vanished;
  for (DiffRow& row : rows) {
    RankedPath p;
    NodeId s = kRoot, b = kRoot;
    bool in_slow = true, in_base = true;
    const size_t hot = row.names.size() - 1;
    for (size_t i = 0; i < row.shown.size(); ++i) {
      const std::string& name = row.shown[i];
      s = in_slow ? slow_child(s, name) : kRoot;
      b = in_base ? base_child(b, name) : kRoot;
      in_slow = s != kRoot;
      in_base = b != kRoot;
      RankedFrame f;
      f.function = name;
      if (in_slow) {
        f.own = slow.node(s).own.get(mode);
        f.total = slow.node(s).total.get(mode);
        f.instances = slow.node(s).instances;
      }
      if (in_base) {
        f.base_own = scaled(base.node(b).own.get(mode), scale);
        if (!in_slow) f.instances = base.node(b).instances;
      }
      f.cost = static_cast<int64_t>(f.own) - static_cast<int64_t>(f.base_own);
      p.frames.push_back(std::move(f));
      if (i == hot)
        p.presence = in_slow ? (in_base ? Presence::Both : Presence::New) : Presence::Vanished;
    }
    // What the merged contexts' frames below the hot one cost more, less the shown ones.
    uint64_t slow_below = 0, base_below = 0;
    for (NodeId n : row.slow_below) slow_below += slow.node(n).own.get(mode);
    for (NodeId n : row.base_below) base_below += base.node(n).own.get(mode);
    int64_t shown_below = 0;
    for (size_t i = hot + 1; i < p.frames.size(); ++i) shown_below += p.frames[i].cost;
    p.below_cost = static_cast<int64_t>(slow_below) -
                   static_cast<int64_t>(scaled(base_below, scale)) - shown_below;
    p.merged = std::max<size_t>(row.contexts.size(), 1);
    p.hot_frame = hot;
    finish(p);
    p.cost += p.below_cost;
    (p.presence == Presence::Vanished ? vanished : changed).push_back(std::move(p));
  }
  std::vector<RankedPath> out = keep_top(std::move(changed), options);
  for (RankedPath& p : keep_top(std::move(vanished), options, /*losses=*/true))
    out.push_back(std::move(p));
  return out;
}

std::string folded(const Cct& cct, Mode mode) {
  std::vector<std::string> lines;
  for (NodeId v = 1; v < cct.node_count(); ++v) {
    const uint64_t own = cct.node(v).own.get(mode);
    if (own == 0) continue;
    std::string line;
    for (const std::string& name : cct.names_to(v)) {
      if (!line.empty()) line += ';';
      // The format's separators cannot appear inside a name.
      for (char c : name) line += (c == ';' || c == ' ' || c == '\n') ? '_' : c;
    }
    lines.push_back(fmt::format("{} {}", line, own));
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

}  // namespace cw::latency
