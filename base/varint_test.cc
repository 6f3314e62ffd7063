#include "base/varint.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace cw {
namespace {

TEST_CASE("varints and zigzag round-trip at every magnitude, and say why they fail") {
  std::vector<uint8_t> bytes;
  const std::vector<int64_t> numbers = {0, 1, -1, 63, -64, 64, 127, 128, 300, INT64_MAX, INT64_MIN};
  for (int64_t n : numbers) put_varint(bytes, zigzag(n));
  put_varint(bytes, UINT64_MAX);
  const unsigned char* p = bytes.data();
  const unsigned char* end = p + bytes.size();
  uint64_t v = 0;
  for (int64_t n : numbers) {
    REQUIRE(read_varint(p, end, v) == VarintRead::Ok);
    CHECK(unzigzag(v) == n);
  }
  REQUIRE(read_varint(p, end, v) == VarintRead::Ok);
  CHECK(v == UINT64_MAX);
  CHECK(p == end);
  CHECK(read_varint(p, end, v) == VarintRead::CutShort);

  const std::string cut = "\x80\x80";  // continues past its end
  p = reinterpret_cast<const unsigned char*>(cut.data());
  CHECK(read_varint(p, p + cut.size(), v) == VarintRead::CutShort);
  const std::string wide(10, '\x80');  // a tenth byte above 1: past 64 bits
  const unsigned char* w = reinterpret_cast<const unsigned char*>(wide.data());
  const unsigned char* start = w;
  CHECK(read_varint(w, w + wide.size(), v) == VarintRead::TooLong);
  CHECK(w - start == 10);

  std::string text;  // a std::string takes them too
  put_varint(text, 300);
  CHECK(text == "\xac\x02");
}

}  // namespace
}  // namespace cw
