// InteractiveSlicing (the Argus paper, Algorithm 1): back from a segment along the edge that
// best explains each step, asking where the choice is close.
#include <fmt/format.h>

#include <algorithm>

#include "engine/diagnosis/diagnoser.h"

namespace cw::engine::diagnose_detail {

namespace {

// Two options closer than this in cost are a real choice: the user is asked. Further
// apart, the cheaper one is taken without a question (a strong edge against stopping, a
// boosted edge against a plain weak one).
constexpr double kAmbiguityMargin = 2.0;

}  // namespace

// Backwards from `start` while one incoming edge clearly explains each segment; asks
// where the choice is close. Returns the path origin → … → start.
std::vector<PathStep> Diagnoser::slice(uint32_t start) {
  std::vector<uint32_t> segs{start}, edges;
  on_path_[start] = true;
  uint32_t v = start;
  uint64_t queued_since = 0;  // following a message queued since then behind v's thread
  while (segs.size() < opt_.max_depth) {
    progress(++d_.search_steps);
    std::vector<uint32_t> in = incoming_by_source(g_, v, beam_.costs);
    // What reached the segment after it acted on the path (sent the message, woke the
    // thread, exited) cannot have caused that: a server's answer is not explained by the
    // signal that stopped it later in the same segment.
    const uint64_t acted =
        edges.empty() ? UINT64_MAX : trace_.events[g_.edges[edges.back()].from_event].ts;
    std::erase_if(in, [&](uint32_t ei) { return trace_.events[g_.edges[ei].to_event].ts > acted; });
    if (!in.empty() && caused_from_path(v, in[0])) break;
    // Sources already on the path would make a cycle (incoming_by_source keeps each
    // source's cheapest edge, so leaving them out here is the same as skipping them).
    std::erase_if(in, [&](uint32_t ei) { return on_path_[g_.edges[ei].from]; });
    if (in.empty()) break;  // the first segment of its thread, or nothing explains it
    // The thread that ended the segment's wait is the next step back, weak edge or not: a
    // reader that drained a full pipe, a holder whose exit released a lock. Its edge comes
    // before every other option, stopping included (a hung thread is never its own cause
    // when another thread ended its wait); a weak one may still be asked about. What a
    // rule says carried no causality (an interrupt's wake-up, pruned) is no edge at all.
    // A kernel worker's wake-up is the kernel finishing work (an I/O's completion), not a
    // thread the wait waited for: it keeps its place by cost.
    const SegmentProfile vp = profile_segment(trace_, events_, g_, v);
    uint32_t waker = vp.longest_block_ns > 0 ? wake_edge(trace_, events_, g_, v, vp) : kNoIndex;
    if (waker != kNoIndex) {
      const ThreadInfo* from = trace_.thread(g_.segments[g_.edges[waker].from].tid);
      if (from && from->kernel && g_.edges[waker].strength == Strength::Weak) waker = kNoIndex;
    }
    // The waker speaks for its source: of a writer's edges as cheap as one another (its
    // bytes, and the wake-up its close made after the wait had ended), the one that ended
    // the wait.
    if (waker != kNoIndex && std::find(in.begin(), in.end(), waker) == in.end() &&
        trace_.events[g_.edges[waker].to_event].ts <= acted)
      for (uint32_t& ei : in)
        if (g_.edges[ei].from == g_.edges[waker].from &&
            edge_cost(g_.edges[ei], beam_.costs) >= edge_cost(g_.edges[waker], beam_.costs)) {
          ei = waker;
          break;
        }
    // A segment that never waited was started by what began it (its thread's creation,
    // its own previous segment) and did its work on what it read along the way: a request
    // found already queued. When exactly one strong edge from another thread arrived after
    // the segment began, that request stands where a waker would (two of them are asked).
    if (waker == kNoIndex && vp.longest_block_ns == 0) {
      uint32_t received = kNoIndex, count = 0;
      for (uint32_t ei : in) {
        const Edge& e = g_.edges[ei];
        if (e.strength != Strength::Strong || g_.segments[e.from].tid == g_.segments[v].tid ||
            trace_.events[e.to_event].ts <= g_.segments[v].start_ns)
          continue;
        received = ei;
        ++count;
      }
      if (count == 1) waker = received;
    }
    auto option = [&](uint32_t ei) {
      Option o;
      o.edge = ei;
      o.segment = g_.edges[ei].from;
      o.cost = path_cost(ei);
      o.label = edge_label(ei);
      if (evidence_) o.evidence = segment_evidence(o.segment);
      return o;
    };
    std::vector<Option> options;
    for (uint32_t ei : in) {
      options.push_back(option(ei));
      if (options.size() == 8) break;
    }
    // The waker is offered even when eight cheaper edges came first.
    if (waker != kNoIndex && std::find(in.begin(), in.end(), waker) != in.end() &&
        std::none_of(options.begin(), options.end(),
                     [&](const Option& o) { return o.edge == waker; }))
      options.push_back(option(waker));
    Option stop;
    stop.stop = true;
    stop.cost = beam_.costs.stop;
    stop.label = fmt::format("stop here: {} is where this began", who(v));
    if (evidence_) stop.evidence = segment_evidence(v);
    options.push_back(stop);
    auto is_waker = [&](const Option& o) {
      return waker != kNoIndex && !o.stop && o.edge == waker;
    };
    std::stable_sort(options.begin(), options.end(), [&](const Option& a, const Option& b) {
      if (is_waker(a) != is_waker(b)) return is_waker(a);
      return a.cost < b.cost;
    });
    Option pick = options[0];
    // Behind a queued message, back through the thread's own segments until the one that
    // was running when the message was sent, or one that another thread's request started
    // (an event loop's item): the work it waited behind may span several turns of the loop
    // (a long request, then the accept and the dispatch of the next), and only there does
    // the slice look for what started that work.
    const Option* own = queued_since != 0 ? own_previous(v, options) : nullptr;
    const bool requested = std::any_of(options.begin(), options.end(), [&](const Option& o) {
      return !o.stop && g_.edges[o.edge].strength == Strength::Strong &&
             g_.segments[o.segment].tid != g_.segments[v].tid;
    });
    if (own && !requested && g_.segments[v].start_ns > queued_since) {
      v = own->segment;
      edges.push_back(own->edge);
      segs.push_back(v);
      on_path_[v] = true;
      continue;
    }
    queued_since = 0;
    // A strong edge that ended the segment's wait leaves nothing to ask, unless another
    // strong edge into the segment was sent during that wait too (two requests one poll
    // returned): it is first by the rule above whatever the cost of the path behind it.
    auto also_ended = [&](const Option& o) {
      if (o.stop || o.edge == waker || g_.edges[o.edge].strength != Strength::Strong) return false;
      const uint64_t sent = trace_.events[g_.edges[o.edge].from_event].ts;
      return sent >= vp.longest_block_start && sent <= vp.longest_block_start + vp.longest_block_ns;
    };
    const bool certain = is_waker(options[0]) &&
                         g_.edges[options[0].edge].strength == Strength::Strong &&
                         std::none_of(options.begin(), options.end(), also_ended);
    if (!certain && options[1].cost - options[0].cost < kAmbiguityMargin && ambiguous(options)) {
      Question q;
      q.kind = QuestionKind::Edge;
      q.subject = v;
      q.text = fmt::format("What made {} run at {:.6f} s? Several events could have.", who(v),
                           secs(g_.segments[v].start_ns));
      q.help =
          "The segment has several incoming edges, or only weak ones (a wake-up or a "
          "split that may not be causal). Options are ranked by the mean edge cost of the "
          "best path behind them (strong edges cost 1, boosted weak 3, weak 6, rules may "
          "set others); stopping costs 5. "
          "Pick the event that made this segment run, or stop the slice here.";
      q.options = std::move(options);
      pick = ask(std::move(q));
    }
    const Option chosen = pick;
    pick = queued_behind(v, pick, options);
    if (pick.stop) break;
    if (pick.edge != chosen.edge) queued_since = trace_.events[g_.edges[chosen.edge].from_event].ts;
    v = pick.segment;
    edges.push_back(pick.edge);
    segs.push_back(v);
    on_path_[v] = true;
  }
  for (uint32_t s : segs) on_path_[s] = false;
  std::vector<PathStep> path;
  for (size_t k = segs.size(); k-- > 0;) path.push_back({segs[k], k > 0 ? edges[k - 1] : kNoIndex});
  return path;
}

// Whether the best explanation of `v` (`best_edge`) is a strong edge from a segment already on
// the path: a step that sent a request and read its answer without blocking in between is one
// segment, both the origin and the end of the exchange. The slice has come full circle there; a
// weaker edge from elsewhere would explain `v` worse.
bool Diagnoser::caused_from_path(uint32_t v, uint32_t best_edge) const {
  const Edge& best = g_.edges[best_edge];
  return on_path_[best.from] && best.strength == Strength::Strong &&
         g_.segments[best.from].tid != g_.segments[v].tid;
}

// Whether close costs are worth a question (Argus asks at several incoming edges or
// weak ones): not when the best option is the only strong edge from another thread, nor
// when the only alternatives to stopping are the thread's own neighbour edges.
bool Diagnoser::ambiguous(const std::vector<Option>& options) const {
  auto from_other_thread = [&](const Option& o) {
    if (o.stop) return false;
    const Edge& e = g_.edges[o.edge];
    return g_.segments[e.from].tid != g_.segments[e.to].tid;
  };
  auto strong = [&](const Option& o) {
    return from_other_thread(o) && g_.edges[o.edge].strength == Strength::Strong;
  };
  if (strong(options[0]) && std::count_if(options.begin(), options.end(), strong) == 1)
    return false;
  return std::any_of(options.begin(), options.end(), from_other_thread);
}

// An option's cost: the mean edge cost of the best path that starts with edge `ei` and
// goes back `lookback` edges in all (the beam's lookback). A weak edge followed by
// strong ones is worth following; a weak edge leading only to weak ones is not.
double Diagnoser::path_cost(uint32_t ei) {
  const double first = edge_cost(g_.edges[ei], beam_.costs);
  if (beam_.lookback <= 1) return first;
  BeamOptions o = beam_;
  o.max_depth = beam_.lookback - 1;
  BeamResult r = beam_search(g_, g_.edges[ei].from, o, on_path_);
  d_.search_steps += r.steps;
  double best = first;
  for (const BeamPath& p : r.paths)
    best = std::min(best, (first + p.cost) / static_cast<double>(1 + p.edges.size()));
  return best;
}

// A message that was sent before the segment it woke even began waited in a queue
// while the thread did something else: when that took most of the hang (a server busy
// with another client's request, computing, sleeping or blocked on its behalf, not idle in
// its loop's wait), the thread's own previous work is what delayed it,
// and the path goes on through it (to what started that work). Returns the option to
// follow instead of `pick`, or `pick`.
Option Diagnoser::queued_behind(uint32_t v, const Option& pick,
                                const std::vector<Option>& options) const {
  if (pick.stop || slice_window_ == 0) return pick;
  const Edge& e = g_.edges[pick.edge];
  const Segment& sv = g_.segments[v];
  if (g_.segments[e.from].tid == sv.tid) return pick;
  const uint64_t sent = trace_.events[e.from_event].ts;
  if (sent >= sv.start_ns) return pick;
  // Busy: on a CPU, waiting for one, or blocked anywhere but in its loop's wait for the
  // next event (a server that sleeps or waits on a lock for one request delays the next
  // as one that computes does).
  SegmentProfile gap = profile_range(trace_, events_, sv.tid, sent, sv.start_ns);
  uint64_t idle = 0;
  for (uint32_t s = v; s-- > 0 && g_.segments[s].tid == sv.tid && g_.segments[s].end_ns > sent;) {
    const RuleRef& cut = g_.segments[s].cut_rule;
    const bool loop_wait = cut.kind == RuleKind::Split &&
                           cut.index < g_.rule_names.split_loops.size() &&
                           g_.rule_names.split_loops[cut.index];
    if (loop_wait)
      idle += profile_range(trace_, events_, sv.tid, std::max(g_.segments[s].start_ns, sent),
                            std::min(g_.segments[s].end_ns, sv.start_ns))
                  .blocked_ns;
  }
  const uint64_t blocked = gap.blocked_ns > idle ? gap.blocked_ns - idle : 0;
  if (gap.on_cpu_ns + gap.runnable_ns + blocked <
      kAbnormalShare * static_cast<double>(slice_window_))
    return pick;
  if (const Option* own = own_previous(v, options)) return *own;
  return pick;
}

// The option that goes back to the segment of v's thread just before v, if offered.
const Option* Diagnoser::own_previous(uint32_t v, const std::vector<Option>& options) const {
  for (const Option& o : options)
    if (!o.stop && g_.segments[o.segment].tid == g_.segments[v].tid && o.segment + 1 == v)
      return &o;
  return nullptr;
}

}  // namespace cw::engine::diagnose_detail
