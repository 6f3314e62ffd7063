#include "rules/loader.h"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/temp_dir.h"
#include "rules/version.h"

using namespace cw;
using namespace cw::rules;

namespace fs = std::filesystem;

namespace {

std::vector<std::string> pack_ids(const RuleSet& rules) {
  std::vector<std::string> ids;
  for (const auto& p : rules.packs) ids.push_back(p.id);
  return ids;
}

// A folder of rule files that removes itself.

const char* kWakeupLink = "link wakeup { from wakeup to switch_in join from.target == to.tid }\n";

TEST_CASE("render shows the first errors and counts the rest") {
  std::string names;
  for (int i = 0; i < 150; ++i) names += (i ? ", p" : "p") + std::to_string(i);
  const auto r = load_sources(
      {make_source("many.cw", "pack many { version \"0.1.0\"\n requires " + names + " }\n")});
  REQUIRE(r.diagnostics.size() >= 150);
  const std::string text = r.render();
  size_t shown = 0;
  for (size_t at = text.find(": error: "); at != std::string::npos;
       at = text.find(": error: ", at + 1))
    ++shown;
  CHECK(shown == kErrorsShown);
  CHECK(text.find("requires 'p99', which") != std::string::npos);
  CHECK(text.find("requires 'p100', which") == std::string::npos);
  CHECK(text.ends_with("50 more errors not shown (the first 100 are above)\n"));
}

}  // namespace

TEST_CASE("versions and engine constraints") {
  CHECK(parse_pack_version("0.1.0") == Version{0, 1, 0});
  CHECK(parse_pack_version("1.2.3-beta.1") == Version{1, 2, 3});
  CHECK_FALSE(parse_pack_version("1.0"));
  CHECK_FALSE(parse_pack_version("1.x.0"));
  CHECK_FALSE(parse_pack_version("1.0.0-"));
  const Version v{0, 1, 0};
  CHECK(check_constraint(">= 0.1", v) == ConstraintResult::Satisfied);
  CHECK(check_constraint("< 2", v) == ConstraintResult::Satisfied);
  CHECK(check_constraint("= 0.1.0", v) == ConstraintResult::Satisfied);
  CHECK(check_constraint(">= 0.1, < 0.2", v) == ConstraintResult::Satisfied);
  CHECK(check_constraint(">= 0.1, < 0.1", v) == ConstraintResult::Unsatisfied);
  CHECK(check_constraint(">= 9", v) == ConstraintResult::Unsatisfied);
  CHECK(check_constraint("0.1", v) == ConstraintResult::Satisfied);
  CHECK(check_constraint("=> 1", v) == ConstraintResult::Malformed);
  CHECK(check_constraint(">= x", v) == ConstraintResult::Malformed);
  CHECK(check_constraint("", v) == ConstraintResult::Malformed);
  CHECK(parse_pack_version(engine_version()));
}

TEST_CASE("sources group into folder packs down to the next pack.cw, and single-file packs") {
  auto r = load_sources({
      make_source("a/pack.cw", "pack a { version \"1.0.0\" }\n"),
      make_source("a/x.cw", "split x { at recv }\n"),
      make_source("a/sub/y.cw", "split y { at recv }\n"),
      make_source("a/sub/inner/pack.cw", "pack inner { version \"1.0.0\" }\n"),
      make_source("a/sub/inner/z.cw", "split z { at recv }\n"),
      make_source("a/solo.cw", "pack solo { version \"1.0.0\" }\nsplit s { at recv }\n"),
  });
  REQUIRE_MESSAGE(r.ok(), r.render());
  CHECK(pack_ids(r.rules) == std::vector<std::string>{"a", "inner", "solo"});
  CHECK(r.rules.packs[0].files == std::vector<std::string>{"a/pack.cw", "a/x.cw", "a/sub/y.cw"});
  CHECK(r.rules.packs[1].files ==
        std::vector<std::string>{"a/sub/inner/pack.cw", "a/sub/inner/z.cw"});
  std::vector<std::string> splits;
  for (const auto& s : r.rules.splits) splits.push_back(s.origin.id);
  CHECK(splits == std::vector<std::string>{"a/x", "a/y", "inner/z", "solo/s"});
  CHECK(r.rules.packs[0].version == "1.0.0");
}

TEST_CASE("a file outside every pack is an error with a way out") {
  auto r = load_sources({make_source("rules/x.cw", "split x { at recv }\n")});
  CHECK(r.render() ==
        "rules/x.cw: error: file is not part of a pack\n"
        "hint: start it with `pack ID { ... }` or put a pack.cw beside it\n");
}

