// How a loop wait ended, seen from the processes the thread is waiting to hear from: a
// client's wait for the answer to its request is part of the turn that sent it, not an
// idle wait of its loop.
#include <algorithm>
#include <atomic>

#include "base/parallel.h"
#include "engine/diagnosis/symptom_finder.h"

namespace cw::engine::symptom_detail {

namespace {

uint64_t pair_key(Pid a, Pid b) {
  return (uint64_t{std::min(a, b)} << 32) | std::max(a, b);
}

}  // namespace

// The lookups stretches() shares between threads, made once by one pass over the edges
// on every CPU (the segments and events of each edge are the random reads, asked for some
// edges ahead): which segments a strong edge from another thread ends in, who opened each
// conversation between two processes (initiator()), and which edges join two processes
// causally (across_of() lists those of a thread).
void Finder::prepare_shared_lookups() {
  if (prepared_) return;
  prepared_ = true;
  const size_t m = g_.edges.size();
  strong_in_.assign(g_.segments.size(), 0);
  across_.assign(m, 0);
  across_out_.assign(g_.segments.size(), 0);
  across_in_.assign(g_.segments.size(), 0);
  using Contacts = std::unordered_map<uint64_t, std::pair<uint64_t, Pid>>;
  // The edges in parts handed out one at a time: the edges between threads are not spread
  // evenly (a rebuild appends its neighbour edges), so two halves would leave one CPU idle.
  constexpr size_t kParts = 64, kAhead = 16;
  const size_t per_part = std::max<size_t>(1, (m + kParts - 1) / kParts);
  std::vector<Contacts> parts((m + per_part - 1) / per_part);
  parallel_for(parts.size(), [&](size_t part) {
    Contacts& contacts = parts[part];
    for (size_t i = part * per_part, end = std::min(m, i + per_part); i < end; ++i) {
      if (i + kAhead < end) {
        const Edge& a = g_.edges[i + kAhead];
        if (a.strength != Strength::Weak) {
          __builtin_prefetch(&g_.segments[a.from]);
          __builtin_prefetch(&g_.segments[a.to]);
          __builtin_prefetch(&trace_.events[a.from_event]);
        }
      }
      const Edge& e = g_.edges[i];
      if (e.strength == Strength::Weak) continue;  // before reading its two segments
      const Segment &from = g_.segments[e.from], &to = g_.segments[e.to];
      if (e.strength == Strength::Strong && from.tid != to.tid)
        std::atomic_ref<uint8_t>(strong_in_[e.to]).store(1, std::memory_order_relaxed);
      if (from.pid == to.pid) continue;
      across_[i] = 1;
      std::atomic_ref<uint8_t>(across_out_[e.from]).store(1, std::memory_order_relaxed);
      std::atomic_ref<uint8_t>(across_in_[e.to]).store(1, std::memory_order_relaxed);
      const uint64_t sent = trace_.events[e.from_event].ts;
      auto [it, fresh] = contacts.try_emplace(pair_key(from.pid, to.pid), sent, from.pid);
      if (!fresh && sent < it->second.first) it->second = {sent, from.pid};
    }
  });
  // A pair's earliest contact: the earliest part's on a tie (as one pass in edge order
  // keeps the first it meets).
  first_contact_.clear();
  for (const Contacts& contacts : parts)
    for (const auto& [pair, contact] : contacts) {
      auto [it, fresh] = first_contact_.try_emplace(pair, contact);
      if (!fresh && contact.first < it->second.first) it->second = contact;
    }
}

// Thread `t`'s edges across processes (prepare_shared_lookups() marked them), per
// segment in the order of the graph's index. Its segments' rows of the index are read in
// order, and an edge between two of its own segments is told from the index alone (a
// loop thread's neighbour edges are most of its edges); the edges across are then read
// with their segments and events, asked for some edges ahead.
Finder::ThreadAcross Finder::across_of(const Graph::ThreadSegments& t) const {
  ThreadAcross a;
  a.base = t.begin;
  const uint32_t n = t.end - t.begin;
  const auto& forward = g_.csr.m_forward;
  const auto& backward = g_.csr.m_backward;
  auto within = [&](uint32_t s) { return s >= t.begin && s < t.end; };
  std::vector<uint32_t> out_edges, in_edges;
  a.out_begin.resize(n + 1);
  a.in_begin.resize(n + 1);
  for (uint32_t s = t.begin; s < t.end; ++s) {
    a.out_begin[s - t.begin] = static_cast<uint32_t>(out_edges.size());
    a.in_begin[s - t.begin] = static_cast<uint32_t>(in_edges.size());
    // (Most segments have no edge across: their rows are not read.)
    if (across_out_[s])
      for (uint32_t k = forward.m_rowstart[s]; k < forward.m_rowstart[s + 1]; ++k)
        if (!within(forward.m_column[k]))
          if (const uint32_t e = forward.m_edge_properties[k]; across_[e]) out_edges.push_back(e);
    if (!across_in_[s]) continue;
    for (uint32_t k = backward.m_rowstart[s]; k < backward.m_rowstart[s + 1]; ++k)
      if (!within(backward.m_column[k]))
        if (const uint32_t e = forward.m_edge_properties[backward.m_edge_properties[k]]; across_[e])
          in_edges.push_back(e);
  }
  a.out_begin[n] = static_cast<uint32_t>(out_edges.size());
  a.in_begin[n] = static_cast<uint32_t>(in_edges.size());
  // The other end of each: its process, and when the edge reached it (out) or left it (in).
  constexpr size_t kAhead = 8;
  auto fill = [&](const std::vector<uint32_t>& edges, std::vector<Across>& into, bool out) {
    into.resize(edges.size());
    for (size_t i = 0; i < edges.size(); ++i) {
      if (i + 2 * kAhead < edges.size()) __builtin_prefetch(&g_.edges[edges[i + 2 * kAhead]]);
      if (i + kAhead < edges.size()) {
        const Edge& next = g_.edges[edges[i + kAhead]];
        __builtin_prefetch(&g_.segments[out ? next.to : next.from]);
        __builtin_prefetch(&trace_.events[out ? next.to_event : next.from_event]);
      }
      const Edge& e = g_.edges[edges[i]];
      into[i] = {g_.segments[out ? e.to : e.from].pid,
                 trace_.events[out ? e.to_event : e.from_event].ts};
    }
  };
  fill(out_edges, a.out, true);
  fill(in_edges, a.in, false);
  return a;
}

// Which process of a pair reached the other first by a causal (not weak) edge: the one
// that opened the conversation is the client of the other. Keyed by the pair, lower pid
// first (prepare_shared_lookups() found them).
Pid Finder::initiator(Pid a, Pid b) const {
  auto it = first_contact_.find(pair_key(a, b));
  return it == first_contact_.end() ? 0 : it->second.second;
}

// The processes the thread asked something of in segments [first, last], added to
// `asked`: a causal (not weak) edge out to a process its own process had opened the
// conversation with. A server's answers to its clients are no requests: the clients
// spoke first.
void Finder::asked_in(const ThreadAcross& across, uint32_t first, uint32_t last,
                      std::vector<Asked>& asked, InitiatorCache& initiators) const {
  for (uint32_t s = first; s <= last; ++s) {
    const Pid own = g_.segments[s].pid;
    for (const Across* x = across.out_first(s); x != across.out_end(s); ++x) {
      if (!initiators.opened(*this, own, x->pid)) continue;
      auto a =
          std::find_if(asked.begin(), asked.end(), [&](const Asked& y) { return y.pid == x->pid; });
      if (a == asked.end())
        asked.push_back({x->pid, x->ts});
      else
        a->arrived_ns = std::max(a->arrived_ns, x->ts);
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
Finder::WaitEnd Finder::wait_end(const ThreadAcross& across, uint32_t first, uint32_t last,
                                 std::vector<Asked>& asked) const {
  WaitEnd end_kind = WaitEnd::NoCause;
  for (uint32_t s = first; s <= last; ++s)
    for (const Across* x = across.in_first(s); x != across.in_end(s); ++x) {
      auto a =
          std::find_if(asked.begin(), asked.end(), [&](const Asked& y) { return y.pid == x->pid; });
      if (a == asked.end()) {
        end_kind = WaitEnd::OtherWork;
      } else if (x->ts >= a->arrived_ns) {
        asked.erase(a);
        return WaitEnd::Answer;
      }
    }
  return end_kind;
}

}  // namespace cw::engine::symptom_detail
