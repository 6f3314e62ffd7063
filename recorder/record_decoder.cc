#include "recorder/record_decoder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "kernel/records.h"
#include "recorder/lock_wait.h"

namespace cw {

namespace {

std::string_view bounded(const char* s, size_t cap) {
  return {s, strnlen(s, cap)};
}

std::string_view basename_of(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

template <typename T>
const T* as(const void* record, size_t size) {
  return size >= sizeof(T) ? static_cast<const T*>(record) : nullptr;
}

}  // namespace

RecordDecoder::RecordDecoder(Trace& trace, SyscallNaming naming)
    : trace_(trace), naming_(std::move(naming)), fields_(trace.schema) {}

void RecordDecoder::add_process(Pid pid, Pid ppid, std::string_view comm, std::string_view exe) {
  put_process({pid, ppid, trace_.strings.intern(comm), trace_.strings.intern(exe)});
}

void RecordDecoder::add_thread(Tid tid, Pid pid, std::string_view comm, bool kernel) {
  put_thread({tid, pid, trace_.strings.intern(comm), kernel});
}

// Tables are append-only (a writer may have written the old entry); the last entry of an
// id wins when the trace is read. The decoder keeps its own latest view, so it never has
// to rebuild the trace's indexes per fork or exec.
//
// `ts` is the time of the record that says it (0: the /proc snapshot). Records of different
// CPUs reach the decoder a block at a time, not in time order: a child's exec or rename can
// come before the fork that named it after its parent, and must not be undone by it. So a
// process's name and executable each keep the newest saying, whatever order they come in,
// and a fork gives the parent to a process an earlier-read record made.
void RecordDecoder::update_process(Pid pid, std::optional<Pid> ppid, std::optional<StrId> comm,
                                   std::optional<StrId> exe, uint64_t ts) {
  auto [known, fresh] = processes_.try_emplace(pid, ProcessInfo{pid, 0, 0, 0});
  ProcessInfo p = known->second;
  ProcessSaid& said = process_said_at_[pid];
  if (ppid && (fresh || p.ppid == 0 || ts >= said.ppid)) {
    p.ppid = *ppid;
    said.ppid = ts;
  }
  if (comm && (fresh || ts >= said.comm)) {
    p.comm = *comm;
    said.comm = ts;
  }
  if (exe && (fresh || ts >= said.exe)) {
    p.exe = *exe;
    said.exe = ts;
  }
  if (!fresh && p.ppid == known->second.ppid && p.comm == known->second.comm &&
      p.exe == known->second.exe)
    return;
  put_process(p);
}

void RecordDecoder::put_process(const ProcessInfo& p) {
  trace_.processes.push_back(p);
  processes_[p.pid] = p;
}

void RecordDecoder::put_thread(const ThreadInfo& t, uint64_t ts) {
  if (ts != 0) {
    auto [at, fresh] = thread_said_at_.try_emplace(t.tid, ts);
    if (!fresh && at->second > ts) return;
    at->second = ts;
  }
  trace_.threads.push_back(t);
  threads_[t.tid] = t;
}

void RecordDecoder::note_thread(Tid tid, Pid pid) {
  if (tid == 0 || threads_.count(tid)) return;
  // A thread first met in an event: it existed before the /proc snapshot ended, or its
  // creation was not recorded (a filtered parent). Its name comes later, if at all.
  put_thread({tid, pid, 0, false});
}

RecordDecoder::Held& RecordDecoder::hold(uint64_t ts, Tid tid, KindId kind, uint32_t cpu) {
  Held& h = held_.emplace_back();
  h.ts = ts;
  h.order = order_++;
  h.tid = tid;
  h.kind = kind;
  h.cpu = static_cast<uint16_t>(cpu);
  h.stack = 0;
  h.seq = 0;
  h.nvalues = static_cast<uint8_t>(trace_.schema.kind(kind).fields.size());
  h.released = false;
  std::fill(std::begin(h.values), std::end(h.values), 0);
  ++stats_.events;
  return h;
}

void RecordDecoder::set(Held& h, FieldAt field, uint64_t v) {
  h.values[field] = v;
}

void RecordDecoder::set_str(Held& h, FieldAt field, std::string_view s) {
  h.values[field] = trace_.strings.intern(s);
}

StrId RecordDecoder::syscall_name_id(uint32_t nr) {
  // Interned once per number: hashing the name of every call was a twentieth of the
  // recorder's CPU on a busy machine.
  if (nr < syscall_names_.size() && syscall_names_[nr] != kNotInterned) return syscall_names_[nr];
  std::string_view name = naming_.name(nr);
  StrId id = name.empty() ? trace_.strings.intern(fmt::format("syscall_{}", nr))
                          : trace_.strings.intern(name);
  if (nr < kMaxCachedSyscall) {
    if (syscall_names_.size() <= nr) syscall_names_.resize(nr + 1, kNotInterned);
    syscall_names_[nr] = id;
  }
  return id;
}

StrId RecordDecoder::syscall_op_id(uint32_t nr, uint32_t op) {
  const uint64_t key = (uint64_t{nr} << 32) | op;
  auto it = syscall_ops_.find(key);
  if (it != syscall_ops_.end()) return it->second;
  StrId id = trace_.strings.intern(naming_.op_name(nr, op));
  // Operations are a handful per call; an op field is the caller's number, so bound the
  // cache rather than trust it.
  if (syscall_ops_.size() < 4096) syscall_ops_.emplace(key, id);
  return id;
}

StackId RecordDecoder::intern_stack(Pid pid, const uint64_t* ips, uint32_t n) {
  std::string key(reinterpret_cast<const char*>(&pid), sizeof pid);
  key.append(reinterpret_cast<const char*>(ips), n * sizeof(uint64_t));
  auto [it, fresh] = stack_ids_.try_emplace(std::move(key), 0);
  if (fresh) it->second = trace_.add_stack(Stack{{ips, ips + n}, {}});
  return it->second;
}

RecordDecoder::Held* RecordDecoder::stack_owner(Tid tid, uint32_t flags, uint64_t seq) {
  if (flags & CW_STACK_OF_SAMPLE) {
    auto it = last_sample_.find(tid);
    if (it == last_sample_.end() || it->second.first != seq || !still_held(it->second.second))
      return nullptr;
    return &held_at(it->second.second);
  }
  auto it = last_enters_.find(tid);
  const uint64_t* order = it != last_enters_.end() ? it->second.find(seq) : nullptr;
  return order && still_held(*order) ? &held_at(*order) : nullptr;
}

void RecordDecoder::put_user_stack(Held& h, Pid pid, StackId user) {
  // A kernel stack record that came first (the user stack waited, or was being unwound)
  // is put back in front.
  if (h.stack != 0 && trace_.stacks[h.stack].kernel > 0) {
    const Stack& had = trace_.stacks[h.stack];
    const std::vector<uint64_t> kips(had.ips.begin(), had.ips.begin() + had.kernel);
    user = add_kernel_frames(pid, user, kips.data(), static_cast<uint32_t>(kips.size()));
  }
  h.stack = user;
}

bool RecordDecoder::attach_stack(const void* record, size_t size, bool final, uint64_t* owner_at) {
  const auto* hdr = static_cast<const cw_rec_header*>(record);
  const Tid tid = hdr->tid;
  auto bad = [&] {
    ++stats_.malformed;
    return true;
  };
  // The event it goes to: the one found when it first tried, if it had to wait for the
  // stack it repeats (the thread may have made many calls since).
  auto owner_of = [&](uint32_t flags, uint64_t seq) -> Held* {
    if (owner_at && *owner_at != kNoOwner)
      return still_held(*owner_at) ? &held_at(*owner_at) : nullptr;
    Held* owner = stack_owner(tid, flags, seq);
    if (owner && owner_at) *owner_at = owner->order;
    return owner;
  };
  // What the record names has not come: it waits, or (final) is lost.
  auto missing = [&](uint64_t& lost) {
    if (!final) return false;
    ++lost;
    return true;
  };
  // A record of frames (CW_REC_STACK, CW_REC_KSTACK): how many it holds, or -1 when its
  // size does not hold them, or when one saying "as before" holds more than the seq of the
  // call whose stack it repeats.
  auto frames_in = [&](bool as_before) -> int64_t {
    constexpr size_t fixed = offsetof(cw_rec_stack, ips);
    if (size < fixed) return -1;
    const uint32_t n =
        std::min<uint32_t>(static_cast<const cw_rec_stack*>(record)->n, CW_MAX_STACK);
    if (fixed + n * sizeof(uint64_t) > size) return -1;
    if (as_before && (n != 0 || size < fixed + sizeof(uint64_t))) return -1;
    return n;
  };
  switch (hdr->type) {
    case CW_REC_STACK: {
      const bool of_sample = (hdr->flags & CW_STACK_OF_SAMPLE) != 0;
      const bool as_before = !of_sample && (hdr->flags & CW_USTACK_AS_BEFORE) != 0;
      const int64_t held = frames_in(as_before);
      if (held < 0) return bad();
      const auto* r = static_cast<const cw_rec_stack*>(record);
      const auto n = static_cast<uint32_t>(held);
      Held* owner = owner_of(hdr->flags, r->seq);
      if (!owner) return missing(stats_.stacks_late);
      if (as_before) {
        uint64_t original = 0;
        std::memcpy(&original, r->ips, sizeof original);
        auto walked = walked_ustacks_.find(tid);
        const StackId* last =
            walked != walked_ustacks_.end() ? walked->second.find(original) : nullptr;
        if (!last) return missing(stats_.user_stacks_unmatched);
        put_user_stack(*owner, hdr->pid, *last);
        ++stats_.stacks_attached;
        ++stats_.user_stacks_repeated;
        return true;
      }
      uint64_t ips[CW_MAX_STACK];
      std::memcpy(ips, r->ips, n * sizeof(uint64_t));
      const StackId stack = intern_stack(hdr->pid, ips, n);
      put_user_stack(*owner, hdr->pid, stack);
      if (!of_sample) walked_ustacks_[tid].put(r->seq, stack);
      ++stats_.stacks_attached;
      return true;
    }
    case CW_REC_USTACK: {
      constexpr size_t fixed = offsetof(cw_rec_ustack, data);
      if (size < fixed) return bad();
      const auto* r = static_cast<const cw_rec_ustack*>(record);
      if (r->size > CW_MAX_USTACK_BYTES || fixed + r->size > size) return bad();
      Held* owner = owner_of(hdr->flags, r->seq);
      if (!owner) return missing(stats_.stacks_late);
      if (!unwind_) {
        ++stats_.stacks_not_unwound;
        return true;
      }
      const auto* bytes = static_cast<const uint8_t*>(record);
      pending_unwind_.emplace_back(owner->order,
                                   std::vector<uint8_t>(bytes, bytes + fixed + r->size));
      return true;
    }
    case CW_REC_KSTACK: {
      const bool as_before = (hdr->flags & CW_KSTACK_AS_BEFORE) != 0;
      const int64_t held = frames_in(as_before);
      if (held < 0) return bad();
      const auto* r = static_cast<const cw_rec_stack*>(record);
      const auto n = static_cast<uint32_t>(held);
      Held* owner = owner_of(0, r->seq);
      if (!owner) return missing(stats_.stacks_late);
      if (as_before) {
        uint64_t original = 0;
        std::memcpy(&original, r->ips, sizeof original);
        auto walked = walked_kstacks_.find(tid);
        const std::vector<uint64_t>* last =
            walked != walked_kstacks_.end() ? walked->second.find(original) : nullptr;
        if (!last) return missing(stats_.kernel_stacks_unmatched);
        owner->stack = add_kernel_frames(hdr->pid, owner->stack, last->data(),
                                         static_cast<uint32_t>(last->size()));
        ++stats_.kernel_stacks;
        ++stats_.kernel_stacks_repeated;
        return true;
      }
      // The probe's own frames come first: the wait is below them.
      uint32_t skip = 0;
      while (kernel_probe_ && skip < n && kernel_probe_(r->ips[skip])) ++skip;
      std::vector<uint64_t> frames(r->ips + skip, r->ips + n);
      owner->stack = add_kernel_frames(hdr->pid, owner->stack, frames.data(),
                                       static_cast<uint32_t>(frames.size()));
      walked_kstacks_[tid].put(r->seq, std::move(frames));
      ++stats_.kernel_stacks;
      return true;
    }
    default: return true;
  }
}

void RecordDecoder::forget_exited(uint64_t horizon) {
  // A stack record of the thread that comes later is older than its exit, so released:
  // it attaches to nothing, walked stacks or not. A thread that has a call held is another
  // thread of the same tid (the kernel reused it).
  std::erase_if(exited_, [&](const std::pair<uint64_t, Tid>& e) {
    if (e.first > horizon) return false;
    if (!last_enters_.count(e.second)) {
      walked_ustacks_.erase(e.second);
      walked_kstacks_.erase(e.second);
    }
    return true;
  });
}

void RecordDecoder::retry_early_stacks(Tid tid) {
  if (early_stacks_.empty()) return;
  auto it = early_stacks_.find(tid);
  if (it == early_stacks_.end()) return;
  std::vector<EarlyStack>& waiting = it->second;
  // One that attaches may be the stack another repeats: again until none does.
  for (bool attached = true; attached;) {
    attached = false;
    for (size_t i = 0; i < waiting.size();) {
      EarlyStack& e = waiting[i];
      if (attach_stack(e.bytes.data(), e.bytes.size(), false, &e.owner)) {
        waiting.erase(waiting.begin() + static_cast<std::ptrdiff_t>(i));
        --early_count_;
        attached = true;
      } else {
        ++i;
      }
    }
  }
  if (waiting.empty()) early_stacks_.erase(it);
}

void RecordDecoder::drop_early_stacks(uint64_t horizon) {
  for (auto it = early_stacks_.begin(); it != early_stacks_.end();) {
    std::erase_if(it->second, [&](EarlyStack& e) {
      if (reinterpret_cast<const cw_rec_header*>(e.bytes.data())->ts > horizon) return false;
      attach_stack(e.bytes.data(), e.bytes.size(), true, &e.owner);
      --early_count_;
      return true;
    });
    it = it->second.empty() ? early_stacks_.erase(it) : std::next(it);
  }
}

void RecordDecoder::unwind_pending() {
  for (auto& [order, bytes] : pending_unwind_) {
    if (!still_held(order)) continue;
    const auto* r = reinterpret_cast<const cw_rec_ustack*>(bytes.data());
    constexpr size_t fixed = offsetof(cw_rec_ustack, data);
    uint64_t regs[CW_USTACK_REGS];
    std::copy(std::begin(r->regs), std::end(r->regs), regs);
    std::vector<uint64_t> ips =
        unwind_(r->h.pid, r->h.tid, regs,
                std::span<const uint8_t>(bytes.data() + fixed, bytes.size() - fixed));
    // A kernel stack (CW_REC_KSTACK) that came before the unwinding is put back in front.
    put_user_stack(held_at(order), r->h.pid,
                   intern_stack(r->h.pid, ips.data(), static_cast<uint32_t>(ips.size())));
    ++stats_.stacks_attached;
  }
  pending_unwind_.clear();
}

StackId RecordDecoder::add_kernel_frames(Pid pid, StackId user, const uint64_t* ips, uint32_t n) {
  const Stack* tail = user != 0 && user < trace_.stacks.size() ? &trace_.stacks[user] : nullptr;
  const size_t user_frames =
      tail ? tail->ips.size() - std::min<size_t>(tail->kernel, tail->ips.size()) : 0;
  // The key tells a kernel+user stack from a user stack of the same addresses.
  std::string key(reinterpret_cast<const char*>(&pid), sizeof pid);
  key += 'K';
  key.append(reinterpret_cast<const char*>(&n), sizeof n);
  key.append(reinterpret_cast<const char*>(ips), n * sizeof(uint64_t));
  if (tail)
    key.append(reinterpret_cast<const char*>(tail->ips.data() + tail->kernel),
               user_frames * sizeof(uint64_t));
  auto [it, fresh] = stack_ids_.try_emplace(std::move(key), 0);
  if (!fresh) return it->second;
  Stack s;
  s.kernel = n;
  s.ips.assign(ips, ips + n);
  s.symbols.assign(n, 0);
  for (uint32_t i = 0; i < n; ++i) {
    std::string_view name = kernel_symbol_ ? kernel_symbol_(ips[i]) : std::string_view();
    if (!name.empty())
      s.symbols[i] = trace_.strings.intern(name);
    else
      ++stats_.kernel_frames_unnamed;
  }
  if (tail) {
    const size_t from = tail->ips.size() - user_frames;
    s.ips.insert(s.ips.end(), tail->ips.begin() + static_cast<std::ptrdiff_t>(from),
                 tail->ips.end());
    for (size_t i = from; i < tail->ips.size(); ++i)
      s.symbols.push_back(i < tail->symbols.size() ? tail->symbols[i] : 0);
  }
  it->second = trace_.add_stack(std::move(s));
  return it->second;
}

void RecordDecoder::add_loss(LossKind kind, uint64_t count) {
  if (count > 0) trace_.losses.push_back({kind, count, newest_ts_});
}

uint64_t RecordDecoder::flag_hits(Pid pid, uint32_t flag_index) const {
  auto it = flag_hits_.find({pid, flag_index});
  return it == flag_hits_.end() ? 0 : it->second;
}

void RecordDecoder::add_marker(uint64_t ts, Tid tid, Pid pid, std::string_view text) {
  note_thread(tid, pid);
  set_str(hold(ts, tid, fields_.marker.id, 0), fields_.marker.text, text);
}

void RecordDecoder::add_lock_wait(uint64_t ts, const LockWait& w) {
  const auto& held = fields_.lock_held;
  const auto& wait = fields_.lock_wait;
  int64_t holder = w.holder_tid != 0 ? w.holder_tid : w.holder_pid;
  if (holder > 0) {
    note_thread(static_cast<Tid>(holder), static_cast<Pid>(w.holder_pid));
    Held& h = hold(ts, static_cast<Tid>(holder), held.id, 0);
    set(h, held.object, w.object);
    set(h, held.waiter, w.waiter_tid);
    set_str(h, held.lock, w.lock);
  }
  note_thread(w.waiter_tid, w.waiter_pid);
  Held& h = hold(ts + 1, w.waiter_tid, wait.id, 0);
  set(h, wait.object, w.object);
  set(h, wait.holder, static_cast<uint64_t>(holder));
}

bool RecordDecoder::end_unreported_run(uint64_t ts, uint32_t cpu, Tid now_running) {
  Tid& running = on_cpu_[cpu];
  if (running == 0 || running == now_running) return false;
  set_str(hold(ts, running, fields_.switch_out.id, cpu), fields_.switch_out.state, "?");
  off_cpu_since_[running] = ts;
  running = 0;
  ++stats_.switches_unreported;
  trace_.losses.push_back({LossKind::SwitchUnreported, 1, ts});
  return true;
}

void RecordDecoder::note_running(uint64_t ts, Tid tid, uint32_t cpu, bool tid_recorded) {
  // With held waits a thread's short waits leave no switches: who runs on a CPU cannot be
  // told from them.
  if (tid == 0 || waits_held_) return;
  // Nearly every record: its thread is the one the switches put there (and recorded).
  if (auto running = on_cpu_.find(cpu); running != on_cpu_.end() && running->second == tid) return;
  if (auto last = last_switch_ns_.find(cpu); last != last_switch_ns_.end() && ts < last->second)
    return;  // written before the CPU's latest switch: says nothing of who runs there now
  if (tid_recorded) recorded_.insert(tid);
  // Another thread had this CPU as far as the switches tell: its switch away was lost.
  const bool lost = end_unreported_run(ts, cpu, tid);
  // And `tid`, off every CPU since its last switch_out, got this one unreported: its time
  // on a CPU begins here at the latest (a wake-up's edge lands on it, not on a switch_in
  // after its next wait). Only for a recorded thread: an unrecorded one's switches back
  // in are never sent.
  auto off = off_cpu_since_.find(tid);
  if (off == off_cpu_since_.end() || ts < off->second || !recorded_.count(tid)) return;
  off_cpu_since_.erase(off);
  hold(ts, tid, fields_.switch_in.id, cpu);
  on_cpu_[cpu] = tid;
  if (!lost) {  // one switch: counted once, whichever of its ends was noticed first
    ++stats_.switches_unreported;
    trace_.losses.push_back({LossKind::SwitchUnreported, 1, ts});
  }
}

void RecordDecoder::decode(const void* record, size_t size) {
  // Every value goes to its field by name (recorder/event_fields.h).
  const EventFields& f = fields_;

  ++stats_.records;
  const auto* hdr = as<cw_rec_header>(record, size);
  if (!hdr || hdr->size > size) {
    ++stats_.malformed;
    return;
  }
  newest_ts_ = std::max<uint64_t>(newest_ts_, hdr->ts);
  const uint64_t ts = hdr->ts;
  const Tid tid = hdr->tid;
  const uint32_t cpu = hdr->cpu;
  note_thread(tid, hdr->pid);
  auto bad = [&] { ++stats_.malformed; };

  // The records whose thread is the one running on their CPU (kernel/bpf: fill_header's
  // current task) are the evidence that a switch went unreported. Not a switch (its
  // thread is the one leaving), a syscall entry (sent when the call did something, maybe
  // long after it began and from another CPU), stacks (no event), a rename (of any
  // thread: pthread_setname_np names another through /proc), nor a wake-up or signal an
  // interrupt raised on an idle CPU, which is its timer's owner's (wake.bpf.h).
  switch (hdr->type) {
    case CW_REC_SYS_ENTER:
      if (tid != 0) recorded_.insert(tid);
      break;
    // Any thread may wake a recorded one or signal it: the writer may be unrecorded.
    case CW_REC_WAKING:
    case CW_REC_WAKEUP_NEW:
      if (const auto* r = as<cw_rec_wake>(record, size);
          r && !(r->in_irq && r->cause_tid != 0 && r->cause_tid == tid))
        note_running(ts, tid, cpu, recorded_.count(tid) != 0);
      break;
    case CW_REC_SIGNAL:
      if (size >= sizeof(cw_rec_signal) &&
          static_cast<const cw_rec_signal*>(record)->cause_tid != tid)
        note_running(ts, tid, cpu, recorded_.count(tid) != 0);
      break;
    // Written only by recorded threads.
    case CW_REC_FORK:
    case CW_REC_EXEC:
    case CW_REC_EXIT:
    case CW_REC_SYS_EXIT:
    case CW_REC_XFER:
    case CW_REC_READY:
    case CW_REC_TIMER:
    case CW_REC_IRQ:
    case CW_REC_CALL:
    case CW_REC_FLAG:
    case CW_REC_SAMPLE: note_running(ts, tid, cpu, true); break;
    default: break;  // a switch (below), a stack, or a record decode() refuses
  }

  switch (hdr->type) {
    case CW_REC_SWITCH: {
      const auto* r = as<cw_rec_switch>(record, size);
      if (!r) return bad();
      if (hdr->flags & CW_SWITCH_HELD) {
        // A wait written once it had lasted, stamped when it began: nothing else of that CPU.
        // Later than the records held for sorting (a recorder that fell behind), it keeps
        // its place after what was already written; the thread wrote nothing meanwhile.
        if (tid == 0) return bad();
        char state[2] = {static_cast<char>(r->prev_state ? r->prev_state : '?'), 0};
        const uint64_t at = std::max(ts, released_upto_ + 1);
        set_str(hold(at, tid, f.switch_out.id, cpu), f.switch_out.state, state);
        return;
      }
      // A recorded thread that got this CPU must leave it in a record whose prev it is.
      // Some kernels never report some switches (a Firecracker VM delivers no tracepoint
      // in the context of its pid 1's threads, to perf either; a busy guest's kernel
      // loses some): end the thread's run with an unknown state ('?') where the gap is
      // noticed, and count the switch as lost rather than let the thread look as if it
      // had run all along.
      if (!waits_held_) end_unreported_run(ts, cpu, tid);
      on_cpu_[cpu] = r->next_recorded ? r->next_tid : 0;
      last_switch_ns_[cpu] = ts;
      if (tid != 0) {
        char state[2] = {static_cast<char>(r->prev_state ? r->prev_state : '?'), 0};
        set_str(hold(ts, tid, f.switch_out.id, cpu), f.switch_out.state, state);
        off_cpu_since_[tid] = ts;
      }
      if (r->next_tid != 0) {
        note_thread(r->next_tid, r->next_pid);
        hold(ts, r->next_tid, f.switch_in.id, cpu);
        off_cpu_since_.erase(r->next_tid);
        if (r->next_recorded) recorded_.insert(r->next_tid);
      }
      return;
    }
    case CW_REC_WAKING:
    case CW_REC_WAKEUP_NEW: {
      const auto* r = as<cw_rec_wake>(record, size);
      if (!r) return bad();
      if (tid == 0) return;  // woken from the idle task: no thread did it
      note_thread(r->target_tid, r->target_pid);
      if (hdr->type == CW_REC_WAKEUP_NEW) {
        set(hold(ts, tid, f.wakeup_new.id, cpu), f.wakeup_new.target, r->target_tid);
        return;
      }
      Held& h = hold(ts, tid, f.wakeup.id, cpu);
      set(h, f.wakeup.target, r->target_tid);
      if (r->in_irq) set(h, f.wakeup.interrupt, 1);
      if (r->in_irq && r->cause_tid != 0) set(h, f.wakeup.cause, r->cause_tid);
      if (hdr->flags & CW_WAKE_DELIVERS) set(h, f.wakeup.delivers, 1);
      return;
    }
    case CW_REC_FORK: {
      const auto* r = as<cw_rec_fork>(record, size);
      if (!r) return bad();
      std::string_view comm = bounded(r->child_comm, CW_COMM_LEN);
      if (!r->is_thread) {
        auto parent = processes_.find(hdr->pid);
        update_process(r->child_pid, hdr->pid, trace_.strings.intern(comm),
                       parent != processes_.end() ? parent->second.exe : 0, ts);
      }
      put_thread({r->child_tid, r->child_pid, trace_.strings.intern(comm), r->child_kernel != 0},
                 ts);
      Held& h = hold(ts, tid, f.fork.id, cpu);
      set(h, f.fork.child, r->child_tid);
      set(h, f.fork.child_pid, r->child_pid);
      set(h, f.fork.thread, r->is_thread ? 1 : 0);
      set(hold(ts, r->child_tid, f.thread_start.id, cpu), f.thread_start.parent, tid);
      return;
    }
    case CW_REC_EXEC: {
      const auto* r = as<cw_rec_exec>(record, size);
      if (!r) return bad();
      std::string_view path = bounded(r->path, CW_PATH_LEN);
      std::string_view comm = bounded(r->comm, CW_COMM_LEN);
      if (comm.empty()) comm = basename_of(path);
      update_process(hdr->pid, std::nullopt, trace_.strings.intern(comm),
                     trace_.strings.intern(path), ts);
      put_thread({tid, hdr->pid, trace_.strings.intern(comm), false}, ts);
      set_str(hold(ts, tid, f.exec.id, cpu), f.exec.path, path);
      if (keep_execs_) {
        if (execs_.size() < kMaxExecsKept)
          execs_.push_back(hdr->pid);
        else
          ++execs_not_kept_;
      }
      return;
    }
    case CW_REC_EXIT: {
      const auto* r = as<cw_rec_exit>(record, size);
      if (!r) return bad();
      set(hold(ts, tid, f.exit.id, cpu), f.exit.code,
          static_cast<uint64_t>(static_cast<int64_t>(r->code)));
      exited_.emplace_back(ts, tid);
      return;
    }
    case CW_REC_COMM: {
      const auto* r = as<cw_rec_comm>(record, size);
      if (!r) return bad();
      std::string_view comm = bounded(r->comm, CW_COMM_LEN);
      auto t = threads_.find(tid);
      put_thread(
          {tid, hdr->pid, trace_.strings.intern(comm), t != threads_.end() && t->second.kernel},
          ts);
      // A process is known by its main thread's name, as ps shows it (its fork may be
      // read later).
      if (tid == hdr->pid)
        update_process(hdr->pid, std::nullopt, trace_.strings.intern(comm), std::nullopt, ts);
      set_str(hold(ts, tid, f.comm.id, cpu), f.comm.name, comm);
      return;
    }
    case CW_REC_SYS_ENTER: {
      const auto* r = as<cw_rec_sys_enter>(record, size);
      if (!r) return bad();
      const auto& k = f.syscall_enter;
      Held& h = hold(ts, tid, k.id, cpu);
      set(h, k.name, syscall_name_id(r->nr));
      set(h, k.fd, static_cast<uint64_t>(static_cast<int64_t>(r->fd)));
      set(h, k.resource, r->resource);
      set(h, k.op, syscall_op_id(r->nr, r->op));
      set(h, k.value, r->value);
      set(h, k.count, r->count);
      set(h, k.timeout_ns, static_cast<uint64_t>(r->timeout_ns));
      h.seq = r->seq;
      last_enters_[tid].put(r->seq, h.order);
      retry_early_stacks(tid);
      return;
    }
    case CW_REC_SYS_EXIT: {
      const auto* r = as<cw_rec_sys_exit>(record, size);
      if (!r) return bad();
      Held& h = hold(ts, tid, f.syscall_exit.id, cpu);
      set(h, f.syscall_exit.name, syscall_name_id(r->nr));
      set(h, f.syscall_exit.ret,
          static_cast<uint64_t>((hdr->flags & CW_EXIT_NO_RET) ? kUnknownReturn : r->ret));
      return;
    }
    case CW_REC_XFER: {
      const auto* r = as<cw_rec_xfer>(record, size);
      if (!r) return bad();
      const EventFields::Transfer& k = r->is_send ? f.send : f.recv;
      // A send held back until its bytes had waited, stamped when it was made: like a held
      // wait's switch, later than the records held for sorting it keeps its place after them.
      const uint64_t at = (hdr->flags & CW_XFER_LATE) ? std::max(ts, released_upto_ + 1) : ts;
      Held& h = hold(at, tid, k.id, cpu);
      set(h, k.object, r->object);
      set(h, k.offset, r->offset);
      set(h, k.len, r->len);
      set(h, k.peer, static_cast<uint64_t>(static_cast<int64_t>(r->peer_pid)));
      set(h, k.fd, static_cast<uint64_t>(static_cast<int64_t>(r->fd)));
      if (hdr->flags & CW_XFER_QUEUED) set(h, k.queued, 1);
      return;
    }
    case CW_REC_READY: {
      const auto* r = as<cw_rec_ready>(record, size);
      if (!r) return bad();
      for (uint32_t i = 0; i < std::min<uint32_t>(r->n, CW_MAX_READY); ++i) {
        Held& h = hold(ts, tid, f.ready.id, cpu);
        set(h, f.ready.fd, static_cast<uint64_t>(static_cast<int64_t>(r->fds[i])));
        set(h, f.ready.events, r->events[i]);
      }
      return;
    }
    case CW_REC_TIMER: {
      const auto* r = as<cw_rec_timer>(record, size);
      if (!r) return bad();
      switch (r->op) {
        case CW_TIMER_ARM: {
          Held& h = hold(ts, tid, f.timer_arm.id, cpu);
          set(h, f.timer_arm.timer, r->timer);
          set(h, f.timer_arm.expires_ns, r->expires_ns);
          set(h, f.timer_arm.interval_ns, r->interval_ns);
          return;
        }
        case CW_TIMER_FIRE:
          set(hold(ts, tid, f.timer_fire.id, cpu), f.timer_fire.timer, r->timer);
          return;
        case CW_TIMER_CANCEL:
          set(hold(ts, tid, f.timer_cancel.id, cpu), f.timer_cancel.timer, r->timer);
          return;
      }
      return bad();
    }
    case CW_REC_IRQ: {
      const auto* r = as<cw_rec_irq>(record, size);
      if (!r) return bad();
      auto irq = static_cast<uint64_t>(static_cast<int64_t>(r->irq));
      switch (r->op) {
        case CW_HARDIRQ_ENTER: {
          Held& h = hold(ts, tid, f.irq_enter.id, cpu);
          set(h, f.irq_enter.irq, irq);
          set_str(h, f.irq_enter.name, bounded(r->name, CW_COMM_LEN));
          return;
        }
        case CW_HARDIRQ_EXIT: set(hold(ts, tid, f.irq_exit.id, cpu), f.irq_exit.irq, irq); return;
        case CW_SOFTIRQ_ENTER: {
          Held& h = hold(ts, tid, f.softirq_enter.id, cpu);
          set(h, f.softirq_enter.vec, irq);
          if (r->irq >= 0)
            set_str(h, f.softirq_enter.name, naming_.softirq(static_cast<uint32_t>(r->irq)));
          return;
        }
        case CW_SOFTIRQ_EXIT:
          set(hold(ts, tid, f.softirq_exit.id, cpu), f.softirq_exit.vec, irq);
          return;
      }
      return bad();
    }
    case CW_REC_SIGNAL: {
      // A recorder before `cause_tid` wrote the record without its last 8 bytes.
      constexpr size_t without_cause = offsetof(cw_rec_signal, cause_tid);
      if (size < without_cause) return bad();
      const auto* r = static_cast<const cw_rec_signal*>(record);
      const uint32_t cause = size >= sizeof(cw_rec_signal) ? r->cause_tid : 0;
      auto sig = static_cast<uint64_t>(static_cast<int64_t>(r->sig));
      if (r->op == CW_SIGNAL_GENERATE) {
        note_thread(r->target_tid, r->target_pid);
        Held& h = hold(ts, tid, f.signal_send.id, cpu);
        set(h, f.signal_send.target, r->target_tid);
        set(h, f.signal_send.sig, sig);
        if (cause != 0) set(h, f.signal_send.cause, cause);
      } else if (r->op == CW_SIGNAL_DELIVER) {
        set(hold(ts, tid, f.signal_deliver.id, cpu), f.signal_deliver.sig, sig);
      } else {
        bad();
      }
      return;
    }
    case CW_REC_STACK:
    case CW_REC_USTACK:
    case CW_REC_KSTACK: {
      // One whose time was released already: what it names, older still, came or never will.
      const bool final = early_count_ >= kMaxEarly || hdr->ts <= released_upto_;
      uint64_t owner = kNoOwner;
      if (attach_stack(record, size, final, &owner)) {
        retry_early_stacks(tid);  // it may be the stack a waiting one repeats
        return;
      }
      const auto* bytes = static_cast<const uint8_t*>(record);
      early_stacks_[tid].push_back({std::vector<uint8_t>(bytes, bytes + size), owner});
      ++early_count_;
      return;
    }
    case CW_REC_SHORT_WAITS: {
      const auto* r = as<cw_rec_short_waits>(record, size);
      if (!r) return bad();
      Held& h = hold(ts, tid, f.short_waits.id, cpu);
      set(h, f.short_waits.since, r->since);
      set(h, f.short_waits.count, r->count);
      set(h, f.short_waits.total_ns, r->total_ns);
      set(h, f.short_waits.uninterruptible_ns, r->uninterruptible_ns);
      set(h, f.short_waits.waker, r->waker_tid);
      set(h, f.short_waits.preempted, r->preempted);
      set(h, f.short_waits.runnable_ns, r->runnable_ns);
      if (r->waker_tid != 0) note_thread(r->waker_tid, 0);
      return;
    }
    case CW_REC_SAMPLE: {
      const auto* r = as<cw_rec_sample>(record, size);
      if (!r) return bad();
      Held& h = hold(ts, tid, f.sample.id, cpu);
      set_str(h, f.sample.event, "cpu-clock");
      set(h, f.sample.period, r->period);
      h.seq = ts;
      last_sample_[tid] = {ts, h.order};
      ++stats_.samples;
      retry_early_stacks(tid);
      return;
    }
    case CW_REC_CALL: {
      const auto* r = as<cw_rec_call>(record, size);
      if (!r || r->fn_index >= instrument_.functions.size()) return bad();
      const std::string& fn = instrument_.functions[r->fn_index];
      if (r->is_exit) {
        set_str(hold(ts, tid, f.call_exit.id, cpu), f.call_exit.fn, fn);
      } else {
        Held& h = hold(ts, tid, f.call_enter.id, cpu);
        set_str(h, f.call_enter.fn, fn);
        set(h, f.call_enter.addr, r->address);
      }
      return;
    }
    case CW_REC_FLAG: {
      const auto* r = as<cw_rec_flag>(record, size);
      if (!r || r->flag_index >= instrument_.flags.size() || r->insn_len > CW_INSN_BEFORE)
        return bad();
      bool write = false;
      switch (r->access) {
        case CW_FLAG_READ: break;
        case CW_FLAG_WRITE: write = true; break;
        case CW_FLAG_UNKNOWN: {
          int how = instrument_.classify_watch_hit
                        ? instrument_.classify_watch_hit({r->insn, r->insn_len}, r->ip, r->addr)
                        : 0;
          write = how == 2 || how == 3;
          if (!write && how != 1) ++stats_.watch_hits_unclassified;
          break;
        }
        default: return bad();
      }
      ++flag_hits_[{hdr->pid, r->flag_index}];
      const EventFields::Flag& k = write ? f.flag_write : f.flag_read;
      Held& h = hold(ts, tid, k.id, cpu);
      set_str(h, k.flag, instrument_.flags[r->flag_index]);
      set(h, k.addr, r->addr);
      set(h, k.value, r->value);
      return;
    }
    default: return bad();
  }
}

namespace {

// Sorts `keys`, which are mostly ascending runs (a CPU's blocks, a nested writer's records
// sent before the ones they interrupted): the runs merged pairwise, or a plain sort when
// there are many.
template <typename Key, typename Less>
void sort_nearly_sorted(std::vector<Key>& keys, Less less) {
  std::vector<size_t> starts{0};
  for (size_t i = 1; i < keys.size(); ++i)
    if (less(keys[i], keys[i - 1])) {
      starts.push_back(i);
      if (starts.size() > 64 + keys.size() / 64) {
        std::sort(keys.begin(), keys.end(), less);
        return;
      }
    }
  starts.push_back(keys.size());
  for (size_t width = 1; width + 1 < starts.size(); width *= 2)
    for (size_t i = 0; i + width + 1 < starts.size(); i += 2 * width) {
      const size_t end = starts[std::min(i + 2 * width, starts.size() - 1)];
      std::inplace_merge(keys.begin() + static_cast<ptrdiff_t>(starts[i]),
                         keys.begin() + static_cast<ptrdiff_t>(starts[i + width]),
                         keys.begin() + static_cast<ptrdiff_t>(end), less);
    }
}

}  // namespace

size_t RecordDecoder::release(uint64_t horizon) {
  drop_early_stacks(horizon);
  released_upto_ = std::max(released_upto_, horizon);
  unwind_pending();
  auto by_time = [](const TimeKey& a, const TimeKey& b) {
    return a.ts != b.ts ? a.ts < b.ts : a.order < b.order;
  };
  // What arrived since the last release came a CPU's block at a time, each CPU's records
  // in time order: split by CPU, each part is (nearly always) sorted already, and merging
  // the parts with what is still waiting costs a few passes, not a sort.
  for (auto& part : runs_) part.clear();
  for (uint64_t o = keyed_; o < order_; ++o) {
    const Held& h = held_at(o);
    const size_t part = h.cpu % kSortParts;
    if (runs_.size() <= part) runs_.resize(part + 1);
    runs_[part].push_back({h.ts, o});
  }
  keyed_ = order_;
  size_t parts = 0;
  for (auto& part : runs_) {
    if (part.empty()) continue;
    sort_nearly_sorted(part, by_time);
    std::swap(runs_[parts++], part);
  }
  if (runs_.size() <= parts) runs_.resize(parts + 1);
  std::swap(runs_[parts++], waiting_);
  // Pairwise, so that many CPUs cost log(CPUs) passes.
  for (size_t width = 1; width < parts; width *= 2)
    for (size_t i = 0; i + width < parts; i += 2 * width) {
      merged_.resize(runs_[i].size() + runs_[i + width].size());
      std::merge(runs_[i].begin(), runs_[i].end(), runs_[i + width].begin(), runs_[i + width].end(),
                 merged_.begin(), by_time);
      std::swap(runs_[i], merged_);
    }
  std::swap(merged_, runs_[0]);
  auto ready_end = std::upper_bound(merged_.begin(), merged_.end(), horizon,
                                    [](uint64_t h, const TimeKey& k) { return h < k.ts; });
  size_t n = static_cast<size_t>(ready_end - merged_.begin());
  for (auto it = merged_.begin(); it != ready_end; ++it) {
    Held& h = held_at(it->order);
    Event& e = trace_.add_event(h.ts, h.tid, h.kind, h.cpu, h.stack);
    for (uint8_t f = 0; f < h.nvalues; ++f) trace_.value_ref(e, f) = h.values[f];
    h.released = true;
  }
  waiting_.assign(ready_end, merged_.end());
  while (!held_.empty() && held_.front().released) {
    held_.pop_front();
    ++base_;
  }
  // An event stamped far ahead of the rest keeps everything after it in held_: then
  // keep only what is waiting.
  if (held_.size() > 4 * waiting_.size() + 65536) compact_held();
  // A stack arriving later finds its syscall entry or sample only while it is held.
  std::erase_if(last_enters_, [&](const auto& kv) {
    return std::none_of(kv.second.slots.begin(), kv.second.slots.end(), [&](const auto& slot) {
      return slot.first != 0 && still_held(slot.second);
    });
  });
  std::erase_if(last_sample_, [&](const auto& kv) { return !still_held(kv.second.second); });
  forget_exited(horizon);
  return n;
}

void RecordDecoder::compact_held() {
  // Arrival numbers of the events kept, ascending: old number -> base_ + position.
  std::vector<uint64_t> kept;
  std::vector<Held> still;
  for (uint64_t o = base_; o < order_; ++o) {
    Held& h = held_at(o);
    if (h.released) continue;
    kept.push_back(o);
    still.push_back(h);
  }
  auto renumber = [&](uint64_t old) {
    auto it = std::lower_bound(kept.begin(), kept.end(), old);
    return it != kept.end() && *it == old ? base_ + static_cast<uint64_t>(it - kept.begin())
                                          : UINT64_MAX;
  };
  for (TimeKey& k : waiting_) k.order = renumber(k.order);
  for (auto& [tid, entry] : last_sample_) entry.second = renumber(entry.second);
  for (auto& [tid, enters] : last_enters_)
    for (auto& slot : enters.slots) slot.second = renumber(slot.second);
  for (auto& [order, bytes] : pending_unwind_) order = renumber(order);
  for (auto& [tid, waiting] : early_stacks_)
    for (EarlyStack& e : waiting)
      if (e.owner != kNoOwner) e.owner = renumber(e.owner);
  held_.clear();
  for (size_t i = 0; i < still.size(); ++i) {
    still[i].order = base_ + i;
    held_.emplace_back() = still[i];
  }
  order_ = keyed_ = base_ + held_.size();
}

}  // namespace cw
