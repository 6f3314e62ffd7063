#include "dsl/parser.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "dsl/grammar.h"

namespace cw::dsl {
namespace {

// The tree as an S-expression, so a test states a whole expression in one line.
std::string show(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Int: return e.is_duration ? fmt::format("{}ns", e.ival) : std::to_string(e.ival);
    case ExprKind::Str: return fmt::format("\"{}\"", e.sval);
    case ExprKind::Bool: return e.ival ? "true" : "false";
    case ExprKind::Name: return fmt::format("{}", fmt::join(e.path, "."));
    case ExprKind::List:
    case ExprKind::Unary:
    case ExprKind::Binary:
    case ExprKind::Call: {
      std::string head = e.kind == ExprKind::List   ? "list"
                         : e.kind == ExprKind::Call ? fmt::format("call {}", fmt::join(e.path, "."))
                                                    : e.op;
      std::string out = "(" + head;
      for (const auto& a : e.args) out += " " + show(*a);
      return out + ")";
    }
  }
  return "?";
}

File parse_ok(const std::string& text) {
  ParseResult r = parse(make_source("t.cw", text));
  for (const auto& d : r.diagnostics) FAIL_CHECK(d.render());
  return std::move(r.file);
}

// The expression of `edge e { where EXPR }`.
std::string expr_of(const std::string& expr) {
  File f = parse_ok("edge e { where " + expr + " }");
  REQUIRE(f.rules.size() == 1);
  REQUIRE(f.rules[0].clauses.size() == 1);
  REQUIRE(f.rules[0].clauses[0].args.size() == 1);
  return show(*f.rules[0].clauses[0].args[0]);
}

std::string errors_of(const std::string& text, const ParseLimits& limits = {}) {
  ParseResult r = parse(make_source("t.cw", text), limits);
  std::string out;
  for (const auto& d : r.diagnostics) out += d.render();
  return out;
}

std::string text_at(const std::string& text, const SourceLoc& loc, uint32_t length) {
  return text.substr(loc.byte, length);
}

}  // namespace

TEST_CASE("the grammar has no rule that can loop without consuming input") {
  CHECK(tao::pegtl::analyze<grammar::file>(1) == 0);
}

TEST_CASE("a pack header keeps its id, clauses and their positions") {
  const std::string text =
      "# header\npack my.server {\n  version \"0.1.0\"\n  requires linux.kernel, glibc\n}\n";
  File f = parse_ok(text);
  REQUIRE(f.pack);
  CHECK(f.pack->id == "my.server");
  CHECK(f.pack->loc.line == 2);
  CHECK(f.pack->loc.col == 1);
  CHECK(f.pack->loc.byte == 9);
  CHECK(f.pack->id_loc.col == 6);
  REQUIRE(f.pack->clauses.size() == 2);
  CHECK(f.pack->clauses[0].keyword == "version");
  CHECK(f.pack->clauses[0].loc.line == 3);
  CHECK(f.pack->clauses[0].loc.col == 3);
  CHECK(show(*f.pack->clauses[0].args[0]) == "\"0.1.0\"");
  const auto& req = f.pack->clauses[1];
  REQUIRE(req.args.size() == 2);
  CHECK(show(*req.args[0]) == "linux.kernel");
  CHECK(show(*req.args[1]) == "glibc");
  CHECK(req.args[1]->loc.line == 4);
  CHECK(req.args[1]->loc.col == 26);
  CHECK(text_at(text, req.args[0]->loc, req.args[0]->length) == "linux.kernel");
}

