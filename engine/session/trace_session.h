// One trace's analysis, each stage made once and in order: the packs, the trace, its
// graph, the per-thread index, the diagnosis (Perfetto's trace_processor is the model: the
// analysis is a library, the commands only parse options and present results). Stages use
// the derived cache beside the trace (docs/cache.md). Errors are thrown as SessionError;
// what the stages have to say goes to the Reporter.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/diagnosis/diagnose.h"
#include "engine/graph/builder.h"
#include "engine/session/cache_session.h"
#include "engine/session/diagnosis_run.h"
#include "engine/session/graph_load.h"
#include "engine/session/reporter.h"
#include "rules/loader.h"
#include "trace/host_join.h"
#include "trace/symbolize.h"
#include "trace/trace.h"

namespace cw::session {

struct SessionConfig {
  std::string trace_path;
  std::string format = "auto";     // the trace's form (trace_load.h)
  std::vector<std::string> packs;  // added after the standard packs, in order (pack_paths.h)
  bool no_stdlib = false;
  CacheSession::Use cache;
  // The files that left stack frames unnamed are told per diagnosis (unnamed_frames_note),
  // not for the whole recorded command when the trace is read.
  bool unnamed_frames_per_diagnosis = false;
  // Other hosts' traces joined to trace_path's into one (trace/host_join.h): their clocks
  // aligned to its clock from the TCP messages between them. The cache is not used then.
  std::vector<std::string> join_paths;
};

class TraceSession {
 public:
  TraceSession(SessionConfig config, Reporter& reporter);
  // Waits for the cache's saves when the configuration asks to (their messages come out).
  ~TraceSession();
  TraceSession(const TraceSession&) = delete;
  TraceSession& operator=(const TraceSession&) = delete;

  const SessionConfig& config() const { return config_; }

  // The standard packs, CAUSEWAY_RULES_PATH, then config.packs. Their warnings and errors
  // go to the reporter; a pack with an error throws SessionError (bad input, already said).
  const rules::RuleSet& load_packs();
  // Packs loaded by the caller (a watch loads them anew for each run): the graph built
  // with the previous ones is dropped. Throws as load_packs does.
  const rules::RuleSet& use_packs(rules::LoadResult loaded);
  const rules::RuleSet& rules() const;

  // The trace, read at the first call (session::read_trace); with join_paths, every
  // trace read and joined into one.
  const Trace& trace();
  // Per trace of a join, trace_path's first: how its clock was aligned (empty when only
  // one trace is read).
  const std::vector<ClockAlignment>& clocks() {
    trace();
    return clocks_;
  }
  const ReadReport& read_report();
  const SymbolizeReport& symbols();

  // The graph of the trace with the packs, built (or loaded from the cache) at the first call.
  const engine::BuildResult& graph();
  // The same, its over-connection counts (BuildStats) maybe not made yet: a diagnosis does
  // not read them, and the cache's save counts them in its copy of the process.
  const engine::BuildResult& graph_to_diagnose();
  // Saves a graph built here to the cache (by a copy of the process: call it while the
  // process runs one thread), if it is not saved yet. A diagnosis saves it once its hang
  // is known; the packs' change and the session's end save it too.
  void save_graph();

  // The per-thread event index, made (or mapped from the cache) at the first call: call it
  // while the process runs one thread, as a new index is saved by a copy of the process.
  const engine::ThreadEvents& thread_index();

  // Diagnoses the graph with `options` as the caller set them (the symptom, the answerer,
  // progress, questions' context); the thread index and the cache's hang are filled in.
  DiagnosisRun diagnose(engine::DiagnoseOptions options, bool missing_is_no_hang = false);

 private:
  const Trace& joined_trace();
  SessionConfig config_;
  Reporter& reporter_;
  std::optional<rules::LoadResult> packs_;
  std::optional<CacheSession> cache_;
  std::optional<Trace> trace_;
  ReadReport read_report_;
  SymbolizeReport symbols_;
  std::optional<BuiltGraph> graph_;
  std::optional<engine::ThreadEvents> index_;
  bool index_made_here_ = false;  // index_ was made by a pass here, not mapped from the cache
  std::vector<ClockAlignment> clocks_;
};

}  // namespace cw::session