TEST_CASE("two packs with one id: an error at the second, a note at the first") {
  auto r = load_sources({make_source("one.cw", "pack same { version \"1.0.0\" }\n"),
                         make_source("two.cw", "\npack same { version \"1.0.0\" }\n")});
  CHECK(r.render() ==
        "two.cw:2:6: error: duplicate pack id 'same'\n"
        "  pack same { version \"1.0.0\" }\n"
        "       ^~~~\n"
        "one.cw:1:1: note: first defined here\n"
        "  pack same { version \"1.0.0\" }\n"
        "  ^~~~\n");
}

TEST_CASE("requires with a version range: met, missed, and two packs that conflict") {
  const std::string base = "pack base { version \"0.3.0\" }\n";
  auto met =
      load_sources({make_source("base.cw", base), make_source("a.cw",
                                                              "pack a { version \"1.0.0\" requires "
                                                              "base(\">= 0.2, < 1\") }\n")});
  CHECK(met.ok());
  REQUIRE(met.rules.packs.size() == 2);
  CHECK(met.rules.packs[1].requires_ == std::vector<std::string>{"base"});
  CHECK(met.rules.packs[1].requires_versions == std::vector<std::string>{">= 0.2, < 1"});

  auto missed = load_sources(
      {make_source("base.cw", base),
       make_source("a.cw", "pack a { version \"1.0.0\" requires base(\">= 0.4\") }\n")});
  CHECK(missed.render() ==
        "a.cw:1:35: error: pack 'a' requires base \">= 0.4\", but base 0.3.0 is loaded\n"
        "  pack a { version \"1.0.0\" requires base(\">= 0.4\") }\n"
        "                                    ^~~~~~~~~~~~~~\n"
        "hint: base 0.3.0 is loaded from base.cw\n"
        "hint: load a copy of base in the range (--rules, a search folder)\n");

  // a needs base >= 0.4 and b needs base < 0.3: no copy of base can satisfy both, and the
  // error names both packs.
  auto conflict = load_sources(
      {make_source("base.cw", base),
       make_source("a.cw", "pack a { version \"1.0.0\" requires base(\">= 0.4\") }\n"),
       make_source("b.cw", "pack b { version \"1.0.0\"\n requires base(\"< 0.3\") }\n")});
  const std::string text = conflict.render();
  CHECK(text.find("error: pack 'a' requires base \">= 0.4\", but base 0.3.0 is loaded") !=
        std::string::npos);
  CHECK(text.find("hint: it conflicts with pack 'b', which requires base \"< 0.3\" (b.cw:2): no "
                  "version of base is in both ranges") != std::string::npos);
  CHECK(text.find("error: pack 'b' requires base \"< 0.3\"") != std::string::npos);
  CHECK(text.find("hint: it conflicts with pack 'a'") != std::string::npos);

  auto malformed = load_sources(
      {make_source("base.cw", base),
       make_source("a.cw", "pack a { version \"1.0.0\" requires base(\"about 2\") }\n")});
  CHECK(malformed.render().find("a.cw:1:40: error: bad version range 'about 2'") !=
        std::string::npos);
  auto not_a_range =
      load_sources({make_source("base.cw", base),
                    make_source("a.cw", "pack a { version \"1.0.0\" requires base(2) }\n")});
  CHECK(not_a_range.render().find("error: expected a pack id here") != std::string::npos);
}

TEST_CASE("version ranges overlap when some version is in both") {
  CHECK(constraints_overlap(">= 0.2", "< 1"));
  CHECK(constraints_overlap(">= 0.2, < 0.3", "0.2.5"));
  CHECK(constraints_overlap("< 0.3", "<= 0.2.9"));
  CHECK(constraints_overlap("> 1.2.3", "< 1.2.5"));
  CHECK_FALSE(constraints_overlap(">= 0.4", "< 0.3"));
  CHECK_FALSE(constraints_overlap(">= 0.3", "< 0.3"));
  CHECK_FALSE(constraints_overlap("> 1.2.3", "< 1.2.4"));
  CHECK_FALSE(constraints_overlap("= 1", "!= 1"));
}

