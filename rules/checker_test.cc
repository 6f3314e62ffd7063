#include "rules/checker.h"

#include <doctest/doctest.h>

#include "dsl/parser.h"
#include "rules/loader.h"
#include "trace/schema.h"

using namespace cw;
using namespace cw::rules;

namespace {

// One pack "p" in file p.cw; the header is line 1, so `body` starts on line 2.
LoadResult load_pack(const std::string& body) {
  return load_sources({make_source("p.cw", "pack p { version \"0.1.0\" }\n" + body)});
}

KindId kind(const char* name) {
  return Schema::builtin().find(name);
}

int16_t field(const char* kind_name, const char* field_name) {
  return static_cast<int16_t>(Schema::builtin().field_index(kind(kind_name), field_name));
}

const ExprNode& root(const CompiledExpr& e) {
  return e.nodes.at(e.root);
}
const ExprNode& kid(const CompiledExpr& e, const ExprNode& n, size_t i) {
  return e.nodes.at(n.kids.at(i));
}

const char* kWakeupLink =
    "link wakeup {\n"
    "  from wakeup\n"
    "  to switch_in\n"
    "  join from.target == to.tid\n"
    "}\n";

}  // namespace

TEST_CASE("a link compiles its kinds, its join key and the default pick") {
  auto r = load_pack(std::string(kWakeupLink) + "edge e { link wakeup strength weak }\n");
  REQUIRE_MESSAGE(r.ok(), r.render());
  REQUIRE(r.rules.links.size() == 1);
  const LinkRule& link = r.rules.links[0];
  CHECK(link.origin.id == "p/wakeup");
  CHECK(link.origin.local == "wakeup");
  CHECK(link.origin.pack == "p");
  CHECK(link.origin.loc.line == 2);
  CHECK(link.from == kind("wakeup"));
  CHECK(link.to == kind("switch_in"));
  CHECK(link.pick == LinkRule::Pick::Next);
  CHECK(link.within_ns == 0);
  CHECK(link.where.empty());
  REQUIRE(link.join.size() == 1);
  CHECK(link.join[0].first.side == Side::From);
  CHECK(link.join[0].first.scope == FieldScope::EventField);
  CHECK(link.join[0].first.kind == kind("wakeup"));
  CHECK(link.join[0].first.field == field("wakeup", "target"));
  CHECK(link.join[0].first.type == ValueType::Int);
  CHECK(link.join[0].second.side == Side::To);
  CHECK(link.join[0].second.scope == FieldScope::Tid);
}

