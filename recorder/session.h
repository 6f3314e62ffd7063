// A recording session: the kernel probes, memory-map capture and the /proc snapshot,
// decoded into one trace that is written as it goes — to one file, or to a ring of files
// that keeps only the newest events (always-on recording).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernel/probes.h"
#include "recorder/kallsyms.h"
#include "recorder/mutex_owner.h"
#include "recorder/record_decoder.h"
#include "trace/ring.h"
#include "trace/trace.h"

namespace cw {

class DwarfUnwinder;
struct CapturedMap;

// The longest --min-wait: a held wait is written once it has lasted that long, stamped when
// it began, and must still sort in among the records held for that (session.cc, kHoldNs).
constexpr uint64_t kMaxMinWaitNs = 100'000'000;

struct SessionOptions {
  std::vector<uint32_t> pids;  // empty: every process
  kernel::StackMode stacks = kernel::StackMode::Blocking;
  // --call-graph dwarf: bytes of user stack copied per stack and unwound here with the
  // files' CFI (recorder/dwarf_unwind.h); 0 walks frame pointers in the kernel.
  uint32_t ustack_bytes = 0;
  uint32_t sample_hz = 0;        // --sample: cpu-clock samples per second per CPU, 0 for none
  bool full = false;             // --full: every recorded call, every kernel stack walked
  bool calls_at_switch = false;  // --calls scheduler: no syscall programs
  // --min-wait: with calls_at_switch, a wait is written only once it has lasted this long
  // (kernel/bpf/held_waits.bpf.h); at most kMaxMinWaitNs. 0: every wait.
  uint64_t min_wait_ns = 0;
  bool pipe_bytes = false;        // --pipe-bytes: with calls_at_switch, pipes' bytes counted too
  uint32_t full_waits_per_s = 0;  // --wait-budget: waits a thread writes in full each second
  // --wait-burst: of which at most this many at once (0: a second's worth).
  uint32_t full_waits_burst = 0;
  size_t buffer_bytes = 64u << 20;  // the kernel ring buffer
  std::string output;               // one trace file, when `ring` is not set
  std::optional<RingOptions> ring;
  TraceWriterOptions writer;  // how `output` is written (zstd-compressed by default)
  // Who holds what threads still blocked at the end wait for (the packs' `holder` rules),
  // read by note_end_state.
  std::vector<HolderField> holders;
};

struct SessionStatus {
  uint64_t records = 0;
  uint64_t events = 0;    // written so far
  uint64_t first_ts = 0;  // CLOCK_MONOTONIC of the session's start
  uint64_t newest_ts = 0;
  std::vector<uint64_t> lost_per_cpu;  // kernel ring buffer overflows
  uint64_t lost_total = 0;
  uint64_t maps_lost = 0;  // mmap records the kernel dropped
  uint64_t malformed = 0;
  uint64_t switches_unreported = 0;  // DecoderStats::switches_unreported
  uint64_t stacks = 0;
  // Stack records left unattached: their call's entry never came (or came too late), or
  // the stack they repeat never did (DecoderStats: stacks_late and the unmatched repeats).
  uint64_t stacks_lost = 0;
  uint64_t samples = 0;
  std::string sampling_problem;  // why --sample gives no samples ("" when it works)
  uint64_t unwound_stacks = 0;   // --call-graph dwarf: stack copies unwound,
  uint64_t unwound_frames = 0;   // the frames found in them
  uint64_t unwind_ns = 0;        // and the recorder's time spent on them
  uint64_t jit_symbols = 0;      // entries copied from the processes' perf maps
  size_t perf_maps = 0;          // from this many perf maps
  std::optional<RingStats> ring;
};

class Session {
 public:
  // Attaches everything; throws kernel::ProbeError when the machine cannot record and
  // std::runtime_error when the output cannot be written.
  explicit Session(SessionOptions options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void add_pid(uint32_t pid);
  // Instrumentation (recorder/record_instrumentation.h) attaches through the session's probes,
  // names what it attached in the decoder, and feeds events from in-process hooks.
  kernel::Probes& probes() { return *probes_; }
  RecordDecoder& decoder() { return *decoder_; }
  // Called at every step before events are released, and once more when finishing:
  // a source of events other than the kernel (they must be visible within the hold time).
  void add_source(std::function<void(RecordDecoder&)> poll) { sources_.push_back(std::move(poll)); }
  // Called once when finishing, after the last records and sources: what can only be
  // said at the end (watchpoints that never fired).
  void add_final(std::function<void(RecordDecoder&)> last) { finals_.push_back(std::move(last)); }
  // Waits up to `timeout_ms` for records, decodes them, and writes what is old enough
  // that no earlier record can still arrive.
  void step(int timeout_ms);
  void mark(uint64_t ts, uint32_t pid, uint32_t tid, std::string_view text);
  // The overhead bench's switch (kernel::Probes::set_hot_programs): the recording made
  // while either is off is not one to diagnose.
  void set_hot_programs(bool scheduler, bool sockets);
  // Copies what process `pid`'s perf map gained (recorder/perf_map_capture.h); every step does
  // so for all recorded processes about once a second. For a process about to be reaped,
  // whose owner can still be checked.
  void read_perf_map(uint32_t pid);
  // What is still going on at the end, as events: the locks threads are still waiting for
  // and who holds them (file locks from /proc/locks, owners the packs' holder rules find).
  // Call it before stopping the recorded command; finish() calls it otherwise.
  void note_end_state();
  // Reads what is left, writes everything and closes the output.
  void finish();
  // After the output could not be written (step() or finish() threw TraceWriteError):
  // stops recording, writing nothing more; the file keeps the whole chunks written.
  void abandon();
  SessionStatus status() const;
  // What this recording lacks, and what a diagnosis misses for it, as notes for the trace:
  // the parts the kernel refused, or the options left out (the probes' problems).
  std::vector<std::string> missing_parts() const;

 private:
  void write_released();
  void note_lost();
  void note_maps_lost(uint64_t n);

  SessionOptions options_;
  Trace trace_;
  std::unique_ptr<kernel::Probes> probes_;
  std::unique_ptr<struct MapsCaptureHolder> maps_;
  std::unique_ptr<RecordDecoder> decoder_;
  std::unique_ptr<DwarfUnwinder> unwinder_;
  void add_captured_maps(const std::vector<CapturedMap>& maps);
  void poll_perf_maps(uint64_t now);
  std::unique_ptr<struct PerfMapsHolder> perf_maps_;
  std::unique_ptr<KernelSymbols> kernel_symbols_;  // names kernel stack frames
  std::unique_ptr<class TraceWriter> file_;
  std::unique_ptr<RingWriter> ring_;
  std::vector<std::function<void(RecordDecoder&)>> sources_;
  std::vector<std::function<void(RecordDecoder&)>> finals_;
  std::vector<uint64_t> lost_seen_;
  uint64_t events_written_ = 0;
  uint64_t first_ts_ = 0;
  uint64_t maps_lost_ = 0;
  uint64_t last_lost_check_ = 0;
  uint64_t last_release_ = 0;
  uint64_t last_task_pass_ = 0;
  bool finished_ = false;
  bool end_state_noted_ = false;
};

}  // namespace cw
