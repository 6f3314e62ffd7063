// Reads a Perfetto trace back (the export's, or any: fields outside our subset are
// skipped) and checks what Perfetto relies on, so a test can tell a file that opens from
// one that does not (docs/export.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cw::engine {

struct PerfettoReadBack {
  uint64_t process_tracks = 0, thread_tracks = 0;
  uint64_t segment_slices = 0;  // slices (or instants) in category "segment"
  uint64_t flows = 0;           // flow ids with a start and a terminating end
  uint64_t markers = 0;         // instants in category "marker"
  uint64_t path_slices = 0, root_cause_slices = 0, path_flows = 0;
  uint64_t sched_switches = 0, sched_wakings = 0, cpus = 0;
  // What is wrong: a parse failure, an event on an unknown track, an unbalanced slice, an
  // iid never interned, a timestamp going back on its sequence, a flow with one end,
  // compact_sched columns of unequal lengths.
  std::vector<std::string> problems;
};

PerfettoReadBack read_back_perfetto(std::string_view bytes);

}  // namespace cw::engine
