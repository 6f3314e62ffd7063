// libcauseway-preload.so: what `causeway record -- CMD` puts in LD_PRELOAD (docs/hooks.md).
// At load it opens DIR/hooks.PID (CAUSEWAY_HOOK_DIR), finds each function of
// CAUSEWAY_HOOK_FUNCTIONS ("INDEX:NAME[@BINARY];...") in the loaded modules, hooks it, and
// notes the outcome in the log. The environment is left as it is: children and exec'd
// programs load the library and are hooked too. Built without libstdc++.
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>

#include "instrument/hook/elf_symbols.h"
#include "instrument/hook/event_log.h"
#include "instrument/hook/event_sink.h"
#include "instrument/hook/patcher.h"
#include "instrument/hook/thread_park.h"
#include "instrument/hook/thread_state.h"

namespace cw::hook {
namespace {

constexpr uint32_t kNoIndex = 0xffffffff;
__thread uint8_t busy_before_fork;

void say(const char* text) {
  dprintf(2, "causeway-preload[%d]: %s\n", getpid(), text);
}

void note(uint32_t index, const char* text) {
  if (!add_note(index, text)) say(text);
}

uint64_t env_number(const char* name, uint64_t fallback) {
  const char* text = getenv(name);
  if (!text || !*text) return fallback;
  char* end = nullptr;
  unsigned long long value = strtoull(text, &end, 10);
  if (*end || value == 0) {
    char message[256];
    snprintf(message, sizeof message, "ignoring %s=%s: not a positive number", name, text);
    say(message);
    return fallback;
  }
  return value;
}

// No patching while a fork copies memory; the forking thread records nothing until the
// child has a log of its own (its chunk lives in the parent's file).
void before_fork() {
  lock_patching();
  busy_before_fork = cw_hook_thread.busy;
  cw_hook_thread.busy = 1;
}
void after_fork_in_parent() {
  cw_hook_thread.busy = busy_before_fork;
  unlock_patching();
}
void after_fork_in_child() {
  unlock_patching();
  cw_hook_thread.tid = 0;  // the parent's, cached
  char reason[256];
  if (!reopen_event_log_after_fork(reason, sizeof reason)) {
    say(reason);
    close_active_log();
  }
  cw_hook_thread.busy = busy_before_fork;
}

void hook_one(uint32_t index, const char* name, const char* binary, const char* clock_problem) {
  char text[2 * PATH_MAX];  // add_note cuts it to a note's size
  if (clock_problem) {
    snprintf(text, sizeof text, "refused: %s", clock_problem);
    return note(index, text);
  }
  FoundFunction found;
  switch (find_function(name, binary, &found)) {
    case Lookup::kNotFound:
      snprintf(text, sizeof text, "not found: no function %s in %s", name,
               binary ? binary : "the program or its libraries");
      return note(index, text);
    case Lookup::kAmbiguous:
      snprintf(text, sizeof text, "refused: %s names several functions in %s", name, found.module);
      return note(index, text);
    case Lookup::kIfunc:
      snprintf(text, sizeof text,
               "refused: %s in %s is an indirect function (its symbol is the resolver)", name,
               found.module);
      return note(index, text);
    case Lookup::kFound: break;
  }
  char reason[200];
  if (install(found.address, found.size, index, reason, sizeof reason))
    snprintf(text, sizeof text, "hooked at 0x%lx (%s in %s)", found.address, name, found.module);
  else
    snprintf(text, sizeof text, "refused: %s", reason);
  note(index, text);
}

// Parses "INDEX:NAME[@BINARY]" entries separated by ';' and hooks each.
void hook_all(const char* list, const char* clock_problem) {
  const char* entry = list;
  while (*entry) {
    const char* end = strchr(entry, ';');
    if (!end) end = entry + strlen(entry);
    const size_t length = static_cast<size_t>(end - entry);
    char item[512];
    if (length > 0) {
      const bool fits = length < sizeof item;
      if (fits) {
        memcpy(item, entry, length);
        item[length] = '\0';
      }
      char* colon = fits ? strchr(item, ':') : nullptr;
      char* digits_end = nullptr;
      const unsigned long index = colon ? strtoul(item, &digits_end, 10) : 0;
      if (!colon || digits_end != colon || colon == item || colon[1] == '\0' || colon[1] == '@' ||
          index >= kNoIndex) {
        char text[log::kNoteBytes];
        snprintf(text, sizeof text,
                 "bad entry at byte %zu of CAUSEWAY_HOOK_FUNCTIONS: '%.*s' (expected "
                 "INDEX:NAME[@BINARY])",
                 static_cast<size_t>(entry - list), static_cast<int>(length < 100 ? length : 100),
                 entry);
        note(kNoIndex, text);
      } else {
        char* name = colon + 1;
        char* at = strchr(name, '@');
        if (at) *at = '\0';
        hook_one(static_cast<uint32_t>(index), name, at && at[1] ? at + 1 : nullptr, clock_problem);
      }
    }
    entry = *end ? end + 1 : end;
  }
}

__attribute__((constructor)) void start() {
  const char* dir = getenv("CAUSEWAY_HOOK_DIR");
  if (!dir || !*dir) return;
  EventLogOptions options;
  options.file_bytes = env_number("CAUSEWAY_HOOK_LOG_MB", options.file_bytes >> 20) << 20;
  set_park_timeout_ms(
      static_cast<unsigned>(env_number("CAUSEWAY_HOOK_STOP_TIMEOUT_MS", park_timeout_ms())));
  char reason[256];
  char clock_reason[256];
  // Machines differ: where the TSC is not the kernel's clock, stamp with CLOCK_MONOTONIC
  // (the log's header says so, and the reader notes it once).
  const bool tsc_ok = tsc_usable(clock_reason, sizeof clock_reason);
  if (!tsc_ok) use_monotonic_clock(true);
  if (!open_event_log(dir, options, reason, sizeof reason)) return say(reason);
  pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
  const char* functions = getenv("CAUSEWAY_HOOK_FUNCTIONS");
  if (functions) hook_all(functions, nullptr);
}

// The last calibration pair after the last event: the reader interpolates, never
// extrapolates, for a program that has exited.
__attribute__((destructor)) void finish() {
  if (const ActiveLog* log = active_log()) refresh_calibration(*log);
}

}  // namespace
}  // namespace cw::hook
