#include "instrument/hook/event_log.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "instrument/hook/event_sink.h"
#include "instrument/hook/log_format.h"

namespace cw::hook {
namespace {

// Room left in the paths below for "/hooks.PID.N".
char log_dir[PATH_MAX - 64];
char log_path[PATH_MAX];
EventLogOptions log_options;
uint64_t next_generation = 1;
uint8_t notes_lock = 0;
// Every hook's address by id - 1, copied into each new log.
uint64_t hook_addresses[log::kHookCapacity];

uint64_t* hook_table(log::Header* header) {
  return reinterpret_cast<uint64_t*>(reinterpret_cast<uint8_t*>(header) + header->hooks_offset);
}

// strerrordesc_np, not strerror: no locale lookup (and lock) in a forked child.
bool fail(char* reason, size_t size, const char* what, const char* path) {
  const char* description = strerrordesc_np(errno);
  snprintf(reason, size, "%s %s: %s", what, path, description ? description : "unknown error");
  return false;
}

// The first line of `path` that starts with `key`, in `line`; false if none.
bool first_line(const char* path, const char* key, char* line, size_t size) {
  FILE* file = fopen(path, "re");
  if (!file) return false;
  bool found = false;
  while (!found && fgets(line, static_cast<int>(size), file))
    found = strncmp(line, key, strlen(key)) == 0;
  fclose(file);
  return found;
}

// Whether `word` is one of the space-separated words of `line`.
bool has_word(const char* line, const char* word) {
  const size_t n = strlen(word);
  for (const char* p = strstr(line, word); p; p = strstr(p + 1, word))
    if ((p == line || p[-1] == ' ' || p[-1] == '\t') &&
        (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
      return true;
  return false;
}

uint64_t ticks_per_ms(const log::ClockPair& a, const log::ClockPair& b) {
  if (b.ns <= a.ns || b.tsc <= a.tsc) return 1;
  __extension__ using Wide = unsigned __int128;
  return static_cast<uint64_t>(static_cast<Wide>(b.tsc - a.tsc) * 1000000 / (b.ns - a.ns));
}

// Creates, sizes, maps and fills the log; `carried` is a parent's calibration, or null to
// take one now.
bool create_log(const log::ClockPair* carried, char* reason, size_t reason_size) {
  const uint64_t chunk = log_options.chunk_bytes;
  const uint64_t chunks_offset = log::kChunksOffset;
  if (chunk < 4096 || chunk % 4096 || log_options.file_bytes < chunks_offset + chunk) {
    snprintf(reason, reason_size, "bad hook log size: %lu bytes in chunks of %lu",
             log_options.file_bytes, chunk);
    return false;
  }
  const uint64_t chunk_count = (log_options.file_bytes - chunks_offset) / chunk;
  const uint64_t file_bytes = chunks_offset + chunk_count * chunk;
  const int pid = getpid();
  char temporary[PATH_MAX];
  snprintf(temporary, sizeof temporary, "%s/.hooks.%d.tmp", log_dir, pid);
  int fd = open(temporary, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return fail(reason, reason_size, "cannot create", temporary);
  if (fchmod(fd, 0600) != 0 || ftruncate(fd, static_cast<off_t>(file_bytes)) != 0) {
    fail(reason, reason_size, "cannot size", temporary);
    close(fd);
    unlink(temporary);
    return false;
  }
  void* memory = mmap(nullptr, file_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (memory == MAP_FAILED) {
    fail(reason, reason_size, "cannot map", temporary);
    unlink(temporary);
    return false;
  }
  auto* header = static_cast<log::Header*>(memory);
  header->version = log::kVersion;
  header->clock = cw_hook_clock_ns ? log::kClockMonotonicNs : log::kClockTsc;
  header->pid = static_cast<uint32_t>(pid);
  header->notes_offset = log::kHeaderBytes;
  header->notes_capacity = log::kNoteCapacity;
  header->chunks_offset = static_cast<uint32_t>(chunks_offset);
  header->chunk_size = static_cast<uint32_t>(chunk);
  header->chunk_count = static_cast<uint32_t>(chunk_count);
  header->event_size = sizeof(log::Event);
  header->file_size = file_bytes;
  header->hooks_offset = log::kHeaderBytes + log::kNoteBytes * log::kNoteCapacity;
  header->hooks_capacity = log::kHookCapacity;
  memcpy(hook_table(header), hook_addresses, sizeof hook_addresses);
  if (carried) {
    header->first = carried[0];
    header->latest = carried[1];
  } else {
    // Two pairs 200 us apart give a first slope; events refresh `latest` from then on.
    header->first = read_clock_pair();
    do header->latest = read_clock_pair();
    while (header->latest.ns < header->first.ns + 200000);
  }
  memcpy(header->magic, log::kMagic, sizeof log::kMagic);
  __atomic_thread_fence(__ATOMIC_RELEASE);

  // Appear under the final name at once; never replace a log of an earlier image (exec).
  for (int n = 1; n < 1000; ++n) {
    if (n == 1)
      snprintf(log_path, sizeof log_path, "%s/hooks.%d", log_dir, pid);
    else
      snprintf(log_path, sizeof log_path, "%s/hooks.%d.%d", log_dir, pid, n);
    if (renameat2(AT_FDCWD, temporary, AT_FDCWD, log_path, RENAME_NOREPLACE) == 0) {
      ActiveLog active{};
      active.generation = next_generation++;
      active.header = header;
      active.chunks = static_cast<uint8_t*>(memory) + chunks_offset;
      active.chunk_size = static_cast<uint32_t>(chunk);
      active.chunk_count = static_cast<uint32_t>(chunk_count);
      active.events_per_chunk =
          static_cast<uint32_t>((chunk - log::kChunkHeaderBytes) / sizeof(log::Event));
      active.ticks_per_ms = ticks_per_ms(header->first, header->latest);
      notes_lock = 0;
      publish_active_log(active);
      return true;
    }
    if (errno != EEXIST) break;
  }
  fail(reason, reason_size, "cannot name the hook log", temporary);
  log_path[0] = '\0';
  munmap(memory, file_bytes);
  unlink(temporary);
  return false;
}

}  // namespace

bool tsc_usable(char* reason, size_t reason_size) {
  return tsc_usable_from("/proc/cpuinfo",
                         "/sys/devices/system/clocksource/clocksource0/current_clocksource", reason,
                         reason_size);
}

void use_monotonic_clock(bool on) {
  __atomic_store_n(&cw_hook_clock_ns, on ? 1 : 0, __ATOMIC_RELAXED);
}

bool tsc_usable_from(const char* cpuinfo, const char* clocksource, char* reason,
                     size_t reason_size) {
  char line[8192];
  if (!first_line(cpuinfo, "flags", line, sizeof line) || !has_word(line, "constant_tsc") ||
      !has_word(line, "nonstop_tsc")) {
    snprintf(reason, reason_size,
             "the TSC cannot timestamp events here: /proc/cpuinfo lacks constant_tsc or "
             "nonstop_tsc");
    return false;
  }
  if (!first_line(clocksource, "", line, sizeof line) || strcmp(line, "tsc\n") != 0) {
    snprintf(reason, reason_size,
             "the TSC cannot timestamp events here: the kernel's clocksource is not tsc");
    return false;
  }
  return true;
}

bool open_event_log(const char* dir, const EventLogOptions& options, char* reason,
                    size_t reason_size) {
  if (strlen(dir) >= sizeof log_dir) {
    snprintf(reason, reason_size, "hook log directory name too long: %s", dir);
    return false;
  }
  strcpy(log_dir, dir);
  log_options = options;
  return create_log(nullptr, reason, reason_size);
}

bool reopen_event_log_after_fork(char* reason, size_t reason_size) {
  const ActiveLog* parent = active_log();
  if (!parent) {
    snprintf(reason, reason_size, "no hook log to follow after fork");
    return false;
  }
  const log::Header* parent_header = parent->header;
  const log::ClockPair carried[2] = {parent_header->first, parent_header->latest};
  if (!create_log(carried, reason, reason_size)) return false;
  // The child runs the parent's hooks: its log says which, as the parent's did.
  const uint32_t notes = __atomic_load_n(&parent_header->notes_used, __ATOMIC_ACQUIRE);
  for (uint32_t i = 0; i < notes && i < parent_header->notes_capacity; ++i) {
    const auto* note =
        reinterpret_cast<const log::Note*>(reinterpret_cast<const uint8_t*>(parent_header) +
                                           parent_header->notes_offset + i * log::kNoteBytes);
    char text[sizeof note->text + 1];
    const size_t length = note->length < sizeof note->text ? note->length : sizeof note->text;
    memcpy(text, note->text, length);
    text[length] = '\0';
    add_note(note->fn_index, text);
  }
  return true;
}

bool add_note(uint32_t fn_index, const char* text) {
  const ActiveLog* active = active_log();
  if (!active) return false;
  while (__atomic_test_and_set(&notes_lock, __ATOMIC_ACQUIRE)) {
  }
  log::Header* header = active->header;
  const uint32_t used = header->notes_used;
  const bool room = used < header->notes_capacity;
  if (room) {
    auto* note = reinterpret_cast<log::Note*>(reinterpret_cast<uint8_t*>(header) +
                                              header->notes_offset + used * log::kNoteBytes);
    size_t length = strlen(text);
    if (length > sizeof note->text) length = sizeof note->text;
    note->fn_index = fn_index;
    note->length = static_cast<uint32_t>(length);
    memcpy(note->text, text, length);
    __atomic_store_n(&header->notes_used, used + 1, __ATOMIC_RELEASE);
  }
  __atomic_clear(&notes_lock, __ATOMIC_RELEASE);
  return room;
}

void set_hook_address(uint32_t hook, uint64_t address) {
  if (hook == 0 || hook > log::kHookCapacity) return;
  __atomic_store_n(&hook_addresses[hook - 1], address, __ATOMIC_RELAXED);
  if (const ActiveLog* active = active_log())
    __atomic_store_n(&hook_table(active->header)[hook - 1], address, __ATOMIC_RELEASE);
}

const char* event_log_path() {
  return log_path;
}

}  // namespace cw::hook
