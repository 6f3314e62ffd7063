// Inline hooks on real code of this process (prologue_shapes_test.S): every prologue shape
// hooked returns what it returned before and records its entry and exit; refused shapes say
// why; 8 threads keep calling a function while its hook is installed and removed.
#include "instrument/hook/inline_hook.h"

#include <doctest/doctest.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include "base/temp_dir.h"
#include "instrument/hook/elf_symbols.h"
#include "instrument/hook/event_log.h"
#include "instrument/hook/hook_log_reader.h"
#include "instrument/hook/patcher.h"
#include "instrument/hook/thread_park.h"
#include "instrument/hook/thread_state.h"

extern "C" {
int shape_frame(int);
int shape_rip_load(int);
int shape_rip_lea(int);
int shape_rip_store(int);
int shape_short_jmp(int);
int shape_call(int);
int shape_jcc(int);
int shape_endbr(int);
long shape_sub_rsp(long);
int shape_jmp_rel32(int);
long shape_stack_args(long, long, long, long, long, long, long, long);
double shape_double(double);
long shape_blocking_read(long fd, void* buffer, unsigned long size);
int shape_ret();
int shape_xor_ret();
int shape_loop(int, int);
int shape_int3();
int shape_jrcxz();
int shape_register_keeper();
int shape_tail_call(int);
int shape_loop_to_entry(int);
extern int shape_last;
}

using namespace cw::hook;

namespace {

HookTarget target(const char* name, uint32_t index) {
  FoundFunction found;
  REQUIRE_MESSAGE(find_function(name, nullptr, &found) == Lookup::kFound, name);
  return {reinterpret_cast<void*>(found.address), static_cast<size_t>(found.size), index};
}

// A fresh event log in a temporary directory for the test's events.
struct Recording {
  cw::TempDir dir{"cw-hook-test"};
  explicit Recording(uint64_t file_bytes = uint64_t{256} << 20) {
    EventLogOptions options;
    options.file_bytes = file_bytes;
    char reason[256] = {};
    REQUIRE_MESSAGE(open_event_log(dir.path().c_str(), options, reason, sizeof reason), reason);
  }
  std::vector<HookEvent> events() {
    HookLogReader reader(dir.path());
    std::vector<HookEvent> all;
    reader.poll([&](const HookEvent& e) { all.push_back(e); });
    return all;
  }
};

Hooked install_or_fail(const HookTarget& t) {
  std::string refusal;
  auto hooked = install_hook(t, &refusal);
  REQUIRE_MESSAGE(hooked, refusal);
  return *hooked;
}

void remove_or_fail(const Hooked& hooked) {
  std::string error;
  REQUIRE_MESSAGE(remove_hook(hooked, &error), error);
}

std::string refusal_of(const HookTarget& t) {
  std::string refusal;
  auto hooked = install_hook(t, &refusal);
  if (hooked) remove_or_fail(*hooked);
  CHECK_FALSE(hooked);
  return refusal;
}

// printf into a std::string; addresses as unsigned long for %lx.
template <typename... Args>
std::string text(const char* format, Args... args) {
  char out[512];
  snprintf(out, sizeof out, format, args...);
  return out;
}

unsigned long at(const void* address) {
  return reinterpret_cast<unsigned long>(address);
}

int gettid_now() {
  return static_cast<int>(gettid());
}

// Checks one thread's events are well nested (each exit closes the latest open entry of
// the same function) and returns the entries per function index.
std::map<uint32_t, int> check_nesting(const std::vector<HookEvent>& events, uint32_t tid,
                                      bool allow_open_at_end = false) {
  std::vector<uint32_t> open;
  std::map<uint32_t, int> entries;
  uint64_t last_ts = 0;
  for (const HookEvent& e : events) {
    if (e.tid != tid) continue;
    CHECK(e.ts >= last_ts);
    last_ts = e.ts;
    if (!e.exit) {
      open.push_back(e.fn_index);
      ++entries[e.fn_index];
    } else {
      REQUIRE_FALSE(open.empty());
      CHECK(open.back() == e.fn_index);
      open.pop_back();
    }
  }
  if (!allow_open_at_end) CHECK(open.empty());
  return entries;
}

}  // namespace

