// Typed constructors for the builtin event kinds, on top of the EventQueue. Field
// positions are looked up by name once, so the generator follows the schema.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "bench/event_queue.h"
#include "trace/trace.h"

namespace cw::bench {

// Where an event happens: a thread on a CPU at a time.
struct At {
  uint64_t ts;
  Tid tid;
  uint16_t cpu;
};

struct SyscallArgs {
  int64_t fd = -1;
  uint64_t resource = 0;
  StrId op = 0;
  uint64_t value = 0;
  uint64_t count = 0;
  int64_t timeout_ns = -1;
  StackId stack = 0;
};

class EventBuilder {
 public:
  EventBuilder(EventQueue& queue, Trace& tables);

  StrId str(std::string_view s) { return tables_.strings.intern(s); }
  // A stack from frames written outermost first (the folded-stack order).
  StackId stack(std::initializer_list<std::string_view> outermost_first);

  void switch_out(At at, char state);
  void switch_in(At at);
  void wakeup(At at, Tid target);
  void wakeup_new(At at, Tid target);
  void fork(At at, Tid child, Pid child_pid, bool thread);
  void thread_start(At at, Tid parent);
  void exec(At at, StrId path);
  void exit(At at, int64_t code);
  void syscall_enter(At at, StrId name, const SyscallArgs& args);
  void syscall_exit(At at, StrId name, int64_t ret);
  void send(At at, uint64_t object, uint64_t offset, uint64_t len, int64_t peer, int64_t fd);
  void recv(At at, uint64_t object, uint64_t offset, uint64_t len, int64_t peer, int64_t fd);
  void ready(At at, int64_t fd, uint64_t object, uint64_t events);
  void timer_arm(At at, uint64_t timer, uint64_t expires_ns, uint64_t interval_ns);
  void timer_fire(At at, uint64_t timer);
  void irq_enter(At at, int64_t irq, StrId name);
  void irq_exit(At at, int64_t irq);
  void softirq_enter(At at, int64_t vec, StrId name);
  void softirq_exit(At at, int64_t vec);
  void call_enter(At at, StrId fn, uint64_t addr);
  void call_exit(At at, StrId fn);
  void task_post(At at, uint64_t task, StrId queue);
  void task_begin(At at, uint64_t task, StrId queue);
  void task_end(At at, uint64_t task);
  void input(At at, StrId device, int64_t code);

  uint64_t pushed() const { return pushed_; }
  uint64_t sends() const { return sends_; }

 private:
  // A kind and where the values it is built with go among its fields.
  struct KindSlots {
    KindId id = kNoKind;
    uint8_t field_count = 0;
    std::array<int8_t, kMaxFields> slot{};
  };
  KindSlots resolve(std::string_view kind, std::initializer_list<std::string_view> fields);
  void push(const KindSlots& k, At at, std::initializer_list<uint64_t> values, StackId stack = 0);

  EventQueue& queue_;
  Trace& tables_;
  uint64_t pushed_ = 0;
  uint64_t sends_ = 0;
  KindSlots switch_out_, switch_in_, wakeup_, wakeup_new_, fork_, thread_start_, exec_, exit_,
      syscall_enter_, syscall_exit_, send_, recv_, ready_, timer_arm_, timer_fire_, irq_enter_,
      irq_exit_, softirq_enter_, softirq_exit_, call_enter_, call_exit_, task_post_, task_begin_,
      task_end_, input_;
};

}  // namespace cw::bench
