#include "engine/session/trace_session.h"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

#include "engine/session/pack_paths.h"
#include "engine/session/pack_selection.h"
#include "engine/session/session_error.h"
#include "engine/session/trace_load.h"

namespace cw::session {

TraceSession::TraceSession(SessionConfig config, Reporter& reporter)
    : config_(std::move(config)), reporter_(reporter) {}

TraceSession::~TraceSession() {
  try {
    save_graph();
  } catch (const std::exception&) {  // not saved: the next run builds it again
  }
  if (cache_) cache_->wait();
}

void TraceSession::save_graph() {
  if (!cache_) return;
  // The graph's save runs the queued ones first; without it they run now.
  if (graph_ && graph_->unsaved)
    save_built_graph(*graph_, rules(), *cache_);
  else
    cache_->save_queued();
}

const rules::RuleSet& TraceSession::load_packs() {
  return use_packs(load_rule_packs(config_.packs, config_.no_stdlib));
}

const rules::RuleSet& TraceSession::use_packs(rules::LoadResult loaded) {
  save_graph();
  graph_.reset();
  // A session diagnosing again (`debug --watch`) holds the index its first diagnosis made
  // (~100 MB at 19 M events) and saved: mapped from the cache instead, only the lists the
  // next diagnoses read count in the process's memory, as in a run of its own.
  if (index_made_here_ && cache_)
    if (auto mapped = mapped_thread_index(trace(), &*cache_)) {
      index_ = std::move(mapped);
      index_made_here_ = false;
    }
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
  if (!config_.join_paths.empty()) return joined_trace();
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
  // The events are saved after the graph's build and search (save_graph), from here.
  if (auto save = std::exchange(cache_->save_events, {}))
    cache_->queue([this, save = std::move(save)] { return save(*trace_); });
  return *trace_;
}

const Trace& TraceSession::joined_trace() {
  CacheSession::Use off = config_.cache;
  off.off = true;
  cache_ = CacheSession::open(config_.trace_path, config_.format, off, &reporter_);
  std::vector<std::string> paths{config_.trace_path};
  paths.insert(paths.end(), config_.join_paths.begin(), config_.join_paths.end());
  std::vector<Trace> traces(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    ReadReport report = read_trace(paths[i], traces[i], reporter_,
                                   config_.unnamed_frames_per_diagnosis ? &symbols_ : nullptr,
                                   config_.format, &*cache_);
    if (i == 0) read_report_ = std::move(report);
  }
  JoinedTrace joined;
  try {
    joined = join_traces(std::move(traces), {}, paths);
  } catch (const std::invalid_argument& e) {
    throw SessionError(SessionError::Kind::BadInput, e.what());
  }
  for (size_t k = 1; k < paths.size(); ++k) {
    const ClockAlignment& c = joined.clocks[k];
    auto ms = [](int64_t ns) { return fmt::format("{:+.3f} ms", static_cast<double>(ns) / 1e6); };
    std::string bounds;
    if (c.bounded())
      bounds = fmt::format("between {} and {}, from {} messages to it and {} from it", ms(c.low_ns),
                           ms(c.high_ns), c.to_other, c.to_base);
    else
      bounds = fmt::format("bounded one way only, by {} messages {} it: the delay is not known",
                           c.to_other + c.to_base, c.to_other ? "to" : "from");
    reporter_.message(fmt::format("causeway: joined {} to {}: its times {} are {}'s ({}){}",
                                  paths[k], paths[0], ms(c.offset_ns), paths[0], bounds,
                                  c.inconsistent() ? "; the bounds disagree: the clocks drifted, "
                                                     "or bytes matched that are not the same"
                                                   : ""));
    if (joined.renumbered[k])
      reporter_.message(fmt::format(
          "causeway: {}: {} process and thread ids that {} also uses were renumbered from {}",
          paths[k], joined.renumbered[k], paths[0], 1u << 22));
  }
  clocks_ = std::move(joined.clocks);
  trace_ = std::move(joined.trace);
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

const engine::BuildResult& TraceSession::graph_to_diagnose() {
  // Saved later (save_graph): a copy of the process writing it beside the hang search
  // slows the search on two CPUs.
  if (!graph_) graph_ = build_graph(trace(), rules(), reporter_, &*cache_, true, &index_);
  return graph_->built;
}

const engine::BuildResult& TraceSession::graph() {
  graph_to_diagnose();
  engine::fill_over_connections(graph_->built);
  return graph_->built;
}

const engine::ThreadEvents& TraceSession::thread_index() {
  if (!index_) {
    bool mapped = false;
    IndexSave save;
    index_.emplace(session::thread_index(trace(), &*cache_, &mapped, &save));
    index_made_here_ = !mapped;
    // Saved with the graph (save_graph), from here.
    if (save) cache_->queue([this, save = std::move(save)] { return save(*index_); });
  }
  return *index_;
}

DiagnosisRun TraceSession::diagnose(engine::DiagnoseOptions options, bool missing_is_no_hang) {
  const engine::BuildResult& built = graph_to_diagnose();
  options.events = &thread_index();
  DiagnosisCache cached(*trace_, built.graph, &*cache_, graph_->key, graph_->rebuilt_from);
  cached.apply(options);
  // A graph built for this diagnosis is saved once its hang is known: after the search
  // for it (the long part), before the walk and its questions.
  if (options.known_hang) {
    save_graph();
  } else {
    options.hang_found = [this,
                          told = std::move(options.hang_found)](const engine::FoundHang& found) {
      if (told) told(found);
      save_graph();
    };
  }
  return run_diagnosis(*trace_, built, rules(), options, missing_is_no_hang);
}

}  // namespace cw::session
