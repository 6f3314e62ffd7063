// How a command uses the derived cache beside its trace (docs/cache.md, engine/cache).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace cw::cli {

struct CacheSession {
  bool on = false;       // look up and save entries
  bool verbose = false;  // a line on stderr per hit and per entry not used (why)
  std::string trace_path;
  std::string format;  // --format as given: part of the graph's key
  std::string dir;     // the cache folder (when on)
  uint64_t trace_key = 0;

  // Off with `no_cache` (--no-cache), CAUSEWAY_CACHE=off, or when neither the trace's
  // content nor a cache folder can be had. Verbose at a terminal or with
  // CAUSEWAY_CACHE=verbose. Call it before reading the trace: the key is then the
  // content's that was read (unless the file changes while read; the graph's save checks).
  static CacheSession open(const std::string& trace_path, const std::string& format, bool no_cache);
  void note(const std::string& text) const;  // "causeway: cache: TEXT" when verbose

  // A save running beside the rest of the command (the trace's arrays: ~0.9 GB at 19 M
  // events, written while the graph is built). wait() joins it.
  mutable std::shared_ptr<std::jthread> saving;
  void wait() const {
    if (saving && saving->joinable()) saving->join();
  }
};

// Declared after the Trace a background save reads: waits for it before the trace goes.
struct WaitForCacheSaves {
  const CacheSession& cache;
  ~WaitForCacheSaves() { cache.wait(); }
};

// --no-cache for a command that reads a trace and builds its graph.
CLI::Option* add_no_cache_option(CLI::App* cmd, bool& no_cache);

}  // namespace cw::cli
