// Turns the eBPF recorder's records (kernel/records.h) into trace events (docs/events.md).
//
// Records arrive from one ring buffer shared by all CPUs, so they are nearly but not
// exactly in time order; the decoder holds events back until a horizon has passed, then
// hands them over sorted. A thread's user stack arrives after its syscall entry (it is
// taken when the call blocks) and is attached to that entry while it is still held.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "recorder/event_fields.h"
#include "trace/trace.h"

namespace cw {

// How the kernel's numbers are named: syscalls, their operation codes and softirq vectors
// (kernel/syscalls.h on this machine); a parameter so the decoder names nothing itself
// and can be tested without the kernel library.
struct SyscallNaming {
  std::function<std::string_view(uint32_t nr)> name;
  std::function<std::string_view(uint32_t nr, uint32_t op)> op_name;
  std::function<std::string_view(uint32_t vec)> softirq;
};

// How the recorder's instrumentation indexes are named: the functions it probed
// (CW_REC_CALL fn_index) and the flags it traced (CW_REC_FLAG flag_index), in the order it
// attached them. An index beyond these lists makes the record malformed.
struct InstrumentNaming {
  std::vector<std::string> functions;
  std::vector<std::string> flags;
  // A read/write watchpoint cannot say which access trapped: given the bytes that end at
  // the trap's ip (the accessing instruction is their tail), the ip and the flag's
  // address, returns 1 read, 2 write, 3 read and write, 0 unknown. 3 gives flag_write
  // (the value may have changed); 0, or no function, gives flag_read, counted in
  // DecoderStats::watch_hits_unclassified.
  std::function<int(std::span<const uint8_t> before, uint64_t ip, uint64_t addr)>
      classify_watch_hit;
};

struct LockWait;  // recorder/lock_wait.h

struct DecoderStats {
  uint64_t records = 0;
  uint64_t events = 0;
  // Records too short for their type, of an unknown type, or naming a function or flag
  // index beyond InstrumentNaming.
  uint64_t malformed = 0;
  uint64_t stacks_attached = 0;
  uint64_t stacks_late = 0;  // arrived after their syscall's entry was handed over
  uint64_t samples = 0;      // cpu-clock samples (record --sample)
  // Stack copies (--call-graph dwarf) that came with no unwinder set: left without a stack.
  uint64_t stacks_not_unwound = 0;
  uint64_t kernel_stacks = 0;  // kernel stacks attached (CW_REC_KSTACK)
  // Of those, repeats of the thread's previous one (CW_KSTACK_AS_BEFORE), and repeats whose
  // original never arrived (lost, or the recording began after it): left without one.
  uint64_t kernel_stacks_repeated = 0;
  uint64_t kernel_stacks_unmatched = 0;
  // User stacks (counted in stacks_attached) that repeat the thread's previous walked one
  // (CW_USTACK_AS_BEFORE), and repeats whose original never arrived: left without one.
  uint64_t user_stacks_repeated = 0;
  uint64_t user_stacks_unmatched = 0;
  uint64_t kernel_frames_unnamed = 0;    // their frames no kernel symbol named
  uint64_t watch_hits_unclassified = 0;  // read/write watch hits decoded as reads
  // Switches the kernel never reported, noticed when a CPU's next record came from another
  // thread than the one last switched in there (also in Trace::losses,
  // LossKind::SwitchUnreported, one per switch).
  uint64_t switches_unreported = 0;
};

class RecordDecoder {
 public:
  // Events go to `trace`, their values by field name through its schema: throws
  // std::logic_error when the schema lacks a kind or field the decoder writes
  // (recorder/event_fields.h).
  RecordDecoder(Trace& trace, SyscallNaming naming);

  // Tasks that existed before recording began (from /proc). The decoder appends to the
  // trace's process and thread tables; their indexes (Trace::process, Trace::thread) are
  // the caller's to rebuild when it needs them.
  void add_process(Pid pid, Pid ppid, std::string_view comm, std::string_view exe);
  void add_thread(Tid tid, Pid pid, std::string_view comm, bool kernel);

  // Turns a stack copy (CW_REC_USTACK: x86-64 registers in DWARF order and the stack's
  // bytes from rsp up) into return addresses, innermost first. Called when events are
  // released, not when the record arrives, so that the mappings the stack runs through
  // (polled after the records) are known by then (recorder/dwarf_unwind.h).
  using Unwind = std::function<std::vector<uint64_t>(Pid pid, Tid tid, const uint64_t* regs,
                                                     std::span<const uint8_t> stack)>;
  void set_unwind(Unwind unwind) { unwind_ = std::move(unwind); }
  // Names kernel stack frames (CW_REC_KSTACK) by address ("" unknown: the frame keeps
  // its address only); without it they are all unnamed. `probe` says which addresses are
  // the recorder's own probe: leading frames there are dropped.
  void set_kernel_symbols(std::function<std::string_view(uint64_t)> name,
                          std::function<bool(uint64_t)> probe = {}) {
    kernel_symbol_ = std::move(name);
    kernel_probe_ = std::move(probe);
  }

