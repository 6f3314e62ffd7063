// The diagnosis's driver (the Argus paper, Algorithm 1): the hang is found (or taken from
// the derived cache), the vertex to follow chosen (a logical wait's woken slice), the walk
// begun there, and its root causes and path put in order for the report. The walk itself is
// Diagnoser's, by job (diagnoser.h).
#include "engine/diagnosis/diagnose.h"

#include <fmt/format.h>

#include <algorithm>

#include "engine/diagnosis/diagnoser.h"
#include "engine/diagnosis/segment_profile.h"
#include "engine/diagnosis/stack_depth.h"
#include "engine/diagnosis/symptom.h"
#include "engine/latency/infer.h"
#include "trace/command_marker.h"

namespace cw::engine {
namespace diagnose_detail {

Diagnoser::Diagnoser(const Trace& trace, const BuildResult& built, const rules::RuleSet& rules,
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

Diagnosis Diagnoser::run() {
  FoundHang found;
  if (opt_.known_hang) {
    found = *opt_.known_hang;
  } else {
    if (opt_.progress) opt_.progress("finding the hang", 0, 0);
    found = find_hang_reusing(trace_, g_, events_, opt_.symptom, opt_.ranks_before);
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
      // A segment that took what the wait was for before it blocked on something else (a
      // page brought in, a write to a terminal) is followed up to what it took: its later
      // block is not the wait.
      const uint64_t taken = trace_.events[g_.edges[lw.wake_edge].to_event].ts;
      if (profile.longest_block_ns > 0 && profile.longest_block_start > taken)
        profile = profile_range(trace_, events_, hang->tid, g_.segments[vertex_].start_ns, taken);
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

// What the recorder said about how it recorded (trace/command_marker.h: data flags traced
// by instruction probes because watchpoints did not fire, ...), for the reader to weigh
// the evidence.
void Diagnoser::recording_notes() {
  for (std::string& n : recorder_notes(trace_)) d_.notes.push_back("recording: " + n);
}

}  // namespace diagnose_detail

namespace {

// How many of a busy root cause's costliest functions the reports show.
constexpr size_t kCostliestShown = 5;

}  // namespace

void measure_for_reports(const Trace& trace, const Graph& graph, Diagnosis& d) {
  for (RootCause& rc : d.root_causes) {
    if (rc.kind != HangKind::LongRunning) continue;
    const Segment& s = graph.segments[rc.segment];
    latency::Selection selection;
    selection.tid = s.tid;
    selection.from = rc.end_ns > rc.start_ns ? rc.start_ns : s.start_ns;
    selection.to = rc.end_ns > rc.start_ns ? rc.end_ns : s.end_ns;
    const latency::Profile p = latency::infer(trace, selection);
    rc.costliest_stacks = p.stacks + p.span_ends;
    for (const auto& f :
         latency::costliest_functions(p.cct, latency::Mode::Conservative, kCostliestShown))
      rc.costliest.emplace_back(f.function, f.own_ns);
  }
  if (d.baseline != kNoIndex) {
    const Segment& b = graph.segments[d.baseline];
    d.baseline_longest_block_ns =
        profile_segment(trace, ThreadEvents(trace, {b.tid}), graph, d.baseline).longest_block_ns;
  }
}

Diagnosis diagnose(const Trace& trace, const BuildResult& built, const rules::RuleSet& rules,
                   const DiagnoseOptions& options) {
  Diagnosis d = diagnose_detail::Diagnoser(trace, built, rules, options).run();
  measure_for_reports(trace, built.graph, d);
  return d;
}

}  // namespace cw::engine
