#include "trace/perf_map.h"

#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

namespace cw {
namespace {

std::vector<PerfMapEntry> parse_all(std::string_view text, PerfMapParser& parser) {
  std::vector<PerfMapEntry> out;
  parser.feed(text, out);
  return out;
}

std::string why_not(std::string_view line) {
  PerfMapEntry e;
  std::string why;
  if (parse_perf_map_line(line, e, &why)) return "parsed";
  return why;
}

TEST_CASE("perf map lines as runtimes write them: hex start and size, the name as it is") {
  PerfMapParser parser;
  std::vector<PerfMapEntry> out = parse_all(
      // node --perf-basic-prof, Python 3.12 -X perf, perf-map-agent (0x prefixes), CRLF.
      "7f77d00114c0 320 JS:*hotRead /tmp/jit-probe.js:2:17\n"
      "7f1e2a3b4000 b py::fib:/tmp/x.py\n"
      "0x7f00dead0000 0x40 Ljava/lang/String;::hashCode\r\n"
      "\n"
      "18c4000\t300\tBuiltin:DeoptimizationEntry_Eager  \n",
      parser);
  REQUIRE(out.size() == 4);
  CHECK(out[0].start == 0x7f77d00114c0);
  CHECK(out[0].size == 0x320);
  CHECK(out[0].name == "JS:*hotRead /tmp/jit-probe.js:2:17");
  CHECK(out[1].name == "py::fib:/tmp/x.py");
  CHECK(out[1].size == 0xb);
  CHECK(out[2].start == 0x7f00dead0000);
  CHECK(out[2].name == "Ljava/lang/String;::hashCode");
  CHECK(out[3].name == "Builtin:DeoptimizationEntry_Eager");
  CHECK(parser.lines() == 5);
  CHECK(parser.bad_lines() == 0);
}

TEST_CASE("a bad line is skipped and counted, with the first one's number and reason") {
  CHECK(why_not("7f00 40") == "no name after the size");
  CHECK(why_not("7f00") == "expected START SIZE NAME");
  CHECK(why_not("") == "expected START SIZE NAME");
  CHECK(why_not("zz00 40 f") == "the start is not a hex address");
  CHECK(why_not("7f00 -40 f") == "the size is not a hex number");
  CHECK(why_not("7f00 0x f") == "the size is not a hex number");
  CHECK(why_not("10000000000000000 40 f") == "the start is not a hex address");  // 17 digits
  CHECK(why_not("7f00 0 f") == "a size of 0");
  CHECK(why_not("ffffffffffffff00 100 f") == "the range passes the end of the address space");
  CHECK(why_not("7f00 40   ") == "no name after the size");
  CHECK(why_not("7f00 40 evil\x1b]0;title\x07") == "a control character (0x1b) in the name");
  CHECK(why_not(std::string("7f00 40 a\0b", 11)) == "a control character (0x00) in the name");
  CHECK(why_not("7f00 40 del\x7f") == "a control character (0x7f) in the name");
  CHECK(why_not("ffffffffffffff00 ff f") == "parsed");

  PerfMapParser parser;
  std::vector<PerfMapEntry> out =
      parse_all("1000 10 good\nnot a line\n2000 10 also good\n3000 0 zero\n", parser);
  CHECK(out.size() == 2);
  CHECK(parser.bad_lines() == 2);
  CHECK(parser.first_bad_line() == 2);
  CHECK(parser.first_bad_reason() == "the start is not a hex address");
}

TEST_CASE("a line whose newline has not come yet waits for it, across feeds") {
  PerfMapParser parser;
  std::vector<PerfMapEntry> out;
  parser.feed("1000 10 fi", out);
  CHECK(out.empty());  // a runtime may be writing it: never a truncated name
  parser.feed("b\n2000 2", out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].name == "fib");
  parser.feed("0 main\n", out);
  REQUIRE(out.size() == 2);
  CHECK(out[1].size == 0x20);
  CHECK(parser.lines() == 2);
}

TEST_CASE("an endless line is skipped to its end without holding it in memory") {
  PerfMapParser parser;
  std::vector<PerfMapEntry> out;
  parser.feed("1000 10 ", out);
  const std::string piece(1 << 20, 'x');
  for (int i = 0; i < 8; ++i) parser.feed(piece, out);  // 8 MiB of one line
  parser.feed("\n2000 10 next\n", out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].name == "next");
  CHECK(parser.bad_lines() == 1);
  CHECK(parser.first_bad_line() == 1);
  CHECK(parser.first_bad_reason() == "a line longer than 65536 bytes");
}

TEST_CASE("at most max_entries entries are given; the rest is not parsed") {
  PerfMapParser parser(3);
  std::vector<PerfMapEntry> out;
  std::string text;
  for (int i = 1; i <= 10; ++i) text += std::to_string(i) + "000 10 f" + std::to_string(i) + "\n";
  parser.feed(text, out);
  CHECK(out.size() == 3);
  CHECK(parser.full());
  parser.feed("9000 10 more\n", out);
  CHECK(out.size() == 3);
}

TEST_CASE("random bytes never crash the parser and give only well-formed entries") {
  std::mt19937_64 random(20261129);
  const std::string alphabet = "0123456789abcdefxX \t\n\r\x1b\x7f:/*~^zZ-";
  for (int round = 0; round < 200; ++round) {
    PerfMapParser parser(1000);
    std::vector<PerfMapEntry> out;
    for (int feed = 0; feed < 20; ++feed) {
      std::string bytes(random() % 300, '\0');
      for (char& c : bytes)
        c = random() % 8 == 0 ? static_cast<char>(random() & 0xff)
                              : alphabet[random() % alphabet.size()];
      parser.feed(bytes, out);
    }
    for (const PerfMapEntry& e : out) {
      CHECK(e.size > 0);
      CHECK(e.start + e.size > e.start);
      CHECK(!e.name.empty());
      for (char c : e.name) CHECK((static_cast<unsigned char>(c) >= 0x20 || c == '\t'));
    }
    CHECK(parser.entries() + parser.bad_lines() <= parser.lines());
  }
}

}  // namespace
}  // namespace cw