TEST_CASE("rules of every kind, with dashed ids and clauses over several lines") {
  const std::string text =
      "split wait-entry.v2 {\n"
      "  at syscall_enter\n"
      "  where name in blocking_syscalls\n"
      "    and fd > 2   # trailing comment\n"
      "  cut before\n"
      "}\n"
      "batch b { within call where fn == \"loop\" item recv }\n"
      "link l { from send to recv join from.object == to.object range offset, len }\n"
      "edge e { link l strength strong priority -5 }\n"
      "flag f { symbol \"stop\" address 0x7f00 }\n";
  File f = parse_ok(text);
  REQUIRE(f.rules.size() == 5);
  const Rule& split = f.rules[0];
  CHECK(split.kind == RuleKind::Split);
  CHECK(split.id == "wait-entry.v2");
  CHECK(split.id_loc.col == 7);
  REQUIRE(split.clauses.size() == 3);
  CHECK(split.clauses[1].keyword == "where");
  CHECK(split.clauses[1].loc.line == 3);
  const Expr& where = *split.clauses[1].args[0];
  CHECK(show(where) == "(and (in name blocking_syscalls) (> fd 2))");
  CHECK(text_at(text, where.loc, where.length) == "name in blocking_syscalls\n    and fd > 2");
  CHECK(split.clauses[2].keyword == "cut");
  CHECK(split.clauses[2].loc.line == 5);

  std::vector<std::string> batch;
  for (const auto& c : f.rules[1].clauses) batch.push_back(c.keyword + " " + show(*c.args[0]));
  CHECK(batch == std::vector<std::string>{"within call", "where (== fn \"loop\")", "item recv"});
  CHECK(f.rules[2].kind == RuleKind::Link);
  CHECK(f.rules[2].clauses[3].args.size() == 2);
  CHECK(show(*f.rules[3].clauses[2].args[0]) == "-5");
  CHECK(f.rules[3].clauses[2].args[0]->loc.col == 42);
  CHECK(f.rules[3].clauses[2].args[0]->length == 2);
  CHECK(show(*f.rules[4].clauses[1].args[0]) == "32512");
}

TEST_CASE("operators bind from loosest to tightest: or, and, not, comparison, + -, * / %, -") {
  CHECK(expr_of("a or b and c") == "(or a (and b c))");
  CHECK(expr_of("a and b or c") == "(or (and a b) c)");
  CHECK(expr_of("not a and b") == "(and (not a) b)");
  CHECK(expr_of("not a == b") == "(not (== a b))");
  CHECK(expr_of("a == b + c * d") == "(== a (+ b (* c d)))");
  CHECK(expr_of("a - b - c") == "(- (- a b) c)");
  CHECK(expr_of("a / b % c * d") == "(* (% (/ a b) c) d)");
  CHECK(expr_of("-a * b") == "(* (- a) b)");
  CHECK(expr_of("(a + b) * c") == "(* (+ a b) c)");
  CHECK(expr_of("x not in L or y in [1, 2]") == "(or (not in x L) (in y (list 1 2)))");
  CHECK(expr_of("s matches \"x*\" and not t") == "(and (matches s \"x*\") (not t))");
  CHECK(expr_of("a <= b != c >= d") == "(>= (!= (<= a b) c) d)");
  CHECK(expr_of("to.ts - from.ts < 5ms") == "(< (- to.ts from.ts) 5000000ns)");
  CHECK(expr_of("shared_symbols(from.stack, to.stack, ignore) > 2") ==
        "(> (call shared_symbols from.stack to.stack ignore) 2)");
  CHECK(expr_of("lua.score(len(x)) + f()") == "(+ (call lua.score (call len x)) (call f))");
  CHECK(expr_of("true or false") == "(or true false)");
  CHECK(expr_of("notes or android") == "(or notes android)");
}

TEST_CASE("a binary expression spans its operands, parentheses included") {
  const std::string text = "edge e { where (a + b) * c }";
  File f = parse_ok(text);
  const Expr& mul = *f.rules[0].clauses[0].args[0];
  CHECK(text_at(text, mul.loc, mul.length) == "(a + b) * c");
  CHECK(text_at(text, mul.args[0]->loc, mul.args[0]->length) == "(a + b)");
  CHECK(mul.args[1]->loc.col == 26);
}

TEST_CASE("integers and durations fold to one integer, durations in nanoseconds") {
  CHECK(expr_of("42") == "42");
  CHECK(expr_of("0x7f00") == "32512");
  CHECK(expr_of("-7") == "-7");
  CHECK(expr_of("- -7") == "7");
  CHECK(expr_of("7ns") == "7ns");
  CHECK(expr_of("3us") == "3000ns");
  CHECK(expr_of("1.5ms") == "1500000ns");
  CHECK(expr_of("2s") == "2000000000ns");
  CHECK(expr_of("0.000000001s") == "1ns");
  CHECK(expr_of("1.25us") == "1250ns");
  CHECK(expr_of("-1ms") == "-1000000ns");
  CHECK(expr_of("9223372036854775807") == "9223372036854775807");
  File f = parse_ok("edge e { where 10 within 1.5ms }");
  CHECK_FALSE(f.rules[0].clauses[0].args[0]->is_duration);
  CHECK(f.rules[0].clauses[1].args[0]->is_duration);
  CHECK(f.rules[0].clauses[1].args[0]->length == 5);
}

