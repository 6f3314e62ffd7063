// Fuzzes the trace arrays entry's decoder (engine/cache): an entry whose arrays decode and
// pass check_trace_arrays against the fixture's trace read without its events
// (cache_fixture.h) becomes that trace's events, as the command line takes them, and must
// then index, build and diagnose without reading out of range; anything else must be
// CorruptEntry.
#include "fuzz/cache_fixture.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cw;
  const fuzz::CacheFixture& f = fuzz::cache_fixture();
  const fuzz::MappedInput m = fuzz::map_input(data, size);
  cache::TraceArrays arrays;
  try {
    arrays = cache::decode_trace_arrays(m.keep, m.base, m.size);
    cache::check_trace_arrays(arrays, f.tables);
  } catch (const cache::CorruptEntry&) {
    return 0;
  }
  // The trace's other chunks, as the command line reads them beside the cached arrays.
  Trace trace;
  (void)read_trace_bytes(f.binary, trace, "fuzz.cwt");
  trace.events = std::move(arrays.events);
  trace.values = std::move(arrays.values);
  engine::BuildOptions build;
  build.lua_limits.instructions = 100'000;
  engine::BuildResult built;
  try {
    built = engine::build_graph(trace, f.rules, build);
  } catch (const DiagnosticError&) {
    return 0;  // a rule's expression error (a value it cannot take): reported at the rule
  }
  const engine::ThreadEvents index(trace);
  engine::DiagnoseOptions options;
  options.events = &index;
  fuzz::diagnose_quietly(trace, built, f.rules, options);
  return 0;
}
