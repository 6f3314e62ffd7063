#include "engine/diagnosis/diagnose.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "base/terminal_text.h"
#include "engine/diagnosis/beam_search.h"
#include "engine/diagnosis/cpu_contention.h"
#include "engine/diagnosis/logical_wait.h"
#include "engine/diagnosis/polling_end.h"
#include "engine/diagnosis/similar_segments.h"
#include "engine/diagnosis/stack_depth.h"
#include "engine/graph/expr_eval.h"
#include "engine/graph/span_tree.h"
#include "rules/lua_host.h"
#include "trace/command_marker.h"
#include "trace/names.h"

namespace cw::engine {

std::string_view question_kind_name(QuestionKind k) {
  switch (k) {
    case QuestionKind::Edge: return "edge";
    case QuestionKind::Baseline: return "baseline";
    case QuestionKind::Recurse: return "recurse";
  }
  return "?";
}

std::string_view answer_source_name(AnswerSource s) {
  switch (s) {
    case AnswerSource::User: return "user";
    case AnswerSource::Answers: return "answers";
    case AnswerSource::Rule: return "rule";
    case AnswerSource::Auto: return "auto";
  }
  return "?";
}

namespace {

// Two options closer than this in cost are a real choice: the user is asked. Further
// apart, the cheaper one is taken without a question (a strong edge against stopping, a
// boosted edge against a plain weak one).
constexpr double kAmbiguityMargin = 2.0;
// Of a culprit's window, the share it must have spent blocked, busy or yielding to be
// called hung itself.
constexpr double kAbnormalShare = 0.5;
// A busy culprit's segments looked at for the busiest one.
constexpr uint32_t kMaxSegmentsScanned = 256;

class Diagnoser {
 public:
  Diagnoser(const Trace& trace, const BuildResult& built, const rules::RuleSet& rules,
            const DiagnoseOptions& options)
      : trace_(trace),
        g_(built.graph),
        opt_(options),
        own_events_(options.events ? std::nullopt
                                   : std::optional<ThreadEvents>(std::in_place, trace)),
        events_(options.events ? *options.events : *own_events_),
        answerer_(options.answerer ? options.answerer : &auto_),
        spans_(trace.schema),
        lua_(rules),
        eval_(trace, spans_, &lua_),
        on_path_(g_.segments.size(), false),
        t0_(trace_start_ns(trace)) {
    beam_.width = options.beam_width;
    beam_.lookback = options.lookback;
    beam_.max_depth = options.max_depth;
    for (const auto& a : rules.answers)
      answer_rules_.push_back(
          {&a, eval_.prepare(a.subject, a.origin), eval_.prepare(a.choose, a.origin)});
  }

  Diagnosis run() {
    FoundHang found;
    if (opt_.known_hang) {
      found = *opt_.known_hang;
    } else {
      found.hang = find_hang(trace_, g_, events_, opt_.symptom, &found.why, &found.no_hang);
      if (opt_.hang_found) opt_.hang_found(found);
    }
    const std::optional<Hang>& hang = found.hang;
    if (!hang && found.no_hang) throw NoHangFound(found.why);
    if (!hang) throw DiagnoseError(found.why);
    d_.hang = *hang;
    recording_notes();
    progress(0);
    visited_threads_.insert(hang->tid);
    const uint64_t block_end = hang->profile.longest_block_start + hang->profile.longest_block_ns;
    Window window = hang->kind == HangKind::LongWait
                        ? Window{hang->profile.longest_block_start, block_end}
                        : Window{hang->start_ns, hang->end_ns};
    vertex_ = hang->segment;
    SegmentProfile profile = hang->profile;
    if (hang->kind == HangKind::LongWait && hang->segment != kNoIndex) {
      // A wait in slices (a poll loop with a timeout): the slice a wake-up ended is the one
      // whose waker to follow, over the whole logical wait.
      LogicalWait lw = logical_wait(trace_, events_, g_, hang->segment);
      if (lw.woken != kNoIndex && lw.woken != hang->segment) {
        vertex_ = lw.woken;
        profile = profile_segment(trace_, events_, g_, vertex_);
        window = Window{std::min(window.start, lw.start_ns), std::max(window.end, lw.end_ns)};
        d_.notes.push_back(
            profile.longest_block_ns == 0
                ? fmt::format("{}'s wake-up was not recorded; followed the segment at {:.6f} s "
                              "that took what its wait was woken for",
                              who(vertex_), secs(g_.segments[vertex_].start_ns))
                : fmt::format("{}'s wait timed out and began again; followed the slice at "
                              "{:.6f} s that a wake-up ended",
                              who(vertex_), secs(g_.segments[vertex_].start_ns)));
      }
    }
    diagnose_vertex(vertex_, hang->kind, profile, 0, window, hang->first_segment,
                    std::max(hang->last_segment, vertex_));
    std::stable_sort(d_.root_causes.begin(), d_.root_causes.end(),
                     [](const RootCause& a, const RootCause& b) { return a.depth > b.depth; });
    finish_path();
    if (auto note = shallow_stacks_note(trace_, d_)) d_.notes.push_back(std::move(*note));
    return std::move(d_);
  }

 private:
  // What the recorder said about how it recorded (trace/command_marker.h: data flags traced
  // by instruction probes because watchpoints did not fire, ...), for the reader to weigh
  // the evidence.
  void recording_notes() {
    for (std::string& n : recorder_notes(trace_)) d_.notes.push_back("recording: " + n);
  }

  struct Window {
    uint64_t start = 0, end = 0;
  };
  struct AnswerRuleRef {
    const rules::AnswerRule* rule;
    PreparedExpr subject, choose;
  };

  // ---- describing segments and edges ----------------------------------------------

  double secs(uint64_t ts) const { return static_cast<double>(ts - std::min(ts, t0_)) / 1e9; }
  static std::string ms(uint64_t ns) {
    return fmt::format("{:.1f} ms", static_cast<double>(ns) / 1e6);
  }

  // For sentences (what, questions): a name's control bytes shown as \xNN.
  std::string thread_name(Tid tid) const { return terminal_text(thread_comm(trace_, tid, "?")); }
  std::string process_name(Pid pid) const { return terminal_text(process_comm(trace_, pid, "?")); }
  std::string who(uint32_t s) const {
    const Segment& seg = g_.segments[s];
    std::string t = thread_name(seg.tid), p = process_name(seg.pid);
    if (t == p) return fmt::format("{} {}", t, seg.tid);
    return fmt::format("{} {} ({} {})", t, seg.tid, p, seg.pid);
  }

  // How the hang's longest block ended, in words.
  std::string hang_end_reason() const {
    const SegmentProfile& p = d_.hang.profile;
    if (p.longest_block_exit == kNoIndex) return "it had not ended when the trace stopped";
    std::string ret = field_text(p.longest_block_exit, "ret");
    if (ret == std::to_string(-ETIMEDOUT))
      return fmt::format("it timed out after {}", ms(p.longest_block_ns));
    return fmt::format("it returned {} after {}", ret.empty() ? "?" : ret, ms(p.longest_block_ns));
  }

  // A field of an event, by name, as text; "" when the kind has no such field.
  std::string field_text(uint32_t event, std::string_view name) const {
    const Event& e = trace_.events[event];
    int f = trace_.schema.field_index(e.kind, name);
    if (f < 0) return {};
    if (trace_.schema.kind(e.kind).fields[f].type == FieldType::Str)
      return std::string(trace_.strings.get(static_cast<StrId>(trace_.value(e, f))));
    return std::to_string(trace_.int_value(e, f));
  }