TEST_CASE("an overlap link takes its range fields on both kinds, a window and a where") {
  auto r = load_pack(
      "link stream {\n"
      "  from send\n"
      "  to recv\n"
      "  join to.object == from.object and from.pid == to.peer\n"
      "  pick overlap\n"
      "  range offset, len\n"
      "  where to.ts - from.ts < 1s\n"
      "  within 10ms\n"
      "}\n"
      "edge e { link stream strength strong }\n");
  REQUIRE_MESSAGE(r.ok(), r.render());
  const LinkRule& link = r.rules.links.at(0);
  CHECK(link.pick == LinkRule::Pick::Overlap);
  CHECK(link.offset_field == field("send", "offset"));
  CHECK(link.len_field == field("send", "len"));
  CHECK(link.to_offset_field == field("recv", "offset"));
  CHECK(link.to_len_field == field("recv", "len"));
  CHECK(link.within_ns == 10'000'000);
  REQUIRE(link.join.size() == 2);
  // `to.object == from.object` is stored from-side first.
  CHECK(link.join[0].first.side == Side::From);
  CHECK(link.join[0].first.field == field("send", "object"));
  CHECK(link.join[0].second.field == field("recv", "object"));
  CHECK(link.join[1].first.scope == FieldScope::Pid);
  CHECK(link.join[1].second.field == field("recv", "peer"));
  const ExprNode& lt = root(link.where);
  CHECK(lt.op == Op::Lt);
  const ExprNode& sub = kid(link.where, lt, 0);
  CHECK(sub.op == Op::Sub);
  CHECK(sub.type == ValueType::Int);
  CHECK(kid(link.where, sub, 0).field.side == Side::To);
  CHECK(kid(link.where, sub, 0).field.scope == FieldScope::Ts);
  CHECK(kid(link.where, lt, 1).ival == 1'000'000'000);
}

TEST_CASE("an edge rule compiles its link, where, strength, kind, priority and cost") {
  auto r = load_pack(std::string(kWakeupLink) +
                     "edge futex.wake {\n"
                     "  link wakeup\n"
                     "  where from.syscall.name == \"futex\" and to.thread.comm matches \"w*\"\n"
                     "  strength strong\n"
                     "  kind futex\n"
                     "  priority -5\n"
                     "  cost to.ts - from.ts\n"
                     "}\n");
  REQUIRE_MESSAGE(r.ok(), r.render());
  REQUIRE(r.rules.edges.size() == 1);
  const EdgeRule& e = r.rules.edges[0];
  CHECK(e.origin.id == "p/futex.wake");
  CHECK(e.link == 0);
  CHECK(e.strength == Strength::Strong);
  CHECK(e.kind == "futex");
  CHECK(e.priority == -5);
  const ExprNode& conj = root(e.where);
  CHECK(conj.op == Op::And);
  const ExprNode& eq = kid(e.where, conj, 0);
  CHECK(eq.op == Op::Eq);
  const FieldRef& name = kid(e.where, eq, 0).field;
  CHECK(name.side == Side::From);
  CHECK(name.scope == FieldScope::SpanField);
  CHECK(name.span == "syscall");
  CHECK(name.kind == kind("syscall_enter"));
  CHECK(name.field == field("syscall_enter", "name"));
  CHECK(name.type == ValueType::Str);
  CHECK(kid(e.where, eq, 1).sval == "futex");
  const ExprNode& m = kid(e.where, conj, 1);
  CHECK(m.op == Op::Matches);
  CHECK(kid(e.where, m, 0).field.scope == FieldScope::ThreadComm);
  CHECK(kid(e.where, m, 0).field.side == Side::To);
  CHECK(root(e.cost).op == Op::Sub);
  CHECK(root(e.cost).type == ValueType::Int);
}

TEST_CASE("an edge rule without kind, priority or cost takes the defaults") {
  auto r = load_pack(std::string(kWakeupLink) + "edge plain { link wakeup strength boost }\n");
  REQUIRE_MESSAGE(r.ok(), r.render());
  const EdgeRule& e = r.rules.edges.at(0);
  CHECK(e.kind == "wakeup");
  CHECK(e.priority == 0);
  CHECK(e.strength == Strength::Boost);
  CHECK(e.where.empty());
  CHECK(e.cost.empty());
}

TEST_CASE("a split at an event inlines named lists and reads cut and neighbour") {
  auto r = load_pack(
      "list blocking = [\"read\", \"poll\"]\n"
      "split wait.entry {\n"
      "  at syscall_enter\n"
      "  where name in blocking\n"
      "  cut after\n"
      "  neighbour none\n"
      "}\n"
      "split plain { at switch_out }\n");
  REQUIRE_MESSAGE(r.ok(), r.render());
  REQUIRE(r.rules.splits.size() == 2);
  const SplitRule& s = r.rules.splits[0];
  CHECK(s.mode == SplitRule::Mode::AtEvent);
  CHECK(s.at == kind("syscall_enter"));
  CHECK(s.cut_after);
  CHECK(s.neighbour == Neighbour::None);
  const ExprNode& in = root(s.where);
  CHECK(in.op == Op::In);
  CHECK(kid(s.where, in, 0).field.scope == FieldScope::EventField);
  CHECK(kid(s.where, in, 0).field.field == field("syscall_enter", "name"));
  const ExprNode& list = kid(s.where, in, 1);
  CHECK(list.op == Op::Const);
  CHECK(list.type == ValueType::List);
  REQUIRE(list.kids.size() == 2);
  CHECK(kid(s.where, list, 0).sval == "read");
  CHECK(kid(s.where, list, 1).sval == "poll");
  const SplitRule& plain = r.rules.splits[1];
  CHECK_FALSE(plain.cut_after);
  CHECK(plain.neighbour == Neighbour::Weak);
  CHECK(plain.where.empty());
}

TEST_CASE("a split between peers refers to its link") {
  auto r = load_pack(
      "link stream { from send to recv join from.object == to.object pick overlap "
      "range offset, len }\n"
      "edge m { link stream strength strong }\n"
      "split peers.disjoint { peers stream where thread.comm != \"x\" }\n");
  REQUIRE_MESSAGE(r.ok(), r.render());
  const SplitRule& s = r.rules.splits.at(0);
  CHECK(s.mode == SplitRule::Mode::Peers);
  CHECK(s.link == 0);
  CHECK(s.at == kNoKind);
  CHECK(root(s.where).op == Op::Ne);
}

TEST_CASE("a batch compiles its loop span, its item kind and both wheres") {
  auto r = load_pack(
      "batch serve {\n"
      "  within call where fn == \"serve_loop\"\n"
      "  item recv where peer > 0\n"
      "}\n");
  REQUIRE_MESSAGE(r.ok(), r.render());
  const BatchRule& b = r.rules.batches.at(0);
  CHECK(b.span == "call");
  CHECK(b.span_open == kind("call_enter"));
  CHECK(b.item == kind("recv"));
  CHECK(b.neighbour == Neighbour::None);
  CHECK(kid(b.within_where, root(b.within_where), 0).field.field == field("call_enter", "fn"));
  CHECK(root(b.item_where).op == Op::Gt);
  CHECK(kid(b.item_where, root(b.item_where), 0).field.field == field("recv", "peer"));
}

TEST_CASE("a flag compiles its clauses, with defaults for the rest") {
  auto r = load_pack(
      "flag ready {\n"
      "  symbol \"g_ready\"\n"
      "  binary \"app\"\n"
      "  size 1\n"
      "  set value == 2\n"
      "  access write\n"
      "  strength weak\n"
      "}\n"
      "flag fixed { address 0x601040 }\n");
  REQUIRE_MESSAGE(r.ok(), r.render());
  REQUIRE(r.rules.flags.size() == 2);
  const FlagRule& f = r.rules.flags[0];
  CHECK(f.symbol == "g_ready");
  CHECK(f.binary == "app");
  CHECK(f.size == 1);
  CHECK(f.access == FlagRule::Access::Write);
  CHECK(f.strength == Strength::Weak);
  CHECK(kid(f.set, root(f.set), 0).field.field == field("flag_write", "value"));
  const FlagRule& fixed = r.rules.flags[1];
  CHECK(fixed.address == 0x601040);
  CHECK(fixed.size == 4);
  CHECK(fixed.access == FlagRule::Access::Both);
  CHECK(fixed.strength == Strength::Strong);
  CHECK(fixed.set.empty());
  CHECK(fixed.kind == "flag");
}

TEST_CASE("a holder rule names a system call and where the owner is, beside the waited-on word") {
  auto r = load_pack(
      "holder mutex.owner {\n"
      "  syscall \"futex\"\n"
      "  owner 8\n"
      "}\n"
      "holder wide {\n  syscall \"futex\"\n  owner -16\n  size 8\n}\n");
  REQUIRE_MESSAGE(r.ok(), r.render());
  REQUIRE(r.rules.holders.size() == 2);
  CHECK(r.rules.holders[0].origin.id == "p/mutex.owner");
  CHECK(r.rules.holders[0].syscalls == std::vector<std::string>{"futex"});
  CHECK(r.rules.holders[0].find == HolderRule::Find::Owner);
  CHECK(r.rules.holders[0].owner_offset == 8);
  CHECK(r.rules.holders[0].size == 4);
  CHECK(r.rules.holders[1].owner_offset == -16);
  CHECK(r.rules.holders[1].size == 8);

  SUBCASE("the other end of a stream, for several calls") {
    auto peer = load_pack("holder stream {\n  syscall \"read\", \"recvfrom\"\n  peer fd\n}\n");
    REQUIRE_MESSAGE(peer.ok(), peer.render());
    CHECK(peer.rules.holders[0].syscalls == std::vector<std::string>{"read", "recvfrom"});
    CHECK(peer.rules.holders[0].find == HolderRule::Find::Peer);
  }
  SUBCASE("owner or peer is needed, and a size is 4 or 8") {
    auto bad = load_pack("holder h {\n  syscall \"futex\"\n  size 2\n}\n");
    CHECK_FALSE(bad.ok());
    CHECK(bad.render().find("'owner OFFSET'") != std::string::npos);
    CHECK(bad.render().find("'size' must be 4 or 8") != std::string::npos);
  }
}

TEST_CASE("names in a one-event rule resolve to their scopes and types") {
  struct Case {
    const char* text;
    FieldScope scope;
    ValueType type;
  };
  const Case cases[] = {
      {"fd == 3", FieldScope::EventField, ValueType::Int},
      {"ts > 0", FieldScope::Ts, ValueType::Int},
      {"tid == 1", FieldScope::Tid, ValueType::Int},
      {"pid == 1", FieldScope::Pid, ValueType::Int},
      {"cpu == 1", FieldScope::Cpu, ValueType::Int},
      {"kind == \"recv\"", FieldScope::KindName, ValueType::Str},
      {"\"main\" in stack", FieldScope::Stack, ValueType::Stack},
      {"thread.comm == \"a\"", FieldScope::ThreadComm, ValueType::Str},
      {"thread.kernel", FieldScope::ThreadKernel, ValueType::Bool},
      {"process.comm == \"a\"", FieldScope::ProcessComm, ValueType::Str},
      {"process.exe == \"a\"", FieldScope::ProcessExe, ValueType::Str},
      {"irq", FieldScope::SpanOpen, ValueType::Bool},
      {"call.fn == \"f\"", FieldScope::SpanField, ValueType::Str},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    auto r = load_pack(std::string("split s { at recv where ") + c.text + " }\n");
    REQUIRE_MESSAGE(r.ok(), r.render());
    const CompiledExpr& w = r.rules.splits.at(0).where;
    const ExprNode& n = root(w).op == Op::Field        ? root(w)
                        : c.scope == FieldScope::Stack ? kid(w, root(w), 1)
                                                       : kid(w, root(w), 0);
    CHECK(n.op == Op::Field);
    CHECK(n.field.scope == c.scope);
    CHECK(n.field.type == c.type);
    CHECK(n.field.side == Side::Self);
  }
}

TEST_CASE("built-in and Lua functions type-check and compile to calls") {
  auto r = load_pack(std::string(kWakeupLink) +
                     "list common = [\"main\"]\n"
                     "lua [[\n"
                     "function score(a, b) return 1 end\n"
                     "]]\n"
                     "edge shared {\n"
                     "  link wakeup\n"
                     "  where shared_symbols(from.stack, to.stack, common) > len(\"ab\")\n"
                     "    and lua.score(from.tid, to.tid)\n"
                     "  strength boost\n"
                     "  cost lua.score(1, 2) * 2\n"
                     "}\n");
  REQUIRE_MESSAGE(r.ok(), r.render());
  const EdgeRule& e = r.rules.edges.at(0);
  const ExprNode& gt = kid(e.where, root(e.where), 0);
  const ExprNode& shared = kid(e.where, gt, 0);
  CHECK(shared.op == Op::Call);
  CHECK(shared.sval == "shared_symbols");
  CHECK(shared.type == ValueType::Int);
  CHECK(shared.kids.size() == 3);
  CHECK(kid(e.where, gt, 1).sval == "len");
  const ExprNode& lua = kid(e.where, root(e.where), 1);
  CHECK(lua.sval == "lua.score");
  CHECK(lua.type == ValueType::Null);
  REQUIRE(r.rules.lua.size() == 1);
  CHECK(r.rules.lua[0].pack == "p");
  CHECK(r.rules.lua[0].first_line == 9);
  CHECK(r.rules.lua[0].code == "function score(a, b) return 1 end\n");
}

TEST_CASE("pack tests compile to their trace and expectations") {
  auto r = load_pack(
      "test \"futex\" {\n"
      "  trace [[\n"
      "causeway-trace 1\n"
      "]]\n"
      "  expect edge 101 -> 102 kind futex strength strong rule linux.kernel/futex.wake at 1.5ms\n"
      "  expect no split 11 at 7ms rule serve\n"
      "  expect segments 101 >= 3\n"
      "  expect stat pruned == 1\n"
      "}\n");
  REQUIRE_MESSAGE(r.ok(), r.render());
  REQUIRE(r.rules.tests.size() == 1);
  const PackTest& t = r.rules.tests[0];
  CHECK(t.pack == "p");
  CHECK(t.name == "futex");
  CHECK(t.trace_text == "causeway-trace 1\n");
  CHECK(t.trace_loc.line == 4);
  REQUIRE(t.expects.size() == 4);
  const Expectation& edge = t.expects[0];
  CHECK(edge.subject == Expectation::Subject::Edge);
  CHECK_FALSE(edge.negated);
  CHECK(edge.from_tid == 101);
  CHECK(edge.to_tid == 102);
  CHECK(edge.kind == "futex");
  CHECK(edge.strength == "strong");
  CHECK(edge.rule == "linux.kernel/futex.wake");
  CHECK(edge.has_at);
  CHECK(edge.at_ns == 1'500'000);
  CHECK(edge.loc.line == 6);
  const Expectation& split = t.expects[1];
  CHECK(split.subject == Expectation::Subject::Split);
  CHECK(split.negated);
  CHECK(split.from_tid == 11);
  CHECK(split.at_ns == 7'000'000);
  CHECK(split.rule == "serve");
  const Expectation& segments = t.expects[2];
  CHECK(segments.subject == Expectation::Subject::Segments);
  CHECK(segments.cmp == ">=");
  CHECK(segments.value == 3);
  const Expectation& stat = t.expects[3];
  CHECK(stat.subject == Expectation::Subject::Stat);
  CHECK(stat.stat == "pruned");
  CHECK(stat.cmp == "==");
  CHECK(stat.value == 1);
}

// ---- diagnostics ----------------------------------------------------------------------

TEST_CASE("an unknown event kind suggests the nearest kind") {
  auto r = load_pack("split s {\n  at swich_in\n}\n");
  CHECK(r.render() ==
        "p.cw:3:6: error: unknown event kind 'swich_in'\n"
        "    at swich_in\n"
        "       ^~~~~~~~\n"
        "hint: did you mean 'switch_in'?\n");
  CHECK_FALSE(r.ok());
}

TEST_CASE("an unknown field of the rule's event is underlined whole, with a suggestion") {
  auto r = load_pack("split s {\n  at syscall_enter\n  where nmae == \"read\"\n}\n");
  CHECK(r.render() ==
        "p.cw:4:9: error: unknown field 'nmae' of event 'syscall_enter'\n"
        "    where nmae == \"read\"\n"
        "          ^~~~\n"
        "hint: did you mean 'name'?\n");
}

TEST_CASE("an unknown field of a link end names the side") {
  auto r =
      load_pack(std::string(kWakeupLink) +
                "edge e {\n  link wakeup\n  where from.stak matches \"x\"\n  strength weak\n}\n");
  CHECK(r.render() ==
        "p.cw:9:9: error: unknown field 'from.stak'\n"
        "    where from.stak matches \"x\"\n"
        "          ^~~~~~~~~\n"
        "hint: did you mean 'from.stack'?\n");
}

TEST_CASE("a duplicate rule id is an error with a note at the first") {
  auto r = load_pack(
      "split futex.wake { at switch_in }\n"
      "split futex.wake { at switch_out }\n");
  CHECK(r.render() ==
        "p.cw:3:7: error: duplicate rule id 'futex.wake' in pack 'p'\n"
        "  split futex.wake { at switch_out }\n"
        "        ^~~~~~~~~~\n"
        "p.cw:2:7: note: first defined here\n"
        "  split futex.wake { at switch_in }\n"
        "        ^~~~~~~~~~\n");
}

TEST_CASE("clause errors: unknown with a suggestion, missing, given twice") {
  auto r = load_pack(std::string(kWakeupLink) + "edge x {\n  link wakeup\n  wher to.tid == 1\n}\n");
  CHECK(r.render() ==
        "p.cw:7:6: error: missing clause 'strength' in edge rule 'x'\n"
        "  edge x {\n"
        "       ^\n"
        "p.cw:9:3: error: unknown clause 'wher' in edge rule\n"
        "    wher to.tid == 1\n"
        "    ^~~~\n"
        "hint: did you mean 'where'?\n");
  auto twice = load_pack("split s {\n  at recv\n  at send\n}\n");
  CHECK(twice.render() ==
        "p.cw:4:3: error: clause 'at' given twice\n"
        "    at send\n"
        "    ^~\n");
}

TEST_CASE("an edge rule naming an unknown link suggests a visible one") {
  auto r = load_pack(std::string(kWakeupLink) + "edge x { link wakeupp strength weak }\n");
  CHECK(r.render() ==
        "p.cw:7:15: error: edge rule 'x' uses unknown link 'wakeupp'\n"
        "  edge x { link wakeupp strength weak }\n"
        "                ^~~~~~~\n"
        "hint: did you mean 'wakeup'?\n");
}

TEST_CASE("type errors in expressions") {
  auto compare = load_pack("split s { at recv where fd == \"3\" }\n");
  CHECK(compare.render() ==
        "p.cw:2:25: error: cannot compare int with str\n"
        "  split s { at recv where fd == \"3\" }\n"
        "                          ^~~~~~~~~\n");
  auto matches = load_pack("split s { at recv where thread.comm matches fd }\n");
  CHECK(matches.render() ==
        "p.cw:2:45: error: 'matches' needs a string pattern\n"
        "  split s { at recv where thread.comm matches fd }\n"
        "                                              ^~\n");
  auto in = load_pack("split s { at recv where fd in 3 }\n");
  CHECK(in.render() ==
        "p.cw:2:31: error: 'in' needs a list or a stack on its right\n"
        "  split s { at recv where fd in 3 }\n"
        "                                ^\n");
  auto logic = load_pack("split s { at recv where fd and thread.kernel }\n");
  CHECK(logic.render() ==
        "p.cw:2:25: error: 'and' needs bool operands, not int\n"
        "  split s { at recv where fd and thread.kernel }\n"
        "                          ^~\n");
  auto order = load_pack("split s { at recv where thread.comm < \"b\" }\n");
  CHECK(order.render() ==
        "p.cw:2:25: error: '<' needs int operands, not str\n"
        "  split s { at recv where thread.comm < \"b\" }\n"
        "                          ^~~~~~~~~~~~~~~~~\n");
  auto where = load_pack("split s { at recv where fd + 1 }\n");
  CHECK(where.render() ==
        "p.cw:2:25: error: 'where' needs a condition (bool), not int\n"
        "  split s { at recv where fd + 1 }\n"
        "                          ^~~~~~\n");
  // A literal zero divisor fails on every event: the checker says so, not `graph` later.
  auto modulo = load_pack("split s { at recv where fd % 0 == 1 }\n");
  CHECK(modulo.render() ==
        "p.cw:2:30: error: modulo by zero\n"
        "  split s { at recv where fd % 0 == 1 }\n"
        "                               ^\n");
  auto division = load_pack("split s { at recv where fd / 0 == 1 }\n");
  CHECK(division.render().find("error: division by zero") != std::string::npos);
  CHECK(load_pack("split s { at recv where fd % 2 == 1 }\n").ok());
}

TEST_CASE("an unknown strength lists the valid ones") {
  auto r = load_pack(std::string(kWakeupLink) + "edge x { link wakeup strength strog }\n");
  CHECK(r.render() ==
        "p.cw:7:31: error: unknown strength 'strog' (expected strong, weak, boost or prune)\n"
        "  edge x { link wakeup strength strog }\n"
        "                                ^~~~~\n");
}

TEST_CASE("a join must be equalities between the two ends") {
  auto r = load_pack("link l { from send to recv join from.object < to.object }\n");
  CHECK(r.render() ==
        "p.cw:2:33: error: 'join' must be equalities like from.F == to.G joined by 'and'\n"
        "  link l { from send to recv join from.object < to.object }\n"
        "                                  ^~~~~~~~~~~~~~~~~~~~~~~\n");
}

TEST_CASE("a Lua function must be defined by the pack or a pack it requires") {
  auto r = load_pack("split s { at recv where lua.nope(fd) }\n");
  CHECK(r.render() ==
        "p.cw:2:25: error: unknown Lua function 'nope'\n"
        "  split s { at recv where lua.nope(fd) }\n"
        "                          ^~~~~~~~~~~~\n"
        "hint: define it in a `lua [[ ... ]]` block of pack 'p' or of a pack it requires\n");
}

TEST_CASE("a Lua syntax error points at its line in the rule file") {
  auto r = load_pack("lua [[\nfunction ok() return 1 end\nfunction bad( return end\n]]\n");
  CHECK_FALSE(r.ok());
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].loc.line == 4);
  CHECK(r.diagnostics[0].render().starts_with(
      "p.cw:4:1: error: lua block (pack p) does not compile"));
}

