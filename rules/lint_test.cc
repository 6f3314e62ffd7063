#include "rules/lint.h"

#include <doctest/doctest.h>

#include "rules/loader.h"

using namespace cw;
using namespace cw::rules;

namespace {

LoadResult load_pack(const std::string& body) {
  return load_sources({make_source("p.cw", "pack p { version \"0.1.0\" }\n" + body)});
}

const char* kWakeupLink = "link wakeup { from wakeup to switch_in join from.target == to.tid }\n";

}  // namespace

TEST_CASE("a where that is always false is a warning, and the load still succeeds") {
  auto r = load_pack("split s { at recv where 1 == 2 or not true }\n");
  CHECK(r.ok());
  CHECK(r.render() ==
        "p.cw:2:25: warning: rule 's' can never match: its 'where' is always false\n"
        "  split s { at recv where 1 == 2 or not true }\n"
        "                          ^\n");
}

TEST_CASE("a field required equal to two constants can never match") {
  auto r = load_pack(
      "split s { at syscall_enter where name == \"read\" and fd > 2 and name == \"write\" }\n");
  CHECK(r.ok());
  CHECK(r.render() ==
        "p.cw:2:64: warning: rule 's' can never match: 'name' cannot equal both \"read\" and "
        "\"write\"\n"
        "  split s { at syscall_enter where name == \"read\" and fd > 2 and name == \"write\" }\n"
        "                                                                 ^\n");
  auto same =
      load_pack("split s { at syscall_enter where name == \"read\" and \"read\" == name }\n");
  CHECK(same.diagnostics.empty());
  auto either =
      load_pack("split s { at syscall_enter where name == \"read\" or name == \"write\" }\n");
  CHECK(either.diagnostics.empty());
}

TEST_CASE("a classifying rule after one that always matches is shadowed") {
  auto r = load_pack(std::string(kWakeupLink) +
                     "edge a { link wakeup strength weak priority 5 }\n"
                     "edge b { link wakeup where to.tid == 1 strength strong }\n"
                     "edge c { link wakeup where to.tid == 1 strength prune }\n");
  CHECK(r.ok());
  CHECK(r.render() ==
        "p.cw:4:6: warning: rule 'b' is shadowed by 'a', which always matches first\n"
        "  edge b { link wakeup where to.tid == 1 strength strong }\n"
        "       ^\n");
  // A conditional rule first shadows nothing.
  auto fine = load_pack(std::string(kWakeupLink) +
                        "edge a { link wakeup where to.tid == 1 strength weak priority 5 }\n"
                        "edge b { link wakeup strength strong }\n");
  CHECK(fine.diagnostics.empty());
}

TEST_CASE("a link without an edge rule and a list nobody uses are warnings") {
  auto r = load_pack(std::string(kWakeupLink) + "list unused = [1, 2]\n");
  CHECK(r.ok());
  CHECK(r.render() ==
        "p.cw:2:6: warning: link 'wakeup' has no edge rule, so it makes no edges\n"
        "  link wakeup { from wakeup to switch_in join from.target == to.tid }\n"
        "       ^~~~~~\n"
        "p.cw:3:1: warning: list 'unused' is never used\n"
        "  list unused = [1, 2]\n"
        "  ^~~~\n");
}

TEST_CASE("a list used by a pack that requires it counts as used") {
  auto r = load_sources({
      make_source("a.cw", "pack a { version \"0.1.0\" }\nlist names = [\"x\"]\n"),
      make_source("b.cw",
                  "pack b { version \"0.1.0\" requires a }\n"
                  "split s { at recv where thread.comm in names }\n"),
  });
  CHECK(r.diagnostics.empty());
}

TEST_CASE("lint stays quiet while there are errors") {
  auto r = load_pack(std::string(kWakeupLink) + "split s { at nope }\n");
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].severity == Severity::Error);
}

TEST_CASE("field display names read as written") {
  FieldRef ref;
  ref.side = Side::From;
  ref.scope = FieldScope::SpanField;
  ref.span = "syscall";
  ref.kind = Schema::builtin().find("syscall_enter");
  ref.field = 0;
  CHECK(field_display_name(ref) == "from.syscall.name");
  ref.side = Side::Self;
  ref.scope = FieldScope::ThreadKernel;
  CHECK(field_display_name(ref) == "thread.kernel");
}
