// A thread table entry that contradicts an earlier one, which both trace readers refuse.
#pragma once

#include <cstddef>
#include <optional>

#include "trace/trace.h"

namespace cw {

// The process and thread tables are histories: an exec or a rename appends a new entry
// for the same id, and the last one holds. But a thread changes process only when its id
// is reused by a new thread, which a fork event records. `entry` indexes Trace::threads;
// `from` is the process before.
struct ThreadMove {
  size_t entry = 0;
  Pid from = 0;
};

// The first entry of `trace.threads` that puts its thread in another process than the
// entry before it for the same thread, without a `fork` event creating that thread in that
// process; nothing when there is none. An entry after one of process 0 (not known) is no
// move.
std::optional<ThreadMove> find_unexplained_thread_move(const Trace& trace);

}  // namespace cw
