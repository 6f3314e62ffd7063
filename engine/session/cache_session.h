// How a command uses the derived cache beside its trace (docs/cache.md, engine/cache).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/cache/cache_dir.h"
#include "engine/session/reporter.h"
#include "trace/trace.h"

namespace cw::session {

struct CacheSession {
  bool on = false;       // look up and save entries
  bool verbose = false;  // a message per hit and per entry not used (why)
  // Also wait for the saves, and say how they went (CAUSEWAY_CACHE=verbose). At a terminal
  // the command does not wait: the person at it gets the prompt back while the save goes
  // on.
  bool wait_for_saves = false;
  Reporter* reporter = nullptr;  // where the messages go (none: nowhere)
  std::string trace_path;
  std::string format;  // --format as given: part of the graph's key
  cache::Folder dir;   // the cache folder, open (when on)
  uint64_t trace_key = 0;
  // Set by read_trace: the events read are the binary trace's of `trace_key`, clean
  // (from the cache, or a whole read of an unchanged file), so what is derived from them
  // alone (the thread index) may be kept under that key.
  mutable bool events_keyed = false;
  bool made_folder = false;  // open() made the cache folder

  // How a command uses the cache: not at all (--no-cache), and how much it says.
  struct Use {
    bool off = false;
    bool verbose = false;         // the messages
    bool wait_for_saves = false;  // implies verbose
  };
  // Off with `use.off`, CAUSEWAY_CACHE=off, or when neither the trace's content nor a
  // cache folder can be had. Call it before reading the trace: the key is then the
  // content's that was read (unless the file changes while read; the graph's save checks).
  static CacheSession open(const std::string& trace_path, const std::string& format, Use use,
                           Reporter* reporter);
  void note(const std::string& text) const;  // "causeway: cache: LINE" per line when verbose

  // Whether entries derived from `trace`'s events alone (the events entry, the thread
  // index: `entry`, said as `what`) are kept: not for a trace whose events are too few
  // for an entry to pay (cache::keeps_trace_arrays). Then says so, and removes `entry`
  // when one is there: this run did not use it (another content's or build's, or damaged).
  bool keeps_events(const Trace& trace, std::string_view entry, std::string_view what) const;

  // The run failed before it had anything to keep (the trace could not be read): the
  // folder open() made is removed again, when still empty, and the cache is off. A run
  // that fails leaves nothing behind it.
  void discard_made_folder();

  // Runs `save` (it returns its note: a line per thing saved) in a detached copy of this process
  // (fork), which sees memory as it is now: the command goes on, and may exit, while ~1 GB at 19 M
  // events goes to disk (on a VM whose writeback throttles writers, that took longer than
  // reading the trace). A run started before the save ends finds no entry (entries appear
  // whole or not at all) and derives it again, or waits for it (wait_for_live_saves). Verbose, the
  // command waits for the saves at its end (wait()), so their notes come out before it exits
  // (wait_for_saves). Call it when this process runs one thread; without fork, saves at once.
  void in_background(const std::function<std::string()>& save) const;
  void wait() const;

  // A save kept for the copy of the next save_queued(), in the order queued: the entries
  // derived from the events alone (~1.1 GB at 19 M events) are written after the graph's
  // build and the hang search, not beside them. On two CPUs a copy writing them took the
  // build's second CPU, and where fresh pages cost the host's time (a VM that gives freed
  // memory back) the writes doubled the first run's system time (bench/RESULTS.md).
  void queue(std::function<std::string()> save) const;
  // While a live run (another, or a copy of this one) writes an entry whose name starts
  // with one of `prefixes`, waits for it (at most 20 s), saying so: loading it beats
  // deriving it again beside the copy writing it. `what` names it in the note.
  void wait_for_live_saves(const std::vector<std::string_view>& prefixes,
                           std::string_view what) const;
  // The queued saves, then `save` when given, in one copy (in_background). Nothing when
  // there is neither.
  void save_queued(const std::function<std::string()>& save = {}) const;
  // Set by read_trace when the events it read are to be kept: saves them (the arrays of
  // the trace given, as read) and returns the note. The caller queues it once the trace is
  // where it stays (TraceSession).
  mutable std::function<std::string(const Trace&)> save_events;

 private:
  mutable std::shared_ptr<std::vector<int>> saving_ = std::make_shared<std::vector<int>>();
  mutable std::shared_ptr<std::vector<std::function<std::string()>>> queued_ =
      std::make_shared<std::vector<std::function<std::string()>>>();
};

// Declared after the Trace a save in the background reads: waits (when verbose) at the end.
struct WaitForCacheSaves {
  const CacheSession& cache;
  ~WaitForCacheSaves() { cache.wait(); }
};

}  // namespace cw::session
