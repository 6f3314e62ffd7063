#include "trace/packed_events.h"

#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "trace/trace.h"

namespace cw::binary_format {
namespace {

struct Plain {
  std::vector<Event> events;
  std::vector<uint64_t> values;
};

// Events out of time order, values at every magnitude: -1, zero, 64-bit hashes.
Plain random_plain(uint64_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  Plain p;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t nfields = static_cast<uint32_t>(rng() % 8);
    Event e{1'000'000'000 + rng() % 5'000'000,
            static_cast<Tid>(rng() % 5 == 0 ? UINT32_MAX : rng() % 70000),
            static_cast<KindId>(rng() % 40),
            static_cast<uint16_t>(rng() % 3 == 0 ? UINT16_MAX : rng() % 4),
            static_cast<uint32_t>(p.values.size()),
            static_cast<StackId>(rng() % 3 == 0 ? rng() : 0)};
    if (rng() % 50 == 0) e.values = static_cast<uint32_t>(rng());  // not back to back
    p.events.push_back(e);
    for (uint32_t f = 0; f < nfields; ++f) {
      const uint64_t pick = rng() % 4;
      p.values.push_back(pick == 0 ? UINT64_MAX : pick == 1 ? 0 : pick == 2 ? rng() % 300 : rng());
    }
  }
  return p;
}

std::vector<uint8_t> pack(const Plain& p) {
  std::vector<uint8_t> out;
  pack_events(reinterpret_cast<const uint8_t*>(p.events.data()), p.events.size(),
              reinterpret_cast<const uint8_t*>(p.values.data()), p.values.size(), out);
  return out;
}

bool unpack(const std::vector<uint8_t>& packed, const Plain& shape, Plain& out, std::string* why) {
  out.events.assign(shape.events.size(), Event{});
  out.values.assign(shape.values.size(), 0);
  return unpack_events(packed.data(), packed.size(), shape.events.size(), shape.values.size(),
                       reinterpret_cast<uint8_t*>(out.events.data()),
                       reinterpret_cast<uint8_t*>(out.values.data()), why);
}

TEST_CASE("packed events unpack to the same bytes, and take at most half again their size") {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    CAPTURE(seed);
    const Plain p = random_plain(seed, seed * 37);
    const std::vector<uint8_t> packed = pack(p);
    CHECK(packed.size() <= packed_events_limit(p.events.size() * 24 + p.values.size() * 8));
    Plain back;
    std::string why;
    REQUIRE(unpack(packed, p, back, &why));
    CHECK(std::memcmp(back.events.data(), p.events.data(), p.events.size() * 24) == 0);
    CHECK(back.values == p.values);
  }
}

TEST_CASE("packed events cut short anywhere, or followed by more, are refused with the byte") {
  const Plain p = random_plain(7, 60);
  const std::vector<uint8_t> packed = pack(p);
  Plain back;
  std::string why;
  size_t refused = 0;
  for (size_t cut = 0; cut < packed.size(); ++cut) {
    std::vector<uint8_t> shorter(packed.begin(), packed.begin() + static_cast<ptrdiff_t>(cut));
    refused += unpack(shorter, p, back, &why) ? 0 : 1;
  }
  CHECK(refused == packed.size());
  std::vector<uint8_t> longer = packed;
  longer.push_back(0);
  CHECK_FALSE(unpack(longer, p, back, &why));
  CHECK(why == "bytes after the last value (byte " + std::to_string(packed.size()) + " of " +
                   std::to_string(longer.size()) + ")");
}

TEST_CASE("a packed number past 64 bits, or a field past its width, is refused") {
  Plain one;
  one.events.push_back(Event{});
  std::string why;
  Plain back;
  // Eleven continuation bytes for the time.
  std::vector<uint8_t> overlong(11, 0x80);
  overlong.resize(16, 0);
  CHECK_FALSE(unpack(overlong, one, back, &why));
  CHECK(why == "a time does not fit 64 bits (byte 10 of 16)");
  // A thread id of 2^32.
  std::vector<uint8_t> wide = {0, 0x80, 0x80, 0x80, 0x80, 0x10, 0, 0, 0, 0};
  CHECK_FALSE(unpack(wide, one, back, &why));
  CHECK(why == "a thread id 4294967296 is out of range (byte 6 of 10)");
}

}  // namespace
}  // namespace cw::binary_format
