#include "engine/session/trace_load.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "base/source.h"
#include "engine/cache/cache.h"
#include "engine/session/session_error.h"
#include "trace/command_marker.h"
#include "trace/ring.h"
#include "trace/symbolize.h"
#include "trace/text_format.h"

namespace cw::session {

bool is_text_trace_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string start(kTextTraceHeader.size(), '\0');
  in.read(start.data(), static_cast<std::streamsize>(start.size()));
  start.resize(static_cast<size_t>(in.gcount()));
  return start == kTextTraceHeader;
}

namespace {

// Whether the file's first bytes are printable text (a binary trace's header is not).
bool looks_like_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string start(512, '\0');
  in.read(start.data(), static_cast<std::streamsize>(start.size()));
  start.resize(static_cast<size_t>(in.gcount()));
  return !start.empty() && std::all_of(start.begin(), start.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 || c == '\n' || c == '\t' || c == '\r';
  });
}

bool is_binary_trace_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char start[8] = {};
  in.read(start, sizeof start);
  return in.gcount() == 8 && std::equal(start, start + 8, binary_format::kFileMagic);
}

// The trace's events and values from the cache, the rest from the trace. False (and
// `trace` reset) when the cache has no arrays for this content, or they do not fit the
// small chunks as read now.
bool read_from_cache(const std::string& path, Trace& trace, ReadReport& report,
                     const CacheSession& cache, const cache::Key& key) {
  std::string why;
  auto arrays = cache::load_trace_arrays(cache.dir, key, &why);
  if (!arrays) {
    if (!why.empty())
      cache.note(fmt::format("{} not used ({}); reading the trace",
                             cache.dir.shown(cache::kTraceArraysName), why));
    return false;
  }
  std::optional<ReadReport> small = cache::read_trace_without_events(path, trace);
  if (!small || !small->skipped.empty() || trace.strings.size() != arrays->strings ||
      trace.stacks.size() != arrays->stacks) {
    cache.note(fmt::format("{} does not fit the trace as read now; reading the trace",
                           cache.dir.shown(cache::kTraceArraysName)));
    trace = Trace{};
    return false;
  }
  // A checksum is not validation: every event must name what the trace has. An entry
  // checked in full by an earlier run, unchanged since, is not checked again
  // (checked_entries.h): the strings and stacks it was checked against are the trace's,
  // whose content its key names.
  const bool checked_before = arrays->once.before;
  if (!checked_before) {
    try {
      cache::check_trace_arrays(*arrays, trace);
    } catch (const cache::CorruptEntry& e) {
      cache.note(fmt::format("{} not used ({}); reading the trace",
                             cache.dir.shown(cache::kTraceArraysName), e.what()));
      trace = Trace{};
      return false;
    }
    cache::record_checked(cache.dir, cache::kTraceArraysName, arrays->once);
  }
  trace.events = std::move(arrays->events);
  trace.values = std::move(arrays->values);
  // The diagnosis looks for the markers more than once: the entry lists them.
  trace.markers_found = {trace.events.data(), trace.events.size(), std::move(arrays->markers)};
  report = std::move(arrays->report);
  cache.note(fmt::format("events mapped from {}{}", cache.dir.shown(cache::kTraceArraysName),
                         checked_before ? " (checked in full before, unchanged since)" : ""));
  return true;
}

