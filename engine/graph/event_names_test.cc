#include "engine/graph/event_names.h"

#include <doctest/doctest.h>

#include <stdexcept>

#include "engine/graph/test_support.h"

namespace cw::engine {
namespace {

using testing::build;
using Names = std::vector<std::string>;

const char* const kTrace =
    "process 1 comm=a\nthread 1 pid=1 comm=a\nthread 2 pid=1 comm=b\n"
    "1000 1 syscall_enter name=read fd=3\n"     // 0
    "1100 1 switch_out state=S\n"               // 1
    "1200 2 syscall_enter name=recvmsg fd=4\n"  // 2
    "1300 2 wakeup target=1\n"                  // 3
    "1400 1 switch_in\n"                        // 4
    "1500 1 syscall_exit name=read ret=4\n"     // 5
    "1600 1 syscall_enter name=recvmsg fd=4\n"  // 6
    "1700 2 syscall_exit name=recvmsg ret=0\n"  // 7
    "1800 1 syscall_enter name=read fd=5\n";    // 8

// The selector a split rule's `where` gives, at its `at` kind.
NameSelector selector_of(const std::string& at, const std::string& where) {
  const auto b = build("split r { at " + at + " where " + where + " neighbour weak }\n",
                       "process 1 comm=a\nthread 1 pid=1 comm=a\n");
  const rules::SplitRule& rule = b.rules.splits.at(0);
  return name_selector(rule.where, rule.at, b.trace.schema);
}

TEST_CASE("a kind's events are named by its first field when that is a string") {
  const Schema& s = Schema::builtin();
  CHECK(naming_field(s, s.find("syscall_enter")) == 0);
  CHECK(naming_field(s, s.find("call_enter")) == 0);
  CHECK(naming_field(s, s.find("switch_out")) == 0);
  CHECK(naming_field(s, s.find("wakeup")) == -1);     // a thread first
  CHECK(naming_field(s, s.find("switch_in")) == -1);  // no fields
  CHECK(naming_field(s, kNoKind) == -1);
}

TEST_CASE("a rule's where selects names by == and in, alone or under and and or") {
  auto named = [](const NameSelector& n) { return n.by_name ? n.names : Names{"(any)"}; };
  CHECK(named(selector_of("syscall_enter", "name == \"recvmsg\"")) == Names{"recvmsg"});
  CHECK(named(selector_of("syscall_enter", "\"recvmsg\" == name")) == Names{"recvmsg"});
  CHECK(named(selector_of("syscall_enter", "fd != 6 and name == \"recvmsg\"")) == Names{"recvmsg"});
  CHECK(named(selector_of("syscall_enter",
                          "fd > 2 and (tid != 3 and name in [\"b\", \"a\", \"b\"])")) ==
        Names{"a", "b"});
  CHECK(named(selector_of("call_enter", "fn == \"serve\"")) == Names{"serve"});
  // Whether the test is the whole `where` (then every event it selects matches).
  CHECK(selector_of("syscall_enter", "name == \"recvmsg\"").whole);
  CHECK(selector_of("syscall_enter", "name in [\"a\", \"b\"]").whole);
  CHECK_FALSE(selector_of("syscall_enter", "fd != 6 and name == \"recvmsg\"").whole);
  // What does not bound the names: any of the kind.
  CHECK(named(selector_of("syscall_enter", "name != \"read\"")) == Names{"(any)"});
  // A disjunction, by the union of its disjuncts' names when every one has some.
  CHECK(named(selector_of("syscall_enter", "name == \"b\" or name == \"a\"")) == Names{"a", "b"});
  CHECK(selector_of("syscall_enter", "name == \"b\" or name in [\"a\", \"c\"]").whole);
  CHECK(named(selector_of("syscall_enter",
                          "(name == \"a\" and fd > 2) or (fd != 3 and name in [\"b\", \"a\"])")) ==
        Names{"a", "b"});
  CHECK_FALSE(selector_of("syscall_enter", "(name == \"a\" and fd > 2) or name == \"b\"").whole);
  CHECK(named(selector_of("syscall_enter", "fd > 1 and (name == \"a\" or name == \"b\")")) ==
        Names{"a", "b"});
  CHECK(named(selector_of("syscall_enter", "name == \"a\" or fd == 2")) == Names{"(any)"});
  CHECK(named(selector_of("syscall_enter", "fd == 2 or name == \"a\"")) == Names{"(any)"});
  // ... and not when a disjunct may fail before its name test.
  CHECK(named(selector_of("syscall_enter", "name == \"a\" or (10 / fd > 1 and name == \"b\")")) ==
        Names{"(any)"});
  CHECK(named(selector_of("syscall_enter", "name == \"a\" or (name == \"b\" and 10 / fd > 1)")) ==
        Names{"a", "b"});
  CHECK(named(selector_of("syscall_enter", "not (name == \"a\")")) == Names{"(any)"});
  CHECK(named(selector_of("syscall_enter", "op == \"wait\"")) == Names{"(any)"});
  CHECK(named(selector_of("syscall_enter", "syscall.name == \"read\"")) == Names{"(any)"});
  CHECK(named(selector_of("wakeup", "target == 3")) == Names{"(any)"});
  // Not after a test that may fail: a whole build evaluates it at every event of the kind,
  // and fails where it fails. After the name test, it is evaluated at those events only.
  CHECK(named(selector_of("syscall_enter", "100 / fd > 1 and name == \"read\"")) == Names{"(any)"});
  CHECK(named(selector_of("syscall_enter", "fd % 2 == 0 and name == \"read\"")) == Names{"(any)"});
  CHECK(named(selector_of("syscall_enter", "name == \"read\" and 100 / fd > 1")) == Names{"read"});
  CHECK(named(selector_of("syscall_enter", "fd + 1 > 2 and name == \"read\"")) == Names{"read"});
}

TEST_CASE("every event is listed once, under its kind and name") {
  const auto b = build("", kTrace);
  const EventNames names = EventNames::of(b.trace);
  CHECK(names.total() == b.trace.events.size());
  uint64_t listed = 0;
  for (const EventNames::List& l : names.lists()) listed += l.count;
  CHECK(listed == b.trace.events.size());
  const Schema& s = b.trace.schema;
  const KindId enter = s.find("syscall_enter");
  using List = std::vector<uint32_t>;
  CHECK(names.events(enter, {true, {"read"}}) == List{0, 8});
  CHECK(names.events(enter, {true, {"recvmsg"}}) == List{2, 6});
  CHECK(names.events(enter, {true, {"write"}}).empty());
  // Several names, or the whole kind: each name's list in order, one after the other.
  CHECK(names.events(enter, {true, {"read", "recvmsg"}}) == List{0, 8, 2, 6});
  CHECK(names.events(enter, {}) == List{0, 8, 2, 6});
  CHECK(names.events(s.find("syscall_exit"), {true, {"recvmsg"}}) == List{7});
  CHECK(names.events(s.find("wakeup"), {}) == List{3});
  CHECK(names.events(s.find("wakeup"), {true, {"x"}}).empty());  // unnamed: no name matches
  CHECK(names.events(s.find("switch_in"), {}) == List{4});
}

TEST_CASE("lists read back are checked: bounds, counts, duplicates, their bytes") {
  const auto b = build("", kTrace);
  const EventNames names = EventNames::of(b.trace);
  const uint64_t n = b.trace.events.size();
  auto again = [&](std::vector<EventNames::List> lists, std::string bytes, uint64_t total) {
    auto keep = std::make_shared<std::string>(std::move(bytes));
    const std::string_view view = *keep;
    return EventNames(std::move(lists), view, keep, total);
  };
  const std::string bytes(names.bytes());
  CHECK(again(names.lists(), bytes, n).events(b.trace.schema.find("syscall_enter"), {}).size() ==
        4);
  CHECK_THROWS_AS(again(names.lists(), bytes, n + 1), std::invalid_argument);  // a count short
  auto lists = names.lists();
  lists[0].size = bytes.size() + 1;  // past the bytes
  CHECK_THROWS_AS(again(lists, bytes, n), std::invalid_argument);
  lists = names.lists();
  lists.push_back(lists[0]);  // twice
  lists.back().count = 0;
  CHECK_THROWS_AS(again(lists, bytes, n), std::invalid_argument);
  // Bytes that do not decode: a varint cut short, an event past the trace.
  const KindId enter = b.trace.schema.find("syscall_enter");
  for (size_t i = 0; i < names.lists().size(); ++i) {
    const EventNames::List& l = names.lists()[i];
    if (l.kind != enter || l.name != "read") continue;
    std::string cut = bytes;
    cut[l.at + 1] = static_cast<char>(0x80);  // the second event's varint runs on
    CHECK_THROWS_AS(again(names.lists(), cut, n).events(enter, {true, {"read"}}),
                    std::invalid_argument);
    std::string past = bytes;
    past[l.at + 1] = 100;  // 0, then 101
    CHECK_THROWS_AS(again(names.lists(), past, n).events(enter, {true, {"read"}}),
                    std::invalid_argument);
  }
}

}  // namespace
}  // namespace cw::engine
