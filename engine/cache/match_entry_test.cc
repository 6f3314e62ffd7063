// The cut matches entry: where each cut rule matched, by a hash of what its matches
// depend on.
#include <doctest/doctest.h>

#include <string>

#include "engine/cache/cache.h"
#include "engine/cache/test_support.h"

using namespace cw;
using namespace cw::cache::testing;

namespace {

const char* const kTrace =
    "process 100 comm=app\n"
    "thread 101 pid=100 comm=a\n"
    "thread 102 pid=100 comm=b\n"
    "1000 101 syscall_enter name=read fd=3\n"
    "2000 102 syscall_enter name=recvmsg fd=4\n"
    "3000 101 syscall_exit name=read ret=0\n"
    "4000 102 syscall_exit name=recvmsg ret=0\n"
    "5000 101 syscall_enter name=recvmsg fd=4\n"
    "6000 101 syscall_exit name=recvmsg ret=0\n";

const char* const kRules =
    "split r { at syscall_enter where name == \"read\" neighbour weak }\n"
    "split idle { at syscall_enter where name == \"recvmsg\" neighbour weak loop }\n"
    "batch each { within loop item syscall_exit per ret neighbour weak }\n";

cw::engine::CutMatchSet recorded(const cw::engine::testing::Built& b) {
  cw::engine::BuildOptions options;
  options.record_matches = true;
  return cw::engine::build_graph(b.trace, b.rules, options).matches;
}

}  // namespace

TEST_CASE("a cut rule's key is what its matches depend on: not its name, neighbour or loop") {
  const auto a = cw::engine::testing::build(kRules, kTrace);
  const auto renamed = cw::engine::testing::build(
      "split other { at syscall_enter where name == \"read\" neighbour none loop }\n", kTrace);
  const auto narrowed = cw::engine::testing::build(
      "split r { at syscall_enter where name == \"read\" and fd != 3 neighbour weak }\n", kTrace);
  CHECK(cache::cut_rule_key(a.rules.splits[0]) == cache::cut_rule_key(renamed.rules.splits[0]));
  CHECK(cache::cut_rule_key(a.rules.splits[0]) != cache::cut_rule_key(narrowed.rules.splits[0]));
  CHECK(cache::cut_rule_key(a.rules.splits[0]) != cache::cut_rule_key(a.rules.splits[1]));
}

TEST_CASE("cut matches are kept by rule key, and found again for other packs with those rules") {
  const auto b = cw::engine::testing::build(kRules, kTrace);
  cw::engine::CutMatchSet found = recorded(b);
  REQUIRE(found.splits.size() == 2);
  REQUIRE(found.splits[0].known);
  CHECK(found.splits[0].count == 1);  // the read
  CHECK(found.splits[1].count == 2);  // both recvmsg
  REQUIRE(found.batches[0].known);
  // Every exit matched, in the loop or not yet (the replay tells).
  CHECK(found.batches[0].count == 3);
  const cache::StoredMatches stored = cache::merge_matches(b.rules, std::move(found), {});
  CHECK(stored.lists.size() == 3);

  TempDir dir;
  const cache::Key key{1, 0, 3, 4};
  REQUIRE(cache::save_cut_matches(dir.f, key, stored));
  std::string why;
  auto loaded = cache::load_cut_matches(dir.f, key, b.trace, &why);
  REQUIRE_MESSAGE(loaded, why);
  CHECK(cache::encode_cut_matches(*loaded) == cache::encode_cut_matches(stored));

  // Packs with the recvmsg rule renamed and a new rule: the first found, the second not.
  const auto other = cw::engine::testing::build(
      "split fresh { at syscall_exit where ret == 0 neighbour weak }\n"
      "split renamed { at syscall_enter where name == \"recvmsg\" neighbour strong }\n",
      kTrace);
  const cw::engine::KnownCutMatches known = loaded->for_rules(other.rules);
  CHECK(known.splits[0] == nullptr);
  REQUIRE(known.splits[1] != nullptr);
  CHECK(known.splits[1]->count == 2);

  // Kept again with the other packs' new list: theirs first, then the old ones that fit.
  cw::engine::CutMatchSet more = recorded(other);
  const cache::StoredMatches merged =
      cache::merge_matches(other.rules, std::move(more), std::move(*loaded));
  REQUIRE(merged.lists.size() == 4);
  CHECK(merged.keys[0] == cache::cut_rule_key(other.rules.splits[0]));
  CHECK(merged.keys[1] == cache::cut_rule_key(other.rules.splits[1]));
}