TEST_CASE("strings take escapes; long strings are verbatim without the first newline") {
  CHECK(expr_of(R"("a\"b\\c\nd\te")") == "\"a\"b\\c\nd\te\"");
  CHECK(expr_of("[[\nline1\n  line2]]") == "\"line1\n  line2\"");
  CHECK(expr_of("[[no newline]]") == "\"no newline\"");
  CHECK(expr_of("[==[a ]] b ]=] c]==]") == "\"a ]] b ]=] c\"");
  CHECK(expr_of("[[\r\ncrlf]]") == "\"crlf\"");
  CHECK(expr_of("\"# not a comment\"") == "\"# not a comment\"");
}

TEST_CASE("lists nest, allow a trailing comma, and a list may be empty") {
  CHECK(expr_of("[\"read\", \"recvfrom\", 3]") == "(list \"read\" \"recvfrom\" 3)");
  CHECK(expr_of("[ [1], [2, [3]] ]") == "(list (list 1) (list 2 (list 3)))");
  CHECK(expr_of("[\n  \"a\",  # one\n  \"b\",\n]") == "(list \"a\" \"b\")");
  CHECK(expr_of("[]") == "(list)");
  File f = parse_ok("list blocking = [\"read\", \"futex\"]\n");
  REQUIRE(f.lists.size() == 1);
  CHECK(f.lists[0].name == "blocking");
  CHECK(show(*f.lists[0].value) == "(list \"read\" \"futex\")");
  CHECK(f.lists[0].value->loc.col == 17);
  CHECK(f.lists[0].value->length == 17);
}

TEST_CASE("a lua block keeps its code and the line the code starts on") {
  File f =
      parse_ok("# x\n\nlua [[\nfunction score(a)\n  return 1\nend\n]]\nlua [=[return \"]]\"]=]\n");
  REQUIRE(f.lua.size() == 2);
  CHECK(f.lua[0].code == "function score(a)\n  return 1\nend\n");
  CHECK(f.lua[0].loc.line == 3);
  CHECK(f.lua[0].first_line == 4);
  CHECK(f.lua[1].code == "return \"]]\"");
  CHECK(f.lua[1].first_line == 8);
}

TEST_CASE("a test block has its trace and every form of expectation") {
  const std::string text =
      "test \"futex wake is strong\" {\n"
      "  trace [[\n"
      "    causeway-trace 1\n"
      "  ]]\n"
      "  expect edge 101 -> 102 kind futex strength strong rule futex.wake at 2ms\n"
      "  expect no edge 101 -> 103 link wakeup\n"
      "  expect split 101 at 1.5ms rule linux.kernel/wait-entry\n"
      "  expect no split 102\n"
      "  expect segments 101 == 3\n"
      "  expect stat over_connections <= 1 + 1\n"
      "}\n"
      "test short_name { trace \"causeway-trace 1\\n\" }\n";
  File f = parse_ok(text);
  REQUIRE(f.tests.size() == 2);
  const TestBlock& t = f.tests[0];
  CHECK(t.name == "futex wake is strong");
  CHECK(t.has_trace);
  CHECK(t.trace_text == "    causeway-trace 1\n  ");
  CHECK(t.trace_loc.line == 3);
  CHECK(t.trace_loc.col == 1);
  CHECK(text.substr(t.trace_loc.byte, 8) == "    caus");
  REQUIRE(t.expects.size() == 6);

  const Expect& edge = t.expects[0];
  CHECK(edge.loc.line == 5);
  CHECK(edge.loc.col == 3);
  CHECK_FALSE(edge.negated);
  CHECK(edge.subject == "edge");
  CHECK(edge.subject_loc.col == 10);
  REQUIRE(edge.operands.size() == 2);
  CHECK(show(*edge.operands[0]) == "101");
  CHECK(show(*edge.operands[1]) == "102");
  CHECK(edge.operands[1]->loc.col == 22);
  std::vector<std::string> attrs;
  for (const auto& a : edge.attrs) attrs.push_back(a.name + "=" + show(*a.value));
  CHECK(attrs == std::vector<std::string>{"kind=futex", "strength=strong", "rule=futex.wake",
                                          "at=2000000ns"});
  CHECK(edge.attrs[2].loc.col == 53);
  CHECK(edge.attrs[2].value->path == std::vector<std::string>{"futex", "wake"});

  CHECK(t.expects[1].negated);
  CHECK(t.expects[1].attrs[0].name == "link");
  const Expect& split = t.expects[2];
  CHECK(split.subject == "split");
  REQUIRE(split.operands.size() == 1);
  CHECK(split.attrs[1].value->kind == ExprKind::Name);
  CHECK(show(*split.attrs[1].value) == "linux.kernel/wait-entry");
  CHECK(t.expects[3].negated);
  CHECK(t.expects[3].subject == "split");

  const Expect& segments = t.expects[4];
  CHECK(segments.subject == "segments");
  CHECK(segments.cmp == "==");
  REQUIRE(segments.operands.size() == 2);
  CHECK(show(*segments.operands[1]) == "3");
  const Expect& stat = t.expects[5];
  CHECK(stat.cmp == "<=");
  CHECK(show(*stat.operands[0]) == "over_connections");
  CHECK(show(*stat.operands[1]) == "(+ 1 1)");

  CHECK(f.tests[1].name == "short_name");
  CHECK(f.tests[1].trace_text == "causeway-trace 1\n");
  CHECK(f.tests[1].trace_loc.col == 26);
}