// The events of the trace at `path`, from the cache when it holds them (and saved there
// after a clean read). Throws SessionError (bad input) when nothing could be read.
void read_events(const std::string& path, const std::string& format, const CacheSession* cache,
                 Trace& trace, ReadReport& report) {
  try {
    // Only the binary form is cached: the others are small, or read once.
    std::optional<cache::Key> key;
    if (cache && cache->on && (format == "auto" || format == "binary") &&
        is_binary_trace_file(path))
      key = cache::Key{cache->trace_key, 0, 0, cache::engine_key()};
    // The run before this one saves the events after its search, by a copy that may still
    // be writing them.
    if (key) cache->wait_for_live_saves({cache::kTraceArraysName}, "events");
    if (key && read_from_cache(path, trace, report, *cache, *key)) {
      cache->events_keyed = true;
      return;
    }
    // An always-on recorder's ring (`record start`'s ring/, or a copy of it): its files as
    // one trace, as `record stop -o` would save it. (No cache: a ring changes as it runs.)
    if (is_ring_dir(path)) {
      report = read_ring(path, trace);
      return;
    }
    if (std::filesystem::is_directory(path))
      throw SessionError(SessionError::Kind::BadInput,
                         fmt::format("causeway: {}: a folder, and not a recorder's ring (no "
                                     "ring-NNNNNNNNNN.cwt file in it)\n",
                                     path));
    report =
        load_trace(path, trace, parse_trace_input_format(format).value_or(TraceInputFormat::Auto));
    // A damaged file's events depend on what was lost with it; a file rewritten while it
    // was read is of neither content for sure.
    if (key && report.clean() && cache::trace_key(path) == cache->trace_key)
      cache->events_keyed = true;
    // Saved later by a copy of this process (CacheSession::save_events), with the counts
    // of strings and stacks as read: symbolisation adds to them, and a later run compares
    // them with what it reads of the trace without its events.
    if (key && cache->events_keyed &&
        cache->keeps_events(trace, cache::kTraceArraysName, "events") &&
        !cache::being_written(cache->dir, cache::kTraceArraysName))
      cache->save_events = [cache, key = *key, report, strings = trace.strings.size(),
                            stacks = trace.stacks.size()](const Trace& read) {
        std::string why;
        if (!cache::save_trace_arrays(cache->dir, key, read.events, read.values, strings, stacks,
                                      marker_events(read, read.schema.find("marker")), report,
                                      &why))
          return fmt::format("events not saved: {}", why);
        // Checked here, after the report, rather than by the next run.
        cache::check_saved_trace_arrays(cache->dir, key, read.schema, strings, stacks);
        return fmt::format("events saved to {}", cache->dir.shown(cache::kTraceArraysName));
      };
  } catch (const DiagnosticError& e) {
    throw SessionError(SessionError::Kind::BadInput, e.what());
  } catch (const TraceFormatError& e) {
    std::string text = fmt::format("causeway: {}\n", e.what());
    // Text that is neither form may be perf script output that starts with something
    // else than an event line (a note, a warning perf printed into it).
    if (format == "auto" && looks_like_text(path))
      text +=
          "hint: a text trace starts with 'causeway-trace', perf script output with an event "
          "line; --trace-format perf-script reads it as perf script output anyway\n";
    throw SessionError(SessionError::Kind::BadInput, text);
  } catch (const SessionError&) {
    throw;
  } catch (const std::exception& e) {
    throw SessionError(SessionError::Kind::BadInput, fmt::format("causeway: {}\n", e.what()));
  }
}

}  // namespace

ReadReport read_trace(const std::string& path, Trace& trace, Reporter& reporter,
                      SymbolizeReport* symbols, const std::string& format,
                      const CacheSession* cache) {
  ReadReport report;
  {
    // A long recording takes a while to read and name.
    const ProgressScope progress(reporter, path);
    progress("reading");
    read_events(path, format, cache, trace, report);
  }
  for (const auto& s : report.skipped)
    reporter.message(fmt::format("{}: warning: skipped {} bytes at offset {}: {}", path, s.size,
                                 s.offset, s.reason));
  for (const auto& n : report.notes) reporter.message(fmt::format("{}: note: {}", path, n));
  // A recorded trace holds raw addresses and the memory maps (and perf maps) to name them; rules
  // match frames by symbol, so stacks are named here, from the files on this machine.
  if (trace.maps.empty() && trace.jit_symbols.empty()) return report;
  SymbolizeReport sym;
  {
    const ProgressScope progress(reporter, path);
    progress("naming stack frames");
    sym = symbolize_stacks(trace);
  }
  if (symbols) {
    *symbols = std::move(sym);
    return report;
  }
  // A recording of a command is about the command's processes: a library another
  // process mapped (a JIT's /memfd: region) says nothing about it.
  if (const Pid command = command_pid(trace); command != 0) {
    std::set<std::string> files;
    for (const auto& [pid, not_found] : sym.files_not_found_by_pid)
      if (in_process_tree(trace, pid, command)) files.insert(not_found.begin(), not_found.end());
    if (!files.empty())
      reporter.message(fmt::format(
          "{}: note: stack frames of the recorded command's processes unnamed; not found: {}", path,
          fmt::join(files, ", ")));
  } else if (!sym.files_not_found.empty()) {
    reporter.message(fmt::format("{}: note: {} stack frames unnamed; not found: {}", path,
                                 sym.frames_unresolved, fmt::join(sym.files_not_found, ", ")));
  }
  return report;
}

}  // namespace cw::session
