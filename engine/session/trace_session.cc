#include "engine/session/trace_session.h"

#include <fmt/format.h>

#include <stdexcept>

#include "engine/session/pack_paths.h"
#include "engine/session/pack_selection.h"
#include "engine/session/session_error.h"
#include "engine/session/trace_load.h"

namespace cw::session {

TraceSession::TraceSession(SessionConfig config, Reporter& reporter)
    : config_(std::move(config)), reporter_(reporter) {}

TraceSession::~TraceSession() {
  if (cache_) cache_->wait();
}

const rules::RuleSet& TraceSession::load_packs() {
  return use_packs(load_rule_packs(config_.packs, config_.no_stdlib));
}

const rules::RuleSet& TraceSession::use_packs(rules::LoadResult loaded) {
  graph_.reset();
  packs_ = std::move(loaded);
  if (std::string text = packs_->render(); !text.empty()) {
    if (text.back() == '\n') text.pop_back();
    reporter_.message(text);
  }
  if (!packs_->ok()) throw SessionError(SessionError::Kind::BadInput, "");
  // Packs that say what they are for apply to this trace only when it shows it.
  if (any_conditional(packs_->rules) && !config_.trace_path.empty())
    for (const AppliedPack& p : keep_applying(*packs_, trace(), config_.packs))
      reporter_.message(fmt::format("causeway: pack {} applies to this trace: {}", p.id, p.why));
  return packs_->rules;
}

const rules::RuleSet& TraceSession::rules() const {
  if (!packs_) throw std::logic_error("TraceSession: the packs are not loaded");
  return packs_->rules;
}

const Trace& TraceSession::trace() {
  if (trace_) return *trace_;
  cache_ = CacheSession::open(config_.trace_path, config_.format, config_.cache, &reporter_);
  Trace trace;
  try {
    read_report_ = read_trace(config_.trace_path, trace, reporter_,
                              config_.unnamed_frames_per_diagnosis ? &symbols_ : nullptr,
                              config_.format, &*cache_);
  } catch (const SessionError&) {
    cache_->discard_made_folder();
    throw;
  }
  trace_ = std::move(trace);
  return *trace_;
}

const ReadReport& TraceSession::read_report() {
  trace();
  return read_report_;
}

const SymbolizeReport& TraceSession::symbols() {
  trace();
  return symbols_;
}

const engine::BuildResult& TraceSession::graph() {
  if (!graph_) graph_ = build_graph(trace(), rules(), reporter_, &*cache_);
  return graph_->built;
}

const engine::ThreadEvents& TraceSession::thread_index() {
  if (!index_) index_.emplace(session::thread_index(trace(), &*cache_));
  return *index_;
}

DiagnosisRun TraceSession::diagnose(engine::DiagnoseOptions options, bool missing_is_no_hang) {
  const engine::BuildResult& built = graph();
  options.events = &thread_index();
  DiagnosisCache cached(*trace_, built.graph, &*cache_, graph_->key);
  cached.apply(options);
  return run_diagnosis(*trace_, built, rules(), options, missing_is_no_hang);
}

}  // namespace cw::session
