// Where the hook stubs' events go: the process's current event log (event_log.h opens it)
// and the slow path the stubs call when the fast path cannot append (no chunk yet, chunk
// full, the log changed, time to refresh the clock calibration). This file's code runs
// inside hooked calls, between a function's entry and its prologue: it is compiled with
// -mgeneral-regs-only (the caller's vector argument registers stay intact), calls no libc,
// takes no lock, and is async-signal-safe.
#pragma once

#include <cstdint>

#include "instrument/hook/log_format.h"
#include "instrument/hook/thread_state.h"

namespace cw::hook {

// An open log as the recording side sees it; immutable once published.
struct ActiveLog {
  uint64_t generation;
  log::Header* header;
  uint8_t* chunks;  // first chunk
  uint32_t chunk_size;
  uint32_t chunk_count;
  uint32_t events_per_chunk;
  uint64_t ticks_per_ms;  // TSC ticks per millisecond, from the calibration at open
};

// Makes `log` (copied into static storage) the destination of every thread's next event.
// Threads drop their chunk of the previous log at their next event.
void publish_active_log(const ActiveLog& log);
// No log from now on (a forked child that could not make one): events are only counted.
void close_active_log();
// The current log, or null.
const ActiveLog* active_log();
// Events recorded while no log was open (tests install hooks without one).
uint64_t events_without_log();
// Takes a new TSC/CLOCK_MONOTONIC pair into the log's `latest` (skipped if another thread is
// writing it). Async-signal-safe.
void refresh_calibration(const ActiveLog& log);
// One bracketed TSC/CLOCK_MONOTONIC pair, best of a few tries; raw system calls only.
log::ClockPair read_clock_pair();

}  // namespace cw::hook

extern "C" {
// Bumped whenever the active log changes; the stubs compare it with the thread's.
extern uint64_t cw_hook_log_generation __attribute__((visibility("hidden")));
// The TSC at or after which the next event refreshes the calibration.
extern uint64_t cw_hook_recalibrate_at __attribute__((visibility("hidden")));
// Set before the log is opened when the TSC cannot timestamp events (event_log.h's
// tsc_usable): the stubs then stamp events with cw_hook_clock_now, CLOCK_MONOTONIC ns.
extern uint8_t cw_hook_clock_ns __attribute__((visibility("hidden")));
uint64_t cw_hook_clock_now() __attribute__((visibility("hidden")));
// Appends one event for `thread`, claiming a chunk if needed (called by the stubs);
// `exit_bit` is 0 for an entry, log::kExitBit << 32 for an exit.
void cw_hook_record_slow(cw::hook::ThreadState* thread, const cw::hook::HookDesc* desc,
                         uint64_t tsc, uint64_t exit_bit) __attribute__((visibility("hidden")));
// The exit stub found no shadow entry for its frame: the return address is lost.
[[noreturn]] void cw_hook_lost_return(uint64_t slot) __attribute__((visibility("hidden")));
}