TEST_CASE("syntax errors are the parser's diagnostics, unchanged") {
  auto source = make_source("p.cw", "pack p { version \"0.1.0\" }\nsplit s { at == }\n");
  auto parsed = dsl::parse(source);
  REQUIRE_FALSE(parsed.ok());
  std::string expected;
  for (const auto& d : parsed.diagnostics) expected += d.render();
  auto r = load_sources({source});
  CHECK(r.render().starts_with(expected));
}

TEST_CASE("rules of a required pack's lists and links are visible, others are not") {
  auto base = make_source("base.cw",
                          "pack base { version \"1.0.0\" }\n"
                          "list names = [\"a\"]\n" +
                              std::string(kWakeupLink));
  auto user = make_source("user.cw",
                          "pack user { version \"1.0.0\" requires base }\n"
                          "edge e { link wakeup where to.thread.comm in names strength weak }\n");
  auto r = load_sources({base, user});
  REQUIRE_MESSAGE(r.ok(), r.render());
  CHECK(r.rules.edges.at(0).link == 0);
  auto alone = make_source("alone.cw",
                           "pack alone { version \"1.0.0\" }\n"
                           "edge e { link wakeup strength weak }\n");
  auto bad = load_sources({base, alone});
  CHECK(bad.render().find("alone.cw:2:15: error: edge rule 'e' uses unknown link 'wakeup'") !=
        std::string::npos);
}

