// How a loop wait ended, seen from the processes the thread is waiting to hear from: a
// client's wait for the answer to its request is part of the turn that sent it, not an
// idle wait of its loop.
#include <algorithm>

#include "base/parallel.h"
#include "engine/diagnosis/symptom_finder.h"

namespace cw::engine::symptom_detail {

namespace {

uint64_t pair_key(Pid a, Pid b) {
  return (uint64_t{std::min(a, b)} << 32) | std::max(a, b);
}

// Whether segment `s` is one of thread `t`'s. An edge between two segments of one thread
// is never between two processes: told from the graph's index alone, without reading the
// edge, its segments and its events, which a loop thread's neighbour edges (most of its
// edges) would cost at every turn.
bool within(const Graph::ThreadSegments& t, uint32_t s) {
  return s >= t.begin && s < t.end;
}

}  // namespace

// Which process of a pair reached the other first by a causal (not weak) edge: the one
// that opened the conversation is the client of the other. Keyed by the pair, lower pid
// first; computed once, on first use.
Pid Finder::initiator(Pid a, Pid b) const {
  if (first_contact_.empty() && !g_.edges.empty()) {
    // The two halves of the edges on two CPUs, each into a table of its own; a pair's
    // earliest contact is then the earlier of the two, the first half's on a tie (as one
    // pass in edge order keeps the first it meets).
    using Contacts = std::unordered_map<uint64_t, std::pair<uint64_t, Pid>>;
    Contacts halves[2];
    const size_t m = g_.edges.size(), mid = m / 2;
    parallel_for(2, [&](size_t half) {
      Contacts& found = halves[half];
      for (size_t i = half == 0 ? 0 : mid, end = half == 0 ? mid : m; i < end; ++i) {
        const Edge& e = g_.edges[i];
        if (e.strength == Strength::Weak) continue;  // before reading its two segments
        const Pid from = g_.segments[e.from].pid, to = g_.segments[e.to].pid;
        if (from == to) continue;
        const uint64_t ts = trace_.events[e.from_event].ts;
        auto [it, fresh] = found.try_emplace(pair_key(from, to), ts, from);
        if (!fresh && ts < it->second.first) it->second = {ts, from};
      }
    });
    first_contact_ = std::move(halves[0]);
    for (const auto& [pair, contact] : halves[1]) {
      auto [it, fresh] = first_contact_.try_emplace(pair, contact);
      if (!fresh && contact.first < it->second.first) it->second = contact;
    }
    first_contact_[0] = {0, 0};  // computed, even when no pair is found
  }
  auto it = first_contact_.find(pair_key(a, b));
  return it == first_contact_.end() ? 0 : it->second.second;
}

// The processes the thread asked something of in segments [first, last], added to
// `asked`: a causal (not weak) edge out to a process its own process had opened the
// conversation with. A server's answers to its clients are no requests: the clients
// spoke first.
void Finder::asked_in(const Graph::ThreadSegments& t, uint32_t first, uint32_t last,
                      std::vector<Asked>& asked, InitiatorCache& initiators) const {
  for (uint32_t s = first; s <= last; ++s) {
    const Pid own = g_.segments[s].pid;
    for (auto [it, end] = out_edges(s, g_.csr); it != end; ++it) {
      if (within(t, static_cast<uint32_t>(target(*it, g_.csr)))) continue;
      const Edge& e = g_.edges[g_.csr[*it]];
      const Pid to = g_.segments[e.to].pid;
      if (e.strength == Strength::Weak || to == own || !initiators.opened(*this, own, to)) continue;
      const uint64_t arrived = trace_.events[e.to_event].ts;
      auto a =
          std::find_if(asked.begin(), asked.end(), [&](const Asked& x) { return x.pid == to; });
      if (a == asked.end())
        asked.push_back({to, arrived});
      else
        a->arrived_ns = std::max(a->arrived_ns, arrived);
    }
  }
}

bool Finder::InitiatorCache::opened(const Finder& f, Pid own, Pid to) {
  if (own != own_) {
    own_ = own;
    known_.clear();
  }
  for (const auto& [pid, yes] : known_)
    if (pid == to) return yes;
  const bool yes = f.initiator(own, to) == own;
  if (known_.size() < kKept) known_.emplace_back(to, yes);
  return yes;
}

// How a wait in segments [first, last] ended, seen from the processes the thread is
// waiting to hear from: by an answer from one of `asked` (taken out of it), by a causal
// edge from another process (new work), or by no causal edge at all (a timeout). An
// answer leaves its process after the request reached it: what the process sent before
// it read the request (a notice of its own, the reply to an earlier call) answers
// nothing, and the wait goes on (dbus-daemon's NameAcquired signal reached dbus-send
// inside its wait for the reply to its method call, which came 1.2 s later).
Finder::WaitEnd Finder::wait_end(const Graph::ThreadSegments& t, uint32_t first, uint32_t last,
                                 std::vector<Asked>& asked) const {
  WaitEnd end_kind = WaitEnd::NoCause;
  for (uint32_t s = first; s <= last; ++s)
    for (auto [it, end] = in_edges(s, g_.csr); it != end; ++it) {
      if (within(t, static_cast<uint32_t>(source(*it, g_.csr)))) continue;
      const Edge& e = g_.edges[g_.csr[*it]];
      const Pid from = g_.segments[e.from].pid;
      if (e.strength == Strength::Weak || from == g_.segments[s].pid) continue;
      auto a =
          std::find_if(asked.begin(), asked.end(), [&](const Asked& x) { return x.pid == from; });
      if (a == asked.end()) {
        end_kind = WaitEnd::OtherWork;
      } else if (trace_.events[e.from_event].ts >= a->arrived_ns) {
        asked.erase(a);
        return WaitEnd::Answer;
      }
    }
  return end_kind;
}

}  // namespace cw::engine::symptom_detail