  // Names for CW_REC_CALL and CW_REC_FLAG records decoded from now on.
  void set_instrument_naming(InstrumentNaming naming) { instrument_ = std::move(naming); }
  // The recording holds waits back (record --min-wait): a thread's short waits leave no
  // switches, so a record from a thread no switch put on its CPU is no sign of a lost one.
  void set_waits_held(bool held) { waits_held_ = held; }

  // Decodes one record. A record that is too short or of an unknown type is counted in
  // stats().malformed and skipped.
  void decode(const void* record, size_t size);
  // A marker from `causeway mark` (ts on CLOCK_MONOTONIC).
  void add_marker(uint64_t ts, Tid tid, Pid pid, std::string_view text);
  // A lock a thread was still waiting for at the end (recorder/lock_wait.h): lock_held on
  // the holder (its thread, or the holder process's main thread) at `ts`, lock_wait on
  // the waiter just after.
  void add_lock_wait(uint64_t ts, const LockWait& wait);

  // Moves the held events with ts <= horizon into trace.events, sorted by time. Returns
  // how many were moved.
  size_t release(uint64_t horizon);
  size_t release_all() { return release(UINT64_MAX); }
  // The newest time of a kernel record decoded (markers do not count: they are stamped
  // when sent, and may be ahead of records still queued in the kernel).
  uint64_t newest_ts() const { return newest_ts_; }
  const DecoderStats& stats() const { return stats_; }
  // The threads whose walked stacks are remembered (for what a later "as before" repeats).
  size_t threads_with_walked_stacks() const {
    return std::max(walked_ustacks_.size(), walked_kstacks_.size());
  }
  // A loss noticed outside the decoder (hook log, maps, watchpoints), stamped with the
  // newest record's time, so that the trace file carries it.
  void add_loss(LossKind kind, uint64_t count);
  // Flag records decoded for flag `flag_index` in process `pid` (a watchpoint with none
  // never fired).
  uint64_t flag_hits(Pid pid, uint32_t flag_index) const;
  // The processes that started a new program (CW_REC_EXEC) since the last call, kept once
  // asked for: a command's script starts the server a pack is about, and uprobes on that
  // server's functions can only be placed once its program is known
  // (RecordInstrumentation::attach_started). At most kMaxExecsKept between two calls: a
  // machine that runs programs faster than the recording polls loses the rest, said in
  // execs_not_kept().
  static constexpr size_t kMaxExecsKept = 4096;
  void set_keep_execs(bool keep) { keep_execs_ = keep; }
  std::vector<Pid> take_execs() { return std::exchange(execs_, {}); }
  uint64_t execs_not_kept() const { return execs_not_kept_; }