TEST_CASE("header errors: missing requirement, cycle, engine, version") {
  auto missing = load_sources({make_source("a.cw", "pack a { version \"1.0.0\" requires b }\n")});
  CHECK(missing.render() ==
        "a.cw:1:35: error: pack 'a' requires 'b', which is not loaded\n"
        "  pack a { version \"1.0.0\" requires b }\n"
        "                                    ^\n"
        "hint: add it with --rules, or put it on CAUSEWAY_RULES_PATH\n");

  auto cycle = load_sources({make_source("a.cw", "pack a { version \"1.0.0\" requires b }\n"),
                             make_source("b.cw", "pack b { version \"1.0.0\" requires a }\n")});
  CHECK(cycle.render() ==
        "a.cw:1:1: error: packs require each other in a cycle: a -> b -> a\n"
        "  pack a { version \"1.0.0\" requires b }\n"
        "  ^~~~\n");

  auto engine =
      load_sources({make_source("a.cw", "pack a { version \"1.0.0\" engine \">= 9\" }\n")});
  CHECK(engine.render() ==
        fmt::format("a.cw:1:33: error: pack 'a' needs causeway >= 9, this is {}\n"
                    "  pack a {{ version \"1.0.0\" engine \">= 9\" }}\n"
                    "                                  ^~~~~~\n",
                    engine_version()));

  auto version = load_sources({make_source("a.cw", "pack a { version \"1.0\" }\n")});
  CHECK(version.render() ==
        "a.cw:1:18: error: version '1.0' is not of the form X.Y.Z\n"
        "  pack a { version \"1.0\" }\n"
        "                   ^~~~~\n");

  auto no_version = load_sources({make_source("a.cw", "pack a { engine \">= 0.1\" }\n")});
  CHECK(no_version.render() ==
        "a.cw:1:6: error: missing clause 'version' in pack 'a'\n"
        "  pack a { engine \">= 0.1\" }\n"
        "       ^\n"
        "hint: add `version \"0.1.0\"` to the pack header\n");
}

TEST_CASE("packs load from folders on disk in sorted order, sub-folders included") {
  TempDir dir("cw-rules");
  dir.write("b/pack.cw", "pack b { version \"1.0.0\" requires a }\n");
  dir.write("b/z.cw", "split bz { at recv }\n");
  dir.write("b/m/y.cw", "split by { at recv }\n");
  dir.write("a/pack.cw", "pack a { version \"1.0.0\" }\n");
  dir.write("a/notes.txt", "not a rule file");
  dir.write("solo.cw", "pack solo { version \"1.0.0\" }\n");
  auto r = load_packs({dir.path()});
  REQUIRE_MESSAGE(r.ok(), r.render());
  CHECK(pack_ids(r.rules) == std::vector<std::string>{"a", "b", "solo"});
  CHECK(r.rules.packs[1].files ==
        std::vector<std::string>{dir.path("b/pack.cw"), dir.path("b/m/y.cw"), dir.path("b/z.cw")});

  // The same file reached twice loads once; paths keep the order given.
  auto twice = load_packs({dir.path("solo.cw"), dir.path("a"), dir.path("solo.cw")});
  REQUIRE_MESSAGE(twice.ok(), twice.render());
  CHECK(pack_ids(twice.rules) == std::vector<std::string>{"solo", "a"});
}

TEST_CASE("a user's pack replaces the standard pack of the same id, files and all") {
  // Another checkout's stdlib-rules checked with this binary's standard packs beside it.
  TempDir dir("cw-rules");
  for (const char* root : {"std", "mine"}) {
    dir.write(std::string(root) + "/k/pack.cw", "pack k { version \"1.0.0\" }\n");
    dir.write(std::string(root) + "/k/tests.cw", "split k" + std::string(root) + " { at recv }\n");
    dir.write(std::string(root) + "/g/pack.cw", "pack g { version \"1.0.0\" requires k }\n");
  }
  dir.write("std/other/pack.cw", "pack other { version \"1.0.0\" }\n");
  auto r =
      load_packs({dir.path("std/g"), dir.path("std/k"), dir.path("std/other")}, {dir.path("mine")});
  REQUIRE_MESSAGE(r.ok(), r.render());
  CHECK(pack_ids(r.rules) == std::vector<std::string>{"other", "g", "k"});
  CHECK(r.rules.pack("k")->files ==
        std::vector<std::string>{dir.path("mine/k/pack.cw"), dir.path("mine/k/tests.cw")});

  // Two user packs of one id are still an error.
  auto twice = load_packs({}, {dir.path("std"), dir.path("mine")});
  CHECK_FALSE(twice.ok());
  CHECK(twice.render().find("duplicate pack id 'g'") != std::string::npos);
}

TEST_CASE("a path that does not exist or a folder without rules is an error") {
  TempDir dir("cw-rules");
  dir.write("empty/readme.txt", "nothing");
  auto r = load_packs({dir.path("missing"), dir.path("empty")});
  CHECK(r.render() == dir.path("missing") + ": error: no such file or folder\n" +
                          dir.path("empty") + ": error: no rule files (*.cw) in this folder\n");
}