TEST_CASE("edge rules are sorted by priority, then later pack first, then file order") {
  auto a = make_source("a.cw", "pack a { version \"1.0.0\" }\n" + std::string(kWakeupLink) +
                                   "edge a1 { link wakeup strength prune }\n"
                                   "edge a2 { link wakeup strength boost priority 5 }\n"
                                   "edge a3 { link wakeup strength prune }\n");
  auto b = make_source("b.cw",
                       "pack b { version \"1.0.0\" requires a }\n"
                       "edge b1 { link wakeup strength prune }\n"
                       "edge b2 { link wakeup strength prune priority -1 }\n");
  auto r = load_sources({a, b});
  REQUIRE_MESSAGE(r.ok(), r.render());
  std::vector<std::string> order;
  for (const auto& e : r.rules.edges) order.push_back(e.origin.id);
  CHECK(order == std::vector<std::string>{"a/a2", "b/b1", "a/a1", "a/a3", "b/b2"});
}

TEST_CASE("a batch where belongs to the clause before it") {
  auto r = load_pack("batch b {\n  where fn == \"x\"\n  within cal\n  item recv\n}\n");
  CHECK(r.render() ==
        "p.cw:3:3: error: in a batch rule, 'where' follows 'within SPAN' or 'item KIND'\n"
        "    where fn == \"x\"\n"
        "    ^~~~~\n"
        "p.cw:4:10: error: unknown span 'cal' (expected exit, syscall, irq, softirq, call, task or "
        "loop)\n"
        "    within cal\n"
        "           ^~~\n"
        "hint: did you mean 'call'?\n");
}

