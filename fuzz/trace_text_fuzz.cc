// Fuzzes the text trace parser: any input either parses or throws DiagnosticError, and
// whatever parses is written back to text that parses to the same text again.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/source.h"
#include "trace/text_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  cw::Trace trace;
  try {
    trace = cw::parse_text_trace(cw::make_source("fuzz.trace", text));
  } catch (const cw::DiagnosticError& e) {
    if (e.diagnostic.message.empty()) std::abort();
    return 0;
  }
  const std::string written = cw::write_text_trace(trace);
  std::string again;
  try {
    again = cw::write_text_trace(cw::parse_text_trace(cw::make_source("written.trace", written)));
  } catch (const cw::DiagnosticError& e) {
    std::fprintf(stderr, "written trace does not parse:\n%s\n%s", written.c_str(), e.what());
    std::abort();
  }
  if (again != written) {
    std::fprintf(stderr, "round trip differs:\n%s\n---\n%s", written.c_str(), again.c_str());
    std::abort();
  }
  return 0;
}
