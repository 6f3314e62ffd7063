// What the parts of a diagnosis share (diagnose.h runs them). One Diagnoser walks from the
// hang back to its root causes (the Argus paper, Algorithm 1); its member functions are
// defined by job, one file each:
//   diagnose.cc            the driver: the hang found, the vertex to follow, the walk begun
//                          and its results put in order
//   diagnose_vertex.cc     one vertex by its kind: a LongRunning one (and the threads that
//                          took its CPU), a RepeatedYield one (the write or release that
//                          ended its loop); a LongWait one goes on to diagnose_long_wait.cc
//   diagnose_long_wait.cc  a LongWait: a baseline and its causal path, or the hang's own,
//                          compared thread by thread with what those threads did meanwhile
//   diagnose_culprits.cc   a culprit thread over the hang's window: whether it was hung too,
//                          blamed as a root cause, and recursed into
//   diagnose_wait_end.cc   what ended a wait: another thread's edge, or its own timer
//   diagnose_slice.cc      InteractiveSlicing: back along the edges that explain each step
//   diagnose_path.cc       the causal path from the deepest root cause to the hang
//   diagnose_questions.cc  questions: a pack's answer rules first, then the answerer
//   diagnose_wording.cc    segments, edges, calls and stacks in sentences
// Internal to engine/diagnosis/: nothing outside includes this.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/diagnosis/beam_search.h"
#include "engine/diagnosis/diagnose.h"
#include "engine/diagnosis/logical_wait.h"
#include "engine/diagnosis/similar_segments.h"
#include "engine/graph/expr_eval.h"
#include "engine/graph/span_tree.h"
#include "rules/lua_host.h"

namespace cw::engine::diagnose_detail {

// Of a culprit's window, the share it must have spent blocked, busy or yielding to be
// called hung itself.
constexpr double kAbnormalShare = 0.5;

class Diagnoser {
 public:
  Diagnoser(const Trace& trace, const BuildResult& built, const rules::RuleSet& rules,
            const DiagnoseOptions& options);

  Diagnosis run();

 private:
  struct Window {
    uint64_t start = 0, end = 0;
  };
  struct AnswerRuleRef {
    const rules::AnswerRule* rule;
    PreparedExpr subject, choose;
  };

  // the driver (diagnose.cc)
  void recording_notes();
  void progress(uint32_t step) {
    if (opt_.progress) opt_.progress("search", step, 0);
  }

  // in sentences (diagnose_wording.cc)
  double secs(uint64_t ts) const { return static_cast<double>(ts - std::min(ts, t0_)) / 1e9; }
  static std::string ms(uint64_t ns) {
    return fmt::format("{:.1f} ms", static_cast<double>(ns) / 1e6);
  }
  std::string thread_name(Tid tid) const;
  std::string process_name(Pid pid) const;
  std::string who(uint32_t s) const;
  std::string field_text(uint32_t event, std::string_view name) const;
  std::string call_text(uint32_t call) const;
  std::string syscall_summary(const SegmentProfile& p, size_t n = 3) const;
  // A wait made of many blocks, none most of it: a loop that waited on a device turn
  // after turn (an fsync per record), or one wait retried after timeouts.
  static bool waits_in_turns(const SegmentProfile& p) {
    return p.blocks > 1 && p.blocked_ns >= 2 * p.longest_block_ns;
  }
  std::string behaviour(HangKind kind, const SegmentProfile& p) const;
  std::string segment_line(uint32_t s) const;
  std::string segment_evidence(uint32_t s) const;
  std::string stack_text(StackId id) const;
  StackId stack_of_segment(uint32_t s, const SegmentProfile& p) const;
  std::string edge_label(uint32_t ei) const;

  // questions (diagnose_questions.cc)
  Value kind_value(const Edge& e);
  uint32_t rule_choice(const Question& q, std::string* rule_id);
  const Option& ask(Question q);

  // InteractiveSlicing (diagnose_slice.cc)
  std::vector<PathStep> slice(uint32_t start);
  bool caused_from_path(uint32_t v, uint32_t best_edge) const;
  bool ambiguous(const std::vector<Option>& options) const;
  double path_cost(uint32_t ei);
  Option queued_behind(uint32_t v, const Option& pick, const std::vector<Option>& options) const;
  const Option* own_previous(uint32_t v, const std::vector<Option>& options) const;

