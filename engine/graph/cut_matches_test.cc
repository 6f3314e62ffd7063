// The compact form of a cut rule's matches: what is written reads back the same, and bytes
// that no writer makes are refused, not read out of range.
#include "engine/graph/cut_matches.h"

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "engine/graph/expr_eval.h"
#include "engine/graph/test_support.h"

namespace cw::engine {
namespace {

// A list of `n` random matches with gaps of up to `gap` events, over the whole range.
std::vector<SplitMatch> random_splits(uint64_t seed, size_t n, uint32_t gap) {
  testing::Random next(seed);
  std::vector<SplitMatch> out;
  uint64_t e = next(gap);
  for (size_t k = 0; k < n && e < kNoEvent - 1; ++k, e += 1 + next(gap)) {
    const auto event = static_cast<uint32_t>(e);
    uint32_t at = event;
    switch (next(4)) {
      case 0: at = kNoEvent; break;
      case 1: at = static_cast<uint32_t>(e - next(e + 1)); break;         // an opener before it
      case 2: at = static_cast<uint32_t>(e + next(kNoEvent - e)); break;  // a next event
      default: break;
    }
    out.push_back({event, at});
  }
  return out;
}

std::string text(const std::vector<SplitMatch>& v) {
  std::string out;
  for (const SplitMatch& m : v) out += std::to_string(m.event) + '@' + std::to_string(m.at) + ' ';
  return out;
}

std::string text(const std::vector<BatchMatch>& v) {
  std::string out;
  for (const BatchMatch& m : v)
    out += std::to_string(m.event) + '@' + std::to_string(m.at) + '/' + std::to_string(m.loop) +
           '/' + std::to_string(m.key) + ' ';
  return out;
}

TEST_CASE("split matches read back as written, at every distance and cut place") {
  for (uint64_t seed = 1; seed <= 20; ++seed)
    for (uint32_t gap : {1u, 7u, 300u, 1u << 20, 1u << 30}) {
      CAPTURE(seed);
      CAPTURE(gap);
      const auto list = random_splits(seed, 500, gap);
      const CutMatches m = CutMatches::of(list);
      CHECK(m.known);
      CHECK_FALSE(m.batch);
      CHECK(m.count == list.size());
      CHECK(text(m.split_list()) == text(list));
    }
  // The extremes: the first and the last event a match can be at.
  const std::vector<SplitMatch> ends = {{0, kNoEvent}, {0xfffffffeu, 0}};
  CHECK(text(CutMatches::of(ends).split_list()) == text(ends));
}

TEST_CASE("batch items read back as written, keys of any sign") {
  std::vector<BatchMatch> list = {{0, 0, 0, 0},
                                  {5, 2, 6, -1},
                                  {9, 9, 1, INT64_MIN},
                                  {1000, 3, 0, INT64_MAX},
                                  {0xfffffffeu, 0, 0xffffffffu, 42}};
  const CutMatches m = CutMatches::of(list);
  CHECK(m.batch);
  CHECK(text(m.batch_list()) == text(list));
  // A plain item (at its event, in the thread's loop, a small descriptor) takes 4 bytes.
  CHECK(CutMatches::of(std::vector<BatchMatch>{{7, 7, 0, 5}}).bytes.size() == 4);
  CHECK(CutMatches::of(std::vector<SplitMatch>{{7, 7}}).bytes.size() == 2);
}

TEST_CASE("a writer refuses what a list cannot hold") {
  CHECK_THROWS_AS(CutMatches::of(std::vector<SplitMatch>{{3, 3}, {3, 3}}), std::invalid_argument);
  CHECK_THROWS_AS(CutMatches::of(std::vector<SplitMatch>{{kNoEvent, 0}}), std::invalid_argument);
  CHECK_THROWS_AS(CutMatches::of(std::vector<BatchMatch>{{3, 4, 0, 0}}), std::invalid_argument);
  CHECK_THROWS_AS(CutMatches::of(std::vector<BatchMatch>{{3, 3, 5, 0}}), std::invalid_argument);
  CutMatches started = CutMatches::of(std::vector<SplitMatch>{{1, 1}});
  CHECK_THROWS_AS(MatchWriter{started}, std::invalid_argument);
}

TEST_CASE("a reader refuses bytes no writer makes, and reads nothing past them") {
  auto read = [](std::string bytes, uint64_t count, bool batch) {
    CutMatches m;
    m.bytes = std::move(bytes);
    m.count = count;
    m.batch = batch;
    try {
      if (batch)
        m.batch_list();
      else
        m.split_list();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(read)");
  };
  CHECK(read(std::string("\x02\x01", 2), 1, false) == "(read)");
  CHECK(read(std::string("\x02\x01\x00", 3), 1, false) == "bytes after the last match");
  CHECK(read(std::string("\x02", 1), 1, false) == "more matches than the list holds");
  CHECK(read(std::string("\x02\x81", 2), 1, false) == "a match cut short");
  CHECK(read(std::string(9, '\xff') + "\x7f\x00", 1, false) == "a number over 64 bits");
  CHECK(read(std::string("\xfe\xff\xff\xff\x0f\x00", 6), 1, false) == "(read)");
  CHECK(read(std::string("\xff\xff\xff\xff\x0f\x00", 6), 1, false) == "a match past 2^32 events");
  // The second match one past the first at 2^32 − 2: no event.
  CHECK(read(std::string("\xfe\xff\xff\xff\x0f\x00\x00\x00", 8), 2, false) ==
        "a match past 2^32 events");
  // A cut place before event 0, and one past the last event.
  CHECK(read(std::string("\x02\x06", 2), 1, false) == "a cut place that is no event");
  CHECK(read(std::string("\x02\xff\xff\xff\xff\x1f", 6), 1, false) ==
        "a cut place that is no event");
  CHECK(read(std::string("\x02\x03\x00\x00", 4), 1, true) ==
        "an item that starts before the trace");
  CHECK(read(std::string("\x02\x00\x04\x00", 4), 1, true) ==
        "an item's loop opened before the trace");
  CHECK(read(std::string("\x02\x00\x03\x00", 4), 1, true) == "(read)");
  CHECK(read("", 0, false) == "(read)");
  CHECK(read("x", 0, true) == "bytes after the last match");
}

}  // namespace
}  // namespace cw::engine
