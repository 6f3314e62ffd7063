#include "base/terminal_text.h"

#include <doctest/doctest.h>

#include <sstream>

using namespace cw;

TEST_CASE("control bytes, C1 controls and bytes that are not UTF-8 are shown as \\xNN") {
  // An OSC sequence retitles the terminal; CSI 2 J (C1 form) clears it.
  CHECK(terminal_text("cw-\x1b]0;pwn\x07"
                      "client") == "cw-\\x1b]0;pwn\\x07client");
  CHECK(terminal_text("a\xc2\x9b"
                      "2J") == "a\\xc2\\x9b2J");
  CHECK(terminal_text("del\x7f") == "del\\x7f");
  CHECK(terminal_text("cw-\xff\xfeserver") == "cw-\\xff\\xfeserver");
  // Overlong, surrogate, past U+10FFFF, truncated: byte by byte.
  CHECK(terminal_text("\xc0\xaf") == "\\xc0\\xaf");
  CHECK(terminal_text("\xed\xa0\x80") == "\\xed\\xa0\\x80");
  CHECK(terminal_text("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");
  CHECK(terminal_text("x\xe2\x86") == "x\\xe2\\x86");
  // Well-formed UTF-8 other than C1 stays; so does U+00A0, just past C1.
  CHECK(terminal_text("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80 \xc2\xa0") ==
        "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80 \xc2\xa0");
  // A name's newline is escaped (a fake line in a report); a report's are kept.
  CHECK(terminal_text("worker\nroot cause: none\t") == "worker\\x0aroot cause: none\\x09");
  CHECK(terminal_report("a\n\tb\x1b") == "a\n\tb\\x1b");
  // Twice is once.
  const std::string once = terminal_text("\x1b\xff\xc2\x85");
  CHECK(terminal_text(once) == once);
}

TEST_CASE("a TerminalGuard escapes what is written to its stream, and only while alive") {
  std::ostringstream out;
  {
    TerminalGuard guard(out);
    out << "title \x1b]0;pwn\x07 done\n";
    // A UTF-8 sequence split across writes is kept whole; a flush does not cut it.
    out << "arrow \xe2";
    out.flush();
    out << '\x86' << "\x92 \xff\n";
    out << "cut \xe2\x86";  // never completed: escaped when the guard goes
  }
  out << "\x1b";
  CHECK(out.str() == "title \\x1b]0;pwn\\x07 done\narrow \xe2\x86\x92 \\xff\ncut \\xe2\\x86\x1b");
}
