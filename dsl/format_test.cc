#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>

#include "dsl/parser.h"

namespace cw::dsl {
namespace {

std::string format(const std::string& text) {
  return format_source(make_source("t.cw", text));
}

// Everything of a parse but positions: what the formatter must not change.
std::string shape(const Expr& e) {
  std::string s = fmt::format("{}:{}:{}:{}:{}:{}(", static_cast<int>(e.kind), e.ival, e.is_duration,
                              e.sval, fmt::join(e.path, "."), e.op);
  for (const auto& a : e.args) s += shape(*a) + ",";
  return s + ")";
}
std::string shape(const std::vector<Clause>& clauses) {
  std::string s;
  for (const auto& c : clauses) {
    s += c.keyword + "[";
    for (const auto& a : c.args) s += shape(*a) + ";";
    s += "]";
  }
  return s;
}
std::string shape(const std::string& text) {
  ParseResult r = parse(make_source("t.cw", text));
  REQUIRE(r.ok());
  const File& f = r.file;
  std::string s;
  if (f.pack) s += "pack " + f.pack->id + shape(f.pack->clauses) + "\n";
  for (const auto& l : f.lists) s += "list " + l.name + shape(*l.value) + "\n";
  for (const auto& l : f.lua) s += "lua " + l.code + "\n";
  for (const auto& r : f.rules)
    s += std::string(rule_keyword(r.kind)) + " " + r.id + shape(r.clauses) + "\n";
  for (const auto& d : f.disables) s += "disable " + d.rule + "\n";
  for (const auto& t : f.tests) {
    s += "test " + t.name + "|" + t.trace_text + "|" + std::to_string(t.trace_is_file) +
         t.trace_file + "|" + shape(t.clauses);
    for (const auto& e : t.expects) {
      s += fmt::format("expect {} {} {}", e.negated, e.subject, e.cmp);
      for (const auto& o : e.operands) s += shape(*o);
      for (const auto& a : e.attrs) s += a.name + shape(*a.value);
    }
    s += "\n";
  }
  return s;
}

const char* const kMessy =
    "# my pack\n\n"
    "pack   my.server{version \"0.1.0\"   requires linux.kernel,glibc}\n"
    "list  blocking=[\"read\",\n  \"futex\", # the one that matters\n]\n"
    "lua [=[\nfunction f(a) return a end\n]=]\n"
    "edge futex.wake {  # about futex.wake\n"
    "  link wakeup where (a+b)*c>0x10 and not(x or y)\n"
    "  # own line\n"
    "  cost lua.f( a , -5 , - x,[ [1]],- (3) , 1.5ms)  # cost\n"
    "# before close\n"
    "}\n"
    "test \"t\" { trace [[\n  causeway-trace 1\n]] expect no edge 1->2 kind k rule "
    "linux.kernel/b-c\n"
    "expect segments (1+2) == 3 expect stat x>=1 }\n"
    "# end\n";

}  // namespace

TEST_CASE("format lays a file out canonically, keeping comments and literals") {
  CHECK(format(kMessy) ==
        "# my pack\n"
        "\n"
        "pack my.server {\n"
        "  version \"0.1.0\"\n"
        "  requires linux.kernel, glibc\n"
        "}\n"
        "\n"
        "# the one that matters\n"
        "list blocking = [\"read\", \"futex\"]\n"
        "\n"
        "lua [=[\nfunction f(a) return a end\n]=]\n"
        "\n"
        "edge futex.wake {  # about futex.wake\n"
        "  link wakeup\n"
        "  where (a + b) * c > 0x10 and not (x or y)\n"
        "  # own line\n"
        "  cost lua.f(a, -5, -x, [ [1]], -3, 1.5ms)  # cost\n"
        "  # before close\n"
        "}\n"
        "\n"
        "test \"t\" {\n"
        "  trace [[\n  causeway-trace 1\n]]\n"
        "  expect no edge 1 -> 2 kind k rule linux.kernel/b-c\n"
        "  expect segments 1 + 2 == 3\n"
        "  expect stat x >= 1\n"
        "}\n"
        "# end\n");
}

const char* const kDiagnosis =
    "split loop.wait { at syscall_enter\n loop   # idle\n cut before }\n"
    "answer q2 { question recurse  subject tid==812 and ts==5  choose recurse }\n"
    "test \"d\" { trace  file   \"traces/a.cwt\" hang \"811@1.5\"\n"
    "expect hang 811 kind LongWait expect root_cause 812 expect questions<=2 }\n";

TEST_CASE("format lays out loop clauses, answer rules, trace files and diagnosis expectations") {
  CHECK(format(kDiagnosis) ==
        "split loop.wait {\n"
        "  at syscall_enter\n"
        "  loop  # idle\n"
        "  cut before\n"
        "}\n"
        "\n"
        "answer q2 {\n"
        "  question recurse\n"
        "  subject tid == 812 and ts == 5\n"
        "  choose recurse\n"
        "}\n"
        "\n"
        "test \"d\" {\n"
        "  trace file \"traces/a.cwt\"\n"
        "  hang \"811@1.5\"\n"
        "  expect hang 811 kind LongWait\n"
        "  expect root_cause 812\n"
        "  expect questions <= 2\n"
        "}\n");
}

TEST_CASE("format keeps disable items in place") {
  const std::string text = "pack p {version \"1\"}\n  disable   linux.kernel/wait.entry # mine\n";
  CHECK(format(text) ==
        "pack p {\n"
        "  version \"1\"\n"
        "}\n"
        "\n"
        "disable linux.kernel/wait.entry  # mine\n");
  CHECK(format(format(text)) == format(text));
  CHECK(shape(format(text)) == shape(text));
}

TEST_CASE("parentheses are printed only where precedence needs them") {
  const char* cases[][2] = {
      {"a - (b - c)", "a - (b - c)"},   {"(a - b) - c", "a - b - c"},
      {"-(a + b) * c", "-(a + b) * c"}, {"not (a and b)", "not (a and b)"},
      {"(not a) and b", "not a and b"}, {"(a == b) == c", "a == b == c"},
      {"a * (b % c)", "a * (b % c)"},   {"x not in (L)", "x not in L"},
  };
  for (const auto& c : cases) {
    CAPTURE(c[0]);
    CHECK(format(std::string("edge e { where ") + c[0] + " }") ==
          std::string("edge e {\n  where ") + c[1] + "\n}\n");
  }
}

TEST_CASE("format is idempotent and keeps the tree, on the docs example and the stdlib packs") {
  std::vector<std::string> inputs = {kMessy,
                                     kDiagnosis,
                                     "edge e { where a-(b-c) cost -(-x) kind --y }",
                                     "test t-1.x { expect split 5 at 1us link l }",
                                     "list l = [ [[a]]]",
                                     "list l = [ [[a]], [\"b\"], [] ]"};
  for (const char* dir : {"stdlib-rules", "examples"}) {
    if (!std::filesystem::exists(dir)) continue;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir))
      if (entry.path().extension() == ".cw") inputs.push_back(read_source(entry.path())->text);
  }
  for (const std::string& in : inputs) {
    CAPTURE(in);
    const std::string once = format(in);
    CHECK(format(once) == once);
    CHECK(shape(once) == shape(in));
  }
}

TEST_CASE("every comment survives formatting, in order") {
  const std::string in = "#1\nedge #2\n e #3\n { #4\n where #5\n a #6\n == #7\n b #8\n } #9\n#10\n";
  const std::string out = format(in);
  size_t pos = 0;
  for (int i = 1; i <= 10; ++i) {
    CAPTURE(i);
    const size_t found = out.find("#" + std::to_string(i) + "\n", pos);
    REQUIRE(found != std::string::npos);
    pos = found;
  }
  CHECK(format(out) == out);
}

TEST_CASE("format refuses a file with a syntax error, saying where") {
  try {
    format("edge e {\n  where\n}\n");
    FAIL("no error");
  } catch (const DiagnosticError& e) {
    CHECK(std::string(e.what()) ==
          "t.cw:3:1: error: expected an expression after 'where'\n"
          "  }\n"
          "  ^\n");
  }
}

}  // namespace cw::dsl