TEST_CASE("a batch within the thread's loop: items per descriptor, cut before their call") {
  auto ok = load_pack("batch b {\n  within loop\n  item recv\n  per fd\n  cut syscall\n}\n");
  REQUIRE_MESSAGE(ok.ok(), ok.render());
  REQUIRE(ok.rules.batches.size() == 1);
  const BatchRule& b = ok.rules.batches[0];
  CHECK(b.thread_loop);
  CHECK(b.span_open == kNoKind);
  CHECK_FALSE(b.per.empty());
  CHECK(b.cut_span == "syscall");
  auto bad = load_pack(
      "batch b {\n  within loop where fd == 3\n  item recv\n  per name\n  cut somewhere\n}\n");
  const std::string text = bad.render();
  CHECK(text.find("p.cw:3:15: error: 'within loop' takes no 'where'") != std::string::npos);
  CHECK(text.find("p.cw:5:7: error:") != std::string::npos);  // per: a string, not an int
  CHECK(text.find("p.cw:6:7: error:") != std::string::npos);  // cut: not a span
}

TEST_CASE("a name in a pair rule must say which end it is about") {
  auto r =
      load_pack(std::string(kWakeupLink) + "edge e { link wakeup where tid == 1 strength weak }\n");
  CHECK(r.render() ==
        "p.cw:7:28: error: unknown field 'tid'\n"
        "  edge e { link wakeup where tid == 1 strength weak }\n"
        "                             ^~~\n"
        "hint: name the events' fields through `from.` or `to.`\n");
}

TEST_CASE("an overlap link needs range fields present on both kinds") {
  auto missing =
      load_pack("link l { from send to recv join from.object == to.object pick overlap }\n");
  CHECK(missing.render() ==
        "p.cw:2:6: error: missing clause 'range' in link rule 'l'\n"
        "  link l { from send to recv join from.object == to.object pick overlap }\n"
        "       ^\n"
        "hint: pick overlap pairs byte ranges: say which fields hold them, `range offset, len`\n");
  auto wrong = load_pack(
      "link l { from send to ready join from.object == to.object pick overlap range offset, len "
      "}\n");
  CHECK(wrong.render() ==
        "p.cw:2:78: error: unknown field 'offset' of event 'ready'\n"
        "  link l { from send to ready join from.object == to.object pick overlap range offset, "
        "len }\n"
        "                                                                               ^~~~~~\n"
        "p.cw:2:86: error: unknown field 'len' of event 'ready'\n"
        "  link l { from send to ready join from.object == to.object pick overlap range offset, "
        "len }\n"
        "                                                                                       "
        "^~~\n");
}

