// Signatures: the same bug in another run (other pids, tids, times, addresses) has the
// same one; another root cause, another wait or another program version has another.
#include "engine/fleet/signature.h"

#include <doctest/doctest.h>

#include <string>

#include "engine/diagnosis/diagnose.h"
#include "engine/fleet/hang_row.h"
#include "engine/graph/test_support.h"

namespace cw::fleet {
namespace {

using engine::testing::build;

const char* const kRules = R"(
split wait.entry {
  at syscall_enter
  where name in ["read", "clock_nanosleep", "futex"]
  cut before
  neighbour weak
}
link lock.wait {
  from lock_held
  to lock_wait
  join from.object == to.object
  where from.waiter == to.tid
  pick latest
}
edge lock.holder { link lock.wait strength strong kind holder }
)";

// cw-waiter's worker-1 blocks on a mutex that cw-owner holds while it sleeps (or, with
// `owner_call` read, while it reads); the recording ends with both blocked. Every number
// that differs between runs is a parameter.
std::string frozen(int pid, int waiter, int owner, int shift_ms, const std::string& address,
                   const std::string& owner_call = "clock_nanosleep",
                   const std::string& build_id = "5eed") {
  auto t = [&](int ms) { return std::to_string(ms + shift_ms) + "ms"; };
  const std::string p = std::to_string(pid), w = std::to_string(waiter), o = std::to_string(owner);
  return "process " + p + " comm=cw-app\n" +                         //
         "thread " + p + " pid=" + p + " comm=cw-app\n" +            //
         "thread " + w + " pid=" + p + " comm=worker-" + w + "\n" +  //
         "thread " + o + " pid=" + p + " comm=cw-owner\n" +          //
         "map " + p + " 0x400000-0x500000 0x0 /usr/bin/cw-app build_id=" + build_id + "\n" + t(1) +
         " " + w + " switch_in\n" +         //
         t(1) + " " + o + " switch_in\n" +  //
         t(5) + " " + o + " syscall_enter name=" + owner_call +
         " stack=main@0x401000;hold@0x401100\n" +    //
         t(5) + " " + o + " switch_out state=S\n" +  //
         t(10) + " " + w + " syscall_enter name=futex op=wait resource=" + address +
         " stack=main@0x401000;run@0x401200;lock_it@0x401300;__lll_lock_wait@0x402000;" +
         "futex_wait@0xffffffff81000000\n" +          //
         t(10) + " " + w + " switch_out state=S\n" +  //
         t(2000) + " " + o + " lock_held object=" + address + " waiter=" + w +
         " lock=\"owner (glibc.pthread/mutex.owner)\"\n" +  //
         std::to_string(2000 + shift_ms) + "000001 " + w + " lock_wait object=" + address +
         " holder=" + o + "\n";
}

struct Signed {
  HangSummary summary;
  std::string text, id;
};

// The diagnosis of the hang of thread `hung` (its name) in the trace.
Signed sign(const std::string& trace_text, const std::string& hung) {
  auto b = build(kRules, trace_text);
  engine::DiagnoseOptions options;
  options.symptom.thread_name = hung;
  engine::Diagnosis d = engine::diagnose(b.trace, b.result, b.rules, options);
  engine::ThreadEvents events(b.trace);
  Signed s;
  s.summary = summarize(b.trace, b.graph(), events, d);
  s.text = signature_text(s.summary);
  s.id = signature_id(s.text);
  return s;
}

TEST_CASE("a hang's summary names the program, its wait, the root cause and the path") {
  const Signed s = sign(frozen(101, 103, 102, 0, "0x1000"), "worker-103");
  CHECK(s.summary.program == "cw-app");
  CHECK(s.summary.exe == "cw-app");
  CHECK(s.summary.version == "5eed");
  CHECK(s.summary.hang_kind == "LongWait");
  CHECK(s.summary.hang_wait == "futex, ended by holder");
  // Innermost first, the kernel's frame left out.
  CHECK(s.summary.hang_stack ==
        std::vector<std::string>{"__lll_lock_wait", "lock_it", "run", "main"});
  CHECK(s.summary.root_program == "cw-owner");
  CHECK(s.summary.root_kind == "LongWait");
  CHECK(s.summary.root_call == "clock_nanosleep");
  CHECK(s.summary.path_shape == "cw-owner -> worker-#");
  CHECK(s.id.size() == 16);
  CHECK(s.text.find("103") == std::string::npos);
}

TEST_CASE("another run of the same bug has the same signature") {
  const Signed a = sign(frozen(101, 103, 102, 0, "0x1000"), "worker-103");
  // Other pids and tids (so another worker name), 40 s later, the lock at another address.
  const Signed b = sign(frozen(4242, 4250, 4243, 40000, "0x7f00deadbeef"), "worker-4250");
  CHECK(a.text == b.text);
  CHECK(a.id == b.id);
}

TEST_CASE("another root cause's call or another version is another signature") {
  const Signed a = sign(frozen(101, 103, 102, 0, "0x1000"), "worker-103");
  const Signed reading = sign(frozen(101, 103, 102, 0, "0x1000", "read"), "worker-103");
  CHECK(reading.summary.root_call == "read");
  CHECK(reading.id != a.id);
  const Signed upgraded =
      sign(frozen(101, 103, 102, 0, "0x1000", "clock_nanosleep", "beef"), "worker-103");
  CHECK(upgraded.summary.version == "beef");
  CHECK(upgraded.id != a.id);
}

TEST_CASE("digits in names are one #") {
  CHECK(without_digits("worker-17") == "worker-#");
  CHECK(without_digits("kworker/0:12-events") == "kworker/#:#-events");
  CHECK(without_digits("python3.11") == "python#.#");
  CHECK(without_digits("nginx") == "nginx");
}

TEST_CASE("a stack's names skip the kernel, fold repeats and stop at the limit") {
  auto b = build(kRules,
                 "process 1 comm=a\nthread 1 pid=1 comm=a\n"
                 "1ms 1 syscall_enter name=read stack=main;loop;loop;work;"
                 "read@0xffffffff81000000\n");
  const StackId stack = b.trace.events.back().stack;
  CHECK(stack_names(b.trace, stack) == std::vector<std::string>{"work", "loop", "main"});
  CHECK(stack_names(b.trace, stack, 2) == std::vector<std::string>{"work", "loop"});
}

TEST_CASE("a stack's names end where a return address is in no mapped file") {
  // Two walks of one wait through code without frame pointers: past the call, words that
  // were never return addresses (a heap pointer, then whatever the next "frame" held),
  // different in each recording of the same hang.
  auto b = build(kRules,
                 "process 1 comm=a\nthread 1 pid=1 comm=a\n"
                 "1ms 1 syscall_enter name=poll stack=0x7ffd1000;event_loop;0x55d0a000;poll\n"
                 "2ms 1 syscall_enter name=poll stack=0x55e1b000;poll\n");
  const auto& events = b.trace.events;
  const std::vector<std::string> want{"poll"};
  CHECK(stack_names(b.trace, events[events.size() - 2].stack) == want);
  CHECK(stack_names(b.trace, events.back().stack) == want);
}

TEST_CASE("a row keeps the summary and reads back from its JSON") {
  HangRow row;
  row.host = "db-7";
  row.trace = "/var/lib/t.cwt";
  row.recorded_at = 1'700'000'000;
  row.hang_start = 1.25;
  row.hang_seconds = 2.5;
  row.summary.program = "cw-app";
  row.summary.hang_stack = {"poll", "main"};
  row.summary.root_stack = {};
  row.questions = 2;
  row.queries = "[]";
  row.signature = "0123456789abcdef";
  row.diagnosed_at = 1'700'000'100;
  const nlohmann::json j = row_json(row);
  CHECK(j.size() == columns().size());
  for (const Column& c : columns()) CHECK_MESSAGE(j.contains(std::string(c.name)), c.name);
  const HangRow back = row_from_json(j);
  CHECK(row_json(back) == j);
  nlohmann::json broken = j;
  broken.erase("signature");
  CHECK_THROWS_WITH_AS(row_from_json(broken), "column 'signature' is missing or not a string",
                       std::invalid_argument);
}

}  // namespace
}  // namespace cw::fleet