TEST_CASE("each hookable prologue shape returns the same results and records entry and exit") {
  Recording recording;
  struct Shape {
    const char* name;
    int (*call)(int);
  };
  auto sub_rsp = [](int x) { return static_cast<int>(shape_sub_rsp(x)); };
  const Shape shapes[] = {
      {"shape_frame", shape_frame},
      {"shape_rip_load", shape_rip_load},
      {"shape_rip_lea", shape_rip_lea},
      {"shape_rip_store", shape_rip_store},
      {"shape_short_jmp", shape_short_jmp},
      {"shape_call", shape_call},
      {"shape_jcc", shape_jcc},
      {"shape_endbr", shape_endbr},
      {"shape_sub_rsp", +sub_rsp},
      {"shape_jmp_rel32", shape_jmp_rel32},
  };
  const int inputs[] = {-5, 0, 1, 42, 100000};
  uint32_t index = 100;
  std::map<uint32_t, const Shape*> by_index;
  for (const Shape& shape : shapes) {
    CAPTURE(shape.name);
    std::vector<int> expected;
    for (int x : inputs) expected.push_back(shape.call(x));
    const HookTarget t = target(shape.name, index);
    auto* code = static_cast<const uint8_t*>(t.address);
    const std::vector<uint8_t> original(code, code + 8);
    Hooked hooked = install_or_fail(t);
    CHECK(code[0] == 0xe9);  // the jump is in place
    for (size_t i = 0; i < std::size(inputs); ++i) CHECK(shape.call(inputs[i]) == expected[i]);
    if (shape.call == shape_rip_store) CHECK(shape_last == inputs[std::size(inputs) - 1]);
    remove_or_fail(hooked);
    CHECK(std::vector<uint8_t>(code, code + 8) == original);
    for (size_t i = 0; i < std::size(inputs); ++i) CHECK(shape.call(inputs[i]) == expected[i]);
    by_index[index++] = &shape;
  }
  const std::vector<HookEvent> events = recording.events();
  const auto entries = check_nesting(events, static_cast<uint32_t>(gettid_now()));
  for (const auto& [fn, shape] : by_index) {
    CAPTURE(shape->name);
    CHECK(entries.count(fn) == 1);
    if (entries.count(fn)) CHECK(entries.at(fn) == static_cast<int>(std::size(inputs)));
  }
  for (const HookEvent& e : events) {
    const HookTarget t = target(by_index.at(e.fn_index)->name, e.fn_index);
    CHECK(e.address == reinterpret_cast<uint64_t>(t.address));
    CHECK(e.pid == static_cast<uint32_t>(getpid()));
  }
}

TEST_CASE("stack arguments and vector registers reach the hooked function untouched") {
  Recording recording;
  Hooked stack = install_or_fail(target("shape_stack_args", 1));
  Hooked vector = install_or_fail(target("shape_double", 2));
  CHECK(shape_stack_args(1, 2, 3, 4, 5, 6, 7, 8) == 78);
  CHECK(shape_stack_args(0, 0, 0, 0, 0, 0, -3, 5) == -25);
  CHECK(shape_double(1.25) == 2.5);
  CHECK(shape_double(-3.5) == -7.0);
  remove_or_fail(stack);
  remove_or_fail(vector);
  const auto entries = check_nesting(recording.events(), static_cast<uint32_t>(gettid_now()));
  CHECK(entries.at(1) == 2);
  CHECK(entries.at(2) == 2);
}

TEST_CASE("a hooked call leaves every register as the function leaves it") {
  CHECK(shape_register_keeper() == 1);
  Recording recording;  // fresh: the first event takes the slow path (a chunk claim)
  Hooked hooked = install_or_fail(target("shape_leaf", 12));
  for (int i = 0; i < 1000; ++i) REQUIRE(shape_register_keeper() == 1);
  cw_hook_thread.busy = 1;  // the pass-through path too
  CHECK(shape_register_keeper() == 1);
  cw_hook_thread.busy = 0;
  remove_or_fail(hooked);
  CHECK(check_nesting(recording.events(), static_cast<uint32_t>(gettid_now())).at(12) == 1000);
}

