#include "engine/latency/infer.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <map>

#include "engine/latency/latency_test_support.h"
#include "trace/perf_script.h"

namespace cw::latency {
namespace {

using testing::app_trace;
using testing::kFigure3;

constexpr uint64_t ms = 1'000'000;

// "name@depth conservative/aggressive" of each instance, in the order they ended.
std::vector<std::string> instances(const Profile& p) {
  std::vector<std::string> out;
  for (const auto& in : p.instances) {
    const CctNode& n = p.cct.node(in.node);
    out.push_back(p.cct.function_name(n.function) + "@" + std::to_string(n.depth) + " " +
                  std::to_string(in.latency(Mode::Conservative) / ms) + "/" +
                  std::to_string(in.latency(Mode::Aggressive) / ms));
  }
  return out;
}

TEST_CASE("Figure 3: a context change ends every frame above it, conservatively and aggressively") {
  const Profile p = infer(app_trace(kFigure3), {}, {.keep_instances = true});
  // At 3 ms C replaces B: B and the D under it end (last seen 2 ms, replaced at 3 ms).
  // At 4 ms the stack is one frame shorter: the D under C ends. The rest ends with the
  // thread, at its last event (4 ms).
  CHECK(instances(p) == std::vector<std::string>{"D@4 1/2", "B@3 1/2", "D@4 0/1", "C@3 1/1",
                                                 "A@2 3/3", "[app]@1 3/3"});
  CHECK(p.stacks == 4);
  CHECK(p.threads == 1);
  // Without keeping instances the tree holds the same sums.
  const Profile sums = infer(app_trace(kFigure3), {});
  CHECK(sums.instances.empty());
  REQUIRE(sums.cct.node_count() == p.cct.node_count());
  for (NodeId v = 0; v < p.cct.node_count(); ++v)
    CHECK(sums.cct.node(v).total.aggressive == p.cct.node(v).total.aggressive);
  CHECK(p.frames == 11);
  CHECK(p.unnamed_frames == 0);
}

TEST_CASE("a span opened with a stack keeps its context until it closes") {
  // read blocks from 1 to 9 ms; only its entry has a stack. Its exit is the same context
  // again, so read's conservative latency is the 8 ms it blocked, not 0.
  const Profile p = infer(app_trace("1ms 11 syscall_enter name=read stack=main;load;read\n"
                                    "2ms 11 switch_out state=S\n"
                                    "9ms 11 switch_in\n"
                                    "9ms 11 syscall_exit name=read ret=0\n"
                                    "10ms 11 syscall_enter name=write stack=main;save;write\n"
                                    "10ms 11 syscall_exit name=write ret=1\n"),
                          {}, {.keep_instances = true});
  CHECK(instances(p) == std::vector<std::string>{"read@4 8/9", "load@3 8/9", "write@4 0/0",
                                                 "save@3 0/0", "main@2 9/9", "[app]@1 9/9"});
  CHECK(p.stacks == 2);
  CHECK(p.span_ends == 2);
  CHECK(p.frames == 6);
}

// `perf record -g -e cpu-clock -F 1000` of main() calling fast() for 3 ms, then slow()
// for 6 ms: a sample every 1 ms, each with its call chain.
std::string perf_samples() {
  std::string out;
  auto sample = [&](int at_ms, const char* leaf) {
    out += fmt::format("prog 7 [000] 100.{:03}000: 1000000 cpu-clock:\n", at_ms);
    out += fmt::format("\t1{} {}+0x4 (/bin/prog)\n", leaf[0] == 'f' ? 0 : 1, leaf);
    out += "\t200 main+0x10 (/bin/prog)\n\t300 __libc_start_call_main+0x7a (libc.so.6)\n\n";
  };
  for (int t = 1; t <= 3; ++t) sample(t, "fast");
  for (int t = 4; t <= 9; ++t) sample(t, "slow");
  return out;
}

TEST_CASE("samples from perf script: a function sampled continuously is one long instance") {
  const Trace t = parse_perf_script(make_source("out.txt", perf_samples()));
  const Profile p = infer(t, {}, {.keep_instances = true});
  // fast is seen at 1..3 ms (conservative 2 ms; aggressive to slow's first sample, 3 ms),
  // slow at 4..9 ms, the thread's last event (5 ms either way).
  CHECK(instances(p) == std::vector<std::string>{"fast@4 2/3", "slow@4 5/5", "main@3 8/8",
                                                 "__libc_start_call_main@2 8/8", "[prog]@1 8/8"});
  CHECK(p.stacks == 9);
  CHECK(p.threads == 1);
}

TEST_CASE("the same function under another caller is another node: D twice") {
  const Profile p = infer(app_trace(kFigure3), {});
  std::map<std::string, int> nodes_per_function;
  for (NodeId v = 1; v < p.cct.node_count(); ++v)
    ++nodes_per_function[p.cct.function_name(p.cct.node(v).function)];
  CHECK(nodes_per_function["D"] == 2);
  CHECK(nodes_per_function["A"] == 1);
  // Two distinct stacks ended in a leaf and one ended at C: three path ids.
  CHECK(p.cct.path_count() == 3);
}

TEST_CASE("a signal handler's context begins at the signal, wherever it interrupted") {
  // The same handler's work, once interrupting select and once sigprocmask: a process
  // forked from a handler (a server's workers) keeps such frames for its whole life.
  Trace t = app_trace(
      "1ms 11 syscall_enter name=read stack=main;select;__restore_rt;handler;work\n"
      "2ms 11 syscall_enter name=read stack=main;sigprocmask;__restore_rt;handler;work\n"
      "3ms 11 syscall_enter name=read stack=main;sigprocmask\n");
  // What symbolisation marks from the trampoline's unwind information (trace/symbolize.h).
  for (Stack& s : t.stacks) {
    s.frames = frames_of(s);
    for (Frame& f : s.frames) f.signal = t.strings.get(f.function) == "__restore_rt";
  }
  const Profile p = infer(t, {});
  std::vector<NodeId> work;
  for (NodeId v = 1; v < p.cct.node_count(); ++v)
    if (p.cct.function_name(p.cct.node(v).function) == "work") work.push_back(v);
  REQUIRE(work.size() == 1);
  CHECK(p.cct.names_to(work[0]) ==
        std::vector<std::string>{"[app]", "[signal handler]", "handler", "work"});
  // One instance from the first stack to the second (conservatively), or to the third.
  CHECK(p.cct.node(work[0]).total.conservative == 1 * ms);
  CHECK(p.cct.node(work[0]).total.aggressive == 2 * ms);
}

TEST_CASE("a stack seen again gets the path id it had") {
  Cct cct;
  const FunctionId a = cct.intern("a"), b = cct.intern("b");
  const std::vector<FunctionId> ab{a, b}, ba{b, a};
  const PathId first = cct.path_id(ab);
  CHECK(cct.path_id(ba) != first);
  CHECK(cct.path_id(ab) == first);
  CHECK(cct.names_to(cct.path_end(first)) == std::vector<std::string>{"a", "b"});
}

TEST_CASE("normalisation leaves each node its own time; totals, not means") {
  // main runs 29 ms in one instance; work runs ten instances inside it, each seen by two
  // stacks 1 ms apart and ended by a stack in main alone 1 ms later.
  std::string body;
  for (int i = 0; i < 10; ++i) {
    body += std::to_string(3 * i) + "ms 11 syscall_enter name=read stack=main;work\n";
    body += std::to_string(3 * i + 1) + "ms 11 syscall_enter name=read stack=main;work\n";
    body += std::to_string(3 * i + 2) + "ms 11 syscall_enter name=read stack=main\n";
  }
  const Profile p = infer(app_trace(body), {});
  const Cct& cct = p.cct;
  NodeId main_node = 0, work_node = 0;
  for (NodeId v = 1; v < cct.node_count(); ++v) {
    if (cct.function_name(cct.node(v).function) == "main") main_node = v;
    if (cct.function_name(cct.node(v).function) == "work") work_node = v;
  }
  REQUIRE(main_node != 0);
  REQUIRE(work_node != 0);
  CHECK(cct.node(work_node).instances == 10);
  CHECK(cct.node(work_node).total.conservative == 10 * ms);
  CHECK(cct.node(work_node).total.aggressive == 20 * ms);
  CHECK(cct.node(main_node).instances == 1);
  CHECK(cct.node(main_node).total.conservative == 29 * ms);
  // Its callee's ten instances are subtracted whole: 29 - 10 and 29 - 20 ms. With the
  // means (29 ms and 1 ms) main would keep 28 ms of which 10 were work's.
  CHECK(cct.node(main_node).own.conservative == 19 * ms);
  CHECK(cct.node(main_node).own.aggressive == 9 * ms);
  CHECK(cct.node(work_node).own.conservative == 10 * ms);
}

TEST_CASE("frames without a symbol are named by address; a selection keeps its threads") {
  const Trace t = parse_text_trace(make_source("t.trace",
                                               "causeway-trace 1\n"
                                               "process 10 comm=app\n"
                                               "thread 11 pid=10 comm=app\n"
                                               "process 20 comm=other\n"
                                               "thread 21 pid=20 comm=other\n"
                                               "1ms 11 syscall_enter name=read stack=main;0x4010\n"
                                               "2ms 21 syscall_enter name=read stack=main\n"
                                               "3ms 11 syscall_enter name=read stack=main\n"));
  const Profile all = infer(t, {});
  CHECK(all.threads == 2);
  CHECK(all.unnamed_frames == 1);
  const Profile one = infer(t, Selection{Pid{20}, std::nullopt});
  CHECK(one.threads == 1);
  CHECK(one.stacks == 1);
  const Profile named = infer(t, Selection{std::nullopt, std::string("app")});
  CHECK(named.threads == 1);
  CHECK(named.stacks == 2);
  bool by_address = false;
  for (NodeId v = 1; v < named.cct.node_count(); ++v)
    by_address |= named.cct.function_name(named.cct.node(v).function) == "0x4010";
  CHECK(by_address);
}

TEST_CASE("a process tree: the process and its descendants, not the rest of the machine") {
  const Trace t = parse_text_trace(make_source("t.trace",
                                               "causeway-trace 1\n"
                                               "process 10 comm=sh\n"
                                               "thread 10 pid=10 comm=sh\n"
                                               "process 20 comm=app ppid=10\n"
                                               "thread 20 pid=20 comm=app\n"
                                               "process 30 comm=jit\n"
                                               "thread 30 pid=30 comm=jit\n"
                                               "1ms 10 syscall_enter name=wait4 stack=main\n"
                                               "2ms 20 syscall_enter name=read stack=main\n"
                                               "3ms 30 syscall_enter name=read stack=main\n"));
  Selection tree;
  tree.tree = Pid{10};
  const Profile p = infer(t, tree);
  CHECK(p.threads == 2);
  CHECK(p.stacks == 2);
  CHECK(infer(t, {}).threads == 3);
}

TEST_CASE("a stretch of one thread: only its stacks count; functions summed over contexts") {
  const Trace t = app_trace(
      "1ms 11 syscall_enter name=read stack=main;parse;lex\n"
      "2ms 11 syscall_enter name=read stack=main;parse;lex\n"
      "3ms 11 syscall_enter name=read stack=main;eval;lex\n"
      "6ms 11 syscall_enter name=read stack=main;eval;lex\n"
      "7ms 11 syscall_enter name=read stack=main;eval\n"
      "20ms 11 syscall_enter name=read stack=main;other\n"
      "30ms 11 syscall_enter name=read stack=main;other\n");
  Selection s;
  s.tid = 11;
  s.from = 1 * ms;
  s.to = 7 * ms;
  const Profile p = infer(t, s);
  CHECK(p.stacks == 5);
  // lex: 1 ms under parse and 3 ms under eval, one function; eval 1 ms of its own.
  const auto top = costliest_functions(p.cct, Mode::Conservative, 2);
  REQUIRE(top.size() == 2);
  CHECK(top[0].function == "lex");
  CHECK(top[0].own_ns == 4 * ms);
  CHECK(top[1].function == "eval");
  CHECK(top[1].own_ns == 1 * ms);
  // Another thread id selects nothing.
  s.tid = 12;
  CHECK(infer(t, s).threads == 0);
}

}  // namespace
}  // namespace cw::latency