TEST_CASE("a split rule's `loop` is a clause with no value, on its own or before the next clause") {
  const std::string text =
      "split a {\n  at syscall_enter\n  loop  # the loop's wait\n  cut before\n}\n"
      "split b { loop where x loop }\n"
      "split c { loop x }\n";
  File f = parse_ok(text);
  REQUIRE(f.rules.size() == 3);
  const Clause& loop = f.rules[0].clauses.at(1);
  CHECK(loop.keyword == "loop");
  CHECK(loop.args.empty());
  CHECK(loop.loc.line == 3);
  CHECK(loop.loc.col == 3);
  CHECK(f.rules[0].clauses.at(2).keyword == "cut");
  std::vector<std::string> b;
  for (const auto& c : f.rules[1].clauses)
    b.push_back(c.keyword + ":" + std::to_string(c.args.size()));
  CHECK(b == std::vector<std::string>{"loop:0", "where:1", "loop:0"});
  // A value after `loop` makes it an ordinary clause; the checker says it takes none.
  REQUIRE(f.rules[2].clauses.size() == 1);
  CHECK(show(*f.rules[2].clauses[0].args.at(0)) == "x");
}

TEST_CASE("an answer rule is a rule whose clauses are question, subject and choose") {
  File f = parse_ok(
      "answer q1 {\n"
      "  question edge\n"
      "  subject tid == 811 and ts == 1203456789\n"
      "  choose from.tid == 812 and edge.kind == \"message\"\n"
      "}\n"
      "answer q2 { question recurse  subject tid == 812 and ts == 5  choose recurse }\n");
  REQUIRE(f.rules.size() == 2);
  CHECK(f.rules[0].kind == RuleKind::Answer);
  CHECK(f.rules[0].id == "q1");
  std::vector<std::string> clauses;
  for (const auto& r : f.rules)
    for (const auto& c : r.clauses) clauses.push_back(c.keyword + " " + show(*c.args.at(0)));
  CHECK(clauses ==
        std::vector<std::string>{"question edge", "subject (and (== tid 811) (== ts 1203456789))",
                                 "choose (and (== from.tid 812) (== edge.kind \"message\"))",
                                 "question recurse", "subject (and (== tid 812) (== ts 5))",
                                 "choose recurse"});
}

TEST_CASE("a test may name a trace file, a hang, and expect a diagnosis") {
  const std::string text =
      "test t {\n"
      "  trace file \"traces/one.cwt\"\n"
      "  hang \"811@1.5\"\n"
      "  expect hang 811 kind LongWait\n"
      "  expect root_cause 812\n"
      "  expect questions <= 2\n"
      "}\n";
  File f = parse_ok(text);
  REQUIRE(f.tests.size() == 1);
  const TestBlock& t = f.tests[0];
  CHECK(t.has_trace);
  CHECK(t.trace_is_file);
  CHECK(t.trace_file == "traces/one.cwt");
  CHECK(t.trace_text.empty());
  CHECK(t.trace_file_loc.line == 2);
  CHECK(t.trace_file_loc.col == 14);
  REQUIRE(t.clauses.size() == 1);
  CHECK(t.clauses[0].keyword == "hang");
  CHECK(show(*t.clauses[0].args.at(0)) == "\"811@1.5\"");
  REQUIRE(t.expects.size() == 3);
  const Expect& hang = t.expects[0];
  CHECK(hang.subject == "hang");
  CHECK(hang.subject_loc.col == 10);
  REQUIRE(hang.operands.size() == 1);
  CHECK(show(*hang.operands[0]) == "811");
  REQUIRE(hang.attrs.size() == 1);
  CHECK(hang.attrs[0].name == "kind");
  CHECK(show(*hang.attrs[0].value) == "LongWait");
  CHECK(t.expects[1].subject == "root_cause");
  CHECK(t.expects[1].attrs.empty());
  const Expect& questions = t.expects[2];
  CHECK(questions.subject == "questions");
  CHECK(questions.cmp == "<=");
  REQUIRE(questions.operands.size() == 1);
  CHECK(show(*questions.operands[0]) == "2");
}

