#include "trace/trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <unordered_set>

#include "trace/thread_moves.h"

namespace cw {

StringTable::StringTable() {
  intern("");
}

StrId StringTable::intern(std::string_view s) {
  if (auto it = index_.find(s); it != index_.end()) return it->second;
  if (strings_.size() >= kMissing) throw std::length_error("string table full");
  strings_.emplace_back(s);
  auto id = static_cast<StrId>(strings_.size() - 1);
  index_.emplace(strings_.back(), id);
  return id;
}

StrId StringTable::find(std::string_view s) const {
  auto it = index_.find(s);
  return it == index_.end() ? kMissing : it->second;
}

Event& Trace::add_event(uint64_t ts, Tid tid, KindId kind, uint16_t cpu, StackId stack) {
  const auto nfields = schema.kind(kind).fields.size();
  if (values.size() + nfields > 0xffffffffull) throw std::length_error("trace value array full");
  Event e{ts, tid, kind, cpu, static_cast<uint32_t>(values.size()), stack};
  values.resize(values.size() + nfields, 0);
  events.push_back(e);
  return events.back();
}

std::vector<Frame> frames_of(const Stack& s) {
  if (!s.frames.empty()) return s.frames;
  std::vector<Frame> out(s.ips.size());
  for (size_t i = 0; i < s.ips.size(); ++i) {
    out[i].ip = s.ips[i];
    out[i].function = i < s.symbols.size() ? s.symbols[i] : 0;
    out[i].kernel = i < s.kernel;
  }
  return out;
}

std::string frame_name(const StringTable& strings, const Frame& f) {
  if (f.function) return std::string(strings.get(f.function));
  if (f.module) return fmt::format("{}+{:#x}", strings.get(f.module), f.offset);
  return fmt::format("{:#x}", f.ip);
}

std::string frame_text(const StringTable& strings, const Frame& f) {
  std::string out = frame_name(strings, f);
  if (f.file && f.line)
    fmt::format_to(std::back_inserter(out), " ({}:{})", strings.get(f.file), f.line);
  return out;
}

StackId Trace::add_stack(Stack s) {
  // Read from a file, a stack does not say where its kernel frames end; their addresses
  // do: the kernel lives in the upper half of the address space (x86-64, arm64), user
  // code never does, and the kernel's frames come first.
  if (s.kernel == 0)
    while (s.kernel < s.ips.size() && s.ips[s.kernel] >= kKernelAddressStart) ++s.kernel;
  stacks.push_back(std::move(s));
  return static_cast<StackId>(stacks.size() - 1);
}

const ThreadInfo* Trace::thread(Tid tid) const {
  auto it = thread_index_.find(tid);
  return it == thread_index_.end() ? nullptr : &threads[it->second];
}

const ProcessInfo* Trace::process(Pid pid) const {
  auto it = process_index_.find(pid);
  return it == process_index_.end() ? nullptr : &processes[it->second];
}

Pid Trace::pid_of(Tid tid) const {
  const ThreadInfo* t = thread(tid);
  return t ? t->pid : 0;
}

void Trace::sort_events() {
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.ts < b.ts; });
}

void Trace::rebuild_indexes() {
  thread_index_.clear();
  process_index_.clear();
  for (uint32_t i = 0; i < threads.size(); ++i) thread_index_[threads[i].tid] = i;
  for (uint32_t i = 0; i < processes.size(); ++i) process_index_[processes[i].pid] = i;
}

std::optional<ThreadMove> find_unexplained_thread_move(const Trace& trace) {
  std::unordered_map<Tid, Pid> pid_of;
  std::optional<std::unordered_set<uint64_t>> forks;  // (tid << 32 | pid) of fork children
  for (size_t i = 0; i < trace.threads.size(); ++i) {
    const ThreadInfo& t = trace.threads[i];
    auto [it, fresh] = pid_of.try_emplace(t.tid, t.pid);
    if (fresh || it->second == t.pid) continue;
    const Pid before = it->second;
    it->second = t.pid;
    if (before == 0) continue;
    if (!forks) {
      forks.emplace();
      const KindId fork = trace.schema.find("fork");
      const int child = fork == kNoKind ? -1 : trace.schema.field_index(fork, "child");
      const int child_pid = fork == kNoKind ? -1 : trace.schema.field_index(fork, "child_pid");
      if (child >= 0 && child_pid >= 0)
        for (const Event& e : trace.events)
          if (e.kind == fork)
            forks->insert((trace.value(e, child) & 0xffffffffu) << 32 |
                          (trace.value(e, child_pid) & 0xffffffffu));
    }
    if (!forks->count(uint64_t{t.tid} << 32 | t.pid)) return ThreadMove{i, before};
  }
  return std::nullopt;
}

std::string_view loss_kind_name(LossKind kind) {
  switch (kind) {
    case LossKind::HookLog: return "hook_log";
    case LossKind::SwitchUnreported: return "switches_unreported";
    case LossKind::Maps: return "maps";
    case LossKind::WatchpointSilent: return "watchpoints_silent";
  }
  return "";
}

std::optional<LossKind> loss_kind_from_name(std::string_view name) {
  for (LossKind k : kLossKinds)
    if (loss_kind_name(k) == name) return k;
  return std::nullopt;
}

uint64_t Trace::losses_of(LossKind kind) const {
  uint64_t n = 0;
  for (const LossRecord& l : losses)
    if (l.kind == kind) n += l.count;
  return n;
}

uint64_t Trace::lost_events() const {
  uint64_t n = 0;
  for (const auto& l : lost) n += l.count;
  return n;
}

}  // namespace cw
