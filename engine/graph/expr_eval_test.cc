#include "engine/graph/expr_eval.h"

#include <doctest/doctest.h>

#include "engine/graph/test_support.h"

namespace cw::engine {
namespace {

using Strings = std::vector<std::string>;

const char* const kServer =
    "process 100 comm=server exe=/usr/bin/server\n"
    "thread 101 pid=100 comm=worker\n"
    "thread 7 pid=0 comm=kworker/0:1 kernel\n"
    "0 101 marker text=start\n"
    "0 7 marker text=start\n";

// Where `split s { at KIND where WHERE }` cuts thread `tid`: which events the
// expression holds for.
Strings holds_at(const std::string& kind, const std::string& where, const std::string& events,
                 Tid tid = 101, const std::string& extra_rules = "") {
  auto b = testing::build(extra_rules + "split s { at " + kind + " where " + where + " }\n",
                          std::string(kServer) + events);
  Strings out;
  for (const auto& cut : testing::cuts(b, tid)) out.push_back(cut.substr(0, cut.find(' ')));
  return out;
}

TEST_CASE("event fields and the event's own attributes") {
  std::string events =
      "1000 101 syscall_enter cpu=2 name=read fd=3\n"
      "2000 101 syscall_enter cpu=2 name=read fd=4\n"
      "3000 101 syscall_enter cpu=1 name=write fd=3\n";
  CHECK(holds_at("syscall_enter", "name == \"read\" and fd == 3", events) == Strings{"1000"});
  CHECK(holds_at("syscall_enter", "tid == 101 and pid == 100 and cpu == 2", events) ==
        Strings{"1000", "2000"});
  CHECK(holds_at("syscall_enter", "kind == \"syscall_enter\" and ts >= 2000", events) ==
        Strings{"2000", "3000"});
}

TEST_CASE("span fields name the innermost open span; a bare span name tests it is open") {
  std::string events =
      "1000 101 recv object=1 len=4\n"
      "2000 101 syscall_enter name=recvfrom\n"
      "2100 101 recv object=1 len=4\n"
      "2200 101 syscall_exit name=recvfrom\n"
      "3000 101 call_enter fn=outer\n"
      "3100 101 call_enter fn=inner\n"
      "3200 101 recv object=1 len=4\n"
      "3300 101 call_exit fn=inner\n"
      "3400 101 recv object=1 len=4\n"
      "3500 101 call_exit fn=outer\n"
      "4000 101 recv object=1 len=4\n";
  CHECK(holds_at("recv", "syscall.name == \"recvfrom\"", events) == Strings{"2100"});
  CHECK(holds_at("recv", "call", events) == Strings{"3200", "3400"});
  CHECK(holds_at("recv", "call.fn == \"outer\"", events) == Strings{"3400"});
  CHECK(holds_at("recv", "not call and not syscall and not irq", events) ==
        Strings{"1000", "4000"});
}

TEST_CASE("a switch_in sees the system call its thread was blocked in") {
  std::string events =
      "1000 101 syscall_enter name=futex\n"
      "1100 101 switch_out state=S\n"
      "2000 101 switch_in\n"
      "2100 101 syscall_exit name=futex\n"
      "3000 101 switch_in\n";
  CHECK(holds_at("switch_in", "syscall.name == \"futex\"", events) == Strings{"2000"});
}

TEST_CASE("stack: the event's own, else the innermost open span's that has one") {
  std::string events =
      "1000 101 syscall_enter name=read stack=main;loop;handle_request\n"
      "1100 101 recv object=1 len=4\n"
      "1200 101 recv object=1 len=4 stack=main;idle\n"
      "1300 101 syscall_exit name=read\n"
      "2000 101 recv object=1 len=4\n";
  CHECK(holds_at("recv", "\"handle_request\" in stack", events) == Strings{"1100"});
  CHECK(holds_at("recv", "stack matches \"*idle*\"", events) == Strings{"1200"});
  CHECK(holds_at("recv", "len(stack) == 0", events) == Strings{"2000"});
  CHECK(holds_at("recv", "len(stack) == 3", events) == Strings{"1100"});
  CHECK(holds_at("recv", "lua.innermost(stack) == \"handle_request\"", events, 101,
                 "lua [[\nfunction innermost(s) return s[1] end\n]]\n") == Strings{"1100"});
}

TEST_CASE("thread and process attributes") {
  std::string events = "1000 101 marker text=x\n1000 7 marker text=x\n";
  std::string where =
      "thread.comm == \"worker\" and process.comm matches \"serv*\" and "
      "process.exe == \"/usr/bin/server\" and not thread.kernel";
  CHECK(holds_at("marker", where, events) == Strings{"1000"});
  CHECK(holds_at("marker", "thread.kernel and thread.comm matches \"kworker/*\"", events, 7) ==
        Strings{"1000"});
}

TEST_CASE("a string constant the trace lacks equals nothing") {
  std::string events =
      "1000 101 syscall_enter name=read\n"
      "2000 101 syscall_enter name=write\n";
  CHECK(holds_at("syscall_enter", "name == \"nonexistent\"", events).empty());
  CHECK(holds_at("syscall_enter", "name != \"nonexistent\"", events) == Strings{"1000", "2000"});
  CHECK(holds_at("syscall_enter", "len(name) == 5", events) == Strings{"2000"});
}

TEST_CASE("membership in lists and named lists") {
  std::string events =
      "1000 101 syscall_enter name=read fd=1\n"
      "2000 101 syscall_enter name=write fd=2\n"
      "3000 101 syscall_enter name=poll fd=3\n";
  CHECK(holds_at("syscall_enter", "name in [\"read\", \"poll\", \"absent\"]", events) ==
        Strings{"1000", "3000"});
  CHECK(holds_at("syscall_enter", "name not in waits", events, 101,
                 "list waits = [\"read\", \"poll\"]\n") == Strings{"2000"});
  CHECK(holds_at("syscall_enter", "fd in [2, 3]", events) == Strings{"2000", "3000"});
}

TEST_CASE("integer arithmetic") {
  std::string events =
      "1000 101 syscall_enter name=read fd=3\n"
      "2000 101 syscall_enter name=read fd=4\n";
  CHECK(holds_at("syscall_enter", "ts - 1000 == 1000", events) == Strings{"2000"});
  CHECK(holds_at("syscall_enter", "fd * 2 + 1 == 7 and fd % 2 == 1 and fd / 3 == 1", events) ==
        Strings{"1000"});
  CHECK(holds_at("syscall_enter", "-fd == -4", events) == Strings{"2000"});
}

TEST_CASE("a division by zero names the rule and the place") {
  std::string message;
  try {
    holds_at("syscall_enter", "fd / (fd - 3) == 1", "1000 101 syscall_enter name=read fd=3\n");
  } catch (const DiagnosticError& e) {
    message = e.what();
  }
  CHECK(message ==
        "t.cw:2:34: error: division by zero (rule t/s)\n"
        "  split s { at syscall_enter where fd / (fd - 3) == 1 }\n"
        "                                   ^\n");
}

TEST_CASE("shared_symbols counts distinct shared symbols, minus an ignore list") {
  std::string rules =
      "list common = [\"main\"]\n"
      "link wakeup { from wakeup to switch_in join from.target == to.tid }\n"
      "edge two { link wakeup where shared_symbols(from.stack, to.stack) == 2 strength strong "
      "kind two priority 2 }\n"
      "edge one { link wakeup where shared_symbols(from.stack, to.stack, common) == 1 strength "
      "strong kind one priority 1 }\n";
  auto b = testing::build(rules, std::string(kServer) +
                                     "1000 102 wakeup target=101 stack=main;work;work;lock\n"
                                     "2000 101 switch_in stack=main;lock;wait\n"
                                     "3000 103 wakeup target=101 stack=main;a;lock\n"
                                     "4000 101 switch_in stack=lock\n");
  CHECK(testing::edges(b, 102, 101) == Strings{"two strong t/two 1000->2000"});
  CHECK(testing::edges(b, 103, 101) == Strings{"one strong t/one 3000->4000"});
}

TEST_CASE("a lua function defined nowhere the rule can see is an error at the call") {
  // The loader refuses such a pack; a RuleSet assembled otherwise still gets a clear error.
  auto rules = testing::load_rules(
      "lua [[\nfunction present() return true end\n]]\n"
      "split s { at marker where lua.present() }\n");
  rules.lua.clear();
  Trace trace = testing::load_trace(std::string(kServer));
  std::string message;
  try {
    build_graph(trace, rules);
  } catch (const DiagnosticError& e) {
    message = e.what();
  }
  CHECK(message ==
        "t.cw:5:27: error: lua function 'present' is not defined in pack t or the packs it "
        "requires\n"
        "  split s { at marker where lua.present() }\n"
        "                            ^~~~~~~~~~~\n");
}

TEST_CASE("every operator, on integers, strings and texts the trace lacks") {
  // testing::build also builds each graph walking the expression trees: any operator the
  // compiled programs evaluate differently makes it fail.
  std::string events =
      "1000 101 syscall_enter name=read fd=2\n"
      "2000 101 syscall_enter name=write fd=3\n"
      "3000 101 syscall_enter name=open fd=4\n";
  std::string lists = "list l = [\"read\", \"nowhere\"]\nlist n = [2, 4]\n";
  auto at = [&](const std::string& where) {
    return holds_at("syscall_enter", where, events, 101, lists);
  };
  CHECK(at("fd < 3") == Strings{"1000"});
  CHECK(at("fd <= 3") == Strings{"1000", "2000"});
  CHECK(at("fd > 3") == Strings{"3000"});
  CHECK(at("fd >= 3") == Strings{"2000", "3000"});
  CHECK(at("fd != 3") == Strings{"1000", "3000"});
  CHECK(at("name != \"text the trace lacks\"") == Strings{"1000", "2000", "3000"});
  CHECK(at("name in l") == Strings{"1000"});
  CHECK(at("name not in l and fd not in n") == Strings{"2000"});
  CHECK(at("fd in n") == Strings{"1000", "3000"});
  CHECK(at("name matches \"*e\" or name matches \"o*\"") == Strings{"2000", "3000"});
  CHECK(at("fd + 1 == 4 or fd * 2 == 8") == Strings{"2000", "3000"});
  CHECK(at("fd - 1 == 1 or fd % 2 == 1") == Strings{"1000", "2000"});
  CHECK(at("fd / 2 == 1") == Strings{"1000", "2000"});
  CHECK(at("-fd < -3 and -fd != 0") == Strings{"3000"});
  CHECK(at("not (fd == 3) and (fd == 2 or fd == 4) and not not (fd != 2)") == Strings{"3000"});
  // At its own syscall_enter the span is open: its fields are the event's.
  CHECK(at("syscall.fd == 2 and syscall") == Strings{"1000"});
  CHECK(at("call.fn == \"x\" or call") == Strings{});
  CHECK(at("len(name) == 4 and thread.comm == \"worker\" and process.comm != \"x\"") ==
        Strings{"1000", "3000"});
}

// A rule that names the calls it is about is false at every other call, and the compiled
// evaluator says so from the event's name alone (PreparedExpr's guard); the walk evaluates
// the whole expression. At every event, both must give the same answer, or fail the same.
TEST_CASE("the name guard answers as the whole expression does") {
  const std::string events =
      "1000 101 syscall_enter name=read fd=3\n"
      "1100 101 syscall_enter name=write fd=0\n"
      "1200 101 syscall_enter name=futex fd=2 op=wait\n"
      "1300 101 syscall_enter name=flock fd=0 value=6\n"
      "1400 101 syscall_enter name=poll fd=1\n"
      "1500 101 syscall_exit name=read ret=0\n";
  Trace trace = testing::load_trace(std::string(kServer) + events);
  SpanTree spans(trace.schema);
  struct Case {
    std::string where;
    bool guarded, whole;
  };
  const Case cases[] = {
      {"name == \"read\"", true, true},
      {"name == \"read\" or name in [\"poll\", \"absent\"]", true, true},
      {"name == \"absent\"", true, true},
      {"(name == \"read\" and fd == 3) or (name == \"futex\" and op == \"wait\")", true, false},
      {"fd < 5 and (name == \"write\" or name == \"flock\")", true, false},
      // A division by zero (fd 0) after the name test: it fails at flock in both, and at
      // write (fd 0 too) the name test stops both before it.
      {"name == \"flock\" and (value / fd) % 2 == 1", true, false},
      {"name == \"write\" and 10 / fd > 1", true, false},
      {"10 / fd > 1 and name == \"read\"", false, false},
      {"name != \"read\"", false, false},
      {"name == \"read\" or fd == 2", false, false},
      {"fd == 0", false, false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.where);
    auto rules = testing::load_rules("split s { at syscall_enter where " + c.where + " }\n");
    LuaHost lua(rules, {});
    Evaluator compiled(trace, spans, &lua), walked(trace, spans, &lua, true);
    const PreparedExpr p = compiled.prepare(rules.splits[0].where, rules.splits[0].origin);
    const PreparedExpr w = walked.prepare(rules.splits[0].where, rules.splits[0].origin);
    CHECK((p.guard_kind != kNoKind) == c.guarded);
    CHECK(p.guard_whole == c.whole);
    CHECK(w.guard_kind == kNoKind);
    for (uint32_t i = 0; i < trace.events.size(); ++i) {
      CAPTURE(i);
      const EvalScope scope{{i, SpanTree::kRoot}, {}, {}};
      std::string a, b;
      try {
        a = compiled.test(p, scope) ? "true" : "false";
      } catch (const std::exception& e) {
        a = e.what();
      }
      try {
        b = walked.test(w, scope) ? "true" : "false";
      } catch (const std::exception& e) {
        b = e.what();
      }
      CHECK(a == b);
    }
  }
  // A link's end tests are guarded as a split's `where` is: each runs at its own end.
  auto link = testing::load_rules(
      "link l { from syscall_enter from_where name == \"flock\" or name == \"fcntl\"\n"
      "  to syscall_exit to_where name == \"read\" join from.pid == to.ret pick latest }\n");
  LuaHost lua(link, {});
  Evaluator compiled(trace, spans, &lua);
  const auto& l = link.links.at(0);
  const PreparedExpr from = compiled.prepare(l.from_where, l.origin);
  const PreparedExpr to = compiled.prepare(l.to_where, l.origin);
  CHECK(from.guard_kind == trace.schema.find("syscall_enter"));
  CHECK(to.guard_kind == trace.schema.find("syscall_exit"));
  CHECK((from.guard_whole && to.guard_whole));
  auto at = [&](uint64_t ts) {
    uint32_t i = 0;
    while (trace.events[i].ts != ts) ++i;
    return EvalScope{{i, SpanTree::kRoot}, {}, {}};
  };
  CHECK_FALSE(compiled.test(from, at(1000)));  // read
  CHECK(compiled.test(from, at(1300)));        // flock
  CHECK(compiled.test(to, at(1500)));          // read's exit
  CHECK_FALSE(compiled.test(to, at(1000)));    // an entry: not the kind guarded, evaluated
}

// testing::build compares every graph above built from compiled expressions with one built
// by walking their trees; that comparison means something only if the compiled programs
// run: ordinary forms compile to steps of their own, and only what the walk must keep
// (Lua calls, divisions that may fail, other calls) is handed to it.
TEST_CASE("expressions compile to flat programs; the walk keeps only what it must") {
  Trace trace = testing::load_trace(std::string(kServer));
  SpanTree spans(trace.schema);
  auto codes = [&](const std::string& where, bool interpret = false) {
    auto rules = testing::load_rules(
        "lua [[\nfunction f(x) return true end\n]]\n"
        "list l = [\"read\", \"write\"]\n"
        "split s { at syscall_enter where " +
        where + " }\n");
    LuaHost lua(rules, {});
    Evaluator ev(trace, spans, &lua, interpret);
    PreparedExpr p = ev.prepare(rules.splits[0].where, rules.splits[0].origin);
    std::string out;
    for (const auto& in : p.code) out += std::to_string(static_cast<int>(in.code)) + " ";
    return out;
  };
  using C = PreparedExpr::Code;
  auto text = [](std::initializer_list<C> cs) {
    std::string out;
    for (C c : cs) out += std::to_string(static_cast<int>(c)) + " ";
    return out;
  };
  // A constant right operand rides with its step (no Const step of its own).
  CHECK(
      codes("name == \"read\" and not (fd > 3 or syscall.fd != 1) and syscall") ==
      text({C::EventField, C::Eq, C::JumpIfFalse, C::EventField, C::Gt, C::JumpIfTrue, C::SpanField,
            C::Ne, C::ToBool, C::Not, C::ToBool, C::JumpIfFalse, C::SpanOpen, C::ToBool}));
  CHECK(codes("name in l and thread.comm matches \"w*\" and fd / 2 - 1 == -fd % 3") ==
        text({C::EventField, C::In, C::JumpIfFalse, C::Field, C::Matches, C::ToBool, C::JumpIfFalse,
              C::EventField, C::Div, C::Sub, C::EventField, C::Neg, C::Mod, C::Eq, C::ToBool}));
  CHECK(codes("1 < fd") == text({C::Const, C::EventField, C::Lt}));
  CHECK(codes("len(stack) > 1") == text({C::Tree, C::Gt}));
  CHECK(codes("fd / fd == 1") == text({C::Tree}));
  CHECK(codes("fd == 1 and lua.f(fd)") == text({C::Tree}));
  CHECK(codes("name == \"read\"", true).empty());
}

}  // namespace
}  // namespace cw::engine