TEST_CASE("comments and blank lines may sit anywhere between tokens") {
  File f =
      parse_ok("#!\n# a\nedge # b\n e # c\n { # d\n where # e\n a # f\n == # g\n\n b # h\n } # i");
  REQUIRE(f.rules.size() == 1);
  CHECK(show(*f.rules[0].clauses[0].args[0]) == "(== a b)");
}

TEST_CASE("the pack-folder examples of the docs parse") {
  File f = parse_ok(R"(pack my.server {
  version "0.1.0"
  engine ">= 0.1"
  requires linux.kernel
  description "The request loop of my-server"
}

# my-server handles every client inside serve_loop(); cut it per request.
batch serve_loop.items {
  within call where fn == "serve_loop"
  item recv
  neighbour none
}
)");
  CHECK(f.pack->clauses.size() == 4);
  CHECK(f.rules.size() == 1);
}

// ---------------------------------------------------------------- errors

TEST_CASE("error: a misspelt item names the items and suggests the nearest") {
  CHECK(errors_of("edge a { link l }\n\nrulez x {\n}\n") ==
        "t.cw:3:1: error: unknown item 'rulez' (expected pack, list, lua, split, batch, link, "
        "edge, flag, holder, answer, test or disable)\n"
        "  rulez x {\n"
        "  ^~~~~\n");
  CHECK(errors_of("splt x {}\n") ==
        "t.cw:1:1: error: unknown item 'splt' (expected pack, list, lua, split, batch, link, "
        "edge, flag, holder, answer, test or disable)\n"
        "  splt x {}\n"
        "  ^~~~\n"
        "hint: did you mean 'split'?\n");
  CHECK(errors_of("{ }") ==
        "t.cw:1:1: error: expected an item (pack, list, lua, split, batch, link, edge, flag, "
        "holder, answer, test or disable), found '{'\n"
        "  { }\n"
        "  ^\n");
}

TEST_CASE("error: a rule left open is reported where the next item starts") {
  CHECK(errors_of("edge futex.wake {\n  link wakeup\n  strength strong\n\nsplit s { at x }\n") ==
        "t.cw:5:1: error: expected '}' to close rule 'futex.wake'\n"
        "  split s { at x }\n"
        "  ^~~~~\n");
}

TEST_CASE("error: a rule still open at the end of the file") {
  CHECK(errors_of("edge futex.wake {\n  link wakeup\n\n") ==
        "t.cw:2:14: error: expected '}' to close rule 'futex.wake'\n"
        "    link wakeup\n"
        "               ^\n");
}

TEST_CASE("error: a clause keyword without an expression") {
  CHECK(errors_of("split s {\n  at x\n  where\n}\n") ==
        "t.cw:4:1: error: expected an expression after 'where'\n"
        "  }\n"
        "  ^\n");
  CHECK(errors_of("edge e { where a == ) }") ==
        "t.cw:1:21: error: expected an expression after '=='\n"
        "  edge e { where a == ) }\n"
        "                      ^\n");
}

TEST_CASE("error: an unterminated string points at its opening quote") {
  CHECK(errors_of("flag f {\n  symbol \"stop_flag\n}\n") ==
        "t.cw:2:10: error: unterminated string\n"
        "    symbol \"stop_flag\n"
        "           ^\n"
        "hint: a string ends on its line; use [[ ... ]] for text over several lines\n");
}

TEST_CASE("error: an unknown escape in a string") {
  CHECK(errors_of(R"(flag f { symbol "a\qb" })") ==
        "t.cw:1:19: error: unknown escape '\\q' in string\n"
        "  flag f { symbol \"a\\qb\" }\n"
        "                    ^~\n"
        "hint: the escapes are \\\", \\\\, \\n and \\t\n");
}

