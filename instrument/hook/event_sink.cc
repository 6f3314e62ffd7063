#include "instrument/hook/event_sink.h"

#include <sys/mman.h>
#include <time.h>

#include "instrument/hook/atomic_word.h"
#include "instrument/hook/raw_syscall.h"

extern "C" {
__thread cw::hook::ThreadState cw_hook_thread;
uint64_t cw_hook_log_generation = 0;
// Never, until a log is opened.
uint64_t cw_hook_recalibrate_at = ~uint64_t{0};
// Nonzero: events are stamped with CLOCK_MONOTONIC nanoseconds, not the TSC.
uint8_t cw_hook_clock_ns = 0;
}

namespace cw::hook {
namespace {

// Logs stay valid forever once published (a thread may still be appending to an old
// one); a ring of slots bounds the storage, and a slot is reused only 64 logs later.
constexpr unsigned kLogSlots = 64;
ActiveLog log_slots[kLogSlots];
unsigned next_log_slot = 0;
const ActiveLog* current = nullptr;
uint64_t without_log = 0;
// Calibration refresh interval in ms: short at first, so early events convert well.
uint64_t refresh_ms = 1;
constexpr uint64_t kMaxRefreshMs = 100;

log::ChunkHeader* chunk_header(const ActiveLog& log, uint32_t index) {
  return reinterpret_cast<log::ChunkHeader*>(log.chunks + uint64_t{index} * log.chunk_size);
}

// Pops a chunk the reader handed back; false when the free list is empty. The tag in the
// head's high half changes with every push and pop, so a head read before another thread
// popped and the reader pushed the same chunk again does not match (ABA).
bool pop_free_chunk(const ActiveLog& log, uint32_t* index) {
  uint64_t* head = &log.header->free_head;
  uint64_t old = __atomic_load_n(head, __ATOMIC_ACQUIRE);
  for (;;) {
    const uint32_t top = static_cast<uint32_t>(old);
    if (top == 0 || top > log.chunk_count) return false;
    // May read a chunk another thread has just popped and is filling: the exchange then
    // fails, the head having changed.
    const uint32_t next = __atomic_load_n(&chunk_header(log, top - 1)->next_free, __ATOMIC_RELAXED);
    const uint64_t tag = (old >> 32) + 1;
    if (__atomic_compare_exchange_n(head, &old, (tag << 32) | next, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
      *index = top - 1;
      return true;
    }
  }
}

// Takes a chunk for `thread` in `log`: one the reader has handed back (resident, and
// likely still in cache), else a fresh one; false when neither is left.
bool claim_chunk(ThreadState* thread, const ActiveLog& log) {
  log::Header* header = log.header;
  uint32_t index;
  if (!pop_free_chunk(log, &index)) {
    if (__atomic_load_n(&header->chunks_claimed, __ATOMIC_RELAXED) >= log.chunk_count) return false;
    index = __atomic_fetch_add(&header->chunks_claimed, 1, __ATOMIC_ACQ_REL);
    if (index >= log.chunk_count) return false;
    // Fault the chunk's pages in with one call rather than one fault per page while
    // recording; an older kernel without MADV_POPULATE_WRITE (23) faults them one by one.
    sys::call(SYS_madvise, reinterpret_cast<long>(chunk_header(log, index)), log.chunk_size, 23);
  }
  if (thread->tid == 0) thread->tid = static_cast<uint32_t>(sys::gettid());
  log::ChunkHeader* chunk = chunk_header(log, index);
  chunk->tid = thread->tid;
  __atomic_store_n(&chunk->used, 0u, __ATOMIC_RELAXED);
  chunk->prev_chunk = thread->chunk;
  chunk->prev_claim = thread->chunk_claim;
  const uint64_t claim = __atomic_add_fetch(&header->claims, 1, __ATOMIC_RELAXED);
  store_release(&chunk->claim, claim);
  // The events come after the new claim: a reader that copied some and then still sees
  // the claim it started with knows they are that fill's (hook_log_reader.cc).
  __atomic_thread_fence(__ATOMIC_RELEASE);
  thread->events =
      reinterpret_cast<log::Event*>(reinterpret_cast<uint8_t*>(chunk) + log::kChunkHeaderBytes);
  thread->published = &chunk->used;
  thread->used = 0;
  thread->capacity = log.events_per_chunk;
  thread->chunk = index + 1;
  thread->chunk_claim = claim;
  return true;
}

}  // namespace

void publish_active_log(const ActiveLog& log) {
  ActiveLog* slot = &log_slots[next_log_slot++ % kLogSlots];
  *slot = log;
  refresh_ms = 1;
  __atomic_store_n(&current, slot, __ATOMIC_RELEASE);
  __atomic_store_n(&cw_hook_log_generation, log.generation, __ATOMIC_RELEASE);
  __atomic_store_n(&cw_hook_recalibrate_at, log.header->latest.tsc + log.ticks_per_ms,
                   __ATOMIC_RELAXED);
}

void close_active_log() {
  static uint64_t closes = 0;
  __atomic_store_n(&current, static_cast<const ActiveLog*>(nullptr), __ATOMIC_RELEASE);
  // A generation no log has: every thread drops its chunk at its next event.
  __atomic_store_n(&cw_hook_log_generation, (uint64_t{1} << 63) | ++closes, __ATOMIC_RELEASE);
  __atomic_store_n(&cw_hook_recalibrate_at, ~uint64_t{0}, __ATOMIC_RELAXED);
}

const ActiveLog* active_log() {
  return load_acquire(&current);
}

uint64_t events_without_log() {
  return __atomic_load_n(&without_log, __ATOMIC_RELAXED);
}

log::ClockPair read_clock_pair() {
  if (__atomic_load_n(&cw_hook_clock_ns, __ATOMIC_RELAXED)) {
    // Events carry nanoseconds: the pair is the identity, nothing to calibrate.
    const uint64_t now = cw_hook_clock_now();
    return {now, now};
  }
  log::ClockPair best{0, 0};
  uint64_t best_width = ~uint64_t{0};
  for (int attempt = 0; attempt < 5; ++attempt) {
    timespec now{};
    uint64_t before = __builtin_ia32_rdtsc();
    sys::call(SYS_clock_gettime, CLOCK_MONOTONIC, reinterpret_cast<long>(&now));
    uint64_t after = __builtin_ia32_rdtsc();
    if (after - before < best_width) {
      best_width = after - before;
      best.tsc = before + (after - before) / 2;
      best.ns =
          static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
    }
  }
  return best;
}

void refresh_calibration(const ActiveLog& log) {
  log::Header* header = log.header;
  uint32_t sequence = __atomic_load_n(&header->latest_sequence, __ATOMIC_RELAXED);
  if (sequence & 1) return;
  if (!__atomic_compare_exchange_n(&header->latest_sequence, &sequence, sequence + 1, false,
                                   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
    return;
  log::ClockPair pair = read_clock_pair();
  __atomic_store_n(&header->latest.tsc, pair.tsc, __ATOMIC_RELAXED);
  __atomic_store_n(&header->latest.ns, pair.ns, __ATOMIC_RELAXED);
  __atomic_store_n(&header->latest_sequence, sequence + 2, __ATOMIC_RELEASE);
  if (refresh_ms < kMaxRefreshMs) refresh_ms *= 2;
  __atomic_store_n(&cw_hook_recalibrate_at, pair.tsc + refresh_ms * log.ticks_per_ms,
                   __ATOMIC_RELAXED);
}

}  // namespace cw::hook

using cw::hook::ActiveLog;
using cw::hook::ThreadState;

// Through the vDSO (kvm-clock, hpet...): no system call where the kernel's clock allows it.
extern "C" uint64_t cw_hook_clock_now() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}

extern "C" void cw_hook_record_slow(ThreadState* thread, const cw::hook::HookDesc* desc,
                                    uint64_t tsc, uint64_t exit_bit) {
  const ActiveLog* log = cw::hook::active_log();
  if (!log) {
    __atomic_fetch_add(&cw::hook::without_log, 1, __ATOMIC_RELAXED);
    return;
  }
  if (thread->generation != log->generation) {
    thread->generation = log->generation;
    thread->events = nullptr;
    thread->published = nullptr;
    thread->used = thread->capacity = 0;
    thread->chunk = 0;
    thread->chunk_claim = 0;
  }
  if (thread->used >= thread->capacity && !cw::hook::claim_chunk(thread, *log)) {
    __atomic_fetch_add(&log->header->lost_events, 1, __ATOMIC_RELAXED);
    return;
  }
  cw::hook::log::Event* event = thread->events + thread->used;
  event->tsc = tsc;
  event->fn_index = desc->index;
  event->hook = desc->hook | static_cast<uint32_t>(exit_bit >> 32);
  ++thread->used;
  __atomic_store_n(thread->published, thread->used, __ATOMIC_RELEASE);
  if (tsc >= __atomic_load_n(&cw_hook_recalibrate_at, __ATOMIC_RELAXED))
    cw::hook::refresh_calibration(*log);
}

extern "C" void cw_hook_lost_return(uint64_t slot) {
  // No return address to go back to: say so on stderr and stop, rather than jump anywhere.
  static const char prefix[] =
      "causeway hook: a hooked function returned to a frame the shadow stack does not know "
      "(slot 0x";
  char text[sizeof(prefix) + 32];
  unsigned length = 0;
  for (char c : prefix)
    if (c) text[length++] = c;
  for (int shift = 60; shift >= 0; shift -= 4)
    text[length++] = "0123456789abcdef"[(slot >> shift) & 15];
  text[length++] = ')';
  text[length++] = '\n';
  namespace sys = cw::hook::sys;
  sys::call(SYS_write, 2, reinterpret_cast<long>(text), length);
  sys::call(SYS_kill, sys::getpid(), 6 /* SIGABRT */);
  for (;;) sys::call(SYS_exit_group, 134);
}