TEST_CASE("malformed expectations in a test say what is wrong") {
  auto r = load_pack(
      "test t {\n"
      "  trace [[x]]\n"
      "  expect edge 1 -> 2 knd futex\n"
      "  expect edge 1 -> 2 strength strongest\n"
      "  expect split 1 at 5\n"
      "}\n"
      "test t { trace [[y]] }\n"
      "test u { expect segments 1 == 2 }\n");
  CHECK(r.render() ==
        "p.cw:4:22: error: unknown clause 'knd' in test\n"
        "    expect edge 1 -> 2 knd futex\n"
        "                       ^~~\n"
        "hint: did you mean 'kind'?\n"
        "p.cw:5:31: error: unknown strength 'strongest' (expected strong, weak or boosted)\n"
        "    expect edge 1 -> 2 strength strongest\n"
        "                                ^~~~~~~~~\n"
        "p.cw:6:21: error: 'at' needs a time like 1.5ms\n"
        "    expect split 1 at 5\n"
        "                      ^\n"
        "p.cw:8:1: error: duplicate test 't' in pack 'p'\n"
        "  test t { trace [[y]] }\n"
        "  ^~~~\n"
        "p.cw:2:1: note: first defined here\n"
        "  test t {\n"
        "  ^~~~\n"
        "p.cw:9:1: error: test 'u' has no trace\n"
        "  test u { expect segments 1 == 2 }\n"
        "  ^~~~\n"
        "hint: add one: trace [[ causeway-trace 1 ... ]] or trace file \"PATH\"\n");
}

TEST_CASE("an edge rule's ends_polling clause marks its edges as ends of polling loops") {
  const std::string link =
      "link l { from syscall_enter to syscall_exit join from.resource == to.syscall.resource pick "
      "next }\n";
  auto r = load_pack(link +
                     "edge a { link l strength strong ends_polling }\n"
                     "edge b { link l strength weak }\n");
  REQUIRE_MESSAGE(r.ok(), r.render());
  REQUIRE(r.rules.edges.size() == 2);
  CHECK(r.rules.edges[0].ends_polling);
  CHECK_FALSE(r.rules.edges[1].ends_polling);
  CHECK(load_pack(link + "edge a { link l strength strong ends_polling yes }\n")
            .render()
            .find("error: clause 'ends_polling' takes no value") != std::string::npos);
}

TEST_CASE("an edge rule's request clause marks its edges as carrying a request") {
  const std::string link =
      "link w { from wakeup to switch_in join from.target == to.tid pick next }\n";
  auto r = load_pack(link +
                     "edge a { link w strength strong request }\n"
                     "edge b { link w strength weak }\n");
  REQUIRE_MESSAGE(r.ok(), r.render());
  REQUIRE(r.rules.edges.size() == 2);
  CHECK(r.rules.edges[0].request);
  CHECK_FALSE(r.rules.edges[1].request);
  CHECK(load_pack(link + "edge a { link w strength strong request 1 }\n")
            .render()
            .find("error: clause 'request' takes no value\n") != std::string::npos);
}

TEST_CASE("an edge rule's from_thread clause names a tid field of the link's from event") {
  const std::string link =
      "link w { from wakeup to switch_in join from.target == to.tid pick next }\n";
  auto r = load_pack(link +
                     "edge a { link w from_thread cause strength strong }\n"
                     "edge b { link w strength weak }\n");
  REQUIRE_MESSAGE(r.ok(), r.render());
  REQUIRE(r.rules.edges.size() == 2);
  CHECK(r.rules.edges[0].from_thread == field("wakeup", "cause"));
  CHECK(r.rules.edges[1].from_thread == -1);
  CHECK(load_pack(link + "edge a { link w from_thread interrupt strength strong }\n")
            .render()
            .find("error: field 'interrupt' of event 'wakeup' is of type int, not tid") !=
        std::string::npos);
  CHECK(load_pack(link + "edge a { link w from_thread caus strength strong }\n")
            .render()
            .find("error: unknown field 'caus' of event 'wakeup'") != std::string::npos);
  CHECK(load_pack(link + "edge a { link w from_thread from.cause strength strong }\n")
            .render()
            .find("error: expected a field name here") != std::string::npos);
}

TEST_CASE("a split rule's loop clause marks its cuts as loop returns, and takes no value") {
  auto r = load_pack(
      "split l { at syscall_enter where name == \"poll\" loop }\n"
      "split w { at syscall_enter where name == \"read\" }\n");
  REQUIRE_MESSAGE(r.ok(), r.render());
  REQUIRE(r.rules.splits.size() == 2);
  CHECK(r.rules.splits[0].loop);
  CHECK_FALSE(r.rules.splits[1].loop);

  CHECK(load_pack("split l { at syscall_enter loop yes }\n").render() ==
        "p.cw:2:33: error: clause 'loop' takes no value\n"
        "  split l { at syscall_enter loop yes }\n"
        "                                  ^~~\n"
        "hint: write `loop` alone on its line: the cut is where the thread returns to its loop\n");
  CHECK(load_pack("flag f { symbol \"x\" loop }\n").render() ==
        "p.cw:2:21: error: unknown clause 'loop' in flag rule\n"
        "  flag f { symbol \"x\" loop }\n"
        "                      ^~~~\n");
}