 private:
  std::map<std::pair<Pid, uint32_t>, uint64_t> flag_hits_;
  bool keep_execs_ = false;
  std::vector<Pid> execs_;
  uint64_t execs_not_kept_ = 0;
  struct Held {
    uint64_t ts;
    uint64_t order;  // arrival order: keeps a thread's same-time events in sequence
    Tid tid;
    KindId kind;
    uint16_t cpu;
    StackId stack;
    uint64_t seq;  // syscall_enter: the thread's syscall number in the kernel's count
    uint8_t nvalues;
    bool released;  // handed to the trace; left in held_ until those before it are too
    uint64_t values[kMaxDecodedValues];
  };
  Held& hold(uint64_t ts, Tid tid, KindId kind, uint32_t cpu);
  void set(Held& h, FieldAt field, uint64_t v);
  void set_str(Held& h, FieldAt field, std::string_view s);
  void note_thread(Tid tid, Pid pid);
  void put_process(const ProcessInfo& p);
  void update_process(Pid pid, std::optional<Pid> ppid, std::optional<StrId> comm,
                      std::optional<StrId> exe, uint64_t ts);
  void put_thread(const ThreadInfo& t, uint64_t ts = 0);
  StackId intern_stack(Pid pid, const uint64_t* ips, uint32_t n);
  // A syscall's name (syscall_<nr> when unnamed) and an operation's, interned.
  StrId syscall_name_id(uint32_t nr);
  StrId syscall_op_id(uint32_t nr, uint32_t op);
  static constexpr StrId kNotInterned = UINT32_MAX;
  static constexpr uint32_t kMaxCachedSyscall = 4096;
  std::vector<StrId> syscall_names_;                 // by number, kNotInterned if not yet
  std::unordered_map<uint64_t, StrId> syscall_ops_;  // nr << 32 | op
  // The held event a stack record belongs to (its syscall entry, or its sample), or null.
  Held* stack_owner(Tid tid, uint32_t flags, uint64_t seq);
  // Attaches a stack record (CW_REC_STACK, CW_REC_USTACK, CW_REC_KSTACK) to its event.
  // False when what it names has not arrived yet (its event, or the stack it repeats) and
  // `final` is not set; with `final`, such a record is counted as lost instead.
  // `owner_at` keeps the arrival number of the event found for it (kNoOwner: none yet).
  bool attach_stack(const void* record, size_t size, bool final, uint64_t* owner_at);
  static constexpr uint64_t kNoOwner = UINT64_MAX;
  // The stack records of `tid` that waited, tried again after something they may name came.
  void retry_early_stacks(Tid tid);
  // Those whose time is at or before `horizon` stop waiting: counted as lost.
  void drop_early_stacks(uint64_t horizon);
  // The walked stacks of the threads that exited at or before `horizon` are forgotten: an
  // always-on recorder meets millions of threads.
  void forget_exited(uint64_t horizon);
  std::vector<std::pair<uint64_t, Tid>> exited_;  // (time, thread) of exits not forgotten
  // `user` (user frames only) as h's stack, after the kernel frames h already has.
  void put_user_stack(Held& h, Pid pid, StackId user);
  void unwind_pending();
  // The stack `user` with the kernel frames `ips` put in front of it.
  StackId add_kernel_frames(Pid pid, StackId user, const uint64_t* ips, uint32_t n);
  // A record that `tid` wrote on `cpu` at `ts` while running there: when the switches the
  // decoder saw say another thread has that CPU, or `tid` is off every CPU, a switch was
  // not reported; its ends are put back here (see decode()).
  void note_running(uint64_t ts, Tid tid, uint32_t cpu, bool tid_recorded);
  // Ends the run of the thread on `cpu` (a switch_out of unknown state) if another one has
  // it; counts the switch as lost.
  bool end_unreported_run(uint64_t ts, uint32_t cpu, Tid now_running);

  Trace& trace_;
  SyscallNaming naming_;
  const EventFields fields_;  // where each value goes in trace_'s schema
  InstrumentNaming instrument_;
  std::function<std::string_view(uint64_t)> kernel_symbol_;
  std::function<bool(uint64_t)> kernel_probe_;
  DecoderStats stats_;
  // Held events stay where they arrived: held_[i] is arrival number base_ + i (its
  // `order`). Releasing sorts small keys, not the 100-byte events: moving those was a
  // quarter of the recorder's CPU on a busy machine (bench/RESULTS.md). The events are a
  // ring, oldest first: a std::deque of 100-byte events allocates every four.
  class HeldRing {
   public:
    size_t size() const { return count_; }
    bool empty() const { return count_ == 0; }
    Held& operator[](size_t i) { return slots_[(head_ + i) & (slots_.size() - 1)]; }
    const Held& operator[](size_t i) const { return slots_[(head_ + i) & (slots_.size() - 1)]; }
    Held& front() { return (*this)[0]; }
    // May move every event: references to held events do not outlive the next one.
    Held& emplace_back() {
      if (count_ == slots_.size()) grow();
      return (*this)[count_++];
    }
    void pop_front() {
      head_ = (head_ + 1) & (slots_.size() - 1);
      --count_;
    }
    void clear() { head_ = count_ = 0; }

