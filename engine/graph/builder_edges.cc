// The builder's edges. Each link candidate is classified by its link's edge rules: the
// first strong or weak rule whose `where` holds makes the edge, a weak edge may then be
// pruned or boosted, and a rule's `cost` prices the edge for the searches; on a large
// trace two threads classify the two halves. Then an edge across each cut whose rule asks
// for a neighbour edge, and one per data-flag write and the read that saw it. A rebuild
// that changes only cut rules (BuildOptions::reuse) takes the link and flag edges of the
// graph it reuses instead, their ends mapped to the new segments.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

#include "base/parallel.h"
#include "base/populate.h"
#include "base/source.h"
#include "engine/graph/build_state.h"

namespace cw::engine::build {

uint32_t Builder::segment_of(uint32_t event) const {
  return event_segment_[event];
}

// The new segment holding `event`, which the reused graph's segment `old_segment` held
// (segments_from_reused: the new segments between those holding its first and its last
// event), or kNoSegment for a segment the reused graph does not have or a thread this
// build lacks.
uint32_t Builder::reused_segment(uint32_t old_segment, uint32_t event) const {
  if (old_segment >= old_lo_.size()) return kNoSegment;
  uint32_t lo = old_lo_[old_segment];
  uint32_t hi = old_hi_[old_segment];
  if (lo == kNoSegment) return kNoSegment;
  // The last of them whose first event is at or before `event`.
  const auto& segments = result_.graph.segments;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo + 1) / 2;
    if (segments[mid].first <= event)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

// The segment an edge of `rule` leaves from: its from event's (`own()`), or with
// `from_thread`, the segment of the thread that field names (when not 0) at the from
// event's time, kNoSegment when that thread has none then (unrecorded, or not started
// yet).
template <class Own>
uint32_t Builder::from_segment(const rules::EdgeRule& rule, uint32_t event, Own own) const {
  if (rule.from_thread < 0) return own();
  const Event& ev = trace_.events[event];
  const uint64_t value = trace_.value(ev, rule.from_thread);
  if (value == 0 || value == ev.tid) return own();
  if (value > std::numeric_limits<Tid>::max()) return kNoSegment;
  const uint32_t t = threads_index_.get(static_cast<Tid>(value));
  if (t == ThreadIndex::kNone) return kNoSegment;
  const ThreadState& st = threads_[t];
  const auto& segments = result_.graph.segments;
  const uint32_t first = st.segment_base;
  const uint32_t end = st.segment_end;
  if (ev.ts < segments[first].start_ns) return kNoSegment;
  // The last of the thread's segments that started at or before the event.
  uint32_t lo = first, hi = end;
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (segments[mid].start_ns <= ev.ts)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

// Candidates name events all over the trace (a stream's pairs come in key order): asking
// for a later candidate's events and segments ahead overlaps those cache misses.
constexpr size_t kPrefetchAhead = 16;
void Builder::prefetch_events(size_t ci) const {
  if (ci >= candidates_.size()) return;
  const Candidate& c = candidates_[ci];
  __builtin_prefetch(&trace_.events[c.from.event]);
  __builtin_prefetch(&trace_.events[c.to.event]);
}
void Builder::prefetch_segments(size_t ci) const {
  if (ci >= candidates_.size()) return;
  const Candidate& c = candidates_[ci];
  __builtin_prefetch(&event_segment_[c.from.event]);
  __builtin_prefetch(&event_segment_[c.to.event]);
}

// What one worker of classify_candidates learns from its range of candidates. Each has
// its own evaluator and prepared expressions: their caches are not shared.
struct Builder::Classifier {
  Evaluator* eval = nullptr;
  const std::vector<PreparedExpr>* where = nullptr;  // per edge rule
  const std::vector<PreparedExpr>* cost = nullptr;
  Edge* out = nullptr;  // where its edges go, in candidate order
  uint64_t kept = 0;
  uint64_t unclassified = 0, pruned = 0, boosted = 0;
  std::vector<uint64_t> edges, pruned_by, boosted_by;  // per edge rule
};

void Builder::classify_candidates() {
  const uint64_t n = candidates_.size();
  report("edges", 0, n);
  auto& edges = result_.graph.edges;
  // Room for every edge the build adds (neighbour and flag edges follow): growing the
  // vector past its reservation would copy it while holding it twice.
  edges.reserve(n + neighbour_cuts() + flag_pairs_.size());
  // Kind labels as values for `edge.kind`, resolved against the trace's strings once.
  const auto& kinds = result_.graph.kinds;
  std::vector<Value> kind_values(kinds.size());
  for (size_t k = 0; k < kinds.size(); ++k) {
    StrId id = trace_.strings.find(kinds[k]);
    kind_values[k] = {rules::ValueType::Str, id, kinds[k].c_str()};
  }
  // Each candidate makes at most one edge, and edges keep candidate order: two workers
  // classify the two halves (the machine has two cores), each writing its edges from
  // the slot of its first candidate; the second's are then moved down behind the
  // first's. Lua hooks run single-threaded, so packs with Lua classify on one thread.
  const bool parallel = n >= parallel_from_ && n >= 2 && rules_.lua.empty();
  edges.resize(n);
  auto classifier = [&](Evaluator* ev, const std::vector<PreparedExpr>* where,
                        const std::vector<PreparedExpr>* cost, uint64_t first) {
    Classifier c;
    c.eval = ev;
    c.where = where;
    c.cost = cost;
    c.out = edges.data() + first;
    c.edges.assign(rules_.edges.size(), 0);
    c.pruned_by.assign(rules_.edges.size(), 0);
    c.boosted_by.assign(rules_.edges.size(), 0);
    return c;
  };
  const uint64_t mid = parallel ? n / 2 : n;
  std::vector<Classifier> workers;
  workers.push_back(classifier(&eval_, &edge_where_, &edge_cost_, 0));
  // The second worker's evaluator and expressions, prepared here: preparing may throw.
  std::optional<Evaluator> second_eval;
  std::vector<PreparedExpr> second_where, second_cost;
  if (parallel) {
    second_eval.emplace(trace_, spans_, nullptr, options_.interpret_expressions);
    for (const auto& e : rules_.edges) {
      second_where.push_back(second_eval->prepare(e.where, e.origin));
      second_cost.push_back(second_eval->prepare(e.cost, e.origin));
    }
    workers.push_back(classifier(&*second_eval, &second_where, &second_cost, mid));
  }
  in_two_parts(n, parallel, [&](uint64_t begin, uint64_t end, int part) {
    classify_range(workers[part], begin, end, kind_values, part == 0);
  });
  uint64_t kept = workers[0].kept;
  if (parallel) {
    std::copy(edges.begin() + mid, edges.begin() + mid + workers[1].kept, edges.begin() + kept);
    kept += workers[1].kept;
  }
  edges.resize(kept);
  for (const Classifier& c : workers) {
    result_.stats.unclassified += c.unclassified;
    result_.stats.pruned += c.pruned;
    result_.stats.boosted += c.boosted;
    for (size_t r = 0; r < rules_.edges.size(); ++r) {
      result_.counts.edges[r] += c.edges[r];
      result_.counts.pruned[r] += c.pruned_by[r];
      result_.counts.boosted[r] += c.boosted_by[r];
    }
  }
  candidates_.clear();
  candidates_.shrink_to_fit();
  report("edges", n, n);
}

// Classifies candidates [begin, end) into c.out. `reports`: this worker reports progress
// (the caller's thread only); with two workers its half stands for the whole.
void Builder::classify_range(Classifier& c, uint64_t begin, uint64_t end,
                             const std::vector<Value>& kind_values, bool reports) {
  const uint64_t n = candidates_.size();
  const uint64_t scale = end > begin ? n / (end - begin) : 1;
  for (uint64_t ci = begin; ci < end; ++ci) {
    if (ci + kPrefetchAhead < end) {
      prefetch_events(ci + kPrefetchAhead);
      prefetch_segments(ci + kPrefetchAhead);
    }
    const Candidate& cand = candidates_[ci];
    EvalScope scope{{}, cand.from, cand.to};
    uint32_t decided = kNoRule, from = kNoSegment;
    // A rule whose `from_thread` names a thread with no segment then does not decide.
    for (uint32_t r : link_decide_[cand.link])
      if (c.eval->test((*c.where)[r], scope) &&
          (from = from_segment(rules_.edges[r], cand.from.event,
                               [&] { return segment_of(cand.from.event); })) != kNoSegment) {
        decided = r;
        break;
      }
    if (reports && (ci + 1 - begin) % kProgressStep == 0)
      report("edges", std::min(n - 1, (ci + 1 - begin) * scale), n);
    if (decided == kNoRule) {
      ++c.unclassified;
      continue;
    }
    const auto& rule = rules_.edges[decided];
    Edge e;
    e.from = from;
    e.to = segment_of(cand.to.event);
    e.from_event = cand.from.event;
    e.to_event = cand.to.event;
    e.kind = edge_kind_[decided] != 0xffff ? edge_kind_[decided] : link_kind_[cand.link];
    e.rule = {RuleKind::Edge, decided};
    e.link = cand.link;
    e.strength = rule.strength == rules::Strength::Strong ? Strength::Strong : Strength::Weak;
    if (e.strength == Strength::Weak) {
      scope.edge_kind = &kind_values[e.kind];
      uint32_t pruned = first_match(c, link_prune_[cand.link], scope);
      if (pruned != kNoRule) {
        ++c.pruned_by[pruned];
        ++c.pruned;
        continue;
      }
      uint32_t boosted = first_match(c, link_boost_[cand.link], scope);
      if (boosted != kNoRule) {
        e.strength = Strength::Boosted;
        e.boost_rule = boosted;
        if (!(*c.cost)[boosted].empty()) e.cost = search_cost(c, boosted, scope);
        ++c.boosted_by[boosted];
        ++c.boosted;
      }
    }
    if (e.cost == Edge::kDefaultCost && !(*c.cost)[decided].empty())
      e.cost = search_cost(c, decided, scope);
    ++c.edges[decided];
    c.out[c.kept++] = e;
  }
}

// An edge rule's `cost` clause for this candidate; negative costs are a rule error, since
// the searches add costs along a path and prefer the cheapest.
uint8_t Builder::search_cost(Classifier& c, uint32_t rule, const EvalScope& scope) {
  Value v = c.eval->eval((*c.cost)[rule], scope);
  if (v.type != rules::ValueType::Int || v.i < 0 || v.i >= Edge::kDefaultCost)
    rule_error(rules_.edges[rule].origin,
               fmt::format("edge {}: cost must be an integer from 0 to 254, got {}",
                           rules_.edges[rule].origin.id,
                           v.type == rules::ValueType::Int ? std::to_string(v.i) : "no integer"));
  return static_cast<uint8_t>(v.i);
}

uint32_t Builder::first_match(Classifier& c, const std::vector<uint32_t>& rules,
                              const EvalScope& scope) {
  for (uint32_t r : rules)
    if (c.eval->test((*c.where)[r], scope)) return r;
  return kNoRule;
}

// ---- a rebuild of the cuts only (BuildOptions::reuse) ----

// The scan makes no link candidates and no flag pairs: the reused graph has their
// edges.
void Builder::forget_edge_work() {
  for (KindActions& a : by_kind_) {
    a.links.clear();
    a.flag_writes.clear();
    a.flag_reads.clear();
  }
  pairers_.clear();
}

// The reused graph's link edges and flag edges, in its order, their ends mapped to this
// build's segments, around this build's neighbour edges (a whole build's order: link
// edges, neighbour edges, flag edges); its counts of those rules are this build's. The
// link edges are mapped where they are, in the reused graph's vector, which becomes
// this graph's.
void Builder::reuse_edges() {
  Graph& old = reuse_->graph;
  Graph& g = result_.graph;
  if (old.kinds.size() < g.kinds.size() ||
      !std::equal(g.kinds.begin(), g.kinds.end(), old.kinds.begin()))
    throw std::invalid_argument("the graph to reuse has other edge kinds");
  const uint64_t n = trace_.events.size();
  std::vector<Edge> flags;
  flags.reserve(reuse_->stats.flag_edges);
  std::vector<Edge>& edges = old.edges;
  // An end's new segment: through the old segment that held it when the segments were
  // made from the reused graph's, else the segment each event is in.
  const bool through_old = result_.segments_from_reused;
  auto end_segment = [&](uint32_t old_segment, uint32_t event) {
    const uint32_t s = through_old ? reused_segment(old_segment, event) : segment_of(event);
    if (s == kNoSegment)
      throw std::invalid_argument("the graph to reuse has an edge of a thread this trace lacks");
    return s;
  };
  // In two parts, each keeping its edges in place at its own start and its flag edges
  // apart; then the second part's after the first's, as one pass in order keeps them.
  // Each edge's two ends are looked up far apart in the segment tables: asked for some
  // edges ahead.
  uint64_t begin_of[2] = {0, 0}, kept_of[2] = {0, 0};
  std::vector<Edge> flags_of[2];
  in_two_parts(edges.size(), n >= parallel_from_, [&](uint64_t begin, uint64_t end, int part) {
    constexpr uint64_t kAhead = 16;
    uint64_t kept = begin;
    for (uint64_t i = begin; i < end; ++i) {
      if (through_old && i + kAhead < end) {
        const Edge& a = edges[i + kAhead];
        if (a.from < old_lo_.size() && a.to < old_lo_.size()) {
          __builtin_prefetch(&old_lo_[a.from]);
          __builtin_prefetch(&old_hi_[a.from]);
          __builtin_prefetch(&old_lo_[a.to]);
          __builtin_prefetch(&old_hi_[a.to]);
        }
      }
      Edge e = edges[i];
      if (e.rule.kind != RuleKind::Edge && e.rule.kind != RuleKind::Flag) continue;
      if (e.from_event >= n || e.to_event >= n)
        throw std::invalid_argument("the graph to reuse names events this trace does not have");
      if (e.rule.kind == RuleKind::Edge) {
        if (e.rule.index >= rules_.edges.size())
          throw std::invalid_argument("the graph to reuse names edge rules these rules lack");
        e.from = from_segment(rules_.edges[e.rule.index], e.from_event,
                              [&] { return end_segment(e.from, e.from_event); });
        if (e.from == kNoSegment)
          throw std::invalid_argument(
              "the graph to reuse has an edge from a thread this trace lacks");
      } else {
        e.from = end_segment(e.from, e.from_event);
      }
      e.to = end_segment(e.to, e.to_event);
      if (e.rule.kind == RuleKind::Flag)
        flags_of[part].push_back(e);
      else
        edges[kept++] = e;
    }
    begin_of[part] = begin;
    kept_of[part] = kept - begin;
  });
  const auto at = [&](uint64_t i) { return edges.begin() + static_cast<std::ptrdiff_t>(i); };
  std::move(at(begin_of[1]), at(begin_of[1] + kept_of[1]), at(kept_of[0]));
  const size_t kept = kept_of[0] + kept_of[1];
  for (const auto& part : flags_of) flags.insert(flags.end(), part.begin(), part.end());
  edges.resize(kept);
  g.edges = std::move(edges);
  // Room for the rest at once (a fresh copy only when there are more than the reused
  // graph had room for).
  g.edges.reserve(kept + neighbour_cuts() + flags.size());
  neighbour_edges();
  // Flag kinds are interned as flag edges are made, as flag_edges() does.
  for (Edge& e : flags) {
    e.kind = g.intern_kind(old.kinds.at(e.kind));
    g.edges.push_back(e);
  }
  result_.counts.edges = reuse_->counts.edges;
  result_.counts.pruned = reuse_->counts.pruned;
  result_.counts.boosted = reuse_->counts.boosted;
  result_.counts.flags = reuse_->counts.flags;
  const BuildStats& st = reuse_->stats;
  result_.stats.candidates = st.candidates;
  result_.stats.unclassified = st.unclassified;
  result_.stats.pruned = st.pruned;
  result_.stats.boosted = st.boosted;
  result_.stats.flag_edges = st.flag_edges;
  result_.stats.data_flags_used = st.data_flags_used;
}

// The edges neighbour_edges() will add.
uint64_t Builder::neighbour_cuts() const {
  return static_cast<uint64_t>(cut_neighbour_.size() - std::count(cut_neighbour_.begin(),
                                                                  cut_neighbour_.end(),
                                                                  Neighbour::None));
}

void Builder::neighbour_edges() {
  Graph& g = result_.graph;
  // Each thread's after the threads' before it, made on every CPU into pages filled in on
  // every CPU (one edge a cut: 2.7 M edges, 96 MB, at 19 M events).
  std::vector<uint64_t> at(threads_.size() + 1, g.edges.size());
  for (size_t t = 0; t < threads_.size(); ++t) {
    const ThreadState& st = threads_[t];
    at[t + 1] = at[t] + static_cast<uint64_t>(
                            std::count_if(cut_neighbour_.begin() + st.segment_base + 1,
                                          cut_neighbour_.begin() + st.segment_end,
                                          [](Neighbour n) { return n != Neighbour::None; }));
  }
  resize_populated(g.edges, at.back());
  const unsigned workers = at.back() - at.front() >= parallel_from_ ? worker_count() : 1u;
  parallel_for(
      threads_.size(),
      [&](size_t t) {
        const ThreadState& st = threads_[t];
        uint64_t out = at[t];
        for (uint32_t to = st.segment_base + 1; to < st.segment_end; ++to) {
          const Neighbour n = cut_neighbour_[to];
          if (n == Neighbour::None) continue;
          Edge& e = g.edges[out++];
          e.from = to - 1;
          e.to = to;
          e.from_event = g.segments[e.from].last;
          e.to_event = g.segments[to].first;
          e.kind = split_kind_;
          e.strength = n == Neighbour::Strong ? Strength::Strong : Strength::Weak;
          e.rule = g.segments[to].cut_rule;
        }
      },
      workers);
  std::vector<Neighbour>().swap(cut_neighbour_);
}

void Builder::flag_edges() {
  Graph& g = result_.graph;
  for (const FlagPair& p : flag_pairs_) {
    const auto& rule = rules_.flags[p.rule];
    Edge e;
    e.from = segment_of(p.write);
    e.to = segment_of(p.read);
    e.from_event = p.write;
    e.to_event = p.read;
    e.kind = g.intern_kind(rule.kind.empty() ? std::string_view("flag") : rule.kind);
    e.strength = rule.strength == rules::Strength::Weak ? Strength::Weak : Strength::Strong;
    e.rule = {RuleKind::Flag, p.rule};
    g.edges.push_back(e);
    ++result_.counts.flags[p.rule];
    ++result_.stats.flag_edges;
  }
  for (uint64_t n : result_.counts.flags)
    if (n > 0) ++result_.stats.data_flags_used;
  event_segment_.clear();
  event_segment_.shrink_to_fit();
}

}  // namespace cw::engine::build
