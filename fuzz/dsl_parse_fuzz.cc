// libFuzzer target: the rule-language parser and formatter on arbitrary bytes. parse must
// never crash; format_source may refuse input only with a DiagnosticError, and what it
// prints must format to itself.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "dsl/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto source =
      cw::make_source("fuzz.cw", std::string(reinterpret_cast<const char*>(data), size));
  const cw::dsl::ParseResult result = cw::dsl::parse(source);
  for (const auto& d : result.diagnostics) (void)d.render();
  std::string once;
  try {
    once = cw::dsl::format_source(source);
  } catch (const cw::DiagnosticError&) {
    return 0;
  }
  // Formatted text must parse (an exception here is a finding) and be a fixed point.
  if (cw::dsl::format_source(cw::make_source("fuzz.cw", once)) != once) std::abort();
  return 0;
}