TEST_CASE("error: a NUL byte in a string is refused, not dropped") {
  const std::string text = std::string("flag f { symbol \"a") + '\0' + "b\" }";
  const std::string errors = errors_of(text);
  CHECK(errors.rfind("t.cw:1:19: error: a NUL byte (byte 18) in a string\n", 0) == 0);
  CHECK(errors.find("hint: a string cannot hold a NUL") != std::string::npos);
}

TEST_CASE("error: a NUL byte in a long string is refused, as in a short one") {
  const std::string lua = std::string("lua [[\nx = 'a") + '\0' + "b'\n]]\n";
  const std::string errors = errors_of(lua);
  CHECK(errors.rfind("t.cw:2:7: error: a NUL byte (byte 13) in a string\n", 0) == 0);
  CHECK(errors.find("hint: a string cannot hold a NUL") != std::string::npos);
  const std::string trace = std::string("test \"t\" { trace [==[\n") + '\0' + "\n]==] }\n";
  CHECK(errors_of(trace).rfind("t.cw:2:1: error: a NUL byte (byte 22) in a string\n", 0) == 0);
  // Without a NUL the end of the text still says where the long string began.
  CHECK(errors_of("lua [[\nx = 1\n").rfind("t.cw:1:5: error: unterminated long string", 0) == 0);
}

TEST_CASE("a UTF-8 byte order mark may open a file") {
  CHECK(errors_of("\xEF\xBB\xBFpack p { version \"1.0.0\" }\n") == "");
  // Only at the start: elsewhere it is a stray byte like any other.
  CHECK(errors_of("pack p { version \"1.0.0\" }\n\xEF\xBB\xBF").find("error") != std::string::npos);
}

TEST_CASE("error: a '-' in a pack id is named, with the characters an id may hold") {
  CHECK(errors_of("pack my-team.server { version \"1.0.0\" }\n") ==
        "t.cw:1:8: error: a pack id cannot hold '-'\n"
        "  pack my-team.server { version \"1.0.0\" }\n"
        "         ^\n"
        "hint: a pack id is names of letters, digits and '_' joined by '.', e.g. my_team.server\n");
}

TEST_CASE("error: an unterminated long string points at its opener") {
  CHECK(errors_of("lua [==[\nreturn 1\n]]\n") ==
        "t.cw:1:5: error: unterminated long string (expected ']==]')\n"
        "  lua [==[\n"
        "      ^~~~\n");
}

TEST_CASE("error: brackets left open name what they close") {
  CHECK(errors_of("edge e { where (a + b }") ==
        "t.cw:1:23: error: expected ')' to close '('\n"
        "  edge e { where (a + b }\n"
        "                        ^\n");
  CHECK(errors_of("list l = [\"a\",\n  \"b\"\n\nedge e { link l }\n") ==
        "t.cw:4:1: error: expected ']' to close the list opened on line 1\n"
        "  edge e { link l }\n"
        "  ^~~~\n");
  CHECK(errors_of("edge e { cost lua.score(a, b }") ==
        "t.cw:1:30: error: expected ')' to close the call to 'lua.score'\n"
        "  edge e { cost lua.score(a, b }\n"
        "                               ^\n");
}

TEST_CASE("error: numbers with unknown units, bad hex digits or out of range") {
  CHECK(errors_of("link l { within 5sec }") ==
        "t.cw:1:18: error: unknown unit 'sec' (expected ns, us, ms or s)\n"
        "  link l { within 5sec }\n"
        "                   ^~~\n");
  CHECK(errors_of("link l { within 5mss }") ==
        "t.cw:1:18: error: unknown unit 'mss' (expected ns, us, ms or s)\n"
        "  link l { within 5mss }\n"
        "                   ^~~\n"
        "hint: did you mean 'ms'?\n");
  CHECK(errors_of("flag f { address 0x7fg }") ==
        "t.cw:1:22: error: unexpected 'g' after a hex number\n"
        "  flag f { address 0x7fg }\n"
        "                       ^\n");
  CHECK(errors_of("flag f { address 99999999999999999999 }") ==
        "t.cw:1:18: error: number out of range (the largest is 9223372036854775807)\n"
        "  flag f { address 99999999999999999999 }\n"
        "                   ^~~~~~~~~~~~~~~~~~~~\n");
  CHECK(errors_of("link l { within 1.5 }") ==
        "t.cw:1:17: error: a number with a fraction is a duration and needs a unit (ns, us, ms "
        "or s)\n"
        "  link l { within 1.5 }\n"
        "                  ^~~\n");
}

