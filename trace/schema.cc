#include "trace/schema.h"

#include <stdexcept>

namespace cw {

std::string_view field_type_name(FieldType t) {
  switch (t) {
    case FieldType::Int: return "int";
    case FieldType::Uint: return "uint";
    case FieldType::Str: return "str";
    case FieldType::Tid: return "tid";
  }
  return "?";
}

namespace {

using F = FieldType;

KindDef kind(std::string name, std::string doc, std::vector<FieldDef> fields,
             SpanRole role = SpanRole::None, std::string span = {}) {
  return KindDef{std::move(name), std::move(fields), role, std::move(span), std::move(doc)};
}

Schema make_builtin() {
  Schema s;
  // Scheduling. A thread's execution is the time between switch_in and switch_out.
  s.add(kind("switch_out", "the thread left its CPU",
             {{"state", F::Str, "task state when leaving: R (preempted), S, D, T, X..."}}));
  s.add(kind("switch_in", "the thread got a CPU", {}));
  s.add(kind("wakeup", "the current thread made `target` runnable (sched_waking)",
             {{"target", F::Tid, "the woken thread"},
              {"interrupt", F::Int,
               "1: an interrupt handler that happened to run on this thread's CPU did it (a "
               "timer's expiry, a device), not the thread"},
              {"cause", F::Tid,
               "the thread on whose behalf an interrupt raised it: the owner of the timer "
               "that expired (the event is that thread's when the interrupt found its CPU "
               "idle); 0 when none is known"},
              {"delivers", F::Int,
               "1: raised inside a send on a stream (socket, pipe, eventfd) whose bytes the "
               "recording left out (record --calls scheduler writes no transfer a wake-up "
               "explains): the wake-up delivered them"}}));
  s.add(kind("wakeup_new", "the current thread made a new thread runnable",
             {{"target", F::Tid, "the new thread"}}));

  // Life cycle.
  s.add(kind("fork", "the current thread created a process or thread",
             {{"child", F::Tid, "the new thread"},
              {"child_pid", F::Int, "the new thread's process", FieldRole::Task},
              {"thread", F::Int, "1 when the child shares the address space (a thread)"}}));
  s.add(kind("thread_start", "the first event of a new thread", {{"parent", F::Tid, "creator"}}));
  s.add(kind("exec", "the process replaced its image", {{"path", F::Str, "executable"}}));
  // What the kernel does after it (closing the thread's files, notifying its parent) is
  // inside span "exit", which never closes: rules tell the exit's wake-ups (a pipe's
  // hang-up) from the thread's own.
  s.add(kind("exit",
             "the thread ended; what it does after (closing its files, notifying its "
             "parent) is inside span `exit`",
             {{"code", F::Int, "exit status"}}, SpanRole::Open, "exit"));
  s.add(kind("comm", "the thread was renamed", {{"name", F::Str, "new name"}}));

  // System calls: a span named "syscall".
  s.add(kind(
      "syscall_enter", "the thread entered a system call",
      {{"name", F::Str, "system call name"},
       {"fd", F::Int, "file descriptor argument, or -1"},
       {"resource", F::Uint, "wait resource: futex address, inode, object id", FieldRole::Identity},
       {"op", F::Str, "operation (futex op, epoll op, ...)"},
       {"value", F::Uint,
        "operation value (futex val, signal, flock operation, F_SETLK lock type, ...)"},
       {"count", F::Uint, "byte count or number of items"},
       {"timeout_ns", F::Int, "timeout in ns, -1 for none"}},
      SpanRole::Open, "syscall"));
  s.add(kind("syscall_exit", "the thread returned from a system call",
             {{"name", F::Str, "system call name"},
              {"ret", F::Int,
               "return value; -9223372036854775808 when it was not recorded (a call taken at "
               "the scheduler: record --calls scheduler)"}},
             SpanRole::Close, "syscall"));

  // Communication on a stream (socket, pipe, eventfd): matched by byte offset.
  s.add(kind("send", "bytes written to a stream",
             {{"object", F::Uint, "stream identity (the same at both ends)", FieldRole::Identity},
              {"offset", F::Uint, "stream byte offset of the first byte"},
              {"len", F::Uint, "number of bytes"},
              {"peer", F::Int, "process at the other end, or -1", FieldRole::Task},
              {"fd", F::Int, "file descriptor"},
              {"queued", F::Int,
               "1: the bytes waited in the stream, no wake-up handed them to a reader waiting "
               "for them (record --calls scheduler writes only such transfers); 0 when not "
               "known"}}));
  s.add(kind("recv", "bytes read from a stream",
             {{"object", F::Uint, "stream identity (the same at both ends)", FieldRole::Identity},
              {"offset", F::Uint, "stream byte offset of the first byte"},
              {"len", F::Uint, "number of bytes"},
              {"peer", F::Int, "process at the other end, or -1", FieldRole::Task},
              {"fd", F::Int, "file descriptor"},
              {"queued", F::Int,
               "1: the bytes waited in the stream, no wake-up handed them to a reader waiting "
               "for them (record --calls scheduler writes only such transfers); 0 when not "
               "known"}}));
  s.add(kind("ready", "a polled descriptor was reported ready",
             {{"fd", F::Int, "file descriptor"},
              {"object", F::Uint, "object identity", FieldRole::Identity},
              {"events", F::Uint, "ready event mask"}}));

  // Timers.
  s.add(kind("timer_arm", "a timer was armed",
             {{"timer", F::Uint, "timer identity", FieldRole::Identity},
              {"expires_ns", F::Uint, "absolute expiry, CLOCK_MONOTONIC", FieldRole::Time},
              {"interval_ns", F::Uint, "period, 0 for one-shot"}}));
  s.add(kind("timer_fire", "a timer expired",
             {{"timer", F::Uint, "timer identity", FieldRole::Identity}}));
  s.add(kind("timer_cancel", "a timer was disarmed",
             {{"timer", F::Uint, "timer identity", FieldRole::Identity}}));

  // Interrupt context on a thread: spans "irq" and "softirq".
  s.add(kind("irq_enter", "a hardware interrupt interrupted the thread",
             {{"irq", F::Int, "interrupt number"}, {"name", F::Str, "handler name"}},
             SpanRole::Open, "irq"));
  s.add(kind("irq_exit", "the interrupt handler returned", {{"irq", F::Int, "interrupt number"}},
             SpanRole::Close, "irq"));
  s.add(kind("softirq_enter", "a softirq ran on the thread",
             {{"vec", F::Int, "softirq vector"}, {"name", F::Str, "vector name"}}, SpanRole::Open,
             "softirq"));
  s.add(kind("softirq_exit", "the softirq finished", {{"vec", F::Int, "softirq vector"}},
             SpanRole::Close, "softirq"));

  // Signals.
  s.add(kind("signal_send", "a signal was sent",
             {{"target", F::Tid, "receiving thread"},
              {"sig", F::Int, "signal number"},
              {"cause", F::Tid,
               "the thread on whose behalf an interrupt raised it: the owner of the timer "
               "that expired; 0 when none is known"}}));
  s.add(kind("signal_deliver", "a signal was delivered", {{"sig", F::Int, "signal number"}}));

  // In-process instrumentation: function boundaries (span "call"), data flags, tasks.
  s.add(kind("call_enter", "an instrumented function was entered",
             {{"fn", F::Str, "function name"}, {"addr", F::Uint, "function address"}},
             SpanRole::Open, "call"));
  s.add(kind("call_exit", "an instrumented function returned", {{"fn", F::Str, "function name"}},
             SpanRole::Close, "call"));
  s.add(kind("flag_write", "a data flag was written",
             {{"flag", F::Str, "flag name from its pack"},
              {"addr", F::Uint, "address", FieldRole::Identity},
              {"value", F::Uint, "value written"}}));
  s.add(kind("flag_read", "a data flag was read",
             {{"flag", F::Str, "flag name from its pack"},
              {"addr", F::Uint, "address", FieldRole::Identity},
              {"value", F::Uint, "value read"}}));
  s.add(kind(
      "task_post", "work was queued for another thread",
      {{"task", F::Uint, "task identity", FieldRole::Identity}, {"queue", F::Str, "queue name"}}));
  s.add(kind(
      "task_begin", "a queued task started running",
      {{"task", F::Uint, "task identity", FieldRole::Identity}, {"queue", F::Str, "queue name"}},
      SpanRole::Open, "task"));
  s.add(kind("task_end", "a queued task finished",
             {{"task", F::Uint, "task identity", FieldRole::Identity}}, SpanRole::Close, "task"));

  // Hangs still in progress when the recording ended (recorder/end_state.h): who holds what
  // a thread was still waiting for (a file lock, a mutex). Both come at the recording's end.
  s.add(kind("lock_held",
             "at the end of the recording, this thread held a lock a recorded thread was "
             "still waiting for",
             {{"object", F::Uint, "the lock: inode of a locked file, address of a mutex",
               FieldRole::Identity},
              {"waiter", F::Tid, "the waiting thread"},
              {"lock", F::Str, "what kind of lock, e.g. FLOCK WRITE (/proc/locks) or the rule"}}));
  s.add(kind("lock_wait", "at the end of the recording, this thread was still waiting for a lock",
             {{"object", F::Uint, "the lock: inode of a locked file, address of a mutex",
               FieldRole::Identity},
              {"holder", F::Int, "the holding thread (-1: an OFD lock, owned by an open file)",
               FieldRole::Task}}));

  // User-visible semantics.
  s.add(kind("marker", "a marker written by `causeway mark` or the application",
             {{"text", F::Str, "marker text"}}));
  s.add(kind("input", "a user input event (key press, click)",
             {{"device", F::Str, "device"}, {"code", F::Int, "key or button code"}}));

  // Sampling: where a thread was while it ran, with no call boundary or wait implied.
  // Added last, so the kinds before it keep their ids (files map kinds by name anyway).
  s.add(kind("sample",
             "the thread was seen at its `stack` by a sampling profiler (perf's cpu-clock), "
             "or by an imported event that has no kind of its own",
             {{"event", F::Str, "the event that took it: cpu-clock, cycles, a tracepoint"},
              {"period", F::Int,
               "the event's period: ns of CPU time for cpu-clock, events counted for a "
               "counter, 0 when not known"}}));
  // Waits too short to write one by one (record --min-wait), counted: the thread's
  // switches and wake-ups for them are not in the trace, so it seems to run through them.
  s.add(kind(
      "short_waits",
      "the thread waited `count` times, each shorter than the shortest wait the "
      "recording writes, `total_ns` in all, between `since` and this event",
      {{"since", F::Int, "when the first of those waits began (ns, the trace's clock)"},
       {"count", F::Int, "how many waits"},
       {"total_ns", F::Int, "their time in all"},
       {"uninterruptible_ns", F::Int,
        "of that time, in the kernel's uninterruptible sleep (state D: a device, a "
        "disk write's completion)"},
       {"waker", F::Tid, "the thread that ended the last of them that slept; 0 for an interrupt"},
       {"preempted", F::Int,
        "of those waits, how many were preemptions: the thread stayed runnable (state "
        "R) until it got a CPU again"},
       {"runnable_ns", F::Int, "of that time, preempted"}}));
  return s;
}

}  // namespace

const Schema& Schema::builtin() {
  static const Schema schema = make_builtin();
  return schema;
}

KindId Schema::find(std::string_view name) const {
  for (size_t i = 0; i < kinds_.size(); ++i)
    if (kinds_[i].name == name) return static_cast<KindId>(i);
  return kNoKind;
}

int Schema::field_index(KindId id, std::string_view field) const {
  const auto& fields = kinds_.at(id).fields;
  for (size_t i = 0; i < fields.size(); ++i)
    if (fields[i].name == field) return static_cast<int>(i);
  return -1;
}

KindId Schema::span_opener(std::string_view span) const {
  for (size_t i = 0; i < kinds_.size(); ++i)
    if (kinds_[i].span_role == SpanRole::Open && kinds_[i].span == span)
      return static_cast<KindId>(i);
  return kNoKind;
}

KindId Schema::span_closer(std::string_view span) const {
  for (size_t i = 0; i < kinds_.size(); ++i)
    if (kinds_[i].span_role == SpanRole::Close && kinds_[i].span == span)
      return static_cast<KindId>(i);
  return kNoKind;
}

std::vector<std::string> Schema::span_names() const {
  std::vector<std::string> out;
  for (const auto& k : kinds_)
    if (k.span_role == SpanRole::Open) out.push_back(k.span);
  return out;
}

KindId Schema::add(KindDef def) {
  if (kinds_.size() >= kNoKind) throw std::length_error("too many event kinds");
  kinds_.push_back(std::move(def));
  return static_cast<KindId>(kinds_.size() - 1);
}

}  // namespace cw
