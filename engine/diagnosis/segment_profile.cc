#include "engine/diagnosis/segment_profile.h"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>

#include "base/parallel.h"
#include "engine/graph/thread_slots.h"

namespace cw::engine {
namespace {

// Below this many events a second thread costs more than it saves.
constexpr size_t kEventsPerRange = 65536;

// The event kinds and fields a profile reads, looked up by name in the trace's schema.
struct ProfileKinds {
  KindId switch_out, switch_in, syscall_enter, syscall_exit, flag_write, flag_read, exit;
  KindId short_waits;
  int state_field, name_field;
  int since_field, count_field, total_field, uninterruptible_field;
  int preempted_field, runnable_field;  // absent from traces recorded before preemptions were held

  explicit ProfileKinds(const Schema& schema)
      : switch_out(schema.find("switch_out")),
        switch_in(schema.find("switch_in")),
        syscall_enter(schema.find("syscall_enter")),
        syscall_exit(schema.find("syscall_exit")),
        flag_write(schema.find("flag_write")),
        flag_read(schema.find("flag_read")),
        exit(schema.find("exit")),
        short_waits(schema.find("short_waits")),
        state_field(switch_out == kNoKind ? -1 : schema.field_index(switch_out, "state")),
        name_field(syscall_enter == kNoKind ? -1 : schema.field_index(syscall_enter, "name")),
        since_field(field(schema, short_waits, "since")),
        count_field(field(schema, short_waits, "count")),
        total_field(field(schema, short_waits, "total_ns")),
        uninterruptible_field(field(schema, short_waits, "uninterruptible_ns")),
        preempted_field(field(schema, short_waits, "preempted")),
        runnable_field(field(schema, short_waits, "runnable_ns")) {}

  static int field(const Schema& schema, KindId kind, std::string_view name) {
    return kind == kNoKind ? -1 : schema.field_index(kind, name);
  }
  bool has_short_waits() const {
    return short_waits != kNoKind && since_field >= 0 && count_field >= 0 && total_field >= 0 &&
           uninterruptible_field >= 0;
  }