TEST_CASE("error: malformed expectations in a test") {
  CHECK(errors_of("test t {\n  expect segment 1 == 2\n}\n") ==
        "t.cw:2:10: error: expected edge, split, segments, stat, hang, root_cause or questions "
        "after 'expect', found 'segment'\n"
        "    expect segment 1 == 2\n"
        "           ^~~~~~~\n"
        "hint: did you mean 'segments'?\n");
  CHECK(errors_of("test t { expect edge 1 => 2 }") ==
        "t.cw:1:24: error: expected '->' between the two threads of an edge, found '='\n"
        "  test t { expect edge 1 => 2 }\n"
        "                         ^\n");
  CHECK(errors_of("test t { expect segments 1 3 }") ==
        "t.cw:1:28: error: expected a comparison (==, !=, <, <=, >, >=), found '3'\n"
        "  test t { expect segments 1 3 }\n"
        "                             ^\n");
  CHECK(errors_of("test t { expect no stat x == 1 }") ==
        "t.cw:1:20: error: expected edge or split after 'expect no', found 'stat'\n"
        "  test t { expect no stat x == 1 }\n"
        "                     ^~~~\n");
  CHECK(errors_of("test \"t t\" { trace 5 }") ==
        "t.cw:1:20: error: expected a string or file \"PATH\" after 'trace'\n"
        "  test \"t t\" { trace 5 }\n"
        "                     ^\n");
  CHECK(errors_of("test t { trace file traces/a.cwt }") ==
        "t.cw:1:21: error: expected a string (the trace file's path) after 'trace file'\n"
        "  test t { trace file traces/a.cwt }\n"
        "                      ^~~~~~\n");
  CHECK(errors_of("test t {\n  trace [[x]]\n  trace file \"a.cwt\"\n}\n") ==
        "t.cw:3:3: error: a test has one trace; this is a second one\n"
        "    trace file \"a.cwt\"\n"
        "    ^~~~~\n");
  CHECK(errors_of("test t { expect questions 3 }") ==
        "t.cw:1:27: error: expected a comparison (==, !=, <, <=, >, >=), found '3'\n"
        "  test t { expect questions 3 }\n"
        "                            ^\n");
  CHECK(errors_of("test t { expect no hang 5 }") ==
        "t.cw:1:20: error: expected edge or split after 'expect no', found 'hang'\n"
        "  test t { expect no hang 5 }\n"
        "                     ^~~~\n");
}

TEST_CASE("error: item heads with a piece missing") {
  CHECK(errors_of("edge { }") ==
        "t.cw:1:6: error: expected a rule id after 'edge'\n"
        "  edge { }\n"
        "       ^\n");
  CHECK(errors_of("edge e link l }") ==
        "t.cw:1:8: error: expected '{' to open rule 'e'\n"
        "  edge e link l }\n"
        "         ^~~~\n");
  CHECK(errors_of("list l [1]") ==
        "t.cw:1:8: error: expected '=' after list name 'l'\n"
        "  list l [1]\n"
        "         ^\n");
  CHECK(errors_of("list l = [[1], [2]]") ==
        "t.cw:1:10: error: expected a list [ ... ] after 'list l ='\n"
        "  list l = [[1], [2]]\n"
        "           ^~~~~~~~~~\n"
        "hint: '[[' opens a long string, as in Lua; write '[ [' for a list of lists\n");
  CHECK(errors_of("lua \"x\"") ==
        "t.cw:1:5: error: expected a long string [[ ... ]] after 'lua'\n"
        "  lua \"x\"\n"
        "      ^~~\n");
  CHECK(errors_of("pack a {}\npack b {}\n") ==
        "t.cw:2:1: error: a file has one pack header; this is a second one\n"
        "  pack b {}\n"
        "  ^~~~\n");
}

TEST_CASE("after an error parsing goes on at the next item, keeping what parsed") {
  const std::string text =
      "edge a {\n  link l\n  where x == )\n  strength strong\n}\n"
      "edge b { link l }\n"
      "split c {\n  at\n}\n"
      "  link d { from x to y }\n";
  ParseResult r = parse(make_source("t.cw", text));
  REQUIRE(r.diagnostics.size() == 2);
  CHECK_FALSE(r.ok());
  CHECK(r.diagnostics[0].loc.line == 3);
  CHECK(r.diagnostics[0].message == "expected an expression after '=='");
  CHECK(r.diagnostics[1].loc.line == 9);
  CHECK(r.diagnostics[1].message == "expected an expression after 'at'");
  REQUIRE(r.file.rules.size() == 2);
  CHECK(r.file.rules[0].id == "b");
  CHECK(r.file.rules[1].id == "d");
  CHECK(r.file.rules[1].loc.col == 3);
}

