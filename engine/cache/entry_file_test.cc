// The framing of every entry: a file damaged, truncated, of another kind or key is a miss,
// never trusted; and CAUSEWAY_CACHE turns the cache off.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "engine/cache/cache.h"
#include "engine/cache/test_support.h"

namespace fs = std::filesystem;
using namespace cw;
using namespace cw::cache::testing;

TEST_CASE("a damaged, truncated or foreign entry is a miss, never trusted") {
  auto b = sample();
  TempDir dir;
  REQUIRE(cache::save_graph(dir.f, kKey, b.result));
  const std::string path = (dir.path + "/" + cache::graph_entry_name(kKey));
  const std::string good = read_all(path);
  REQUIRE(good.size() > cache::kHeaderSize + 16);
  std::string why;

  SUBCASE("a flipped payload byte") {
    std::string bad = good;
    bad[cache::kHeaderSize + (bad.size() - cache::kHeaderSize) / 2] ^= 0x10;
    write_all(path, bad);
    CHECK_FALSE(cache::load_graph(dir.f, kKey, b.trace, b.rules, &why));
    CHECK(why == "checksum mismatch");
  }
  SUBCASE("truncated") {
    write_all(path, good.substr(0, good.size() - 1));
    CHECK_FALSE(cache::load_graph(dir.f, kKey, b.trace, b.rules, &why));
    CHECK(why.find("truncated") == 0);
    write_all(path, good.substr(0, 10));
    CHECK_FALSE(cache::load_graph(dir.f, kKey, b.trace, b.rules, &why));
    CHECK(why == "truncated header");
  }
  SUBCASE("not a cache file") {
    write_all(path, std::string(200, 'x'));
    CHECK_FALSE(cache::load_graph(dir.f, kKey, b.trace, b.rules, &why));
    CHECK(why == "not a causeway cache file");
  }
  SUBCASE("another format version") {
    std::string bad = good;
    bad[8] ^= 0x7f;
    write_all(path, bad);
    CHECK_FALSE(cache::load_graph(dir.f, kKey, b.trace, b.rules, &why));
    CHECK(why.find("cache format") == 0);
  }
  SUBCASE("a flipped key byte in the header") {
    std::string bad = good;
    bad[20] ^= 1;
    write_all(path, bad);
    CHECK_FALSE(cache::load_graph(dir.f, kKey, b.trace, b.rules, &why));
    CHECK(why == "made from other inputs");
  }
  SUBCASE("another key: trace, packs, options or engine version") {
    // The file of another key is another name; the header is checked all the same (a file
    // renamed or copied over another's name).
    for (cache::Key other : {cache::Key{9, 2, 3, 4}, cache::Key{1, 9, 3, 4}, cache::Key{1, 2, 9, 4},
                             cache::Key{1, 2, 3, 9}}) {
      CHECK((dir.path + "/" + cache::graph_entry_name(other)) != path);
      CHECK_FALSE(cache::load_graph(dir.f, other, b.trace, b.rules, &why));
      CHECK(why == "");  // no entry of that name
      fs::copy_file(path, (dir.path + "/" + cache::graph_entry_name(other)));
      CHECK_FALSE(cache::load_graph(dir.f, other, b.trace, b.rules, &why));
      CHECK(why == "made from other inputs");
    }
  }
  SUBCASE("a payload that checks but does not decode") {
    // As if the layout changed without a version bump: a valid header over other bytes.
    REQUIRE(cache::write_entry(dir.f, cache::graph_entry_name(kKey), cache::EntryKind::Graph, kKey,
                               "short"));
    CHECK_FALSE(cache::load_graph(dir.f, kKey, b.trace, b.rules, &why));
    CHECK(why == "entry ends early");
  }
  // And the intact entry still loads.
  write_all(path, good);
  CHECK(cache::load_graph(dir.f, kKey, b.trace, b.rules));
}

TEST_CASE("CAUSEWAY_CACHE=off turns the cache off") {
  const char* old = std::getenv("CAUSEWAY_CACHE");
  std::string saved = old ? old : "";
  unsetenv("CAUSEWAY_CACHE");
  CHECK(cache::enabled_by_environment());
  setenv("CAUSEWAY_CACHE", "off", 1);
  CHECK_FALSE(cache::enabled_by_environment());
  setenv("CAUSEWAY_CACHE", "on", 1);
  CHECK(cache::enabled_by_environment());
  if (old)
    setenv("CAUSEWAY_CACHE", saved.c_str(), 1);
  else
    unsetenv("CAUSEWAY_CACHE");
}
