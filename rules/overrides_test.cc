// `disable PACK/RULE` and split priorities: how a pack takes precedence over another's rules.
#include <doctest/doctest.h>

#include "rules/loader.h"

using namespace cw;
using namespace cw::rules;

namespace {

SourcePtr base_pack() {
  return make_source("base.cw",
                     "pack base { version \"1.0.0\" }\n"
                     "link wakeup { from wakeup to switch_in join from.target == to.tid }\n"
                     "split wait.entry { at syscall_enter where name == \"read\" }\n"
                     "edge wake.weak { link wakeup strength weak }\n");
}

LoadResult load_user(const std::string& body) {
  return load_sources({base_pack(), make_source("user.cw", body)});
}

const SplitRule* split(const RuleSet& r, const std::string& id) {
  for (const auto& s : r.splits)
    if (s.origin.id == id) return &s;
  return nullptr;
}

}  // namespace

TEST_CASE("disable turns another pack's rule off and records who did it, where") {
  auto r = load_user(
      "pack user { version \"1.0.0\" requires base }\n"
      "disable base/wait.entry\n"
      "disable base/wake.weak\n");
  REQUIRE_MESSAGE(r.ok(), r.render());
  REQUIRE(split(r.rules, "base/wait.entry"));
  CHECK(split(r.rules, "base/wait.entry")->origin.disabled_by == "user");
  CHECK(r.rules.edges.at(0).origin.disabled_by == "user");
  REQUIRE(r.rules.disabled.size() == 2);
  CHECK(r.rules.disabled[0].rule == "base/wait.entry");
  CHECK(r.rules.disabled[0].by == "user");
  CHECK(r.rules.disabled[0].source->path == "user.cw");
  CHECK(r.rules.disabled[0].loc.line == 2);
}

TEST_CASE("a rule stays off only while the pack that disabled it is selected") {
  auto r = load_user("pack user { version \"1.0.0\" requires base }\ndisable base/wait.entry\n");
  REQUIRE_MESSAGE(r.ok(), r.render());
  RuleSet base_only = select_packs(r.rules, {"base"});
  CHECK(split(base_only, "base/wait.entry")->origin.active());
  CHECK(base_only.disabled.empty());
  RuleSet with_user = select_packs(r.rules, {"user"});
  CHECK(!split(with_user, "base/wait.entry")->origin.active());
  CHECK(with_user.disabled.size() == 1);
}

TEST_CASE("disable: unknown ids suggest the nearest, links and unrequired packs are errors") {
  auto typo = load_user("pack user { version \"1.0.0\" requires base }\ndisable base/wait.entyr\n");
  CHECK(typo.render().find("user.cw:2:9: error: no split, batch, edge, flag or holder rule "
                           "'base/wait.entyr' to disable") != std::string::npos);
  CHECK(typo.render().find("did you mean 'base/wait.entry'?") != std::string::npos);
  auto link = load_user("pack user { version \"1.0.0\" requires base }\ndisable base/wakeup\n");
  CHECK(link.render().find("'base/wakeup' is a link") != std::string::npos);
  auto unrequired = load_user("pack user { version \"1.0.0\" }\ndisable base/wait.entry\n");
  CHECK(unrequired.render().find("does not require pack 'base'") != std::string::npos);
  auto local = load_user("pack user { version \"1.0.0\" }\nsplit mine { at exit }\ndisable mine\n");
  REQUIRE_MESSAGE(local.ok(), local.render());
  CHECK(split(local.rules, "user/mine")->origin.disabled_by == "user");
}

TEST_CASE("split rules are ordered by priority, then load order") {
  auto r = load_user(
      "pack user { version \"1.0.0\" requires base }\n"
      "split idle.read { at syscall_enter where name == \"read\" loop priority 10 }\n"
      "split later { at syscall_enter where name == \"read\" }\n");
  REQUIRE_MESSAGE(r.ok(), r.render());
  std::vector<std::string> order;
  for (const auto& s : r.rules.splits) order.push_back(s.origin.id);
  CHECK(order == std::vector<std::string>{"user/idle.read", "base/wait.entry", "user/later"});
  CHECK(r.rules.splits[0].priority == 10);
  auto bad = load_user("pack user { version \"1.0.0\" }\nsplit s { at exit priority 1ms }\n");
  CHECK(bad.render().find("'priority' needs an integer") != std::string::npos);
}