TEST_CASE("answer rules compile their question, subject and choice, in load order") {
  auto r = load_pack(
      "answer q1 {\n"
      "  question edge\n"
      "  subject tid == 811 and ts == 1203456789\n"
      "  choose from.tid == 812 and from.ts == 1203000000 and edge.kind == \"message\"\n"
      "}\n"
      "answer q2 { question recurse  subject tid == 812 and ts == 5  choose recurse }\n"
      "answer q3 { question baseline subject thread.comm == \"cw-client\" and ts == 7  "
      "choose tid == 811 and ts == 9 }\n"
      "answer q4 { question edge subject tid == 1 and ts == 2  choose stop }\n"
      "answer q5 { question baseline subject stack matches \"*poll*\" and process.exe != \"x\""
      "  choose stop }\n");
  REQUIRE_MESSAGE(r.ok(), r.render());
  const auto& a = r.rules.answers;
  REQUIRE(a.size() == 5);
  CHECK(a[0].origin.id == "p/q1");
  CHECK(a[0].origin.loc.line == 2);
  CHECK(a[0].question == AnswerRule::Question::Edge);
  CHECK(a[0].choice == AnswerRule::Choice::Option);
  // subject: (tid == 811) and (ts == 1203456789), over the segment's first event
  const ExprNode& subject = root(a[0].subject);
  CHECK(subject.op == Op::And);
  const ExprNode& tid = kid(a[0].subject, kid(a[0].subject, subject, 0), 0);
  CHECK(tid.field.side == Side::Self);
  CHECK(tid.field.scope == FieldScope::Tid);
  // choose: from.tid == 812 and from.ts == … and edge.kind == "message"
  const ExprNode& choose = root(a[0].choose);
  CHECK(choose.op == Op::And);
  const ExprNode& kind_eq = kid(a[0].choose, choose, 1);
  CHECK(kid(a[0].choose, kind_eq, 0).field.scope == FieldScope::EdgeKind);
  const ExprNode& from_tid = kid(a[0].choose, kid(a[0].choose, kid(a[0].choose, choose, 0), 0), 0);
  CHECK(from_tid.field.side == Side::From);
  CHECK(from_tid.field.scope == FieldScope::Tid);

  CHECK(a[1].question == AnswerRule::Question::Recurse);
  CHECK(a[1].choice == AnswerRule::Choice::Recurse);
  CHECK(a[1].choose.empty());
  CHECK(a[2].question == AnswerRule::Question::Baseline);
  CHECK(a[2].choice == AnswerRule::Choice::Option);
  CHECK(kid(a[2].choose, kid(a[2].choose, root(a[2].choose), 0), 0).field.side == Side::Self);
  CHECK(a[3].choice == AnswerRule::Choice::Stop);
  CHECK(a[3].choose.empty());
  CHECK(a[4].choice == AnswerRule::Choice::Stop);
}

TEST_CASE("an answer names only what every event has: its events are of no known kind") {
  CHECK(load_pack("answer a { question edge subject name == \"read\" choose stop }\n").render() ==
        "p.cw:2:34: error: unknown field 'name' in an answer's subject\n"
        "  answer a { question edge subject name == \"read\" choose stop }\n"
        "                                   ^~~~\n"
        "hint: the subject is a segment's first event, of no known kind: name ts, tid, pid, "
        "cpu, kind, stack, thread.comm, thread.kernel, process.comm and process.exe\n");
  CHECK(load_pack("answer a { question baseline subject tid == 1 choose syscall.name == \"x\" }\n")
            .render() ==
        "p.cw:2:54: error: unknown field 'syscall.name' in an answer's choice\n"
        "  answer a { question baseline subject tid == 1 choose syscall.name == \"x\" }\n"
        "                                                       ^~~~~~~~~~~~\n"
        "hint: a baseline candidate is a segment's first event, of no known kind: name ts, tid, "
        "pid, cpu, kind, stack, thread.comm, thread.kernel, process.comm and process.exe\n");
  CHECK(load_pack("answer a { question edge subject tid == 1 choose from.tiid == 2 }\n").render() ==
        "p.cw:2:50: error: unknown field 'from.tiid' in an answer's choice\n"
        "  answer a { question edge subject tid == 1 choose from.tiid == 2 }\n"
        "                                                   ^~~~~~~~~\n"
        "hint: did you mean 'from.tid'?\n"
        "hint: the edge's events are of no known kind: name from. or to. with ts, tid, pid, "
        "cpu, kind, stack, thread.comm, thread.kernel, process.comm and process.exe; or "
        "edge.kind\n");
}

TEST_CASE("answer rules say what is wrong with their question and choice") {
  auto r = load_pack(
      "answer a {\n"
      "  question edg\n"
      "  subject tid == 1\n"
      "  choose stop\n"
      "}\n"
      "answer b { question edge subject tid == 1 choose recurse }\n"
      "answer c { question recurse subject tid == 1 choose tid == 2 }\n"
      "answer d { question edge question edge subject tid == 1 }\n"
      "answer a { question recurse subject tid == 1 choose stop }\n");
  CHECK(r.render() ==
        "p.cw:3:12: error: unknown question kind 'edg' (expected edge, baseline or recurse)\n"
        "    question edg\n"
        "             ^~~\n"
        "hint: did you mean 'edge'?\n"
        "p.cw:7:50: error: 'choose recurse' answers a recurse question, not an edge question\n"
        "  answer b { question edge subject tid == 1 choose recurse }\n"
        "                                                   ^~~~~~~\n"
        "hint: an edge question chooses an edge (over from., to. and edge.kind) or stop\n"
        "p.cw:8:53: error: a recurse question is answered by 'choose recurse' or 'choose stop'\n"
        "  answer c { question recurse subject tid == 1 choose tid == 2 }\n"
        "                                                      ^~~~~~~~\n"
        "p.cw:9:8: error: missing clause 'choose' in answer rule 'd'\n"
        "  answer d { question edge question edge subject tid == 1 }\n"
        "         ^\n"
        "p.cw:9:26: error: clause 'question' given twice\n"
        "  answer d { question edge question edge subject tid == 1 }\n"
        "                           ^~~~~~~~\n"
        "p.cw:10:8: error: duplicate rule id 'a' in pack 'p'\n"
        "  answer a { question recurse subject tid == 1 choose stop }\n"
        "         ^\n"
        "p.cw:2:8: note: first defined here\n"
        "  answer a {\n"
        "         ^\n");
}

