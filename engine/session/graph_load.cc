#include "engine/session/graph_load.h"

#include <fmt/format.h>
#include <unistd.h>

#include <future>
#include <stdexcept>

#include "base/source.h"
#include "engine/cache/cache.h"
#include "engine/session/session_error.h"
#include "rules/lua_sandbox.h"

namespace cw::session {

namespace {

// The cache may hold a thread index for these events (a trace whose events it keeps),
// under this key.
bool keeps_index(const CacheSession* cache) {
  return cache && cache->on && cache->events_keyed;
}
cache::Key index_key(const CacheSession& cache) {
  return {cache.trace_key, 0, 0, cache::engine_key()};
}
void note_index_mapped(const CacheSession& cache) {
  cache.note(fmt::format("thread index mapped from {}", cache.dir.shown(cache::kThreadIndexName)));
}

// The thread index the cache holds, mapped and checked on a thread of its own while the
// graph is loaded or its cuts rebuilt (two files, each a tenth of a second or more at 19 M
// events), into `*index` when it is there. When it is not, nothing is said: the
// diagnosis asks for it again (thread_index) and says why it indexes the trace.
class IndexLoad {
 public:
  IndexLoad(const Trace& trace, const CacheSession* cache,
            std::optional<engine::ThreadEvents>* index)
      : cache_(cache), index_(index) {
    if (!index || *index || !keeps_index(cache)) return;
    loading_ = std::async(std::launch::async,
                          [&dir = cache->dir, key = index_key(*cache), n = trace.events.size()] {
                            std::string why;
                            return cache::load_thread_index(dir, key, n, &why);
                          });
  }
  IndexLoad(const IndexLoad&) = delete;
  IndexLoad& operator=(const IndexLoad&) = delete;
  // Kept for the diagnosis however the graph came (a whole build as well).
  ~IndexLoad() {
    try {
      finish();
    } catch (...) {  // a note that could not be made: the diagnosis maps it again
    }
  }
  // Waits for it; true when `*index` holds it.
  bool finish() {
    if (!loading_.valid()) return index_ && *index_;
    if (auto loaded = loading_.get()) {
      *index_ = std::move(loaded);
      note_index_mapped(*cache_);
    }
    return *index_ != std::nullopt;
  }