TEST_CASE("unhookable shapes are refused with a message") {
  CHECK(refusal_of(target("shape_ret", 1)) ==
        text("the function at 0x%lx is 1 bytes long, shorter than the 5-byte jump",
             at(reinterpret_cast<void*>(shape_ret))));
  CHECK(refusal_of(target("shape_xor_ret", 1)) ==
        text("the function at 0x%lx is 3 bytes long, shorter than the 5-byte jump",
             at(reinterpret_cast<void*>(shape_xor_ret))));
  HookTarget unknown_size = target("shape_xor_ret", 1);
  unknown_size.size_hint = 0;
  CHECK(refusal_of(unknown_size) ==
        text("the function at 0x%lx returns at +2, within the 5 bytes the jump needs",
             at(reinterpret_cast<void*>(shape_xor_ret))));
  const unsigned long loop = at(reinterpret_cast<void*>(shape_loop));
  CHECK(refusal_of(target("shape_loop", 1)) ==
        text("'jne 0x%lx' at 0x%lx (+6) jumps back to +2, inside the 6 bytes the jump replaces",
             loop + 2, loop + 6));
  CHECK(shape_loop(3, 4) == 12);  // untouched
  CHECK(refusal_of(target("shape_int3", 1)) ==
        text("int3 at 0x%lx (+0) cannot be relocated: a breakpoint or probe is there",
             at(reinterpret_cast<void*>(shape_int3))));
  const unsigned long jrcxz = at(reinterpret_cast<void*>(shape_jrcxz));
  CHECK(refusal_of(target("shape_jrcxz", 1)) ==
        text("'jrcxz 0x%lx' at 0x%lx (+0) cannot be relocated: it has no 32-bit displacement "
             "form",
             jrcxz + 8, jrcxz));
  static const int data = 0;
  CHECK(refusal_of({const_cast<int*>(&data), 0, 1}) ==
        text("0x%lx is not in executable memory", at(&data)));
}

TEST_CASE(
    "a hooked function cannot be hooked twice, nor inside its jump; a removed hook cannot be "
    "removed again") {
  Hooked hooked = install_or_fail(target("shape_frame", 7));
  CHECK(refusal_of(target("shape_frame", 8)) == text("0x%lx is already hooked (function index 7)",
                                                     at(reinterpret_cast<void*>(shape_frame))));
  CHECK(refusal_of({reinterpret_cast<uint8_t*>(shape_frame) + 2, 0, 9}) ==
        text("0x%lx is inside the bytes the hook at 0x%lx replaced",
             at(reinterpret_cast<uint8_t*>(shape_frame) + 2),
             at(reinterpret_cast<void*>(shape_frame))));
  remove_or_fail(hooked);
  std::string error;
  CHECK_FALSE(remove_hook(hooked, &error));
  CHECK(error == "hook " + std::to_string(hooked.id) + " is not installed");
}

TEST_CASE("8 threads calling the function while its hook is installed and removed") {
  // Generous: 8 busy threads on a loaded machine may wait for a CPU to take the signal.
  set_park_timeout_ms(5000);
  struct Case {
    const char* name;
    int (*call)(int);
  };
  // shape_rip_load's jump straddles two 8-byte words; shape_jcc's is one atomic store.
  for (const Case& c : {Case{"shape_rip_load", shape_rip_load}, Case{"shape_jcc", shape_jcc}}) {
    const std::string name = c.name;
    CAPTURE(name);
    Recording recording;
    const HookTarget t = target(c.name, 9);
    std::atomic<bool> stop{false};
    std::atomic<long> wrong{0}, calls{0};
    std::vector<std::thread> workers;
    std::vector<uint32_t> tids(8);
    for (int w = 0; w < 8; ++w)
      workers.emplace_back([&, w] {
        tids[w] = static_cast<uint32_t>(gettid_now());
        long mine = 0;
        for (int i = 0; !stop.load(std::memory_order_relaxed); ++i, ++mine) {
          const int x = (i + w * 7919) % 100000;
          const int want = c.call == shape_rip_load ? x + 1000 : x + 1;
          if (c.call(x) != want) wrong.fetch_add(1);
        }
        calls.fetch_add(mine);
      });
    const int cycles = 200;
    for (int cycle = 0; cycle < cycles; ++cycle) {
      Hooked hooked = install_or_fail(t);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      remove_or_fail(hooked);
    }
    stop = true;
    for (auto& worker : workers) worker.join();
    CHECK(wrong.load() == 0);
    MESSAGE(name << ": " << calls.load() << " calls by 8 threads over " << cycles
                 << " install/remove cycles");
    HookLogReader reader(recording.dir.path());
    std::vector<HookEvent> events;
    reader.poll([&](const HookEvent& e) { events.push_back(e); });
    const bool lost = reader.lost() > 0;
    size_t hooked_calls = 0;
    for (uint32_t tid : tids) {
      // Every recorded entry has its exit, even when the hook went away meanwhile: a
      // full log may cut a thread's events short, never in the middle.
      const auto entries = check_nesting(events, tid, lost);
      if (entries.count(9)) hooked_calls += static_cast<size_t>(entries.at(9));
    }
    CHECK(hooked_calls > 0);
  }
  set_park_timeout_ms(1000);
}