TEST_CASE("a test's trace file is resolved against its file's folder; hang defaults to auto") {
  auto r = load_sources({make_source("packs/p/pack.cw",
                                     "pack p { version \"0.1.0\" }\n"
                                     "test a { trace file \"traces/one.cwt\" expect hang 5 }\n"
                                     "test b { trace file \"/abs/two.cwt\" hang \"5@1.25\"\n"
                                     "  expect root_cause 6 kind LongRunning\n"
                                     "  expect questions == 0 }\n")});
  REQUIRE_MESSAGE(r.ok(), r.render());
  REQUIRE(r.rules.tests.size() == 2);
  const PackTest& a = r.rules.tests[0];
  CHECK(a.trace_file == "packs/p/traces/one.cwt");
  CHECK(a.trace_text.empty());
  CHECK(a.trace_loc.line == 2);
  CHECK(a.trace_loc.col == 21);
  CHECK(a.hang == "auto");
  REQUIRE(a.expects.size() == 1);
  CHECK(a.expects[0].subject == Expectation::Subject::Hang);
  CHECK(a.expects[0].from_tid == 5);
  CHECK(a.expects[0].kind.empty());
  const PackTest& b = r.rules.tests[1];
  CHECK(b.trace_file == "/abs/two.cwt");
  CHECK(b.hang == "5@1.25");
  REQUIRE(b.expects.size() == 2);
  CHECK(b.expects[0].subject == Expectation::Subject::RootCause);
  CHECK(b.expects[0].from_tid == 6);
  CHECK(b.expects[0].kind == "LongRunning");
  CHECK(b.expects[1].subject == Expectation::Subject::Questions);
  CHECK(b.expects[1].cmp == "==");
  CHECK(b.expects[1].value == 0);
}

TEST_CASE("diagnosis expectations and hang say what is wrong") {
  auto r = load_pack(
      "test a {\n"
      "  trace [[x]]\n"
      "  hang \"811@1.5sec\"\n"
      "  expect hang 811 kind LongWiat\n"
      "  expect root_cause 0\n"
      "  expect hang 1 at 5ms\n"
      "}\n"
      "test b { trace [[x]] hang \"auto\" expect segments 1 == 1 }\n"
      "test c { trace file \"t.cwt\" hang \"1@2\" hang \"auto\" expect questions == 0 }\n");
  CHECK(r.render() ==
        "p.cw:4:8: error: 'hang' needs \"auto\", \"TID@SECONDS\" or a thread name\n"
        "    hang \"811@1.5sec\"\n"
        "         ^~~~~~~~~~~~\n"
        "hint: SECONDS count from the start of the trace, as in \"811@1.5\"; a thread name "
        "(\"cw-browser\") picks that thread's longest stretch\n"
        "p.cw:5:24: error: unknown hang kind 'LongWiat' (expected LongRunning, RepeatedYield or "
        "LongWait)\n"
        "    expect hang 811 kind LongWiat\n"
        "                         ^~~~~~~~\n"
        "hint: did you mean 'LongWait'?\n"
        "p.cw:6:21: error: expected a thread id\n"
        "    expect root_cause 0\n"
        "                      ^\n"
        "p.cw:7:17: error: unknown attribute 'at' of expect hang\n"
        "    expect hang 1 at 5ms\n"
        "                  ^~\n"
        "p.cw:9:22: error: 'hang' names the symptom of a diagnosis, and this test expects none\n"
        "  test b { trace [[x]] hang \"auto\" expect segments 1 == 1 }\n"
        "                       ^~~~\n"
        "hint: add `expect hang TID`, `expect root_cause TID` or `expect questions OP N`\n"
        "p.cw:10:40: error: clause 'hang' given twice\n"
        "  test c { trace file \"t.cwt\" hang \"1@2\" hang \"auto\" expect questions == 0 }\n"
        "                                         ^~~~\n");
}

TEST_CASE("hang specs: auto, a thread and seconds since the trace started, or a thread name") {
  auto spec = parse_hang_spec("811@1.5");
  REQUIRE(spec);
  CHECK_FALSE(spec->automatic);
  CHECK(spec->tid == 811);
  CHECK(spec->offset_ns == 1500000000);
  CHECK(parse_hang_spec("7@2")->offset_ns == 2000000000);
  CHECK(parse_hang_spec("7@0.000000001")->offset_ns == 1);
  CHECK(parse_hang_spec("auto")->automatic);
  auto named = parse_hang_spec("cw-browser");
  REQUIRE(named);
  CHECK(named->automatic);
  CHECK(named->thread_name == "cw-browser");
  CHECK(parse_hang_spec("auto")->thread_name.empty());
  CHECK(parse_hang_spec("tmux: server")->thread_name == "tmux: server");
  // Digits alone would be a thread id without its time; names are at most 15 bytes, with
  // no blank around them.
  for (const char* bad : {"", "811", "@1", "811@", "0@1", "811@1.", "811@-1", "x@1", "811@1s",
                          "4294967296@1", " cw-browser", "cw-browser ", "sixteen-chars-xx",
                          "cw\tbrowser"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_hang_spec(bad));
  }
}

TEST_CASE("boost and prune rules may ask the classified edge's kind; others may not") {
  auto r = load_pack(std::string(kWakeupLink) +
                     "edge b {\n  link wakeup\n  where edge.kind == \"wakeup\"\n"
                     "  strength boost\n}\n");
  REQUIRE_MESSAGE(r.ok(), r.render());
  const ExprNode& eq = root(r.rules.edges.at(0).where);
  CHECK(eq.op == Op::Eq);
  CHECK(kid(r.rules.edges[0].where, eq, 0).field.scope == FieldScope::EdgeKind);

  auto bad = load_pack(std::string(kWakeupLink) +
                       "edge s {\n  link wakeup\n  where edge.kind == \"wakeup\"\n"
                       "  strength strong\n}\n");
  CHECK(bad.render() ==
        "p.cw:9:9: error: 'edge.kind' is known only to boost and prune rules\n"
        "    where edge.kind == \"wakeup\"\n"
        "          ^~~~~~~~~\n"
        "hint: a strong or weak rule decides the kind; a boost or prune rule sees it\n");
}
