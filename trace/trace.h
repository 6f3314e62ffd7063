// The in-memory trace: events of every thread on one clock, with interned strings and
// stacks, and the process/thread tables needed to name and symbolise them.
//
// Layout is chosen for Chromium-scale traces (19 M events within the 1.5 GiB budget):
// an Event is 24 bytes and its typed field values live in one shared array.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "trace/column.h"
#include "trace/schema.h"

namespace cw {

using StrId = uint32_t;    // 0 is the empty string
using StackId = uint32_t;  // 0 is "no stack"
using Tid = uint32_t;
using Pid = uint32_t;

struct Event {
  uint64_t ts;  // ns, CLOCK_MONOTONIC (kernel and user streams share it)
  Tid tid;      // the thread the event happened on
  KindId kind;  // index into Trace::schema
  uint16_t cpu;
  uint32_t values;  // index of the first field value in Trace::values
  StackId stack;    // user call stack at the event, 0 if none
};
static_assert(sizeof(Event) == 24, "Event must stay compact");

class StringTable;

// One frame of a stack as read-time symbolisation (trace/symbolize.h) names it. An ip
// inside inlined code gives several frames with the same ip: the inlined function(s)
// first (inlined = true), then the function they were inlined into.
struct Frame {
  uint64_t ip = 0;
  StrId function = 0;  // demangled; 0 unknown
  StrId file = 0;      // source file of `line`; 0 unknown
  uint32_t line = 0;   // 0 unknown
  bool inlined = false;
  bool kernel = false;  // a kernel frame (named at record time from /proc/kallsyms)
  // A signal handler's return trampoline (its unwind information marks a signal frame):
  // the frames outside it are the code the signal happened to interrupt, not callers of
  // the handler.
  bool signal = false;
  StrId module = 0;     // file name of the mapping holding ip; 0 when none is known
  uint64_t offset = 0;  // ip's offset in that file: the same across runs despite ASLR
};

// Frames are innermost first, as the kernel reports them. When the stack was taken where
// a system call blocked, the first `kernel` ips are the kernel's stack at that point and
// the rest the user stack; their symbols come from the recording (kernel addresses are in
// no process's maps).
// Addresses from here up are the kernel's (x86-64 and arm64 keep user space below).
inline constexpr uint64_t kKernelAddressStart = uint64_t{1} << 63;

struct Stack {
  std::vector<uint64_t> ips;
  std::vector<StrId> symbols;  // empty when not symbolised; else one per ip (0 = unknown)
  // Leading kernel frames. Trace::add_stack sets it from the addresses when 0 (files
  // do not store it: kernel addresses are told apart by value, kKernelAddressStart).
  uint32_t kernel = 0;
  // Filled at read time by symbolize_stacks (never stored in a trace file): every frame
  // with inlined functions and file:line; empty when not symbolised this run.
  std::vector<Frame> frames;
};

// The frames to show for `s`: Stack::frames when symbolised this run, else one per ip
// from Stack::symbols (a trace named elsewhere, or perf script output).
std::vector<Frame> frames_of(const Stack& s);
// How a frame is named: its function, else `module+0xoffset` (stable across runs), else
// its raw address.
std::string frame_name(const StringTable& strings, const Frame& f);
// frame_name with ` (file:line)` when the source position is known.
std::string frame_text(const StringTable& strings, const Frame& f);

struct ProcessInfo {
  Pid pid = 0;
  Pid ppid = 0;
  StrId comm = 0;
  StrId exe = 0;
};

struct ThreadInfo {
  Tid tid = 0;
  Pid pid = 0;
  StrId comm = 0;
  bool kernel = false;  // a kernel worker thread (kthread)
};

// An executable mapping of a process, so its stacks can be symbolised after it has
// exited: [start, end) maps file `path` from file offset `pgoff`; `build_id` (hex) finds
// the same file, or its debug info, later. Valid from `ts` until the process execs,
// exits or maps something else over it.
struct MapRecord {
  Pid pid = 0;
  uint64_t ts = 0;
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t pgoff = 0;
  StrId path = 0;
  StrId build_id = 0;  // 0 when unknown
};

// A function a JIT compiled into anonymous memory, as its runtime listed it in the
// process's perf map (/tmp/perf-PID.map, trace/perf_map.h): code at [start, start + size)
// is `name`, exactly as the runtime wrote it. `ts` is when the recorder read the line: it
// was written then or earlier. Frames in no mapped file are named from these at read time.
struct JitSymbol {
  Pid pid = 0;
  uint64_t ts = 0;
  uint64_t start = 0;
  uint64_t size = 0;
  StrId name = 0;
};

// Events the recorder could not keep (ring buffer full), per CPU.
struct LostRecord {
  uint16_t cpu = 0;
  uint64_t count = 0;
  uint64_t ts = 0;  // when the loss was noticed
};

// What else the recorder could not keep (a recorder says what it missed). Kernel ring
// buffer overflows are LostRecord, per CPU; these are the others.
// The numbers are stored in files: never renumber, only add.
enum class LossKind : uint32_t {
  HookLog = 1,           // in-process hook events dropped: no chunk of the hook log free
  SwitchUnreported = 2,  // context switches the kernel (or the VM) never delivered
  Maps = 3,              // mmap records the kernel dropped (stacks there may stay unnamed)
  WatchpointSilent = 4,  // hardware watchpoints opened that never fired while recording
};
// "hook_log", "switches_unreported", "maps", "watchpoints_silent"; "" for a kind this
// causeway does not know (from a newer recorder; kept and counted all the same).
std::string_view loss_kind_name(LossKind kind);
// The kind named so, or nothing.
std::optional<LossKind> loss_kind_from_name(std::string_view name);
// Every kind this causeway knows, in the order reports list them.
inline constexpr LossKind kLossKinds[] = {LossKind::HookLog, LossKind::SwitchUnreported,
                                          LossKind::Maps, LossKind::WatchpointSilent};

struct LossRecord {
  LossKind kind = LossKind::HookLog;
  uint64_t count = 0;
  uint64_t ts = 0;  // when the loss was noticed
};

class StringTable {
 public:
  StringTable();
  StrId intern(std::string_view s);
  std::string_view get(StrId id) const { return strings_[id]; }
  // Id of an existing string, or kMissing (lets rules compare without interning).
  static constexpr StrId kMissing = 0xffffffffu;
  StrId find(std::string_view s) const;
  size_t size() const { return strings_.size(); }