 private:
  const CacheSession* cache_;
  std::optional<engine::ThreadEvents>* index_;
  std::future<std::optional<engine::ThreadEvents>> loading_;
};

// What save_built_graph saves of the graph, in its copy; its note.
std::string save_graph_entries(BuiltGraph::Unsaved& u, const rules::RuleSet& rules,
                               engine::BuildResult& out, const CacheSession& cache) {
  std::string why;
  engine::fill_over_connections(out);
  if (!cache::save_graph(cache.dir, u.key, out, &why))
    return fmt::format("graph not saved: {}", why);
  // The next run whose packs differ from these in cut rules only rebuilds from it (one
  // that starts before the matches below are saved scans the events).
  if (u.base && !cache::save_base(cache.dir, *u.base, u.key, &why))
    return fmt::format("graph saved to {}; its base entry not saved: {}",
                       cache.dir.shown(cache::graph_entry_name(u.key)), why);
  if (u.new_matches && u.matches_key) {
    // The entry as it is now: another run may have added to it since (or removed it: the
    // lists of this build are kept then, and the others' found again when needed).
    std::optional<cache::StoredMatches> before;
    if (u.had_stored && u.trace)
      before = cache::load_cut_matches(cache.dir, *u.matches_key, *u.trace);
    const cache::StoredMatches merged = cache::merge_matches(
        rules, std::move(out.matches), before ? std::move(*before) : cache::StoredMatches{});
    if (!cache::save_cut_matches(cache.dir, *u.matches_key, merged, &why))
      return fmt::format("graph saved to {}; the cut rules' matches not saved: {}",
                         cache.dir.shown(cache::graph_entry_name(u.key)), why);
  }
  return fmt::format("graph saved to {}", cache.dir.shown(cache::graph_entry_name(u.key)));
}

}  // namespace

BuiltGraph build_graph(const Trace& trace, const rules::RuleSet& rules, Reporter& reporter,
                       const CacheSession* cache, bool defer_save,
                       std::optional<engine::ThreadEvents>* index) {
  IndexLoad index_load(trace, cache, index);
  BuiltGraph result;
  engine::BuildResult& out = result.built;
  engine::BuildOptions options;
  // Counted when the graph report needs them (TraceSession::graph) or the cache saves it.
  options.count_over_connections = false;
  std::optional<cache::Key> key, base;
  std::optional<engine::BuildResult> prior;
  cache::Key prior_key;
  std::optional<cache::Key> matches_key;
  std::optional<cache::StoredMatches> stored;
  engine::KnownCutMatches known;
  engine::ThreadEventLists lists;
  std::optional<engine::EventNames> names;
  if (cache && cache->on) {
    key = cache::Key{cache->trace_key, cache::packs_key(rules),
                     cache::options_key(options, cache->format, trace), cache::engine_key()};
    // Another run (or this one, under --watch) still saving its graph here, the last
    // run's often: loading it, or rebuilding its cuts, beats building it whole.
    cache->wait_for_live_saves({"graph-", "base-", cache::kCutMatchesName}, "graph");
    std::string why;
    if (auto loaded = cache::load_graph(cache->dir, *key, trace, rules, &why)) {
      cache->note(
          fmt::format("graph loaded from {}", cache->dir.shown(cache::graph_entry_name(*key))));
      out = std::move(*loaded);
      result.key = key;
      index_load.finish();
      return result;
    }
    if (!why.empty())
      cache->note(fmt::format("{} not used ({}); building the graph again",
                              cache->dir.shown(cache::graph_entry_name(*key)), why));
    // A graph of packs that differ from these in cut rules only: its edges are reused and
    // only the cuts derived again (engine::BuildOptions::reuse).
    if (auto links = cache::links_key(rules)) {
      base = cache::Key{key->trace, *links, key->options, key->engine};
      std::string problem;
      prior = cache::load_base(cache->dir, *base, trace, rules, &prior_key, &problem);
      if (prior) {
        options.reuse = &*prior;
        cache->note(fmt::format("rebuilding the cuts of {}",
                                cache->dir.shown(cache::graph_entry_name(prior_key))));
      } else if (!problem.empty()) {
        cache->note(fmt::format("{} not used ({})", cache->dir.shown(cache::base_entry_name(*base)),
                                problem));
      }
      // Where the cut rules matched before: a rebuild then evaluates only the new rules
      // and replays the cuts from the matches (engine/graph/cut_matches.h).
      matches_key = cache::Key{key->trace, 0, key->options, key->engine};
      options.record_matches = true;
      if (prior) {
        problem.clear();
        stored = cache::load_cut_matches(cache->dir, *matches_key, trace, &problem);
        if (stored) {
          known = stored->for_rules(rules);
          options.known_matches = &known;
          // Read when a rule is new: it is then evaluated at the events it can match.
          if (keeps_index(cache))
            options.event_names = [&names, &trace, cache]() -> const engine::EventNames* {
              if (names) return &*names;
              std::string why;
              const std::string path = cache->dir.shown(cache::kEventNamesName);
              names =
                  cache::load_event_names(cache->dir, index_key(*cache), trace.events.size(), &why);
              if (names)
                cache->note(fmt::format("events by kind and name read from {}", path));
              else if (!why.empty())
                cache->note(fmt::format("{} not used ({})", path, why));
              return names ? &*names : nullptr;
            };
        } else if (!problem.empty()) {
          cache->note(
              fmt::format("{} not used ({})", cache->dir.shown(cache::kCutMatchesName), problem));
        }
        // Each thread's events: the segments of the threads whose cuts did not change are
        // then the reused graph's, and no pass over the events finds where the others' end.
        if (index_load.finish()) {
          const auto& parts = (*index)->parts();
          lists.tids = {parts.tids.data(), parts.tids.size()};
          lists.events = {parts.events.data(), parts.events.size()};
          lists.at = {parts.events_at.data(), parts.events_at.size()};
          options.thread_events = &lists;
        }
      }
    }
  }
  try {
    const ProgressScope progress(reporter, "building graph");
    options.progress = progress.callback();
    try {
      out = engine::build_graph(trace, rules, options);
    } catch (const std::invalid_argument& e) {
      // A reused graph that does not fit this trace (its key said it would): never trusted.
      if (!options.reuse) throw;
      cache->note(fmt::format(
          "the graph to rebuild the cuts of does not fit ({}); building it whole", e.what()));
      options.reuse = nullptr;
      prior.reset();
      out = engine::build_graph(trace, rules, options);
    }
  } catch (const DiagnosticError& e) {
    throw SessionError(SessionError::Kind::BadInput, e.what());
  } catch (const rules::LuaError& e) {
    throw SessionError(SessionError::Kind::BadInput, e.what());
  }
  if (prior) result.rebuilt_from = prior_key;
  prior.reset();  // its edges are in `out` now
  if (out.cuts_replayed) {
    size_t evaluated = 0;
    for (const auto& m : out.matches.splits) evaluated += m.known;
    cache->note(fmt::format("cuts replayed from {}: {} new rule{} evaluated",
                            cache->dir.shown(cache::kCutMatchesName), evaluated,
                            evaluated == 1 ? "" : "s"));
  }
  if (out.segments_from_reused)
    cache->note(fmt::format("segments kept for {} of {} threads (their cuts did not change)",
                            out.threads_kept, out.graph.threads.size()));
  // Lists to keep: those this build found, with the stored ones.
  bool new_matches = false;
  for (const auto* lists : {&out.matches.splits, &out.matches.batches})
    for (const auto& m : *lists) new_matches |= m.known;
  if (key) {
    // A trace rewritten while it was read: the graph is of neither content for sure.
    if (cache::trace_key(cache->trace_path) != cache->trace_key) {
      cache->note("the trace changed while it was read; graph not saved");
      out.matches = {};
      return result;
    }
    result.key = key;
    result.unsaved =
        BuiltGraph::Unsaved{*key, base, matches_key, stored.has_value(), new_matches, &trace};
    stored.reset();
    // The events by kind and name, for the rebuilds after a rule is added: made by the copy
    // that saves the graph, once per trace.
    if (keeps_index(cache) && !cache::has_event_names(cache->dir, index_key(*cache)) &&
        !cache::being_written(cache->dir, cache::kEventNamesName) &&
        cache->keeps_events(trace, cache::kEventNamesName, "events by kind and name"))
      result.unsaved->list_names_of = &trace;
    if (!defer_save) save_built_graph(result, rules, *cache);
    return result;
  }
  out.matches = {};  // not to be saved
  return result;
}

void save_built_graph(BuiltGraph& graph, const rules::RuleSet& rules, const CacheSession& cache) {
  if (!graph.unsaved) return;
  BuiltGraph::Unsaved& u = *graph.unsaved;
  engine::BuildResult& out = graph.built;
  // By a copy of this process (CacheSession::in_background).
  // After the saves queued before it (the events, the thread index).
  cache.save_queued([&] {
    std::string note = save_graph_entries(u, rules, out, cache);
    if (u.list_names_of) {
      std::string why;
      const std::string path = cache.dir.shown(cache::kEventNamesName);
      bool saved = false;
      try {
        saved = cache::save_event_names(cache.dir, index_key(cache),
                                        engine::EventNames::of(*u.list_names_of), &why);
        if (saved) {  // checked here, as the next run would (which then does not)
          cache::wait_settled(cache.dir, cache::kEventNamesName);
          cache::load_event_names(cache.dir, index_key(cache), u.list_names_of->events.size());
        }
      } catch (const std::logic_error& e) {  // a trace the lists cannot hold
        why = e.what();
      }
      note += saved ? fmt::format("\nevents by kind and name saved to {}", path)
                    : fmt::format("\nevents by kind and name not saved: {}", why);
    }
    // The run's large entries, this copy's (the events and the thread index queued before
    // the graph, when made here) and any an earlier copy saved, written to disk before this
    // copy ends, after the command's report: otherwise the kernel writes them about 30 s
    // later, during whatever runs then, and on a VM whose disk writes cost CPU time the run
    // after this one was slower by up to half (bench/RESULTS.md).
    for (const std::string& name :
         {cache::graph_entry_name(u.key), std::string(cache::kTraceArraysName),
          std::string(cache::kThreadIndexName), std::string(cache::kCutMatchesName),
          std::string(cache::kEventNamesName)})
      cache.dir.write_out(name, cache::kWriteOutFrom);
    return note;
  });
  graph.unsaved.reset();
  out.matches = {};  // saved by the copy
}

engine::ThreadEvents thread_index(const Trace& trace, const CacheSession* cache, bool* mapped,
                                  IndexSave* save_later) {
  if (mapped) *mapped = false;
  if (!keeps_index(cache)) return engine::ThreadEvents(trace);
  std::string why;
  if (auto loaded = mapped_thread_index(trace, cache, &why)) {
    if (mapped) *mapped = true;
    return std::move(*loaded);
  }
  const std::string path = cache->dir.shown(cache::kThreadIndexName);
  if (!why.empty()) cache->note(fmt::format("{} not used ({}); indexing the trace", path, why));
  engine::ThreadEvents index(trace);
  if (cache->keeps_events(trace, cache::kThreadIndexName, "thread index") &&
      !cache::being_written(cache->dir, cache::kThreadIndexName)) {
    IndexSave save = [cache, path, key = index_key(*cache),
                      events = trace.events.size()](const engine::ThreadEvents& made) {
      std::string problem;
      if (!cache::save_thread_index(cache->dir, key, made, &problem))
        return fmt::format("thread index not saved: {}", problem);
      // Checked here, after the report, as the next run would (which then does not).
      cache::wait_settled(cache->dir, cache::kThreadIndexName);
      cache::load_thread_index(cache->dir, key, events);
      return fmt::format("thread index saved to {}", path);
    };
    if (save_later)
      *save_later = std::move(save);
    else
      cache->in_background([&] { return save(index); });
  }
  return index;
}

std::optional<engine::ThreadEvents> mapped_thread_index(const Trace& trace,
                                                        const CacheSession* cache,
                                                        std::string* why) {
  if (!keeps_index(cache)) return std::nullopt;
  auto loaded = cache::load_thread_index(cache->dir, index_key(*cache), trace.events.size(), why);
  if (loaded) note_index_mapped(*cache);
  return loaded;
}

void DiagnosisCache::apply(engine::DiagnoseOptions& options) {
  if (!graph_key_ || !cache_) return;
  // The symptom auto found on this graph before (its search walks every candidate thread).
  std::string why;
  known_hang_ = cache::load_hang(cache_->dir, *graph_key_, options.symptom, trace_, graph_, &why);
  if (known_hang_)
    cache_->note("hang found before on this graph, from the cache");
  else if (!why.empty())
    cache_->note(fmt::format("hang entry not used ({})", why));
  options.known_hang = known_hang_ ? &*known_hang_ : nullptr;
  // Else the candidate threads' ranks of the graph this one's cuts were rebuilt from: the
  // threads whose cuts the new rules left alone are not searched again.
  if (!known_hang_ && rebuilt_from_ && options.symptom.mode == engine::SymptomRequest::Mode::Auto) {
    why.clear();
    ranks_before_ =
        cache::load_thread_ranks(cache_->dir, *rebuilt_from_, options.symptom, trace_, &why);
    if (!ranks_before_ && !why.empty())
      cache_->note(fmt::format("candidate ranks of the graph rebuilt not used ({})", why));
  }
  options.ranks_before = ranks_before_ ? &*ranks_before_ : nullptr;
  // Small: written here, not by a copy of the process.
  options.hang_found = [this, request = options.symptom](const engine::FoundHang& found) {
    if (ranks_before_)
      cache_->note(fmt::format("{} of {} candidate threads ranked as on the graph rebuilt",
                               found.reused, found.ranks.size()));
    std::string problem;
    if (!cache::save_hang(cache_->dir, *graph_key_, request, found, &problem))
      cache_->note(fmt::format("hang not saved: {}", problem));
  };
}

}  // namespace cw::session