TEST_CASE("the stdlib packs load cleanly, with the example pack on top") {
  auto r = load_packs({"stdlib-rules", "examples/server-loop.cw"});
  CHECK_MESSAGE(r.diagnostics.empty(), r.render());
  CHECK(r.rules.pack("linux.kernel") != nullptr);
  CHECK(r.rules.pack("glibc.pthread") != nullptr);
  CHECK(r.rules.pack("nope") == nullptr);
  CHECK_FALSE(r.rules.tests.empty());
}

TEST_CASE("select_packs keeps the requires closure in load order and renumbers links") {
  auto r = load_sources({
      make_source("x.cw",
                  "pack x { version \"1.0.0\" }\n"
                  "link unused { from send to recv join from.object == to.object }\n"
                  "edge x { link unused strength weak }\n"),
      make_source("base.cw", "pack base { version \"1.0.0\" }\n" + std::string(kWakeupLink) +
                                 "edge w { link wakeup strength weak }\n"
                                 "test t { trace [[ ]] }\n"),
      make_source("top.cw",
                  "pack top { version \"1.0.0\" requires base }\n"
                  "edge t { link wakeup strength strong priority 1 }\n"
                  "split s { at recv }\n"
                  "answer a { question recurse subject tid == 1 choose stop }\n"),
  });
  REQUIRE_MESSAGE(r.ok(), r.render());
  REQUIRE(r.rules.links.size() == 2);
  RuleSet top = select_packs(r.rules, {"top"});
  CHECK(pack_ids(top) == std::vector<std::string>{"base", "top"});
  REQUIRE(top.links.size() == 1);
  CHECK(top.links[0].origin.id == "base/wakeup");
  REQUIRE(top.edges.size() == 2);
  CHECK(top.edges[0].origin.id == "top/t");
  CHECK(top.edges[0].link == 0);
  CHECK(top.edges[1].link == 0);
  CHECK(top.splits.size() == 1);
  CHECK(top.tests.size() == 1);
  REQUIRE(top.answers.size() == 1);
  CHECK(top.answers[0].origin.id == "top/a");
  RuleSet x = select_packs(r.rules, {"x"});
  CHECK(pack_ids(x) == std::vector<std::string>{"x"});
  CHECK(x.edges.at(0).link == 0);
  CHECK(x.tests.empty());
  CHECK(x.answers.empty());
}

TEST_CASE("diagnostics come errors first, each group in file order") {
  auto r = load_sources({
      make_source("a.cw", "pack a { version \"1.0.0\" }\nsplit s { at nope }\n"),
      make_source("b.cw", "pack b { version \"1.0.0\" }\nsplit s { at nope2 }\n"),
  });
  REQUIRE(r.diagnostics.size() == 2);
  CHECK(r.diagnostics[0].source->path == "a.cw");
  CHECK(r.diagnostics[1].source->path == "b.cw");
}

// A hostile pack: one requiring 50,000 packs that are not there gave 50,000 errors,
// each quoting its whole source line (quadratic output when the names share a line) and
// each finding that line by counting newlines from the top (quadratic time when they do
// not). The work is bounded by what is counted, not by a clock.
TEST_CASE("50,000 missing requirements are reported with work linear in their number") {
  constexpr size_t kNames = 50'000;
  auto pack = [&](std::string_view separator) {
    std::string text = "pack big { version \"1.0.0\"\n  requires ";
    for (size_t i = 0; i < kNames; ++i)
      text += fmt::format("{}dep.p{}", i == 0 ? "" : separator, i);
    return text + "\n}\n";
  };

  SUBCASE("on one line: each error quotes a window of the line, not all of it") {
    auto result = load_sources({make_source("one-line.cw", pack(", "))});
    REQUIRE(result.diagnostics.size() == kNames);
    for (size_t i : {size_t{0}, kNames / 2, kNames - 1}) {
      const std::string text = result.diagnostics[i].render();
      CAPTURE(i);
      CHECK(text.size() < 400);
      // Still says what and where, with the name under the caret.
      const std::string name = fmt::format("dep.p{}", i);
      CHECK(text.find(fmt::format("requires '{}', which is not loaded", name)) !=
            std::string::npos);
      const size_t excerpt = text.find('\n') + 1;
      const size_t caret_line = text.find('\n', excerpt) + 1;
      const size_t caret_col = text.find('^', caret_line) - caret_line;
      CHECK(text.compare(excerpt + caret_col, name.size(), name) == 0);
    }
  }

  SUBCASE("one per line: each error finds its line without counting from the top") {
    auto result = load_sources({make_source("many-lines.cw", pack(",\n    "))});
    REQUIRE(result.diagnostics.size() == kNames);
    const uint64_t before = line_lookup_steps();
    std::string last;
    for (size_t i = kNames - 1000; i < kNames; ++i) last = result.diagnostics[i].render();
    // The last thousand errors, near the end of the file: a look-up each, where counting
    // lines from the top took ~50,000 steps each.
    CHECK(line_lookup_steps() - before <= 1000 * 2);
    CHECK(last.find(fmt::format("dep.p{},", kNames - 1)) == std::string::npos);
    CHECK(last.find(fmt::format("    dep.p{}\n", kNames - 1)) != std::string::npos);
  }
}

