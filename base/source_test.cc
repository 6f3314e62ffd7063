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

TEST_CASE("a long line is shown as a window around the column, caret under the same byte") {
  // A hostile or generated pack: one line of 100,000 bytes, the error in its middle.
  std::string line(100'000, 'x');
  line.replace(50'000, 3, "BAD");
  auto src = make_source("long.cw", line + "\n");
  Diagnostic d{Severity::Error, src, {1, 50'001, 50'000}, 3, "here", {}};
  const std::string shown = line.substr(50'000 - 80, 160);
  CHECK(d.render() == "long.cw:1:50001: error: here\n  ..." + shown + "...\n  " +
                          std::string(3 + 80, ' ') + "^~~\n");
  // Near the start there is nothing cut before.
  Diagnostic start{Severity::Error, src, {1, 2, 1}, 1, "start", {}};
  CHECK(start.render() == "long.cw:1:2: error: start\n  " + line.substr(0, 160) + "...\n   ^\n");
  // A window never splits a UTF-8 sequence: it widens to keep the whole character.
  std::string wide = std::string(79, 'x') + "\xC3\xA9" + std::string(200, 'y');
  auto src2 = make_source("u.cw", wide + "\n");
  Diagnostic u{Severity::Error, src2, {1, 161, 160}, 1, "u", {}};
  CHECK(u.render() == "u.cw:1:161: error: u\n  ..." + wide.substr(79, 161) + "...\n  " +
                          std::string(3 + 81, ' ') + "^\n");
}

TEST_CASE("closest_match suggests only near names") {
  CHECK(closest_match("stak", {"stack", "state", "tid"}) == "stack");
  CHECK(closest_match("zzzzzz", {"stack", "tid"}).empty());
  CHECK(closest_match("swich_in", {"switch_in", "switch_out"}) == "switch_in");
}