 private:
  std::deque<std::string> strings_;  // a deque keeps the views in index_ valid
  std::unordered_map<std::string_view, StrId> index_;
};

struct Trace {
  static constexpr uint32_t kFormatMajor = 1;
  // 1: memory maps (the Maps chunk); 2: losses other than the kernel buffer's (Losses).
  static constexpr uint32_t kFormatMinor = 2;

  Schema schema = Schema::builtin();
  StringTable strings;
  std::vector<Stack> stacks{Stack{}};  // stacks[0] is the empty stack
  std::vector<ProcessInfo> processes;
  std::vector<ThreadInfo> threads;
  // Owned, or a view of the cache's mapped arrays (docs/cache.md): trace/column.h.
  Column<Event> events;  // sorted by ts (stable)
  Column<uint64_t> values;
  std::vector<LostRecord> lost;
  std::vector<LossRecord> losses;      // appended as noticed, like `lost`
  std::vector<MapRecord> maps;         // by pid, then ts
  std::vector<JitSymbol> jit_symbols;  // in the order read (per process, the file's order)
  // The indices of the events of kind "marker", when what filled `events` knew them (the
  // cache's events entry lists them): marker_events() then reads
  // these instead of every event. They stand for the events they were found over only:
  // the array at `events_at` with `events_count` events.
  struct FoundMarkers {
    const Event* events_at = nullptr;
    size_t events_count = 0;
    std::vector<uint32_t> at;
  };
  FoundMarkers markers_found;

  // Appends an event; its field values are zero until set through value_ref.
  Event& add_event(uint64_t ts, Tid tid, KindId kind, uint16_t cpu = 0, StackId stack = 0);
  uint64_t value(const Event& e, int field) const { return values[e.values + field]; }
  uint64_t& value_ref(const Event& e, int field) { return values[e.values + field]; }
  int64_t int_value(const Event& e, int field) const {
    return static_cast<int64_t>(values[e.values + field]);
  }

  StackId add_stack(Stack s);
  const ThreadInfo* thread(Tid tid) const;  // nullptr if unknown
  const ProcessInfo* process(Pid pid) const;
  Pid pid_of(Tid tid) const;     // 0 if unknown
  void sort_events();            // stable sort by ts
  void rebuild_indexes();        // after threads/processes change
  uint64_t lost_events() const;  // kernel ring buffer only
  uint64_t losses_of(LossKind kind) const;
  // Puts `maps` in (pid, ts) order, keeping the order of equal keys (readers and parsers
  // call it; a recorder appends maps as they come and its writer streams them in that order).
  void sort_maps() {
    std::stable_sort(maps.begin(), maps.end(), [](const MapRecord& a, const MapRecord& b) {
      return a.pid != b.pid ? a.pid < b.pid : a.ts < b.ts;
    });
  }

 private:
  std::unordered_map<Tid, uint32_t> thread_index_;
  std::unordered_map<Pid, uint32_t> process_index_;
};

}  // namespace cw