   private:
    void grow() {
      std::vector<Held> bigger(std::max<size_t>(1024, 2 * slots_.size()));
      for (size_t i = 0; i < count_; ++i) bigger[i] = (*this)[i];
      slots_ = std::move(bigger);
      head_ = 0;
    }
    std::vector<Held> slots_;  // a power of two of them
    size_t head_ = 0, count_ = 0;
  };
  HeldRing held_;
  uint64_t base_ = 0;   // the arrival number of held_.front()
  uint64_t order_ = 0;  // the next arrival number
  struct TimeKey {
    uint64_t ts;
    uint64_t order;
  };
  std::vector<TimeKey> waiting_;  // events not released by the last release, in time order
  uint64_t keyed_ = 0;            // arrivals below this are released or in waiting_
  static constexpr size_t kSortParts = 64;
  std::vector<std::vector<TimeKey>> runs_;  // release()'s scratch: keys by CPU, then merged
  std::vector<TimeKey> merged_;
  uint64_t newest_ts_ = 0;
  Held& held_at(uint64_t order) { return held_[order - base_]; }
  // Whether arrival `order` is held and not yet released.
  bool still_held(uint64_t order) const {
    return order >= base_ && order < order_ && !held_[order - base_].released;
  }
  // Makes held_ hold only unreleased events, renumbering them (arrival order kept) and
  // whatever refers to them: for when an event far ahead in time keeps the front held.
  void compact_held();
  // A thread's latest stacks walked for its syscalls, by the call's seq: what a record
  // saying "as before" names. A few are kept, not only the latest: records from two CPUs
  // arrive out of order (early_stacks_), so the latest to arrive need not be the one named.
  template <typename Value>
  struct Walked {
    static constexpr size_t kKept = 4;
    std::array<std::pair<uint64_t, Value>, kKept> slots{};  // seq 0: empty
    void put(uint64_t seq, Value v) {
      auto* slot = &slots[0];
      for (auto& s : slots) {
        if (s.first == seq) {
          slot = &s;
          break;
        }
        if (s.first < slot->first) slot = &s;
      }
      *slot = {seq, std::move(v)};
    }
    const Value* find(uint64_t seq) const {
      for (const auto& s : slots)
        if (s.first == seq && seq != 0) return &s.second;
      return nullptr;
    }
  };
  // Each thread's latest syscall entries (seq -> arrival number, while held): a stack
  // arrives while its thread is blocked in that very syscall, but may be read after the
  // entries of the thread's next calls (early_stacks_).
  std::unordered_map<Tid, Walked<uint64_t>> last_enters_;
  // The kernel stacks (the frames below the probe's own): what CW_KSTACK_AS_BEFORE repeats.
  std::unordered_map<Tid, Walked<std::vector<uint64_t>>> walked_kstacks_;
  // The user stacks (interned): what CW_USTACK_AS_BEFORE repeats.
  std::unordered_map<Tid, Walked<StackId>> walked_ustacks_;
  // Stack records that came before what they name (their call's entry or sample, or the
  // stack they repeat), by thread: each CPU's records reach the ring a block at a time
  // (kernel/bpf/output.bpf.h), so a record from one CPU can arrive before an older one
  // that another CPU still stages. A thread that blocked on CPU 1 and, 7 ms later, again
  // from the same place on CPU 0 has its "as before" read first when CPU 0 goes idle and
  // sends its block while CPU 1, busy with a program not recorded, keeps its own until the
  // next tick. They wait while their time is held.
  struct EarlyStack {
    std::vector<uint8_t> bytes;  // the record
    uint64_t owner;  // the event it goes to, once found (it waits for the stack it repeats)
  };
  std::unordered_map<Tid, std::vector<EarlyStack>> early_stacks_;
  size_t early_count_ = 0;
  bool waits_held_ = false;
  uint64_t released_upto_ = 0;                // the latest release's horizon
  static constexpr size_t kMaxEarly = 65536;  // beyond it, one that cannot attach is lost
  // Each thread's latest held sample (its ts, arrival number).
  std::unordered_map<Tid, std::pair<uint64_t, uint64_t>> last_sample_;
  // Stack copies waiting to be unwound at the next release: (arrival number, record).
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> pending_unwind_;
  Unwind unwind_;
  std::unordered_map<std::string, StackId> stack_ids_;  // pid + ips -> id
  std::unordered_map<Pid, ProcessInfo> processes_;      // the latest entry of each process
  std::unordered_map<Tid, ThreadInfo> threads_;         // ... and of each thread
  // The time of the record each latest entry came from (put_process, put_thread).
  struct ProcessSaid {
    uint64_t ppid = 0, comm = 0, exe = 0;
  };
  std::unordered_map<Pid, ProcessSaid> process_said_at_;
  std::unordered_map<Tid, uint64_t> thread_said_at_;
  std::unordered_map<uint32_t, Tid> on_cpu_;  // per CPU: the recorded thread running there, or 0
  // Per CPU: the time of its latest switch record. A record older than it (a syscall entry
  // sent when the call blocked, long after it began) says nothing of who runs there now.
  std::unordered_map<uint32_t, uint64_t> last_switch_ns_;
  // Threads whose latest switch took them off a CPU, and when.
  std::unordered_map<Tid, uint64_t> off_cpu_since_;
  // Threads known to be recorded: they wrote a record only recorded threads write, or were
  // switched in as recorded. (A wake-up or a signal may come from any thread.)
  std::unordered_set<Tid> recorded_;
};

}  // namespace cw