  std::string call_text(uint32_t call) const {
    if (call == kNoIndex) return "outside a recorded system call";
    std::string name = field_text(call, "name");
    std::string fd = field_text(call, "fd");
    if (!fd.empty() && fd != "-1") return fmt::format("in {} (fd {})", name, fd);
    return fmt::format("in {}", name);
  }

  std::string syscall_summary(const SegmentProfile& p, size_t n = 3) const {
    std::string out;
    for (size_t k = 0; k < p.by_name.size() && k < n; ++k)
      out += fmt::format("{}{} ×{}", out.empty() ? "" : ", ", trace_.strings.get(p.by_name[k].name),
                         p.by_name[k].count);
    if (p.by_name.size() > n) out += ", …";
    return out.empty() ? "no system call" : out;
  }

  // A wait made of many blocks, none most of it: a loop that waited on a device turn
  // after turn (an fsync per record), or one wait retried after timeouts.
  static bool waits_in_turns(const SegmentProfile& p) {
    return p.blocks > 1 && p.blocked_ns >= 2 * p.longest_block_ns;
  }

  std::string behaviour(HangKind kind, const SegmentProfile& p) const {
    switch (kind) {
      case HangKind::LongWait:
        if (waits_in_turns(p))
          return fmt::format("blocked {} in {} waits ({}{}), the longest {} {}", ms(p.blocked_ns),
                             p.blocks, syscall_summary(p),
                             2 * p.uninterruptible_ns >= p.blocked_ns
                                 ? "; uninterruptible: a device or the kernel"
                                 : "",
                             ms(p.longest_block_ns), call_text(p.longest_block_call));
        return fmt::format("blocked {} {}", ms(p.longest_block_ns),
                           call_text(p.longest_block_call));
      case HangKind::LongRunning:
        return fmt::format("ran {} on a CPU ({} runnable) with {}", ms(p.on_cpu_ns),
                           ms(p.runnable_ns), syscall_summary(p));
      case HangKind::RepeatedYield:
        return fmt::format("looped for {}: {}", ms(p.end_ns - p.start_ns), syscall_summary(p));
    }
    return {};
  }

  std::string segment_line(uint32_t s) const {
    const Segment& seg = g_.segments[s];
    return fmt::format("{} at {:.6f} s for {}", who(s), secs(seg.start_ns),
                       ms(seg.end_ns - seg.start_ns));
  }

  std::string segment_evidence(uint32_t s) const {
    SegmentProfile p = profile_segment(trace_, events_, g_, s);
    std::string out =
        fmt::format("{}: on CPU {}, runnable {}, blocked {}; {}", segment_line(s), ms(p.on_cpu_ns),
                    ms(p.runnable_ns), ms(p.blocked_ns), syscall_summary(p, 6));
    if (p.longest_block_ns > 0)
      out += fmt::format("; longest block {} {}", ms(p.longest_block_ns),
                         call_text(p.longest_block_call));
    if (StackId st = stack_of_segment(s, p)) out += "; stack: " + stack_text(st);
    return out;
  }

  std::string stack_text(StackId id) const {
    // The innermost user frames: a one-line summary has no room for the kernel's (the
    // probe and the scheduler come first there); the full report lists them.
    std::string out;
    size_t shown = 0;
    for (const Frame& f : frames_of(trace_.stacks[id])) {
      if (f.kernel) continue;
      out += (shown ? " ← " : "") + frame_name(trace_.strings, f);
      if (++shown == 4) break;
    }
    return out;
  }

  // The most telling stack of a segment: its longest block's, else its last one.
  StackId stack_of_segment(uint32_t s, const SegmentProfile& p) const {
    if (p.longest_block_call != kNoIndex && trace_.events[p.longest_block_call].stack)
      return trace_.events[p.longest_block_call].stack;
    const Segment& seg = g_.segments[s];
    const auto& list = events_.of(seg.tid);
    auto lo = std::lower_bound(list.begin(), list.end(), seg.first);
    auto hi = std::upper_bound(lo, list.end(), seg.last);
    for (auto it = hi; it != lo; --it)
      if (StackId st = trace_.events[*(it - 1)].stack) return st;
    return 0;
  }

  std::string edge_label(uint32_t ei) const {
    const Edge& e = g_.edges[ei];
    return fmt::format("{} → {}: {} ({}) at {:.6f} s", who(e.from), who(e.to), g_.kind_name(e),
                       strength_name(e.strength), secs(trace_.events[e.to_event].ts));
  }

  // ---- questions ------------------------------------------------------------------

  void progress(uint32_t step) {
    if (opt_.progress) opt_.progress("search", step, 0);
  }

  Value kind_value(const Edge& e) {
    const std::string& k = g_.kind_name(e);
    return {rules::ValueType::Str, static_cast<int64_t>(trace_.strings.find(k)), k.c_str()};
  }

  // The option an answer rule picks, or kNoIndex.
  uint32_t rule_choice(const Question& q, std::string* rule_id) {
    const uint32_t first = g_.segments[q.subject].first;
    for (auto& a : answer_rules_) {
      if (static_cast<uint8_t>(a.rule->question) != static_cast<uint8_t>(q.kind)) continue;
      if (!eval_.test(a.subject, EvalScope{{first, SpanTree::kRoot}, {}, {}})) continue;
      for (uint32_t k = 0; k < q.options.size(); ++k) {
        const Option& o = q.options[k];
        bool hit = false;
        switch (a.rule->choice) {
          case rules::AnswerRule::Choice::Stop: hit = o.stop; break;
          case rules::AnswerRule::Choice::Recurse: hit = !o.stop; break;
          case rules::AnswerRule::Choice::Option:
            if (o.stop) break;
            if (q.kind == QuestionKind::Edge) {
              const Edge& e = g_.edges[o.edge];
              Value kind = kind_value(e);
              EvalScope scope{{}, {e.from_event, SpanTree::kRoot}, {e.to_event, SpanTree::kRoot}};
              scope.edge_kind = &kind;
              hit = eval_.test(a.choose, scope);
            } else {
              hit = eval_.test(a.choose,
                               EvalScope{{g_.segments[o.segment].first, SpanTree::kRoot}, {}, {}});
            }
            break;
        }
        if (hit) {
          *rule_id = a.rule->origin.id;
          return k;
        }
      }
    }
    return kNoIndex;
  }

  // Asks (rules first, then the answerer) unless the question was answered already for
  // this subject; records it; returns the chosen option.
  const Option& ask(Question q) {
    auto key = std::make_pair(q.kind, q.subject);
    if (auto it = asked_.find(key); it != asked_.end()) {
      // The same question again (a slice reaching the same segment): same answer.
      const Query& prev = d_.queries[it->second];
      for (const Option& o : q.options)
        if (o.label == prev.question.options[prev.answer.option].label) {
          chosen_ = o;
          return chosen_;
        }
    }
    Answer a;
    std::string rule;
    uint32_t k = rule_choice(q, &rule);
    if (k != kNoIndex) {
      a = {k, AnswerSource::Rule, rule};
    } else {
      if (opt_.before_asking) opt_.before_asking(d_, q);
      a = answerer_->ask(q);
      if (a.option >= q.options.size()) a.option = 0;
    }
    asked_[key] = d_.queries.size();
    d_.queries.push_back({std::move(q), a});
    chosen_ = d_.queries.back().question.options[a.option];
    return chosen_;
  }