TEST_CASE("a thread stopped inside the patched bytes continues in the trampoline") {
  int pipe_fds[2];
  REQUIRE(pipe(pipe_fds) == 0);
  std::atomic<long> result{-100};
  char byte = 0;
  std::thread reader([&] { result = shape_blocking_read(pipe_fds[0], &byte, 1); });
  // Wait until the thread is blocked in the read, i.e. inside shape_blocking_read's first
  // five bytes (the syscall at +2).
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const uint64_t moved_before = threads_moved();
  Hooked hooked = install_or_fail(target("shape_blocking_read", 3));
  CHECK(threads_moved() == moved_before + 1);
  // Still blocked, now in the trampoline; removing the hook leaves it there.
  remove_or_fail(hooked);
  CHECK(result.load() == -100);
  REQUIRE(write(pipe_fds[1], "x", 1) == 1);
  reader.join();
  CHECK(result.load() == 1);
  CHECK(byte == 'x');
  close(pipe_fds[0]);
  close(pipe_fds[1]);
}

TEST_CASE("a thread that blocks the signal makes the install fail, naming it") {
  set_park_timeout_ms(200);
  std::atomic<int> tid{0};
  std::atomic<bool> done{false};
  std::thread blocker([&] {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    tid = gettid_now();
    while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  });
  while (!tid) std::this_thread::yield();
  const HookTarget t = target("shape_frame", 4);
  const std::vector<uint8_t> original(static_cast<uint8_t*>(t.address),
                                      static_cast<uint8_t*>(t.address) + 5);
  std::string refusal = refusal_of(t);
  const std::string prefix = "thread " + std::to_string(tid.load()) + " blocks signal ";
  CHECK(refusal.substr(0, prefix.size()) == prefix);
  CHECK(refusal.find(", so it cannot be stopped for patching") != std::string::npos);
  CHECK(std::vector<uint8_t>(static_cast<uint8_t*>(t.address),
                             static_cast<uint8_t*>(t.address) + 5) == original);
  CHECK(shape_frame(3) == 15);
  done = true;
  blocker.join();
  set_park_timeout_ms(1000);
  // With the thread gone, hooking works again.
  remove_or_fail(install_or_fail(t));
}

extern "C" long shape_call_through(void (*)(void*), void*);

namespace {
jmp_buf escape;
void jump_out(void*) {
  longjmp(escape, 1);
}
void call_inner_then_jump(void*) {
  if (setjmp(escape) == 0) shape_call_through(jump_out, nullptr);
  // Back here after the inner hooked frame was skipped by longjmp.
}
}  // namespace

TEST_CASE("longjmp out of a hooked frame: the outer hooked frame still returns correctly") {
  Recording recording;
  Hooked hooked = install_or_fail(target("shape_call_through", 5));
  CHECK(shape_call_through(call_inner_then_jump, nullptr) == 77);
  CHECK(cw_hook_thread.depth == 0);
  CHECK(shape_frame(2) == 10);
  remove_or_fail(hooked);
  std::vector<bool> kinds;
  for (const HookEvent& e : recording.events())
    if (e.tid == static_cast<uint32_t>(gettid_now())) kinds.push_back(e.exit);
  // outer entry, inner entry, outer exit: the skipped frame has no exit.
  CHECK(kinds == std::vector<bool>{false, false, true});
}

namespace {
// (function index, exit) of this thread's events.
std::vector<std::pair<uint32_t, bool>> sequence(const std::vector<HookEvent>& events) {
  std::vector<std::pair<uint32_t, bool>> out;
  for (const HookEvent& e : events)
    if (e.tid == static_cast<uint32_t>(gettid_now())) out.emplace_back(e.fn_index, e.exit);
  return out;
}
}  // namespace

TEST_CASE("a tail call from a hooked function into another records both exits, in order") {
  Recording recording;
  Hooked caller = install_or_fail(target("shape_tail_call", 13));
  Hooked callee = install_or_fail(target("shape_frame", 14));
  CHECK(shape_tail_call(2) == 15);
  remove_or_fail(caller);
  remove_or_fail(callee);
  using Step = std::pair<uint32_t, bool>;
  CHECK(sequence(recording.events()) ==
        std::vector<Step>{{13, false}, {14, false}, {14, true}, {13, true}});
}