TEST_CASE("a cut matches entry that names what the trace does not have is a miss") {
  const auto b = cw::engine::testing::build(kRules, kTrace);
  const cache::StoredMatches good = cache::merge_matches(b.rules, recorded(b), {});
  auto damaged = [&](auto change) {
    cache::StoredMatches s = good;
    change(s);
    try {
      cache::decode_cut_matches(cache::encode_cut_matches(s), b.trace);
    } catch (const cache::CorruptEntry& e) {
      return std::string(e.what());
    }
    return std::string("(decoded)");
  };
  CHECK(damaged([](cache::StoredMatches&) {}) == "(decoded)");
  // Lists: 0 the read split, 1 the recvmsg split, 2 the batch. Each changed as decoded
  // matches, written back.
  auto splits = [](cache::StoredMatches& s, size_t list, auto change) {
    auto v = s.lists[list].split_list();
    change(v);
    s.lists[list] = cw::engine::CutMatches::of(v);
  };
  auto items = [](cache::StoredMatches& s, size_t list, auto change) {
    auto v = s.lists[list].batch_list();
    change(v);
    s.lists[list] = cw::engine::CutMatches::of(v);
  };
  CHECK(damaged([&](cache::StoredMatches& s) { splits(s, 1, [](auto& v) { v[1].event = 99; }); }) ==
        "a match past the trace's events");
  // The recvmsg of thread 102 (event 1) cut at an event of thread 101: decoded, the
  // replay refuses it (engine/graph/builder_test.cc).
  CHECK(damaged([&](cache::StoredMatches& s) { splits(s, 1, [](auto& v) { v[0].at = 0; }); }) ==
        "(decoded)");
  CHECK(damaged([&](cache::StoredMatches& s) { splits(s, 1, [](auto& v) { v[0].at = 1000; }); }) ==
        "a cut place past the trace's events");
  // The list's form: what the writer never makes.
  CHECK(damaged([](cache::StoredMatches& s) { s.lists[2].bytes[1] = '\x7f'; }) ==
        "an item that starts before the trace");
  CHECK(damaged([](cache::StoredMatches& s) { s.lists[2].bytes[2] = '\x7f'; }) ==
        "an item's loop opened before the trace");
  CHECK(damaged([](cache::StoredMatches& s) { s.lists[1].count = 1; }) ==
        "bytes after the last match");
  CHECK(damaged([](cache::StoredMatches& s) { s.lists[1].count = 1000; }) ==
        "more matches than the list holds");
  CHECK(damaged([](cache::StoredMatches& s) { s.lists[0].bytes.back() = '\x80'; }) ==
        "a match cut short");
  CHECK(damaged([](cache::StoredMatches& s) {
          s.lists[0].bytes = std::string(10, '\xff') + '\x01';
          s.lists[0].count = 1;
        }) == "a number over 64 bits");
  CHECK(damaged([](cache::StoredMatches& s) {
          s.lists[0].bytes = std::string("\xff\xff\xff\xff\x0f\x00", 6);
          s.lists[0].count = 1;
        }) == "a match past 2^32 events");
  // A batch item that starts after its match, or whose loop opens after it: not written.
  cache::StoredMatches s = good;
  CHECK_THROWS_AS(items(s, 2, [](auto& v) { v[0].at = v[0].event + 1; }), std::invalid_argument);
  CHECK_THROWS_AS(items(s, 2, [](auto& v) { v[0].loop = v[0].event + 2; }), std::invalid_argument);
  CHECK_THROWS_AS(splits(s, 1, [](auto& v) { std::swap(v[0], v[1]); }), std::invalid_argument);
  std::string payload = cache::encode_cut_matches(good);
  CHECK_THROWS_AS(cache::decode_cut_matches(payload.substr(0, payload.size() - 1), b.trace),
                  cache::CorruptEntry);
  payload[16] = 7;  // the first list's kind
  CHECK_THROWS_WITH_AS(cache::decode_cut_matches(payload, b.trace), "list 0 is of no kind of rule",
                       cache::CorruptEntry);
}
