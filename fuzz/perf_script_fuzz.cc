// Fuzzes the reader of `perf script` output: any input either parses or throws
// DiagnosticError with a message and a position inside the input; whatever parses is a
// consistent trace (events sorted, stacks, kinds, values and threads in range) that the
// text writer can write.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/source.h"
#include "trace/perf_script.h"
#include "trace/text_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)cw::looks_like_perf_script(text);
  cw::Trace trace;
  std::vector<std::string> notes;
  try {
    trace = cw::parse_perf_script(cw::make_source("fuzz.txt", text), &notes);
  } catch (const cw::DiagnosticError& e) {
    const cw::Diagnostic& d = e.diagnostic;
    if (d.message.empty() || d.loc.line == 0 || d.loc.col == 0 || d.loc.byte > text.size())
      std::abort();
    return 0;
  }
  for (size_t i = 0; i < trace.events.size(); ++i) {
    const cw::Event& e = trace.events[i];
    if (i > 0 && trace.events[i - 1].ts > e.ts) std::abort();
    if (e.stack >= trace.stacks.size() || e.kind >= trace.schema.size()) std::abort();
    if (e.values + trace.schema.kind(e.kind).fields.size() > trace.values.size()) std::abort();
    if (trace.thread(e.tid) == nullptr) std::abort();
  }
  for (const cw::Stack& s : trace.stacks) {
    if (!s.symbols.empty() && s.symbols.size() != s.ips.size()) std::abort();
    for (cw::StrId sym : s.symbols)
      if (sym >= trace.strings.size()) std::abort();
  }
  for (const cw::ThreadInfo& t : trace.threads)
    if (trace.process(t.pid) == nullptr) std::abort();
  (void)cw::write_text_trace(trace);
  return 0;
}
