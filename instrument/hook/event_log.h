// Creating this process's hook event log (log_format.h) and writing notes into it. The
// stubs append events through event_sink.h; nothing is buffered in the process, so
// nothing is lost at exec, crash or kill. No libstdc++: the preload library uses it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cw::hook {

struct EventLogOptions {
  uint64_t file_bytes = uint64_t{64} << 20;  // sparse: only written chunks take space
  uint32_t chunk_bytes = 64 << 10;           // claimed by one thread at a time
};

// Whether the TSC can timestamp events: /proc/cpuinfo says constant_tsc and nonstop_tsc
// and the kernel's clocksource is tsc. False with `reason` set otherwise.
bool tsc_usable(char* reason, size_t reason_size);
// The same decision from the given files (tests inject both outcomes).
bool tsc_usable_from(const char* cpuinfo, const char* clocksource, char* reason,
                     size_t reason_size);
// Stamp events with CLOCK_MONOTONIC nanoseconds (vDSO) instead of the TSC; call before
// open_event_log, whose header then says so (log::Header::clock), and keep while the log
// is in use: the stubs read it at every event.
void use_monotonic_clock(bool on);

// Creates DIR/hooks.PID, mode 0600 (hooks.PID.2, .3 ... when an earlier image of this pid,
// before an exec, made one), pre-sized and mapped shared, with the clock calibration
// taken, and makes it the destination of every thread's events. False with `reason`.
bool open_event_log(const char* dir, const EventLogOptions& options, char* reason,
                    size_t reason_size);
// In a forked child (pthread_atfork child handler): a log of its own in the same directory,
// the parent's clock calibration carried over.
bool reopen_event_log_after_fork(char* reason, size_t reason_size);
// Appends a note (the outcome of one hook request) to the current log; false if there is
// no log or the note area is full. The text is cut at log::Note's size.
bool add_note(uint32_t fn_index, const char* text);
// Hook `hook` (an id from patcher.cc's install, 1 .. log::kHookCapacity) is at `address`:
// written into the current log's hook table and into every log opened later, before the
// hook's first event (install() calls it before patching). Async-signal-safe.
void set_hook_address(uint32_t hook, uint64_t address);
// The current log's path, or "" if none.
const char* event_log_path();

}  // namespace cw::hook