  // one vertex by its kind (diagnose_vertex.cc)
  void diagnose_vertex(uint32_t seg, HangKind kind, const SegmentProfile& prof, uint32_t depth,
                       Window window, uint32_t first, uint32_t last);
  bool has_flag_edge_into(uint32_t first, uint32_t last, uint32_t* edge) const;
  void blame_cpu_takers(uint32_t seg, const SegmentProfile& p, uint32_t depth, Window window);
  bool follow_polling_end(uint32_t seg, HangKind kind, const SegmentProfile& prof, uint32_t depth,
                          Window window, uint32_t first, uint32_t last);
  void collect_call_sites(uint32_t first, uint32_t last);

  // a LongWait (diagnose_long_wait.cc)
  void long_wait(uint32_t seg, const SegmentProfile& prof, uint32_t depth, Window window);
  bool blame_heaviest(const std::vector<PathStep>& path, uint32_t seg, uint32_t depth,
                      Window window);
  void waited_downstream(const std::vector<PathStep>& path, size_t culprit);
  // Before `shown`'s first step, the threads whose messages it passed on (relays), up to
  // the one where the request began.
  void prepend_requesters(std::vector<PathStep>& shown, uint32_t hang_seg, uint32_t culprit);
  bool idle_at_start(uint32_t v) const;
  uint32_t choose_baseline(uint32_t seg, const std::vector<SimilarSegment>& similar);
  std::string waker_name(uint32_t s) const;
  uint32_t call_in_flight(Tid tid, uint32_t event) const;
  bool same_wait(uint32_t a, uint32_t b) const { return engine::same_wait(trace_, a, b); }
  bool passes_through(Tid tid, uint32_t baseline_wait, Tid upstream, Tid hang_tid,
                      Window window) const;

  // culprits, root causes and the recursion (diagnose_culprits.cc)
  RootCause root(uint32_t s, HangKind kind, const SegmentProfile& p, uint32_t depth) const;
  void add_root(RootCause r);
  uint32_t segment_at(Tid tid, uint64_t ts) const;
  uint32_t segment_in(Tid tid, Window window) const;
  bool hung_in(Tid tid, Window window, SegmentProfile* p, HangKind* kind) const;
  uint32_t busiest_segment(Tid tid, Window window) const;
  void examine_thread(uint32_t culprit, Window window, uint32_t depth);
  void blame(uint32_t seg, HangKind kind, const SegmentProfile& over_window, uint32_t depth,
             const std::string& started = {});

  // what ended a wait (diagnose_wait_end.cc)
  uint32_t wait_ended_by(uint32_t s, const SegmentProfile& p) const;
  std::string wait_edge_text(const Edge& e, const SegmentProfile& p) const;
  std::string hang_end_reason() const;
  bool own_timer_ended(uint32_t seg, const SegmentProfile& sp) const;
  // Whether `seg`'s wait was ended by the hang's own thread after the hang, and its thread
  // is not on the hang's path: it waited for the hang (diagnose_culprits.cc).
  bool waited_for_hang(uint32_t seg) const;

  // the causal path (diagnose_path.cc)
  std::vector<PathStep> path_through(size_t before, uint32_t edge) const;
  void finish_path();
  void path_from_deepest();
  void prepend_deeper_culprits();
  void prepend_requesters_found(Tid culprit);
  std::vector<PathStep> deeper_path_to_front(Tid culprit) const;

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
  // The paths the recursions below the hang found (origin first, to the culprit each one
  // diagnosed), for the culprits they found to lead the hang's path with.
  std::vector<std::vector<PathStep>> deeper_paths_;
  // The paths blame_heaviest showed from the request that started a culprit's work, for
  // the path finally shown to begin there too (prepend_requesters_found).
  std::vector<std::vector<PathStep>> requested_paths_;
  bool stopped_ = false;
  Option chosen_;
};

}  // namespace cw::engine::diagnose_detail
