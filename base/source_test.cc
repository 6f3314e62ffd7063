#include "base/source.h"

#include <doctest/doctest.h>

using namespace cw;

TEST_CASE("a diagnostic renders the line, a caret under the column and its hints") {
  auto src = make_source("pack.cw", "edge x {\n  where from.stak == 1\n}\n");
  Diagnostic d;
  d.source = src;
  d.loc = {2, 9, 17};
  d.length = 9;
  d.message = "unknown field 'from.stak'";
  d.hints = {"did you mean 'from.stack'?"};
  CHECK(d.render() ==
        "pack.cw:2:9: error: unknown field 'from.stak'\n"
        "    where from.stak == 1\n"
        "          ^~~~~~~~~\n"
        "hint: did you mean 'from.stack'?\n");
}

TEST_CASE("a diagnostic without a position names only the file") {
  Diagnostic d;
  d.source = make_source("t.trace", "");
  d.severity = Severity::Warning;
  d.message = "empty trace";
  CHECK(d.render() == "t.trace: warning: empty trace\n");
}

TEST_CASE("tabs before the column are kept so the caret lines up") {
  auto src = make_source("a.cw", "\tx = 1\n");
  Diagnostic d{Severity::Error, src, {1, 2, 1}, 1, "bad", {}};
  CHECK(d.render() == "a.cw:1:2: error: bad\n  \tx = 1\n  \t^\n");
}

TEST_CASE("control bytes in the excerpt, message and hints are shown escaped, caret aligned") {
  // An OSC sequence (ESC ] 0 ; title BEL) in a pack would retitle the terminal, or worse.
  auto src = make_source("evil.cw", std::string("x \x1b]0;pwned\x07 y\n"));
  Diagnostic d{Severity::Error, src, {1, 3, 2}, 1, "unknown item '\x1b]0'", {"see \x07"}};
  CHECK(d.render() ==
        "evil.cw:1:3: error: unknown item '\\x1b]0'\n"
        "  x \\x1b]0;pwned\\x07 y\n"
        "    ^~~~\n"
        "hint: see \\x07\n");
  Diagnostic after{Severity::Error, src, {1, 13, 12}, 1, "here", {}};
  CHECK(after.render() ==
        "evil.cw:1:13: error: here\n"
        "  x \\x1b]0;pwned\\x07 y\n"
        "                    ^\n");  // under the space after BEL: 2 + 18 columns
}

TEST_CASE("a window around the caret never splits a UTF-8 sequence") {
  // é is bytes 39 and 40; a window starting 40 bytes before the caret at byte 80 would
  // start inside it, so it starts at 39.
  const std::string wide = std::string(39, 'x') + "\xC3\xA9" + std::string(200, 'y');
  auto src = make_source("u.cw", wide + "\n");
  Diagnostic u{Severity::Error, src, {1, 81, 80}, 1, "u", {}};
  CHECK(u.render() == "u.cw:1:81: error: u\n  ..." + wide.substr(39, 120) + "...\n  " +
                          std::string(3 + 41, ' ') + "^\n");
}

TEST_CASE("closest_match suggests only near names") {
  CHECK(closest_match("stak", {"stack", "state", "tid"}) == "stack");
  CHECK(closest_match("zzzzzz", {"stack", "tid"}).empty());
  CHECK(closest_match("swich_in", {"switch_in", "switch_out"}) == "switch_in");
}

TEST_CASE("a long line is quoted as a window around the caret, cut at both ends") {
  // 300 bytes: "a0 a1 ... " — the diagnostic points at the token at byte 150.
  std::string line;
  for (int i = 0; line.size() < 300; ++i) line += "a" + std::to_string(i) + " ";
  const size_t at = line.find("a40 ");
  auto src = make_source("long.cw", line + "\n");
  Diagnostic d{
      Severity::Error, src, {1, static_cast<uint32_t>(at + 1), static_cast<uint32_t>(at)}, 3,
      "here",          {}};
  const std::string text = d.render();
  const std::string window = line.substr(at - 40, 120);
  CHECK(text == "long.cw:1:" + std::to_string(at + 1) + ": error: here\n  ..." + window +
                    "...\n  " + std::string(3 + 40, ' ') + "^~~\n");
  // Near the start nothing is cut before; a span longer than the window stops at its edge.
  Diagnostic first{Severity::Error, src, {1, 1, 0}, 1000, "all", {}};
  CHECK(first.render() == "long.cw:1:1: error: all\n  " + line.substr(0, 120) + "...\n  ^" +
                              std::string(119, '~') + "\n");
  // A line within the limit is quoted whole, as before.
  auto short_src = make_source("short.cw", std::string(120, 'x') + "\n");
  Diagnostic whole{Severity::Error, short_src, {1, 100, 99}, 1, "x", {}};
  CHECK(whole.render() == "short.cw:1:100: error: x\n  " + std::string(120, 'x') + "\n  " +
                              std::string(99, ' ') + "^\n");
}

TEST_CASE("line_text finds lines through the index make_source builds") {
  auto src = make_source("a.cw", "one\r\ntwo\n\nfour");
  CHECK(src->line_text(1) == "one");
  CHECK(src->line_text(2) == "two");
  CHECK(src->line_text(3) == "");
  CHECK(src->line_text(4) == "four");
  CHECK(src->line_text(5).empty());
  CHECK(src->line_text(0).empty());
  // A Source made without make_source has no index and gives the same answers.
  Source plain{"b.cw", "one\r\ntwo\n\nfour", {}};
  for (uint32_t l = 0; l <= 5; ++l) CHECK(plain.line_text(l) == src->line_text(l));
}