// The same attack as a chain: 50,000 packs each requiring the next.
// Resolving the chain recursed once per pack (the stack overflowed, a crash); what each
// pack sees is the chain after it, 50,000 * 50,000 / 2 entries (20,000 packs took 50 s and
// 1.7 GB). Now the walk has its own stack, and the visibility stops at a bound with an
// error where it was crossed.
TEST_CASE("a chain of 50,000 packs is refused at a bound, without recursion or quadratic work") {
  constexpr size_t kPacks = 50'000;
  std::vector<SourcePtr> sources;
  for (size_t i = 0; i < kPacks; ++i)
    sources.push_back(
        make_source(fmt::format("p{}.cw", i),
                    fmt::format("pack c.p{} {{ version \"1.0.0\"{} }}\n", i,
                                i + 1 < kPacks ? fmt::format(" requires c.p{}", i + 1) : "")));
  auto result = load_sources(sources);
  REQUIRE(result.diagnostics.size() == 1);
  // Pack i sees kPacks - i packs; the bound (2^20 in all) is crossed at the first pack whose
  // own count takes the sum past it.
  size_t total = 0, at = 0;
  while (total + (kPacks - at) <= (size_t{1} << 20)) total += kPacks - at++;
  CHECK(result.render() ==
        fmt::format("p{0}.cw:1:1: error: pack 'c.p{0}' and the packs loaded before it see more "
                    "than 1048576 packs through their requirements, counted per pack\n"
                    "  pack c.p{0} {{ version \"1.0.0\" requires c.p{1} }}\n"
                    "  ^~~~\n"
                    "hint: a pack sees every pack its requirements require, transitively: a "
                    "long chain of requirements makes that quadratic; require fewer packs\n",
                    at, at + 1));
}

TEST_CASE("a pack says what it is for: libraries, programs, symbols") {
  auto ok = load_sources(
      {make_source("a.cw",
                   "pack a { version \"1.0.0\" applies library(\"libuv.so*\"), program(\"node\"), "
                   "symbol(\"uv_run\") }\n")});
  REQUIRE_MESSAGE(ok.ok(), ok.render());
  const PackInfo* a = ok.rules.pack("a");
  REQUIRE(a != nullptr);
  REQUIRE(a->applies.size() == 3);
  CHECK(a->applies[0].kind == PackCondition::Kind::Library);
  CHECK(a->applies[0].glob == "libuv.so*");
  CHECK(a->applies[1].kind == PackCondition::Kind::Program);
  CHECK(a->applies[2].kind == PackCondition::Kind::Symbol);
  auto bad = load_sources({make_source(
      "b.cw", "pack b { version \"1.0.0\" applies libary(\"libuv.so*\"), program(3), \"x\" }\n")});
  CHECK(bad.render() ==
        "b.cw:1:34: error: expected library(\"GLOB\"), program(\"GLOB\") or symbol(\"GLOB\")\n"
        "  pack b { version \"1.0.0\" applies libary(\"libuv.so*\"), program(3), \"x\" }\n"
        "                                   ^~~~~~~~~~~~~~~~~~~\n"
        "hint: did you mean 'library'?\n"
        "b.cw:1:55: error: expected library(\"GLOB\"), program(\"GLOB\") or symbol(\"GLOB\")\n"
        "  pack b { version \"1.0.0\" applies libary(\"libuv.so*\"), program(3), \"x\" }\n"
        "                                                        ^~~~~~~~~~\n"
        "b.cw:1:67: error: expected library(\"GLOB\"), program(\"GLOB\") or symbol(\"GLOB\")\n"
        "  pack b { version \"1.0.0\" applies libary(\"libuv.so*\"), program(3), \"x\" }\n"
        "                                                                    ^~~\n");
}