TEST_CASE("a loop back to the function's first byte records each pass as a call") {
  Recording recording;
  Hooked hooked = install_or_fail(target("shape_loop_to_entry", 15));
  CHECK(shape_loop_to_entry(3) == 7);
  remove_or_fail(hooked);
  using Step = std::pair<uint32_t, bool>;
  CHECK(
      sequence(recording.events()) ==
      std::vector<Step>{{15, false}, {15, false}, {15, false}, {15, true}, {15, true}, {15, true}});
  CHECK(cw_hook_thread.depth == 0);
}

TEST_CASE("a call while the thread is inside hook code passes straight through") {
  Recording recording;
  Hooked hooked = install_or_fail(target("shape_frame", 6));
  cw_hook_thread.busy = 1;  // as if a signal handler interrupted the stub
  CHECK(shape_frame(4) == 20);
  cw_hook_thread.busy = 0;
  CHECK(shape_frame(5) == 25);
  remove_or_fail(hooked);
  const auto entries = check_nesting(recording.events(), static_cast<uint32_t>(gettid_now()));
  CHECK(entries.at(6) == 1);
}

namespace {
std::atomic<long> handler_wrong{0}, handler_calls{0};
void call_from_handler(int) {
  const int saved = errno;
  if (shape_jcc(41) != 42) ++handler_wrong;
  ++handler_calls;
  errno = saved;
}
}  // namespace

TEST_CASE("hooked calls from a signal handler interrupting hooked calls stay nested") {
  Recording recording;
  Hooked outer = install_or_fail(target("shape_frame", 10));
  Hooked inner = install_or_fail(target("shape_jcc", 11));
  struct sigaction action {};
  action.sa_handler = call_from_handler;
  sigaction(SIGALRM, &action, nullptr);
  itimerval every{{0, 50}, {0, 50}};  // as often as the kernel will
  setitimer(ITIMER_REAL, &every, nullptr);
  long wrong = 0;
  for (int i = 0; i < 2000000 && handler_calls < 2000; ++i)
    if (shape_frame(i % 1000) != (i % 1000) * 5) ++wrong;
  itimerval off{};
  setitimer(ITIMER_REAL, &off, nullptr);
  signal(SIGALRM, SIG_DFL);
  remove_or_fail(outer);
  remove_or_fail(inner);
  CHECK(wrong == 0);
  CHECK(handler_wrong == 0);
  MESSAGE(handler_calls.load() << " hooked calls from the signal handler");
  HookLogReader reader(recording.dir.path());
  std::vector<HookEvent> events;
  reader.poll([&](const HookEvent& e) { events.push_back(e); });
  const auto entries =
      check_nesting(events, static_cast<uint32_t>(gettid_now()), reader.lost() > 0);
  CHECK(entries.count(10));
  CHECK(entries.count(11));
}

namespace {
void call_two_from_handler(int) {
  const int saved = errno;
  if (shape_frame(3) != 15 || shape_jcc(41) != 42) ++handler_wrong;
  ++handler_calls;
  errno = saved;
}
}  // namespace

TEST_CASE("signals arriving while a hook is installed and removed wait for the patch") {
  Recording recording;
  // shape_frame stays hooked; its stub shares a page with shape_jcc's, which each install
  // makes writable for a moment: a handler must not run then.
  const HookTarget jcc = target("shape_jcc", 16);
  Hooked frame = install_or_fail(target("shape_frame", 17));
  handler_calls = 0;
  handler_wrong = 0;
  struct sigaction action {};
  action.sa_handler = call_two_from_handler;
  sigaction(SIGALRM, &action, nullptr);
  itimerval every{{0, 20}, {0, 20}};
  setitimer(ITIMER_REAL, &every, nullptr);
  for (int cycle = 0; cycle < 500; ++cycle) remove_or_fail(install_or_fail(jcc));
  itimerval off{};
  setitimer(ITIMER_REAL, &off, nullptr);
  signal(SIGALRM, SIG_DFL);
  remove_or_fail(frame);
  CHECK(handler_wrong == 0);
  CHECK(handler_calls > 0);
  MESSAGE(handler_calls.load() << " signals handled during 500 install/remove cycles");
}
