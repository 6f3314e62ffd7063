#include "engine/latency/rank.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

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

std::vector<RankedPath> diff_rank_paths(const Cct& base, const Cct& slow,
                                        const RankOptions& options) {
  std::map<std::string, NodeId> base_leaves;
  for (NodeId leaf : leaves(base)) base_leaves.emplace(key_of(base, leaf), leaf);
  const double scale = options.normalize ? base_scale(base, slow, options.mode) : 1.0;

  std::vector<RankedPath> changed, vanished;
  for (NodeId leaf : leaves(slow)) {
    RankedPath p = path_of(slow, leaf, options.mode);
    auto it = base_leaves.find(key_of(slow, leaf));
    if (it == base_leaves.end()) {
      p.presence = Presence::New;
    } else {
      const std::vector<NodeId> was = base.nodes_to(it->second);
      for (size_t i = 0; i < p.frames.size(); ++i) {
        p.frames[i].base_own = scaled(base.node(was[i]).own.get(options.mode), scale);
        p.frames[i].cost =
            static_cast<int64_t>(p.frames[i].own) - static_cast<int64_t>(p.frames[i].base_own);
      }
      base_leaves.erase(it);
    }
    finish(p);
    changed.push_back(std::move(p));
  }
  for (const auto& [key, leaf] : base_leaves) {
    RankedPath p = path_of(base, leaf, options.mode);
    p.presence = Presence::Vanished;
    for (RankedFrame& f : p.frames) {
      f.base_own = scaled(f.own, scale);
      f.own = f.total = 0;
      f.cost = -static_cast<int64_t>(f.base_own);
    }
    finish(p);
    vanished.push_back(std::move(p));
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
