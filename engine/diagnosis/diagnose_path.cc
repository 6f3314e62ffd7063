// The causal path the report shows, from the deepest root cause to the hang: a path the
// slicing or the beam search found through it, else the chain of culprits.
#include <algorithm>

#include "engine/diagnosis/diagnoser.h"
#include "engine/diagnosis/polling_end.h"

namespace cw::engine::diagnose_detail {

// The causal path of a loop that `edge` ended: from the root cause found in the edge's
// source thread since root cause `before` (if any) along that thread to the edge, then
// the loop's segment it lands on. finish_path() puts deeper culprits before it.
std::vector<PathStep> Diagnoser::path_through(size_t before, uint32_t edge) const {
  const Tid source = g_.segments[g_.edges[edge].from].tid;
  uint32_t origin = kNoIndex;
  for (size_t k = before; k < d_.root_causes.size(); ++k)
    if (g_.segments[d_.root_causes[k].segment].tid == source) origin = d_.root_causes[k].segment;
  return polling_end_path(g_, origin, edge);
}

// The causal path from the deepest root cause to the hang, led by the request that
// started the root cause's work when a recursion found it.
void Diagnoser::finish_path() {
  path_from_deepest();
  if (!d_.path.empty()) prepend_requesters_found(g_.segments[d_.path.front().segment].tid);
}

// The best beam-search path back from the hang that passes through the deepest root cause,
// else the chain of culprits.
void Diagnoser::path_from_deepest() {
  if (d_.root_causes.empty()) return;
  if (!d_.path.empty()) {
    prepend_deeper_culprits();
    return;
  }
  const RootCause* deepest = &d_.root_causes[0];
  for (const RootCause& r : d_.root_causes)
    if (r.depth > deepest->depth) deepest = &r;
  const uint32_t hang = vertex_;
  if (deepest->segment == hang) {
    d_.path = {{hang, kNoIndex}};
    return;
  }
  BeamOptions o = beam_;
  o.width = std::max<uint32_t>(beam_.width, 16);
  BeamResult r = beam_search(g_, hang, o);
  d_.search_steps += r.steps;
  // Of the paths through the root cause, the one cheapest up to it (what lies behind
  // the root cause does not matter here).
  const BeamPath* best = nullptr;
  size_t best_k = 0;
  double best_cost = 0;
  for (const BeamPath& p : r.paths) {
    double cost = 0;
    for (size_t k = 0; k < p.edges.size(); ++k) {
      cost += edge_cost(g_.edges[p.edges[k]], beam_.costs);
      if (g_.edges[p.edges[k]].from != deepest->segment) continue;
      if (!best || cost < best_cost) {
        best = &p;
        best_k = k;
        best_cost = cost;
      }
      break;
    }
  }
  if (best) {
    // edges[0] enters the hang; edges[best_k] leaves the root cause.
    for (size_t j = best_k + 1; j-- > 0;)
      d_.path.push_back({g_.edges[best->edges[j]].from, best->edges[j]});
    d_.path.push_back({hang, kNoIndex});
    return;
  }
  // No path through the culprit's segment, but the hang's own wake-up path reached the
  // culprit's thread: from there on it is the path (the culprit is blamed at the segment
  // its time was measured at, which need not be one the path left it from: a device
  // waited on in turns, a retried wait). When it reached only a shallower culprit's
  // thread (the deeper one woke that culprit by an edge the slice did not take), it is
  // the path from there, led by the deeper culprits: the threads it passed through
  // between that culprit and the hang stay on it.
  std::vector<const RootCause*> by_depth;
  for (const RootCause& rc : d_.root_causes) by_depth.push_back(&rc);
  std::stable_sort(by_depth.begin(), by_depth.end(),
                   [](const RootCause* a, const RootCause* b) { return a->depth > b->depth; });
  for (const RootCause* rc : by_depth) {
    const Tid culprit = g_.segments[rc->segment].tid;
    if (culprit == g_.segments[hang].tid) continue;
    for (size_t k = 0; k + 1 < hang_slice_.size(); ++k) {
      if (g_.segments[hang_slice_[k].segment].tid != culprit) continue;
      d_.path.assign(hang_slice_.begin() + static_cast<std::ptrdiff_t>(k), hang_slice_.end());
      if (rc != deepest) prepend_deeper_culprits();
      return;
    }
  }
  // No recorded path joins them (the wake-up never came): list the culprits in order.
  std::vector<const RootCause*> chain;
  for (const RootCause& rc : d_.root_causes) chain.push_back(&rc);
  std::stable_sort(chain.begin(), chain.end(),
                   [](const RootCause* a, const RootCause* b) { return a->depth > b->depth; });
  for (const RootCause* rc : chain)
    if (rc->segment != hang) d_.path.push_back({rc->segment, kNoIndex});
  d_.path.push_back({hang, kNoIndex});
}

// The path begins at `culprit`'s thread: when the recursion that blamed it found the
// request that started its work (blame_heaviest: a client's request to a server busy with
// it, the Argus paper, §4.2), the requester leads the path, with the culprit's own steps
// from the request on, as where that recursion's path is the one shown. Only when those
// steps end with an edge into the segment the path begins with: it stays one chain of
// edges.
void Diagnoser::prepend_requesters_found(Tid culprit) {
  if (d_.path.empty()) return;
  const uint32_t front = d_.path.front().segment;
  auto tid_at = [&](const PathStep& s) { return g_.segments[s.segment].tid; };
  for (const std::vector<PathStep>& p : requested_paths_) {
    const auto at =
        std::find_if(p.begin(), p.end(), [&](const PathStep& s) { return s.segment == front; });
    if (at == p.begin() || at == p.end()) continue;
    const PathStep& before = *std::prev(at);
    if (before.edge == kNoIndex || g_.edges[before.edge].to != front) continue;
    // Someone else's request first, then only the culprit's own steps.
    const auto own =
        std::find_if(p.begin(), at, [&](const PathStep& s) { return tid_at(s) == culprit; });
    if (own == p.begin() ||
        std::any_of(own, at, [&](const PathStep& s) { return tid_at(s) != culprit; }))
      continue;
    const bool on_path = std::any_of(p.begin(), own, [&](const PathStep& s) {
      return std::any_of(d_.path.begin(), d_.path.end(),
                         [&](const PathStep& q) { return tid_at(q) == tid_at(s); });
    });
    if (on_path) continue;
    d_.path.insert(d_.path.begin(), p.begin(), at);
    return;
  }
}

// The path was found before a recursion went deeper (the step of the hang's own path
// that took the time): the culprits found below it, whose threads are not on it, lead
// it, deepest first. When the recursion that found one walked a path from it to the
// thread the hang's path begins with, that stretch leads, with the threads between and
// the edges that joined them (a thread woken by the culprit's release, whose exit woke the
// thread the hang waited for). Otherwise no recorded edge joins it to the path (a
// wake-up that never came).
void Diagnoser::prepend_deeper_culprits() {
  auto on = [&](const std::vector<PathStep>& path, Tid tid) {
    return std::any_of(path.begin(), path.end(),
                       [&](const PathStep& s) { return g_.segments[s.segment].tid == tid; });
  };
  std::vector<PathStep> lead;
  for (const RootCause& rc : d_.root_causes) {  // sorted deepest first
    const Tid tid = g_.segments[rc.segment].tid;
    if (on(d_.path, tid) || on(lead, tid)) continue;
    std::vector<PathStep> via = deeper_path_to_front(tid);
    if (via.empty())
      lead.push_back({rc.segment, kNoIndex});
    else
      lead.insert(lead.end(), via.begin(), via.end());
  }
  d_.path.insert(d_.path.begin(), lead.begin(), lead.end());
}

// Of the paths the recursions found, the stretch from `culprit`'s thread up to the thread
// the hang's path begins with, joined to it by recorded edges; empty when there is none. A
// recursion's path ends at the segment it diagnosed, whose own path began at that thread's
// culprit: when the culprit's path does not reach the front, it goes on along the path of the
// recursion that found it (a holder's sleep, the waiter it released, the parent that reaped
// that waiter, the thread the hang waited for).
std::vector<PathStep> Diagnoser::deeper_path_to_front(Tid culprit) const {
  if (d_.path.empty()) return {};
  const Tid front = g_.segments[d_.path.front().segment].tid;
  auto tid_at = [&](const PathStep& s) { return g_.segments[s.segment].tid; };
  std::vector<PathStep> lead;
  Tid from_tid = culprit;
  for (size_t hop = 0; hop < deeper_paths_.size(); ++hop) {
    bool went_on = false;
    for (const std::vector<PathStep>& p : deeper_paths_) {
      const auto from = std::find_if(p.begin(), p.end(),
                                     [&](const PathStep& s) { return tid_at(s) == from_tid; });
      if (from == p.end()) continue;
      const auto at_front =
          std::find_if(from + 1, p.end(), [&](const PathStep& s) { return tid_at(s) == front; });
      if (at_front != p.end()) {
        if (std::prev(at_front)->edge == kNoIndex) return {};
        lead.insert(lead.end(), from, at_front);
        return lead;
      }
      // Up to the segment this recursion diagnosed, whose thread's own path goes on.
      const Tid next = tid_at(p.back());
      if (next == from_tid || p.end() - from < 2 || p[p.size() - 2].edge == kNoIndex) continue;
      lead.insert(lead.end(), from, std::prev(p.end()));
      from_tid = next;
      went_on = true;
      break;
    }
    if (!went_on) return {};
  }
  return {};
}

}  // namespace cw::engine::diagnose_detail
