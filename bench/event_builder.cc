#include "bench/event_builder.h"

#include <stdexcept>
#include <string>

namespace cw::bench {

EventBuilder::EventBuilder(EventQueue& queue, Trace& tables) : queue_(queue), tables_(tables) {
  switch_out_ = resolve("switch_out", {"state"});
  switch_in_ = resolve("switch_in", {});
  wakeup_ = resolve("wakeup", {"target"});
  wakeup_new_ = resolve("wakeup_new", {"target"});
  fork_ = resolve("fork", {"child", "child_pid", "thread"});
  thread_start_ = resolve("thread_start", {"parent"});
  exec_ = resolve("exec", {"path"});
  exit_ = resolve("exit", {"code"});
  syscall_enter_ =
      resolve("syscall_enter", {"name", "fd", "resource", "op", "value", "count", "timeout_ns"});
  syscall_exit_ = resolve("syscall_exit", {"name", "ret"});
  send_ = resolve("send", {"object", "offset", "len", "peer", "fd"});
  recv_ = resolve("recv", {"object", "offset", "len", "peer", "fd"});
  ready_ = resolve("ready", {"fd", "object", "events"});
  timer_arm_ = resolve("timer_arm", {"timer", "expires_ns", "interval_ns"});
  timer_fire_ = resolve("timer_fire", {"timer"});
  irq_enter_ = resolve("irq_enter", {"irq", "name"});
  irq_exit_ = resolve("irq_exit", {"irq"});
  softirq_enter_ = resolve("softirq_enter", {"vec", "name"});
  softirq_exit_ = resolve("softirq_exit", {"vec"});
  call_enter_ = resolve("call_enter", {"fn", "addr"});
  call_exit_ = resolve("call_exit", {"fn"});
  task_post_ = resolve("task_post", {"task", "queue"});
  task_begin_ = resolve("task_begin", {"task", "queue"});
  task_end_ = resolve("task_end", {"task"});
  input_ = resolve("input", {"device", "code"});
}

EventBuilder::KindSlots EventBuilder::resolve(std::string_view kind,
                                              std::initializer_list<std::string_view> fields) {
  const Schema& schema = tables_.schema;
  KindSlots k;
  k.id = schema.find(kind);
  if (k.id == kNoKind) throw std::logic_error("schema has no kind " + std::string(kind));
  const size_t count = schema.kind(k.id).fields.size();
  if (count > kMaxFields)
    throw std::logic_error("kind " + std::string(kind) + " has too many fields");
  k.field_count = static_cast<uint8_t>(count);
  int i = 0;
  for (std::string_view f : fields) {
    const int index = schema.field_index(k.id, f);
    if (index < 0)
      throw std::logic_error("kind " + std::string(kind) + " has no field " + std::string(f));
    k.slot[i++] = static_cast<int8_t>(index);
  }
  return k;
}

void EventBuilder::push(const KindSlots& k, At at, std::initializer_list<uint64_t> values,
                        StackId stack) {
  PendingEvent e;
  e.ts = at.ts;
  e.tid = at.tid;
  e.kind = k.id;
  e.cpu = at.cpu;
  e.stack = stack;
  e.field_count = k.field_count;
  int i = 0;
  for (uint64_t v : values) e.values[k.slot[i++]] = v;
  queue_.push(e);
  ++pushed_;
}

StackId EventBuilder::stack(std::initializer_list<std::string_view> outermost_first) {
  Stack s;
  for (auto it = std::rbegin(outermost_first); it != std::rend(outermost_first); ++it) {
    // Stable fake return addresses: a text-segment-like address per symbol.
    const uint64_t ip = 0x7f0000000000ull + (std::hash<std::string_view>{}(*it) & 0xffffff0ull);
    s.ips.push_back(ip);
    s.symbols.push_back(str(*it));
  }
  return tables_.add_stack(std::move(s));
}

static uint64_t u(int64_t v) {
  return static_cast<uint64_t>(v);
}

void EventBuilder::switch_out(At at, char state) {
  const char text[2] = {state, 0};
  push(switch_out_, at, {str(text)});
}
void EventBuilder::switch_in(At at) {
  push(switch_in_, at, {});
}
void EventBuilder::wakeup(At at, Tid target) {
  push(wakeup_, at, {target});
}
void EventBuilder::wakeup_new(At at, Tid target) {
  push(wakeup_new_, at, {target});
}
void EventBuilder::fork(At at, Tid child, Pid child_pid, bool thread) {
  push(fork_, at, {child, child_pid, thread ? 1u : 0u});
}
void EventBuilder::thread_start(At at, Tid parent) {
  push(thread_start_, at, {parent});
}
void EventBuilder::exec(At at, StrId path) {
  push(exec_, at, {path});
}
void EventBuilder::exit(At at, int64_t code) {
  push(exit_, at, {u(code)});
}
void EventBuilder::syscall_enter(At at, StrId name, const SyscallArgs& a) {
  push(syscall_enter_, at, {name, u(a.fd), a.resource, a.op, a.value, a.count, u(a.timeout_ns)},
       a.stack);
}
void EventBuilder::syscall_exit(At at, StrId name, int64_t ret) {
  push(syscall_exit_, at, {name, u(ret)});
}
void EventBuilder::send(At at, uint64_t object, uint64_t offset, uint64_t len, int64_t peer,
                        int64_t fd) {
  push(send_, at, {object, offset, len, u(peer), u(fd)});
  ++sends_;
}
void EventBuilder::recv(At at, uint64_t object, uint64_t offset, uint64_t len, int64_t peer,
                        int64_t fd) {
  push(recv_, at, {object, offset, len, u(peer), u(fd)});
}
void EventBuilder::ready(At at, int64_t fd, uint64_t object, uint64_t events) {
  push(ready_, at, {u(fd), object, events});
}
void EventBuilder::timer_arm(At at, uint64_t timer, uint64_t expires_ns, uint64_t interval_ns) {
  push(timer_arm_, at, {timer, expires_ns, interval_ns});
}
void EventBuilder::timer_fire(At at, uint64_t timer) {
  push(timer_fire_, at, {timer});
}
void EventBuilder::irq_enter(At at, int64_t irq, StrId name) {
  push(irq_enter_, at, {u(irq), name});
}
void EventBuilder::irq_exit(At at, int64_t irq) {
  push(irq_exit_, at, {u(irq)});
}
void EventBuilder::softirq_enter(At at, int64_t vec, StrId name) {
  push(softirq_enter_, at, {u(vec), name});
}
void EventBuilder::softirq_exit(At at, int64_t vec) {
  push(softirq_exit_, at, {u(vec)});
}
void EventBuilder::call_enter(At at, StrId fn, uint64_t addr) {
  push(call_enter_, at, {fn, addr});
}
void EventBuilder::call_exit(At at, StrId fn) {
  push(call_exit_, at, {fn});
}
void EventBuilder::task_post(At at, uint64_t task, StrId queue) {
  push(task_post_, at, {task, queue});
}
void EventBuilder::task_begin(At at, uint64_t task, StrId queue) {
  push(task_begin_, at, {task, queue});
}
void EventBuilder::task_end(At at, uint64_t task) {
  push(task_end_, at, {task});
}
void EventBuilder::input(At at, StrId device, int64_t code) {
  push(input_, at, {device, u(code)});
}

}  // namespace cw::bench
