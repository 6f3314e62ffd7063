// The framing of every entry: a file damaged, truncated, of another kind or key is a miss,
// never trusted; and CAUSEWAY_CACHE turns the cache off.
#include "engine/cache/entry_file.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

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

TEST_CASE("an entry's checksum is of its blocks, however its bytes are taken") {
  // Three and a half blocks of random bytes: whole blocks are hashed on every CPU.
  const uint64_t block = cache::kChecksumBlock;
  std::string payload(3 * block + block / 2, '\0');
  std::mt19937_64 random(7);
  for (char& c : payload) c = static_cast<char>(random());
  std::vector<uint64_t> digests;
  for (uint64_t at = 0; at < payload.size(); at += block)
    digests.push_back(XXH3_64bits(payload.data() + at, std::min(block, payload.size() - at)));
  const uint64_t expected = XXH3_64bits(digests.data(), digests.size() * sizeof(uint64_t));
  CHECK(cache::payload_checksum(payload) == expected);
  {
    // In pieces across the blocks' bounds, the large one on every CPU from mid-block.
    cache::BlockHasher h;
    h.bytes(payload.data(), 1000);
    h.bytes(payload.data() + 1000, block);
    h.in_parallel(payload.data() + 1000 + block, payload.size() - 1000 - block);
    CHECK(h.digest() == expected);
  }
  CHECK(cache::payload_checksum("") == XXH3_64bits(nullptr, 0));

  TempDir dir;
  REQUIRE(cache::write_entry(dir.f, "blocks.cwx", cache::EntryKind::Base, kKey, payload));
  const std::string path = dir.path + "/blocks.cwx";
  auto read_back = [&](std::string* why) {
    return cache::read_entry(dir.f, "blocks.cwx", cache::EntryKind::Base, kKey, why);
  };
  auto mapped = [&](std::string* why) {
    return cache::map_entry(dir.f, "blocks.cwx", cache::EntryKind::Base, kKey, false, 0, why);
  };
  // The graph's way: read from the file into place, hashed on the way.
  auto streamed = [&]() {
    const int fd = open(path.c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    unsigned char header[cache::kHeaderSize];
    REQUIRE(cache::pread_all(fd, header, sizeof header, 0));
    cache::FileSource in(fd, cache::kHeaderSize, cache::kHeaderSize + payload.size());
    std::string got(payload.size(), '\0');
    in.read(got.data(), 1000);
    in.read(got.data() + 1000, got.size() - 1000);
    close(fd);
    CHECK(got == payload);  // (read whole either way: it is the checksum that tells)
    return in.matches(cache::header_checksum(header));
  };
  std::string why;
  CHECK(read_back(&why) == payload);
  CHECK(mapped(&why).has_value());
  CHECK(streamed());
  // One byte flipped in the third block: every way of reading the entry tells.
  const std::string good = read_all(path);
  std::string bad = good;
  bad[cache::kHeaderSize + 2 * block + 12345] ^= 0x01;
  write_all(path, bad);
  payload[2 * block + 12345] ^= 0x01;
  CHECK_FALSE(read_back(&why));
  CHECK(why == "checksum mismatch");
  CHECK_FALSE(mapped(&why));
  CHECK(why == "checksum mismatch");
  CHECK_FALSE(streamed());
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