  // ---- InteractiveSlicing ---------------------------------------------------------

  // Backwards from `start` while one incoming edge clearly explains each segment; asks
  // where the choice is close. Returns the path origin → … → start.
  std::vector<PathStep> slice(uint32_t start) {
    std::vector<uint32_t> segs{start}, edges;
    on_path_[start] = true;
    uint32_t v = start;
    while (segs.size() < opt_.max_depth) {
      progress(++d_.search_steps);
      std::vector<uint32_t> in = incoming_by_source(g_, v, beam_.costs);
      // What reached the segment after it acted on the path (sent the message, woke the
      // thread, exited) cannot have caused that: a server's answer is not explained by the
      // signal that stopped it later in the same segment.
      if (!edges.empty()) {
        const uint64_t acted = trace_.events[g_.edges[edges.back()].from_event].ts;
        std::erase_if(in,
                      [&](uint32_t ei) { return trace_.events[g_.edges[ei].to_event].ts > acted; });
      }
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
      if (options[1].cost - options[0].cost < kAmbiguityMargin && ambiguous(options)) {
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
      pick = queued_behind(v, pick, options);
      if (pick.stop) break;
      v = pick.segment;
      edges.push_back(pick.edge);
      segs.push_back(v);
      on_path_[v] = true;
    }
    for (uint32_t s : segs) on_path_[s] = false;
    std::vector<PathStep> path;
    for (size_t k = segs.size(); k-- > 0;)
      path.push_back({segs[k], k > 0 ? edges[k - 1] : kNoIndex});
    return path;
  }

  // Whether the best explanation of `v` (`best_edge`) is a strong edge from a segment already on
  // the path: a step that sent a request and read its answer without blocking in between is one
  // segment, both the origin and the end of the exchange. The slice has come full circle there; a
  // weaker edge from elsewhere would explain `v` worse.
  bool caused_from_path(uint32_t v, uint32_t best_edge) const {
    const Edge& best = g_.edges[best_edge];
    return on_path_[best.from] && best.strength == Strength::Strong &&
           g_.segments[best.from].tid != g_.segments[v].tid;
  }

  // Whether close costs are worth a question (Argus asks at several incoming edges or
  // weak ones): not when the best option is the only strong edge from another thread, nor
  // when the only alternatives to stopping are the thread's own neighbour edges.
  bool ambiguous(const std::vector<Option>& options) const {
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
  double path_cost(uint32_t ei) {
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

  // ---- Diagnose (the Argus paper, Algorithm 1) -------------------------------------

  RootCause root(uint32_t s, HangKind kind, const SegmentProfile& p, uint32_t depth) const {
    RootCause r;
    r.segment = s;
    r.kind = kind;
    r.what = behaviour(kind, p);
    r.start_ns = p.start_ns;
    r.end_ns = p.end_ns;
    if (kind == HangKind::LongWait && p.longest_block_ns > 0) {
      // What ended the wait, when the graph knows: a timer, a message, a flag … A wait its
      // own timer ended was ended by that, not by what others sent it afterwards.
      const bool own_timer =
          wake_edge(trace_, events_, g_, s, p) == kNoIndex && own_timer_ended(s, p);
      for (uint32_t ei : incoming_by_source(g_, s, beam_.costs)) {
        const Edge& e = g_.edges[ei];
        if (e.rule.kind == RuleKind::Split || e.rule.kind == RuleKind::Batch) continue;
        if (own_timer && g_.segments[e.from].tid != g_.segments[s].tid) continue;
        if (trace_.events[e.to_event].ts < p.longest_block_start) continue;
        if (sleeps_for_time(trace_, p.longest_block_call) && p.longest_block_exit != kNoIndex &&
            e.to_event > p.longest_block_exit)
          continue;  // bytes read after a sleep did not end it
        r.what += wait_edge_text(e, p);
        break;
      }
    }
    r.stack = stack_of_segment(s, p);
    r.depth = depth;
    return r;
  }

  // What an edge into a wait says about it. A call still open when the recording ended
  // was not ended by anything: its edge says who it is still waiting for (a lock's holder,
  // the other end of a pipe, as the packs' rules found them at the end).
  std::string wait_edge_text(const Edge& e, const SegmentProfile& p) const {
    const bool open = p.longest_block_call != kNoIndex && p.longest_block_exit == kNoIndex;
    return fmt::format("; {} a {} edge ({}) from {} at {:.6f} s",
                       open ? "still waiting when the recording ended, for" : "ended by",
                       g_.kind_name(e), strength_name(e.strength), who(e.from),
                       secs(trace_.events[e.from_event].ts));
  }

  // A flag edge into segments [first, last] of one thread.
  // A segment is blamed once: a culprit found by comparison and then diagnosed itself
  // keeps its first entry.
  void add_root(RootCause r) {
    for (const RootCause& have : d_.root_causes)
      if (have.segment == r.segment) return;
    d_.root_causes.push_back(std::move(r));
  }

  bool has_flag_edge_into(uint32_t first, uint32_t last, uint32_t* edge) const {
    const Tid tid = g_.segments[first].tid;
    for (uint32_t s = first; s <= last && s < g_.segments.size() && g_.segments[s].tid == tid; ++s)
      for (auto [it, end] = in_edges(s, g_.csr); it != end; ++it) {
        const Edge& e = g_.edges[g_.csr[*it]];
        if (e.rule.kind == RuleKind::Flag) {
          *edge = g_.csr[*it];
          return true;
        }
      }
    return false;
  }

  void diagnose_vertex(uint32_t seg, HangKind kind, const SegmentProfile& prof, uint32_t depth,
                       Window window, uint32_t first, uint32_t last) {
    switch (kind) {
      case HangKind::LongRunning: {
        // Slice back to the event that started the work.
        add_root(root(seg, kind, prof, depth));
        std::vector<PathStep> path = slice(seg);
        if (depth == 0) d_.path = std::move(path);
        blame_cpu_takers(seg, prof, depth, window);
        return;
      }
      case HangKind::RepeatedYield: {
        // A flag write that ended the loop explains it: the writer is the culprit. The
        // read that saw it is in the stretch or just after it.
        uint32_t flag_edge = kNoIndex;
        if (has_flag_edge_into(first, last + 1, &flag_edge)) {
          add_root(root(seg, kind, prof, depth));
          const size_t before = d_.root_causes.size();
          examine_thread(g_.edges[flag_edge].from, window, depth);
          // The path runs through the write that ended the loop, whatever else the loop's
          // last turn went on to collect (a child's end reaped after the loop).
          if (depth == 0) d_.path = path_through(before, flag_edge);
          return;
        }
        if (follow_polling_end(seg, kind, prof, depth, window, first, last)) return;
        if (prof.flag_events > 0 && !g_.rule_names.flags.empty()) {
          // Flag reads but no write set it: the missing write is what to find.
          if (depth == 0)
            d_.notes.push_back(
                fmt::format("{} read a data flag in its loop, but no write set it while it looped: "
                            "looking for the thread that normally does",
                            who(seg)));
          break;
        }
        add_root(root(seg, kind, prof, depth));
        if (depth == 0) {
          d_.yield_without_flag = true;
          d_.yield_loop.syscalls = prof.by_name;
          collect_call_sites(first, last);
          d_.path = {{seg, kNoIndex}};
          d_.notes.push_back(fmt::format(
              "{} polled in a loop and no data-flag event explains when it stopped: declare "
              "the variable it waits for as a `flag` in a pack and record again",
              who(seg)));
        }
        return;
      }
      case HangKind::LongWait: break;
    }
    long_wait(seg, prof, depth, window);
  }

  // A thread busy over the window that mostly waited for a CPU (preempted, runnable) was
  // slowed by the threads that ran on its CPU meanwhile: no wake-up joins them, so the
  // scheduler's switches on that CPU name them. Each that took a fifth or more of that
  // time is a root cause one level below, and the path leads from them (finish_path) —
  // when it belongs to the recorded command. The rest of the machine's load (another
  // user's build) slowed it too, but the program's own work is what the recording is
  // about: that load is named in a note.
  void blame_cpu_takers(uint32_t seg, const SegmentProfile& p, uint32_t depth, Window window) {
    if (!starved_of_cpu(p)) return;
    const Tid tid = g_.segments[seg].tid;
    const CpuContention c = cpu_contention(trace_, events_, tid, window.start, window.end);
    if (c.taken_ns == 0) return;
    const Pid command = command_pid(trace_);
    std::vector<std::string> named, outside;
    for (const CpuTaker& t : c.takers) {
      if (5 * t.ran_ns < c.taken_ns || named.size() + outside.size() == 3) break;
      const uint32_t s = g_.segment_of(trace_, t.longest_run);
      if (s == kNoIndex) continue;
      if (command != 0 && !in_process_tree(trace_, g_.segments[s].pid, command)) {
        outside.push_back(fmt::format("{} ({})", who(s), ms(t.ran_ns)));
        continue;
      }
      RootCause r;
      r.segment = s;
      r.kind = HangKind::LongRunning;
      r.what =
          fmt::format("ran {} on the CPU {} was waiting for ({} % of its {} runnable)",
                      ms(t.ran_ns), who(seg), 100 * t.ran_ns / c.runnable_ns, ms(c.runnable_ns));
      r.stack = stack_of_segment(s, profile_segment(trace_, events_, g_, s));
      r.depth = depth + 1;
      r.start_ns = window.start;
      r.end_ns = window.end;
      visited_threads_.insert(t.tid);
      named.push_back(who(s));
      add_root(std::move(r));
    }
    const std::string starved = fmt::format(
        "{} was runnable but not running for {} of {} (it ran {}): CPU contention", who(seg),
        ms(p.runnable_ns), ms(p.end_ns - std::min(p.end_ns, p.start_ns)), ms(p.on_cpu_ns));
    if (!named.empty())
      d_.notes.push_back(
          fmt::format("{}; the CPU it waited for ran {}", starved, fmt::join(named, ", ")));
    if (!outside.empty())
      d_.notes.push_back(fmt::format(
          "{}{}; outside the recorded command, its CPU ran {}: the machine's load slowed it",
          named.empty() ? starved : who(seg), named.empty() ? "" : " also",
          fmt::join(outside, ", ")));
  }

  // A polling loop that an `ends_polling` edge ended (a lock's release joined to the try
  // that got the lock): the edge's source is what the loop waited for, as a flag's writer
  // is for a loop that reads the flag. Its thread is examined over the loop's window; when
  // it was neither blocked nor busy there, the segment that ended the loop is blamed.
  bool follow_polling_end(uint32_t seg, HangKind kind, const SegmentProfile& prof, uint32_t depth,
                          Window window, uint32_t first, uint32_t last) {
    const uint32_t ei = polling_end_edge(g_, first, last + 1);
    if (ei == kNoIndex) return false;
    const Edge& e = g_.edges[ei];
    add_root(root(seg, kind, prof, depth));
    const size_t before = d_.root_causes.size();
    const bool seen = visited_threads_.count(g_.segments[e.from].tid) > 0;
    examine_thread(e.from, window, depth);
    if (d_.root_causes.size() == before && !seen && !stopped_) {
      SegmentProfile sp = profile_segment(trace_, events_, g_, e.from);
      blame(e.from, classify(sp), sp, depth);
    }
    if (depth == 0) {
      d_.path = path_through(before, ei);
      d_.notes.push_back(fmt::format("{}'s loop ended with a {} edge from {} at {:.6f} s", who(seg),
                                     g_.kind_name(e), who(e.from),
                                     secs(trace_.events[e.from_event].ts)));
    }
    return true;
  }

  // The causal path of a loop that `edge` ended: from the root cause found in the edge's
  // source thread since root cause `before` (if any) along that thread to the edge, then
  // the loop's segment it lands on. finish_path() puts deeper culprits before it.
  std::vector<PathStep> path_through(size_t before, uint32_t edge) const {
    const Tid source = g_.segments[g_.edges[edge].from].tid;
    uint32_t origin = kNoIndex;
    for (size_t k = before; k < d_.root_causes.size(); ++k)
      if (g_.segments[d_.root_causes[k].segment].tid == source) origin = d_.root_causes[k].segment;
    return polling_end_path(g_, origin, edge);
  }

  void collect_call_sites(uint32_t first, uint32_t last) {
    std::set<StackId> seen;
    for (uint32_t s = first; s <= last && s < g_.segments.size(); ++s) {
      const Segment& seg = g_.segments[s];
      const auto& list = events_.of(seg.tid);
      auto lo = std::lower_bound(list.begin(), list.end(), seg.first);
      auto hi = std::upper_bound(lo, list.end(), seg.last);
      for (auto it = lo; it != hi && seen.size() < 8; ++it)
        if (StackId st = trace_.events[*it].stack; st && seen.insert(st).second)
          d_.yield_loop.call_sites.push_back(st);
    }
  }

  // LongWait: baseline, its causal path, and a thread-by-thread comparison.
  void long_wait(uint32_t seg, const SegmentProfile& prof, uint32_t depth, Window window) {
    size_t causes_before = d_.root_causes.size();
    // Evidence before comparison: a wait that another thread ended has its own causal
    // path. A baseline (a quick run of the same wait) is for a wake-up that never came —
    // the wait timed out or was never woken — or when asked for.
    const uint32_t waker = wake_edge(trace_, events_, g_, seg, prof);
    uint32_t baseline = kNoIndex;
    if (waker == kNoIndex || opt_.baseline)
      baseline = choose_baseline(seg, find_similar(trace_, events_, g_, seg, prof));
    std::vector<PathStep> path;
    if (baseline != kNoIndex) {
      path = slice(baseline);
      if (depth == 0) {
        d_.baseline = baseline;
        d_.baseline_path = path;
      }
    } else {
      // The hang's own wake-up path (if it came at all) is the guide.
      slice_window_ = window.end > window.start ? window.end - window.start : 0;
      path = slice(seg);
      slice_window_ = 0;
      if (depth == 0) hang_slice_ = path;
      if (depth == 0 && waker == kNoIndex)
        d_.notes.push_back(
            fmt::format("no baseline: no other segment of {} did the same and waited briefly; "
                        "compared the threads on the hang's own causal path instead",
                        who(seg)));
      if (waker != kNoIndex && blame_heaviest(path, seg, depth, window)) return;
    }
    // Threads on the path that acted after the wait began (those before it only started
    // the request), nearest to the waiting segment first.
    const uint64_t wait_began =
        baseline != kNoIndex ? profile_segment(trace_, events_, g_, baseline).longest_block_start
                             : prof.longest_block_start;
    struct PathThread {
      Tid tid;
      uint32_t wait_call;  // the call it was woken in on the path (kNoIndex if none)
      Tid upstream;        // the thread that woke it on the path, 0 if none
    };
    std::vector<PathThread> threads;
    // Below the hang: whether the thread that woke the culprit at the path's end is the
    // hang's own thread (the culprit waited for it directly).
    bool hang_thread_on_path = false;
    if (depth > 0 && !path.empty()) {
      size_t j = path.size() - 1;
      const Tid own = g_.segments[path[j].segment].tid;
      while (j > 0 && g_.segments[path[j - 1].segment].tid == own) --j;
      // Only when the hang's thread ended the culprit's wait: an edge that started the
      // culprit (a fork) before it waited says nothing about a circle.
      hang_thread_on_path = j > 0 && g_.segments[path[j - 1].segment].tid == d_.hang.tid &&
                            path[j - 1].edge != kNoIndex &&
                            trace_.events[g_.edges[path[j - 1].edge].to_event].ts >= wait_began;
    }
    for (size_t k = path.size(); k-- > 0;) {
      if (g_.segments[path[k].segment].end_ns <= wait_began) continue;
      Tid t = g_.segments[path[k].segment].tid;
      if (t == g_.segments[seg].tid || visited_threads_.count(t)) continue;
      if (std::any_of(threads.begin(), threads.end(),
                      [&](const PathThread& p) { return p.tid == t; }))
        continue;
      // Who woke it on the path: the thread of the step before its run of steps (none
      // when the path starts with it), and the call it was woken in there.
      size_t j = k;
      while (j > 0 && g_.segments[path[j - 1].segment].tid == t) --j;
      Tid upstream = j > 0 ? g_.segments[path[j - 1].segment].tid : 0;
      uint32_t woken_in = j > 0 ? call_in_flight(t, g_.edges[path[j - 1].edge].to_event) : kNoIndex;
      threads.push_back({t, woken_in, upstream});
    }
    bool passed = false;
    Tid circle_via = 0;  // a thread that waited for the hang's own thread
    for (const PathThread& t : threads) {
      if (stopped_) return;
      if (visited_threads_.count(t.tid)) continue;  // a recursion reached it already
      if (passes_through(t.tid, t.wait_call, t.upstream, g_.segments[seg].tid, window)) {
        passed = true;
        visited_threads_.insert(t.tid);  // judged: it waited for its upstream
        if (depth > 0 && t.upstream == d_.hang.tid) circle_via = t.tid;
        continue;
      }
      uint32_t culprit = segment_in(t.tid, window);
      if (culprit == kNoIndex) continue;
      examine_thread(culprit, window, depth);
    }
    if ((circle_via != 0 || hang_thread_on_path) && d_.root_causes.size() == causes_before) {
      // The culprit waited (maybe through `circle_via`) for the hang's own thread, which
      // was waiting for it: a circular wait, which only the hang's wait ending could break.
      const std::string via =
          circle_via != 0 ? fmt::format("{}, which waited for ", thread_name(circle_via)) : "";
      d_.notes.push_back(fmt::format(
          "circular wait: {} waited for {}{}, the hang's own thread, blocked in turn on {}: the "
          "circle lasted until the hang's wait ended ({})",
          who(seg), via, thread_name(d_.hang.tid), who(seg), hang_end_reason()));
      return;
    }
    if (d_.root_causes.size() == causes_before && !stopped_ && !passed) {
      // Nobody on the path was hung: the wake-up the baseline got never came. The thread
      // that delivered it in the baseline is where to look. (Below the hang itself, `seg`
      // is already a root cause: the culprit that recursion started from.)
      if (baseline != kNoIndex && path.size() >= 2 && path[path.size() - 2].edge != kNoIndex) {
        const Edge& e = g_.edges[path[path.size() - 2].edge];
        Tid sender_tid = g_.segments[e.from].tid;
        uint32_t sender = segment_in(sender_tid, window);
        // A thread that had exited before the hang began (a child that finished) was
        // never going to send it: it is not to blame.
        const SegmentProfile life =
            profile_range(trace_, events_, sender_tid, window.start, window.end);
        const bool gone = life.exited_ns != 0 && life.exited_ns <= window.start;
        if (sender != kNoIndex && sender_tid != g_.segments[seg].tid && !gone &&
            !visited_threads_.count(sender_tid)) {
          SegmentProfile sp = profile_segment(trace_, events_, g_, sender);
          RootCause r = root(sender, classify(sp), sp, depth + 1);
          r.what = fmt::format(
              "did not send the {} that woke {} in the baseline at {:.6f} s; meanwhile it {}",
              g_.kind_name(e), who(seg), secs(trace_.events[e.to_event].ts),
              behaviour(classify(sp), sp));
          add_root(r);
          return;
        }
      }
      if (depth == 0) add_root(root(seg, HangKind::LongWait, prof, depth));
    }
  }

  // The step of the causal path `path` (origin → … → seg) that took the time: from what
  // caused it (the cause event of the edge into it, or its start, whichever is later) to
  // the event that led on, within the window. A timer wait counts from the timer's arming,
  // a thread woken by a message from when it was sent: what the thread waited for is the
  // time of the step before. When one step took most of the window, it is the root cause
  // (the path's origin only started the work); the path shown runs from it to the hang.
  bool blame_heaviest(const std::vector<PathStep>& path, uint32_t seg, uint32_t depth,
                      Window window) {
    const uint64_t len = window.end > window.start ? window.end - window.start : 0;
    size_t best = path.size();
    uint64_t best_took = 0, best_in = 0, best_out = 0;
    for (size_t k = 0; k + 1 < path.size(); ++k) {
      const Segment& sg = g_.segments[path[k].segment];
      if (sg.tid == g_.segments[seg].tid || path[k].edge == kNoIndex) continue;
      uint64_t in = std::max(sg.start_ns, window.start);
      if (k > 0 && path[k - 1].edge != kNoIndex)
        in = std::max(in, trace_.events[g_.edges[path[k - 1].edge].from_event].ts);
      uint64_t out = std::min(trace_.events[g_.edges[path[k].edge].from_event].ts, window.end);
      uint64_t took = out > in ? out - in : 0;
      if (took > best_took) {
        best = k;
        best_took = took;
        best_in = in;
        best_out = out;
      }
    }
    if (best == path.size() || best_took < kAbnormalShare * static_cast<double>(len)) return false;
    const uint32_t culprit = path[best].segment;
    const Tid tid = g_.segments[culprit].tid;
    const ThreadInfo* info = trace_.thread(tid);
    if (visited_threads_.count(tid) || (info && info->kernel)) return false;
    if (depth == 0) d_.path.assign(path.begin() + static_cast<std::ptrdiff_t>(best), path.end());
    SegmentProfile p = profile_range(trace_, events_, tid, best_in, best_out);
    // What started its work: the step before it, from another thread (another client's
    // request to a server busy with it).
    std::string started;
    if (best > 0 && path[best - 1].edge != kNoIndex &&
        g_.segments[path[best - 1].segment].tid != tid) {
      const Edge& e = g_.edges[path[best - 1].edge];
      started = fmt::format("; its work began with a {} from {} at {:.6f} s", g_.kind_name(e),
                            who(e.from), secs(trace_.events[e.from_event].ts));
    }
    waited_downstream(path, best);
    blame(culprit, classify(p), p, depth, started);
    return true;
  }

  // The threads of `path` after step `culprit` (up to the hang) were each woken by the step
  // before them: they waited, through one another, for the culprit's work. Diagnosing the
  // culprit must not blame them for it (a proxy that sent the request and then waited for
  // the upstream's answer is not what kept the upstream busy): they are judged.
  void waited_downstream(const std::vector<PathStep>& path, size_t culprit) {
    const Tid tid = g_.segments[path[culprit].segment].tid;
    for (size_t k = culprit + 1; k < path.size(); ++k)
      if (g_.segments[path[k].segment].tid != tid)
        visited_threads_.insert(g_.segments[path[k].segment].tid);
  }

  // A message that was sent before the segment it woke even began waited in a queue
  // while the thread did something else: when that took most of the hang (a server busy
  // with another client's request), the thread's own previous work is what delayed it,
  // and the path goes on through it (to what started that work). Returns the option to
  // follow instead of `pick`, or `pick`.
  Option queued_behind(uint32_t v, const Option& pick, const std::vector<Option>& options) const {
    if (pick.stop || slice_window_ == 0) return pick;
    const Edge& e = g_.edges[pick.edge];
    const Segment& sv = g_.segments[v];
    if (g_.segments[e.from].tid == sv.tid) return pick;
    const uint64_t sent = trace_.events[e.from_event].ts;
    if (sent >= sv.start_ns) return pick;
    SegmentProfile gap = profile_range(trace_, events_, sv.tid, sent, sv.start_ns);
    if (gap.on_cpu_ns + gap.runnable_ns < kAbnormalShare * static_cast<double>(slice_window_))
      return pick;
    for (const Option& o : options)
      if (!o.stop && g_.segments[o.segment].tid == sv.tid && o.segment + 1 == v) return o;
    return pick;
  }

  uint32_t choose_baseline(uint32_t seg, const std::vector<SimilarSegment>& similar) {
    if (similar.empty()) return kNoIndex;
    // Candidates woken by the same peer are the same story: keep the most relevant of
    // each; ask only when the stories differ.
    std::vector<const SimilarSegment*> groups;
    std::vector<std::string> group_keys;
    for (const SimilarSegment& c : similar) {
      std::string key = waker_name(c.segment);
      if (std::find(group_keys.begin(), group_keys.end(), key) != group_keys.end()) continue;
      group_keys.push_back(key);
      groups.push_back(&c);
    }
    if (groups.size() == 1) return groups[0]->segment;
    Question q;
    q.kind = QuestionKind::Baseline;
    q.subject = seg;
    q.text = fmt::format("Which run is the normal one to compare {}'s wait with?", who(seg));
    q.help =
        "These segments did the same system calls and messages as the hang's, but their "
        "wait ended quickly (or with another result). They were woken by different peers, so "
        "their causal paths differ. Options: the latest before the hang first.";
    for (size_t k = 0; k < groups.size() && k < 6; ++k) {
      Option o;
      o.segment = groups[k]->segment;
      o.cost = static_cast<double>(k);
      o.label = fmt::format("{} (waited {}, woken by {})", segment_line(o.segment),
                            ms(groups[k]->wait_ns), group_keys[k]);
      if (evidence_) o.evidence = segment_evidence(o.segment);
      q.options.push_back(std::move(o));
    }
    Option none;
    none.stop = true;
    none.cost = static_cast<double>(q.options.size());
    none.label = "none of these: no baseline";
    q.options.push_back(none);
    const Option& pick = ask(std::move(q));
    return pick.stop ? kNoIndex : pick.segment;
  }

  std::string waker_name(uint32_t s) const {
    std::vector<uint32_t> in = incoming_by_source(g_, s, beam_.costs);
    for (uint32_t ei : in)
      if (g_.segments[g_.edges[ei].from].tid != g_.segments[s].tid)
        return thread_name(g_.segments[g_.edges[ei].from].tid) + " (" + g_.kind_name(g_.edges[ei]) +
               ")";
    return "its own thread";
  }

  // The segment of `tid` running or waiting at time `ts`.
  uint32_t segment_at(Tid tid, uint64_t ts) const {
    const Graph::ThreadSegments* t = g_.thread_segments(tid);
    if (!t || t->begin == t->end) return kNoIndex;
    auto begin = g_.segments.begin() + t->begin, end = g_.segments.begin() + t->end;
    auto it = std::upper_bound(begin, end, ts,
                               [](uint64_t x, const Segment& s) { return x < s.start_ns; });
    if (it == begin) return kNoIndex;  // the thread did not exist yet
    return static_cast<uint32_t>(it - g_.segments.begin() - 1);
  }

  // The segment of `tid` at the window's start, or, for a thread born during the window
  // (a child forked after the hang began), its first segment.
  uint32_t segment_in(Tid tid, Window window) const {
    uint32_t s = segment_at(tid, window.start);
    if (s != kNoIndex) return s;
    const Graph::ThreadSegments* t = g_.thread_segments(tid);
    if (!t || t->begin == t->end || g_.segments[t->begin].start_ns >= window.end) return kNoIndex;
    return t->begin;
  }

  // Whether `tid` spent most of `window` blocked, busy or yielding; `p` and `kind` say how.
  // A thread born during the window is profiled from its birth (before it, it was not
  // running), but its share is still of the whole window.
  bool hung_in(Tid tid, Window window, SegmentProfile* p, HangKind* kind) const {
    uint64_t len = window.end > window.start ? window.end - window.start : 0;
    if (len == 0) return false;
    uint64_t from = window.start;
    if (segment_at(tid, window.start) == kNoIndex) {
      uint32_t first = segment_in(tid, window);
      if (first == kNoIndex) return false;
      from = g_.segments[first].start_ns;
    }
    *p = profile_range(trace_, events_, tid, from, window.end);
    *kind = classify(*p);
    switch (*kind) {
      case HangKind::LongWait:
        // A device waited on turn after turn (uninterruptible sleeps, none long) is one
        // wait: its time is the device's.
        if (2 * p->uninterruptible_ns >= p->blocked_ns &&
            p->blocked_ns >= kAbnormalShare * static_cast<double>(len))
          return true;
        return p->longest_block_ns >= kAbnormalShare * len;
      case HangKind::LongRunning: return p->on_cpu_ns + p->runnable_ns >= kAbnormalShare * len;
      case HangKind::RepeatedYield: return true;
    }
    return false;
  }

  // The system call `tid` was woken in at `event`: the last one it entered before (a recv
  // is recorded as its read returns, after the syscall_exit), kNoIndex if none.
  uint32_t call_in_flight(Tid tid, uint32_t event) const {
    const EventList calls = events_.syscalls_of(tid);
    auto it = std::upper_bound(calls.begin(), calls.end(), event);
    while (it != calls.begin()) {
      uint32_t e = *--it;
      if (trace_.events[e].kind == syscall_enter_) return e;
    }
    return kNoIndex;
  }

  bool same_wait(uint32_t a, uint32_t b) const { return engine::same_wait(trace_, a, b); }

  // A thread on the baseline's path that, during the hang, blocked in the very wait it
  // was woken from in the baseline, while the thread that woke it there was hung too (or
  // is the hang's own thread): it waits for its upstream, as it should; the culprit is
  // further up. (An I/O thread idle in `read` is not the cause of a reply that never
  // came.)
  bool passes_through(Tid tid, uint32_t baseline_wait, Tid upstream, Tid hang_tid,
                      Window window) const {
    SegmentProfile p, up;
    HangKind kind, up_kind;
    if (upstream == 0 || !hung_in(tid, window, &p, &kind) || kind != HangKind::LongWait)
      return false;
    if (!same_wait(p.longest_block_call, baseline_wait)) return false;
    return upstream == hang_tid || visited_threads_.count(upstream) ||
           hung_in(upstream, window, &up, &up_kind);
  }

  // The segment of `tid` that ran or waited for a CPU longest within `window` (the one at
  // its start may be a sliver before the busy one).
  uint32_t busiest_segment(Tid tid, Window window) const {
    uint32_t best = segment_in(tid, window);
    const Graph::ThreadSegments* t = g_.thread_segments(tid);
    if (best == kNoIndex || !t) return best;
    uint64_t best_busy = 0;
    for (uint32_t s = best; s < t->end && s < best + kMaxSegmentsScanned; ++s) {
      const Segment& seg = g_.segments[s];
      if (seg.start_ns >= window.end) break;
      SegmentProfile sp = profile_range(trace_, events_, tid, std::max(seg.start_ns, window.start),
                                        std::min(seg.end_ns, window.end));
      if (sp.on_cpu_ns + sp.runnable_ns > best_busy) {
        best_busy = sp.on_cpu_ns + sp.runnable_ns;
        best = s;
      }
    }
    return best;
  }

  // What `culprit`'s thread did during `window`: hung too → a root cause, and maybe a
  // recursion into it.
  void examine_thread(uint32_t culprit, Window window, uint32_t depth) {
    const Tid tid = g_.segments[culprit].tid;
    if (visited_threads_.count(tid)) return;
    const ThreadInfo* info = trace_.thread(tid);
    if (info && info->kernel) return;
    SegmentProfile p;
    HangKind kind;
    if (!hung_in(tid, window, &p, &kind)) return;
    visited_threads_.insert(tid);
    // Its own segment for that: where the block began, or the busiest one. A loop of
    // waits that is one wait retried after timeouts (a poll with a short timeout until its
    // upstream wrote) is a LongWait, at the slice that a wake-up ended.
    uint32_t seg = kind == HangKind::LongWait ? segment_at(tid, p.longest_block_start)
                                              : busiest_segment(tid, window);
    // A device waited on turn after turn has no one block to point at: its last turn in the
    // window is where it finished and went on (wrote its result, exited), so the causal
    // path leaves it there.
    if (kind == HangKind::LongWait && waits_in_turns(p) && 2 * p.uninterruptible_ns >= p.blocked_ns)
      if (const uint32_t last = segment_at(tid, window.end - std::min<uint64_t>(window.end, 1));
          last != kNoIndex)
        seg = last;
    if (kind == HangKind::RepeatedYield) {
      const LogicalWait lw =
          retried_wait(trace_, events_, g_, segment_at(tid, p.longest_block_start), p);
      if (lw.wake_edge != kNoIndex) {
        kind = HangKind::LongWait;
        seg = lw.woken;
      }
    }
    if (seg == kNoIndex) return;
    blame(seg, kind, p, depth);
  }

  // Blames `seg` (which behaved as `kind` over the window) one level below `depth`,
  // and asks whether to diagnose it too.
  void blame(uint32_t seg, HangKind kind, const SegmentProfile& over_window, uint32_t depth,
             const std::string& started = {}) {
    visited_threads_.insert(g_.segments[seg].tid);
    SegmentProfile sp = profile_segment(trace_, events_, g_, seg);
    RootCause r = root(seg, kind, sp, depth + 1);
    // A wait in many turns (a device waited on per record, a wait retried after timeouts)
    // is told over the window it filled, not by the one segment it is blamed at.
    if (kind == HangKind::LongWait && waits_in_turns(over_window) &&
        over_window.blocked_ns > sp.longest_block_ns) {
      r.what = behaviour(kind, over_window) + r.what.substr(behaviour(kind, sp).size());
      r.start_ns = over_window.start_ns;
      r.end_ns = over_window.end_ns;
    }
    r.what += started;
    add_root(std::move(r));
    if (depth + 1 >= opt_.max_recursion) return;
    // A thread that slept for time (a sleep on no descriptor or lock) and that no other
    // thread woke waited for nobody: there is nothing behind it to look for, so no
    // question and no recursion (whose baseline comparison could only blame bystanders).
    // Only a causal edge ends such a sleep early (a signal); a weak wake-up at its end is
    // the timer's expiry delivered by whoever ran it (a kernel worker).
    const uint32_t waker =
        kind == HangKind::LongWait ? wake_edge(trace_, events_, g_, seg, sp) : kNoIndex;
    if (kind == HangKind::LongWait && sleeps_for_time(trace_, sp.longest_block_call) &&
        (waker == kNoIndex || g_.edges[waker].strength == Strength::Weak)) {
      d_.notes.push_back(fmt::format(
          "{} slept for time ({} ms, on no descriptor or lock) and no other thread ended that "
          "sleep: nothing behind it to diagnose",
          who(seg), fmt::format("{:.1f}", double(sp.longest_block_ns) / 1e6)));
      return;
    }
    // A wait its own timer ended (a timerfd it armed, a timeout it set), which no other
    // thread ended early, waited for time as a sleep does.
    if (kind == HangKind::LongWait && waker == kNoIndex && own_timer_ended(seg, sp)) {
      d_.notes.push_back(fmt::format(
          "{} waited {} for a timer it had armed itself, and no other thread ended that wait: "
          "nothing behind it to diagnose",
          who(seg), ms(sp.longest_block_ns)));
      return;
    }
    // A thread that spent its wait in the kernel's uninterruptible sleep, which no other
    // program's thread ended (the device's interrupt or a kernel worker did), waited on the
    // device: no thread is behind it to look for.
    const SegmentProfile& waited = waits_in_turns(over_window) ? over_window : sp;
    if (kind == HangKind::LongWait && waited.blocked_ns > 0 &&
        2 * waited.uninterruptible_ns >= waited.blocked_ns) {
      const ThreadInfo* from =
          waker == kNoIndex ? nullptr : trace_.thread(g_.segments[g_.edges[waker].from].tid);
      if (waker == kNoIndex || (from && from->kernel)) {
        d_.notes.push_back(fmt::format(
            "{} waited {} in uninterruptible sleep (a device, or the kernel on its behalf) and "
            "no other program's thread ended that wait: nothing behind it to diagnose",
            who(seg), ms(waited.uninterruptible_ns)));
        return;
      }
    }
    Question q;
    q.kind = QuestionKind::Recurse;
    q.subject = seg;
    q.text =
        fmt::format("{} {} (from {:.6f} s), while the hang lasted. Find out why it did, in turn?",
                    who(seg), behaviour(kind, sp),
                    secs(kind == HangKind::LongWait ? sp.longest_block_start : sp.start_ns));
    q.help =
        "A thread on the normal run's causal path was itself hung while the hang lasted. "
        "Diagnosing it looks for what it was waiting for, recursively; stopping keeps it as "
        "the root cause.";
    Option yes;
    yes.cost = 1;
    yes.segment = seg;
    yes.label = fmt::format("diagnose {}", who(seg));
    if (evidence_) yes.evidence = segment_evidence(seg);
    Option no;
    no.stop = true;
    no.cost = 2;
    no.label = "stop: it is the root cause";
    q.options = {yes, no};
    if (ask(std::move(q)).stop) {
      stopped_ = true;  // "it is the root cause": the diagnosis ends here
      return;
    }
    Window w = kind == HangKind::LongWait
                   ? Window{sp.longest_block_start, sp.longest_block_start + sp.longest_block_ns}
                   : Window{sp.start_ns, sp.end_ns};
    uint32_t follow = seg;
    if (kind == HangKind::LongWait) {
      // Its wait in slices: follow the slice a wake-up ended, not one that timed out.
      LogicalWait lw = logical_wait(trace_, events_, g_, seg);
      if (lw.woken != kNoIndex && lw.woken != seg) {
        follow = lw.woken;
        sp = profile_segment(trace_, events_, g_, follow);
        w = Window{std::min(w.start, lw.start_ns), std::max(w.end, lw.end_ns)};
      }
    }
    diagnose_vertex(follow, kind, sp, depth + 1, w, follow, follow);
  }

  // Whether `seg`'s longest block was ended by a timer its own thread armed: the wake-up
  // that ended it (the last wake-up of its thread recorded before it ran again) names the
  // timer's owner in its `cause`, or a strong edge from the thread itself (a pack's link
  // from the timer's arming to its firing) lands in the wait or in the call that returned
  // from it. The second is needed because a timer that expires on an idle CPU wakes its
  // thread from the idle task's interrupt, of which the recorder may see no wake-up.
  bool own_timer_ended(uint32_t seg, const SegmentProfile& sp) const {
    if (sp.longest_block_ns == 0) return false;
    const Tid tid = g_.segments[seg].tid;
    const bool returned = sp.longest_block_exit != kNoIndex;
    const uint32_t call_end =
        returned ? next_call(trace_, events_, tid, sp.longest_block_exit) : UINT32_MAX;
    const uint64_t block_end = sp.longest_block_start + sp.longest_block_ns;
    auto own_edge_in = [&](uint32_t s) {
      for (auto [it, end] = in_edges(s, g_.csr); it != end; ++it) {
        const Edge& e = g_.edges[g_.csr[*it]];
        if (e.strength != Strength::Strong || g_.segments[e.from].tid != tid) continue;
        if (e.rule.kind == RuleKind::Split || e.rule.kind == RuleKind::Batch) continue;
        if (trace_.events[e.to_event].ts < sp.longest_block_start) continue;
        if (returned ? e.to_event < call_end : trace_.events[e.to_event].ts <= block_end)
          return true;
      }
      return false;
    };
    if (own_edge_in(seg)) return true;
    if (returned) {
      const uint32_t after = g_.segment_of(trace_, sp.longest_block_exit);
      if (after != seg && after != kNoIndex && own_edge_in(after)) return true;
    }
    // On a loaded machine the thread may wait long for a CPU after its wake-up, while other
    // threads' events pile up in between: a bound, but a wide one (one search per culprit).
    constexpr uint32_t kEventsSearched = 1u << 16;
    const KindId wakeup = trace_.schema.find("wakeup");
    if (wakeup == kNoKind) return false;
    const int target = trace_.schema.field_index(wakeup, "target");
    const int cause = trace_.schema.field_index(wakeup, "cause");
    if (target < 0 || cause < 0) return false;
    const uint64_t ran = sp.longest_block_start + sp.longest_block_ns;
    const EventList switches = events_.switches_of(tid);
    auto it = std::lower_bound(switches.begin(), switches.end(), ran,
                               [&](uint32_t e, uint64_t t) { return trace_.events[e].ts < t; });
    if (it == switches.end()) return false;
    // A timer's signal (alarm, setitimer) sent to the thread or to its process, raised by
    // its own timer: the kernel delivered it to this thread, whose wait (a pause) it ended,
    // and the recorder may see no wake-up for it.
    const KindId signal_send = trace_.schema.find("signal_send");
    const int signal_target =
        signal_send == kNoKind ? -1 : trace_.schema.field_index(signal_send, "target");
    const int signal_cause =
        signal_send == kNoKind ? -1 : trace_.schema.field_index(signal_send, "cause");
    const ThreadInfo* self = trace_.thread(tid);
    for (uint32_t e = *it, n = 0; e-- > 0 && n < kEventsSearched; ++n) {
      const Event& ev = trace_.events[e];
      if (ev.ts < sp.longest_block_start) break;
      if (ev.kind == signal_send && signal_target >= 0 && signal_cause >= 0 &&
          trace_.int_value(ev, signal_cause) == static_cast<int64_t>(tid)) {
        const int64_t to = trace_.int_value(ev, signal_target);
        if (to == static_cast<int64_t>(tid) || (self && to == static_cast<int64_t>(self->pid)))
          return true;
      }
      if (ev.kind != wakeup || trace_.int_value(ev, target) != static_cast<int64_t>(tid)) continue;
      return trace_.int_value(ev, cause) == static_cast<int64_t>(tid);
    }
    return false;
  }

  // The causal path from the deepest root cause to the hang: the best beam-search path
  // back from the hang that passes through it, else the chain of culprits.
  void finish_path() {
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

  // The path was found before a recursion went deeper (the step of the hang's own path
  // that took the time): the culprits found below it, whose threads are not on it, lead
  // it, deepest first. No recorded edge joins them to it (a wake-up that never came, or
  // one the recursion's own slice followed).
  void prepend_deeper_culprits() {
    auto on_path = [&](Tid tid) {
      return std::any_of(d_.path.begin(), d_.path.end(),
                         [&](const PathStep& s) { return g_.segments[s.segment].tid == tid; });
    };
    std::vector<PathStep> lead;
    for (const RootCause& rc : d_.root_causes)  // sorted deepest first
      if (!on_path(g_.segments[rc.segment].tid)) lead.push_back({rc.segment, kNoIndex});
    d_.path.insert(d_.path.begin(), lead.begin(), lead.end());
  }

  const Trace& trace_;
  const Graph& g_;
  const DiagnoseOptions& opt_;
  std::optional<ThreadEvents> own_events_;  // when the options bring none
  const ThreadEvents& events_;
  const KindId syscall_enter_ = trace_.schema.find("syscall_enter");
  AutoAnswerer auto_;
  Answerer* answerer_;
  bool evidence_ = answerer_->wants_evidence();
  SpanTree spans_;
  LuaHost lua_;
  Evaluator eval_;
  std::vector<AnswerRuleRef> answer_rules_;
  std::vector<bool> on_path_;
  uint64_t t0_;
  BeamOptions beam_;
  Diagnosis d_;
  std::map<std::pair<QuestionKind, uint32_t>, size_t> asked_;
  std::set<Tid> visited_threads_;
  uint32_t vertex_ = kNoIndex;        // the hang's segment followed (a logical wait's woken slice)
  uint64_t slice_window_ = 0;         // the hang's length, while slicing its path (0: none)
  std::vector<PathStep> hang_slice_;  // the hang's own wake-up path, origin first
  bool stopped_ = false;
  Option chosen_;
};

}  // namespace

Diagnosis diagnose(const Trace& trace, const BuildResult& built, const rules::RuleSet& rules,
                   const DiagnoseOptions& options) {
  return Diagnoser(trace, built, rules, options).run();
}

}  // namespace cw::engine