TEST_CASE("nesting is limited, so hostile input cannot overflow the stack") {
  const std::string deep(100000, '(');
  // The 100,000-byte line is quoted as a window from 40 bytes before the caret (col 81).
  CHECK(errors_of("edge e { where " + deep + " }").substr(0, 65) ==
        "t.cw:1:81: error: expression nested too deeply (limit 64)\n  ...((");
  std::string nots;
  for (int i = 0; i < 100000; ++i) nots += "not ";
  CHECK(parse(make_source("t.cw", "edge e { where " + nots + "x }")).diagnostics.at(0).message ==
        "expression nested too deeply (limit 64)");
  std::string sum = "1";
  for (int i = 0; i < 100000; ++i) sum += "+1";
  CHECK(parse(make_source("t.cw", "edge e { where " + sum + " }")).diagnostics.at(0).message ==
        "expression nested too deeply (limit 64)");
  std::string lists;
  for (int i = 0; i < 100000; ++i) lists += "[ ";
  CHECK(parse(make_source("t.cw", "list l = " + lists)).diagnostics.at(0).message ==
        "expression nested too deeply (limit 64)");

  const std::string ok = std::string(63, '(') + "x" + std::string(63, ')');
  CHECK(expr_of(ok) == "x");
  ParseLimits shallow;
  shallow.max_depth = 3;
  CHECK(errors_of("edge e { where f(g(h(x))) }", shallow) ==
        "t.cw:1:22: error: expression nested too deeply (limit 3)\n"
        "  edge e { where f(g(h(x))) }\n"
        "                       ^\n");
}

TEST_CASE("a file over the size limit is refused") {
  ParseLimits limits;
  limits.max_bytes = 10;
  CHECK(errors_of("edge e { link l }", limits) ==
        "t.cw: error: file is too large (17 bytes, the limit is 10)\n");
}

TEST_CASE("a line that starts with a clause keyword starts a new clause") {
  CHECK(errors_of("edge e {\n  link wakeup\n  where from.tid ==\n  strength weak\n}\n") ==
        "t.cw:4:3: error: expected an expression after '=='\n"
        "    strength weak\n"
        "    ^~~~~~~~\n");
  // ... unless an operator follows it: then the line continues the expression.
  CHECK(errors_of("split s {\n  at syscall_enter\n  where name == \"a\" or\n    kind == \"b\"\n}\n")
            .empty());
  CHECK(errors_of("edge e {\n  link w\n  where a\n    and to.tid == 1\n  strength weak\n}\n")
            .empty());
}

TEST_CASE("disable names a rule, qualified or local, and says what is missing") {
  File f =
      parse_ok("pack p { version \"1\" }\ndisable linux.kernel/wakeup.from-irq\ndisable mine\n");
  REQUIRE(f.disables.size() == 2);
  CHECK(f.disables[0].rule == "linux.kernel/wakeup.from-irq");
  CHECK(f.disables[0].loc.line == 2);
  CHECK(f.disables[0].rule_loc.col == 9);
  CHECK(f.disables[1].rule == "mine");
  CHECK(errors_of("disable \"x\"\n") ==
        "t.cw:1:9: error: expected a rule id after 'disable'\n"
        "  disable \"x\"\n"
        "          ^~~\n");
}

}  // namespace cw::dsl

TEST_CASE("pack ids and string literals, as the tools that write packs need them") {
  CHECK(cw::dsl::is_pack_id("node.libuv"));
  CHECK(cw::dsl::is_pack_id("a_b.c2"));
  for (const char* bad : {"", ".a", "a.", "a..b", "9lives", "a.9b", "a-b", "a b"}) {
    CAPTURE(bad);
    CHECK_FALSE(cw::dsl::is_pack_id(bad));
  }
  CHECK(cw::dsl::string_literal(R"(say "hi" \ bye)") == R"("say \"hi\" \\ bye")");
  // What it writes parses back to the same text.
  auto r = cw::dsl::parse(
      cw::make_source("t.cw", "list l = [" + cw::dsl::string_literal(R"(a"b\c)") + "]\n"));
  REQUIRE(r.ok());
  REQUIRE(r.file.lists.size() == 1);
}