  bool is_switch(KindId k) const { return k != kNoKind && (k == switch_out || k == switch_in); }
  bool is_syscall(KindId k) const {
    return k != kNoKind && (k == syscall_enter || k == syscall_exit);
  }
};

enum class State : uint8_t { Running, Runnable, Blocked, Exited, Unknown };

// Whether a switch_out left the thread in the kernel's uninterruptible sleep (D).
bool uninterruptible(const Trace& trace, const ProfileKinds& k, const Event& e) {
  if (k.state_field < 0) return false;
  std::string_view s = trace.strings.get(static_cast<StrId>(trace.value(e, k.state_field)));
  return !s.empty() && s[0] == 'D';
}

// The state a switch_out leaves the thread in: the kernel's task state letter R means
// preempted (still runnable), X (dead) or Z (zombie) that the thread exited, '?' that the
// switch itself was never reported (the recorder noticed the thread gone from its CPU,
// recorder/record_decoder.cc) and the state is not known; every other state waits for
// something.
State state_after(const Trace& trace, const ProfileKinds& k, const Event& e) {
  if (k.state_field < 0) return State::Blocked;
  std::string_view s = trace.strings.get(static_cast<StrId>(trace.value(e, k.state_field)));
  if (s.empty()) return State::Blocked;
  if (s[0] == 'R') return State::Runnable;
  if (s[0] == 'X' || s[0] == 'Z') return State::Exited;
  if (s[0] == '?') return State::Unknown;
  return State::Blocked;
}

// The last element of `list` (event indexes, ascending) below `event`, or kNoIndex.
uint32_t last_before(EventList list, uint32_t event) {
  auto it = std::lower_bound(list.begin(), list.end(), event);
  return it == list.begin() ? kNoIndex : *(it - 1);
}

// Whether the system call `call` (open at `after_ns`) returns with no switch away of a
// known state between `after_ns` and its exit: the thread, seen to leave a CPU in it by a
// switch the kernel did not report, stayed off a CPU in it. Looks at a bounded number
// of switches: past them, it cannot say.
bool returns_unswitched(const Trace& trace, const ProfileKinds& k, EventList switches,
                        EventList syscalls, uint32_t call, uint64_t after_ns) {
  constexpr int kSwitchesLooked = 64;
  auto exit = std::upper_bound(syscalls.begin(), syscalls.end(), call);
  if (exit == syscalls.end() || trace.events[*exit].kind != k.syscall_exit) return false;
  auto s = std::lower_bound(switches.begin(), switches.end(), after_ns,
                            [&](uint32_t i, uint64_t t) { return trace.events[i].ts < t; });
  for (int n = 0; s != switches.end() && *s < *exit; ++s, ++n) {
    if (n == kSwitchesLooked) return false;
    const Event& e = trace.events[*s];
    if (e.kind == k.switch_out && state_after(trace, k, e) != State::Unknown) return false;
  }
  return true;
}

// Profiles the thread's events with start_ns <= ts < end_ns (ts <= end_ns when
// `include_end`: a thread's last segment ends at its last event's time).
SegmentProfile profile(const Trace& trace, const ThreadEvents& events, Tid tid, uint64_t start_ns,
                       uint64_t end_ns, bool include_end) {
  SegmentProfile p;
  p.start_ns = start_ns;
  p.end_ns = std::max(start_ns, end_ns);
  end_ns = p.end_ns;
  const ProfileKinds k(trace.schema);
  const EventList list = events.of(tid);
  const EventList switches = events.switches_of(tid);
  const EventList syscalls = events.syscalls_of(tid);

  auto pos = std::lower_bound(list.begin(), list.end(), start_ns,
                              [&](uint32_t i, uint64_t t) { return trace.events[i].ts < t; });
  const uint32_t first_in_range = pos == list.end() ? kNoIndex : *pos;

  // The state at start_ns: from the thread's last scheduler event before the range; a
  // thread that has not switched yet is running.
  State state = State::Running;
  uint32_t open_call = kNoIndex;  // the syscall_enter with no syscall_exit yet
  if (uint32_t s = last_before(switches, first_in_range); s != kNoIndex) {
    const Event& e = trace.events[s];
    if (e.kind == k.switch_out) state = state_after(trace, k, e);
    if (state == State::Exited) p.exited_ns = e.ts;
  }
  // A thread that ended before the range and was still on its way out at its start (put
  // off the CPU and back on after its exit, before its last switch): exited all the same.
  // Nothing but that way out (wake-ups, its parent's signal, switches) follows an exit, so
  // the search stops at the first system call, or after a bound.
  if (state != State::Exited && k.exit != kNoKind) {
    constexpr int kAfterExit = 64;
    auto it = std::lower_bound(list.begin(), list.end(), start_ns,
                               [&](uint32_t i, uint64_t t) { return trace.events[i].ts < t; });
    for (int n = 0; it != list.begin() && n < kAfterExit; ++n) {
      const Event& e = trace.events[*--it];
      if (e.kind == k.syscall_enter || e.kind == k.syscall_exit) break;
      if (e.kind == k.exit) {
        state = State::Exited;
        p.exited_ns = e.ts;
        break;
      }
    }
  }
  if (uint32_t c = last_before(syscalls, first_in_range); c != kNoIndex) {
    if (trace.events[c].kind == k.syscall_enter) open_call = c;
  }

  uint64_t since = start_ns;  // when the current state began (clipped to the range)
  uint32_t block_call = state == State::Blocked ? open_call : kNoIndex;
  bool in_d = false;  // the current block is an uninterruptible sleep
  if (uint32_t s = last_before(switches, first_in_range); s != kNoIndex)
    in_d = state == State::Blocked && uninterruptible(trace, k, trace.events[s]);
  // The wait in progress: the call of the last block, when its first block began, and
  // whether that was an uninterruptible sleep. Only interruptible sleeps join: one in state
  // D is the kernel's own lock or device on the way (a reader woken by a write, then blocked
  // on the pipe's lock while its writer closes it), not the wait going on.
  uint32_t wait_call = kNoIndex;
  uint64_t wait_start = 0;
  bool wait_in_d = false;
  auto add_block = [&](uint64_t d, uint64_t start, uint32_t call, bool uninterruptible_wait) {
    p.blocked_ns += d;
    if (uninterruptible_wait) p.uninterruptible_ns += d;
    ++p.blocks;
    if (call == kNoIndex || call != wait_call || uninterruptible_wait || wait_in_d) {
      wait_call = call;
      wait_start = start;
      wait_in_d = uninterruptible_wait;
    }
    const uint64_t waited = start + d - wait_start;
    if (waited > p.longest_block_ns) {
      p.longest_block_ns = waited;
      p.longest_block_start = wait_start;
      p.longest_block_last_start = start;
      p.longest_block_call = call;
    }
  };
  auto close_state = [&](uint64_t now) {
    const uint64_t d = now - since;
    switch (state) {
      case State::Running: p.on_cpu_ns += d; break;
      case State::Runnable: p.runnable_ns += d; break;
      case State::Unknown: p.unknown_ns += d; break;
      case State::Exited: break;  // gone: neither busy nor waiting
      case State::Blocked:
        if (d == 0) break;  // switched out and in at the same time, or at the range's end
        add_block(d, since, block_call, in_d);
        break;
    }
    since = now;
  };
  // A system call during which a switch went unreported (a switch_out of state '?', or a
  // switch_in while the thread was on a CPU): tracked from its entry on a CPU, so that if
  // no switch with a known state came before its exit, the call from its entry to the
  // thread's last switch_in counts as one block in it, as it would have had the kernel
  // reported the switch (some VMs never report some threads' switches).
  struct CallWatch {
    uint32_t call = kNoIndex;
    uint64_t enter_ns = 0, on_cpu_ns = 0, unknown_ns = 0, runnable_ns = 0;
    uint32_t blocks = 0;
    bool missed = false;
  } watch;
  // A range that begins inside a call (a hang's window, a step of a causal path): the
  // call is watched from the range's start, when the thread ran in it then, or had left
  // its CPU in it by an unreported switch.
  if (open_call != kNoIndex) {
    const uint32_t s = last_before(switches, first_in_range);
    const bool left_in_call = state == State::Unknown && s != kNoIndex && s > open_call;
    if (state == State::Running || left_in_call)
      watch = {open_call, start_ns, 0, 0, 0, 0, left_in_call};
  }

  // Whether the Running state comes from a recorded switch_in (not from the assumption
  // that a thread with no scheduler event yet is running).
  bool seen_switch_in = false;
  if (uint32_t s = last_before(switches, first_in_range); s != kNoIndex)
    seen_switch_in = trace.events[s].kind == k.switch_in;
  std::unordered_map<StrId, uint32_t> by_name;
  uint64_t last_call = start_ns;
  // Waits too short to write one by one (record --min-wait), counted: the thread looks on a
  // CPU through them. Of each summary written within the range, the part of its span inside
  // the range, moved from running to blocked (to runnable: its preemptions) below (one
  // written after the range's end is not seen: summaries are written at most 10 ms of waits
  // apart, and before the thread's next wait written).
  uint64_t short_ns = 0, short_d_ns = 0, short_r_ns = 0;
  uint32_t short_count = 0;
  for (; pos != list.end(); ++pos) {
    const Event& e = trace.events[*pos];
    if (e.ts > end_ns || (e.ts == end_ns && !include_end)) break;
    ++p.events;
    if (e.kind == k.switch_out) {
      if (state == State::Exited) continue;
      // Off the CPU already: the switch_in between was not recorded, so what the thread
      // did since the last switch is unknown (not runnable, not blocked).
      if (state != State::Running) state = State::Unknown;
      if (state == State::Unknown) watch.missed = true;
      close_state(e.ts);
      state = state_after(trace, k, e);
      if (state == State::Unknown) watch.missed = true;
      if (state == State::Exited) p.exited_ns = e.ts;
      block_call = open_call;
      in_d = state == State::Blocked && uninterruptible(trace, k, e);
    } else if (e.kind == k.switch_in) {
      // On a CPU already after a recorded switch_in: its switch_out was missed.
      if (state == State::Running) {
        if (!seen_switch_in) {  // running was assumed; now it is recorded
          seen_switch_in = true;
          continue;
        }
        state = State::Unknown;
        watch.missed = true;
      }
      if (state == State::Exited) continue;
      close_state(e.ts);
      state = State::Running;
      seen_switch_in = true;
    } else if (e.kind == k.syscall_enter) {
      ++p.syscalls;
      const uint64_t quiet = e.ts - std::min(e.ts, last_call);
      p.longest_quiet_ns = std::max(p.longest_quiet_ns, quiet);
      if (p.syscalls > 1) p.longest_gap_ns = std::max(p.longest_gap_ns, quiet);
      last_call = e.ts;
      if (k.name_field >= 0) ++by_name[static_cast<StrId>(trace.value(e, k.name_field))];
      open_call = *pos;
      watch = {};
      if (state == State::Running) {
        close_state(e.ts);
        watch = {*pos, e.ts, p.on_cpu_ns, p.unknown_ns, p.runnable_ns, p.blocks, false};
      }
    } else if (e.kind == k.syscall_exit) {
      if (watch.call != kNoIndex && watch.call == open_call && watch.missed &&
          p.blocks == watch.blocks && p.runnable_ns == watch.runnable_ns) {
        // The thread returns from the call on a CPU: whatever state it was said to be in
        // (unknown after the unreported switch) ends here at the latest.
        if (state != State::Running) {
          close_state(e.ts);
          state = State::Running;
        }
        const uint64_t d = (p.on_cpu_ns - watch.on_cpu_ns) + (p.unknown_ns - watch.unknown_ns);
        p.on_cpu_ns = watch.on_cpu_ns;
        p.unknown_ns = watch.unknown_ns;
        if (d > 0) add_block(d, watch.enter_ns, watch.call, false);
      }
      watch = {};
      open_call = kNoIndex;
    } else if (e.kind != kNoKind && e.kind == k.exit && state != State::Exited) {
      // The thread ended (its switch_out with state X may follow, or be missing).
      close_state(e.ts);
      state = State::Exited;
      p.exited_ns = e.ts;
    } else if (e.kind != kNoKind && (e.kind == k.flag_write || e.kind == k.flag_read)) {
      ++p.flag_events;
    } else if (e.kind != kNoKind && e.kind == k.short_waits && k.has_short_waits()) {
      // Spread evenly over the span they were counted in: the part of it in the range.
      const uint64_t since = std::min(trace.value(e, k.since_field), e.ts);
      const uint64_t span = e.ts - since, from = std::max(since, start_ns);
      const uint64_t total = trace.value(e, k.total_field);
      const uint64_t d = std::min(trace.value(e, k.uninterruptible_field), total);
      // Preemptions among them: time runnable, not blocked (the thread did not wait for
      // anything but a CPU).
      const uint64_t r =
          k.runnable_field < 0 ? 0 : std::min(trace.value(e, k.runnable_field), total - d);
      const uint64_t count = trace.value(e, k.count_field);
      const uint64_t preempted =
          k.preempted_field < 0 ? 0 : std::min(trace.value(e, k.preempted_field), count);
      const double part =
          span == 0 || from <= since
              ? 1.0
              : static_cast<double>(e.ts - std::min(e.ts, from)) / static_cast<double>(span);
      short_ns += static_cast<uint64_t>(static_cast<double>(total) * part);
      short_d_ns += static_cast<uint64_t>(static_cast<double>(d) * part);
      short_r_ns += static_cast<uint64_t>(static_cast<double>(r) * part);
      // Blocks: the waits that slept (a preemption is no block).
      if (count > preempted)
        short_count += static_cast<uint32_t>(
            std::max<double>(1.0, static_cast<double>(count - preempted) * part));
    }
  }
  close_state(end_ns);
  if (short_ns > 0) {
    const uint64_t moved = std::min(short_ns, p.on_cpu_ns);
    const uint64_t runnable = std::min(short_r_ns, moved);
    p.on_cpu_ns -= moved;
    p.runnable_ns += runnable;
    p.blocked_ns += moved - runnable;
    p.uninterruptible_ns += std::min(short_d_ns, moved - runnable);
    p.blocks += short_count;
  }
  // The range ends inside such a call (a wait that outlasted the range: what the hang
  // waited for): its exit past the range decides as it would within it. With no switch
  // of known state before that exit, the call was off a CPU from the lost switch on.
  if (watch.call != kNoIndex && watch.call == open_call && watch.missed &&
      p.blocks == watch.blocks && p.runnable_ns == watch.runnable_ns && state != State::Exited &&
      returns_unswitched(trace, k, switches, syscalls, open_call, end_ns)) {
    const uint64_t d = (p.on_cpu_ns - watch.on_cpu_ns) + (p.unknown_ns - watch.unknown_ns);
    p.on_cpu_ns = watch.on_cpu_ns;
    p.unknown_ns = watch.unknown_ns;
    if (d > 0) add_block(d, watch.enter_ns, watch.call, false);
  }
  p.longest_quiet_ns = std::max(p.longest_quiet_ns, end_ns - std::min(end_ns, last_call));

  // The exit of the call open across the longest block, wherever it comes.
  if (p.longest_block_call != kNoIndex) {
    auto it = std::upper_bound(syscalls.begin(), syscalls.end(), p.longest_block_call);
    if (it != syscalls.end() && trace.events[*it].kind == k.syscall_exit)
      p.longest_block_exit = *it;
  }

  p.by_name.reserve(by_name.size());
  for (const auto& [name, count] : by_name) p.by_name.push_back({name, count});
  std::sort(p.by_name.begin(), p.by_name.end(), [](const SyscallCount& a, const SyscallCount& b) {
    return a.count != b.count ? a.count > b.count : a.name < b.name;
  });
  return p;
}

}  // namespace

ThreadEvents::ThreadEvents(const Trace& trace, const std::vector<Tid>& tids) {
  const ProfileKinds k(trace.schema);
  const size_t n = trace.events.size();
  // The events are cut into one contiguous range per worker. Each range is counted, then
  // copied, on its own thread: range w's events of a thread go right after range w-1's,
  // so every list is in event order as one pass would make it.
  const size_t ranges =
      n < kEventsPerRange ? 1 : std::min<size_t>(worker_count(), n / kEventsPerRange);
  auto range_of = [&](size_t w) { return std::pair{n * w / ranges, n * (w + 1) / ranges}; };

  // Threads get slots in tid order, through a hash table of the threads present: a tid
  // is a key, never a size (a tid of 4294967295 costs what any other does).
  ThreadSlots slot(tids.empty() ? trace.threads.size() : tids.size());
  std::vector<Tid> tids_sorted;
  if (tids.empty()) {
    // Every thread with events; the thread table normally names them all, but an event
    // of an unnamed thread still counts.
    std::vector<ThreadSlots> seen(ranges, ThreadSlots(trace.threads.size()));
    parallel_for(ranges, [&](size_t w) {
      ThreadSlots& mine = seen[w];
      const auto [begin, end] = range_of(w);
      Tid last = 0;
      bool any = false;
      for (size_t i = begin; i < end; ++i) {
        const Tid tid = trace.events[i].tid;
        if (any && tid == last) continue;  // runs of one thread's events are common
        mine.add(tid);
        last = tid;
        any = true;
      }
    });
    ThreadSlots all(trace.threads.size());
    for (const ThreadSlots& mine : seen)
      for (Tid t : mine.tids()) all.add(t);
    tids_sorted = all.tids();
  } else {
    tids_sorted = tids;
  }
  std::sort(tids_sorted.begin(), tids_sorted.end());
  tids_sorted.erase(std::unique(tids_sorted.begin(), tids_sorted.end()), tids_sorted.end());
  for (uint32_t i = 0; i < tids_sorted.size(); ++i) slot.set(tids_sorted[i], i);
  const size_t slots = tids_sorted.size();

  // Count per range first, so each list is allocated once at its final size and each
  // range knows where its part of every list starts.
  struct Counts {
    std::vector<uint32_t> events, switches, syscalls;
  };
  std::vector<Counts> at(ranges);
  parallel_for(ranges, [&](size_t w) {
    Counts& c = at[w];
    c.events.assign(slots, 0);
    c.switches.assign(slots, 0);
    c.syscalls.assign(slots, 0);
    const auto [begin, end] = range_of(w);
    for (size_t i = begin; i < end; ++i) {
      const Event& e = trace.events[i];
      const uint32_t s = slot.get(e.tid);
      if (s == ThreadSlots::kNone) continue;
      ++c.events[s];
      c.switches[s] += k.is_switch(e.kind);
      c.syscalls[s] += k.is_syscall(e.kind);
    }
  });
  // Turn each range's counts into its starting positions in the flat arrays: thread by
  // thread, range by range within a thread.
  std::vector<uint32_t> events_at(slots + 1), switches_at(slots + 1), syscalls_at(slots + 1);
  uint32_t ne = 0, nw = 0, nc = 0;
  for (size_t s = 0; s < slots; ++s) {
    events_at[s] = ne;
    switches_at[s] = nw;
    syscalls_at[s] = nc;
    for (Counts& c : at) {
      ne += std::exchange(c.events[s], ne);
      nw += std::exchange(c.switches[s], nw);
      nc += std::exchange(c.syscalls[s], nc);
    }
  }
  events_at[slots] = ne;
  switches_at[slots] = nw;
  syscalls_at[slots] = nc;
  // Sized without zeroing: every slot is written below.
  std::unique_ptr<uint32_t[]> events(new uint32_t[ne]), switches(new uint32_t[nw]),
      syscalls(new uint32_t[nc]);
  parallel_for(ranges, [&](size_t w) {
    Counts& next = at[w];
    const auto [begin, end] = range_of(w);
    for (size_t i = begin; i < end; ++i) {
      const Event& e = trace.events[i];
      const uint32_t s = slot.get(e.tid);
      if (s == ThreadSlots::kNone) continue;
      const auto index = static_cast<uint32_t>(i);
      events[next.events[s]++] = index;
      if (k.is_switch(e.kind)) switches[next.switches[s]++] = index;
      if (k.is_syscall(e.kind)) syscalls[next.syscalls[s]++] = index;
    }
  });
  auto own = [](std::unique_ptr<uint32_t[]> data, uint32_t size) {
    std::shared_ptr<uint32_t[]> keep(std::move(data));
    return Column<uint32_t>::view(keep, keep.get(), size);
  };
  parts_.tids = std::move(tids_sorted);
  parts_.events = own(std::move(events), ne);
  parts_.switches = own(std::move(switches), nw);
  parts_.syscalls = own(std::move(syscalls), nc);
  parts_.events_at = std::move(events_at);
  parts_.switches_at = std::move(switches_at);
  parts_.syscalls_at = std::move(syscalls_at);
}

ThreadEvents::ThreadEvents(Parts parts, uint64_t events, bool lists_checked)
    : parts_(std::move(parts)) {
  const size_t slots = parts_.tids.size();
  for (size_t i = 1; i < slots; ++i)
    if (parts_.tids[i - 1] >= parts_.tids[i])
      throw std::invalid_argument("thread index: thread ids not sorted");
  auto check = [&](const Column<uint32_t>& flat, const Column<uint32_t>& at, const char* what) {
    if (at.size() != slots + 1 || at[0] != 0 || at[slots] != flat.size())
      throw std::invalid_argument(std::string("thread index: ") + what + " offsets do not fit");
    for (size_t i = 0; i < slots; ++i) {
      if (at[i] > at[i + 1])
        throw std::invalid_argument(std::string("thread index: ") + what + " offsets descend");
      if (at[i] == at[i + 1]) continue;
      // Each thread's list: events of the trace, strictly ascending (profiles search them),
      // so its last is the largest. Counted without a branch an entry: the lists hold ~29 M
      // at 19 M events, checked when a mapped index was not checked in full before.
      const uint32_t* list = flat.data() + at[i];
      const size_t n = at[i + 1] - at[i];
      size_t descents = 0;
      if (!lists_checked)
        for (size_t k = 1; k < n; ++k) descents += list[k - 1] >= list[k];
      if (descents != 0 || list[n - 1] >= events)
        throw std::invalid_argument(std::string("thread index: ") + what +
                                    " list names events out of order or past the trace's");
    }
  };
  check(parts_.events, parts_.events_at, "event");
  check(parts_.switches, parts_.switches_at, "switch");
  check(parts_.syscalls, parts_.syscalls_at, "syscall");
}

EventList ThreadEvents::list(const Column<uint32_t>& flat, const Column<uint32_t>& at,
                             Tid tid) const {
  auto it = std::lower_bound(parts_.tids.begin(), parts_.tids.end(), tid);
  if (it == parts_.tids.end() || *it != tid) return {};
  const auto i = static_cast<size_t>(it - parts_.tids.begin());
  return {flat.data() + at[i], flat.data() + at[i + 1]};
}

SegmentProfile profile_range(const Trace& trace, const ThreadEvents& events, Tid tid,
                             uint64_t start_ns, uint64_t end_ns) {
  return profile(trace, events, tid, start_ns, end_ns, false);
}

SegmentProfile profile_segment(const Trace& trace, const ThreadEvents& events, const Graph& graph,
                               uint32_t segment) {
  const Segment& s = graph.segments.at(segment);
  const Graph::ThreadSegments* t = graph.thread_segments(s.tid);
  const bool last = t && segment + 1 == t->end;
  return profile(trace, events, s.tid, s.start_ns, s.end_ns, last);
}

}  // namespace cw::engine
