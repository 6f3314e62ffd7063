// Fuzzes the event names entry's decoder (engine/cache): lists that decode for the
// fixture's trace (cache_fixture.h) are read as a rebuild reads them, evaluating a new rule
// (the fixture's `loop.wait`, `name == "recvfrom"`) at the events they select, and must not
// read out of range; anything else must be CorruptEntry (the decoder) or
// std::invalid_argument (a list that does not decode, when read).
#include <stdexcept>

#include "fuzz/cache_fixture.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cw;
  const fuzz::CacheFixture& f = fuzz::cache_fixture();
  const uint64_t n = f.trace.events.size();
  std::unique_ptr<engine::EventNames> names;
  try {
    names = std::make_unique<engine::EventNames>(
        cache::decode_event_names(std::string_view(reinterpret_cast<const char*>(data), size), n));
  } catch (const cache::CorruptEntry&) {
    return 0;
  }
  for (const engine::EventNames::List& l : names->lists()) {
    try {
      for (const uint32_t e : names->events(l.kind, {l.named, {l.name}}))
        if (e >= n) std::abort();
    } catch (const std::invalid_argument&) {
    }
  }
  // Every cut rule's matches known but loop.wait's: it is evaluated at the lists' events.
  static const engine::CutMatchSet recorded = [&] {
    engine::BuildOptions options;
    options.record_matches = true;
    return engine::build_graph(f.trace, f.rules, options).matches;
  }();
  engine::KnownCutMatches known;
  for (size_t s = 0; s < recorded.splits.size(); ++s)
    known.splits.push_back(f.rules.splits[s].origin.local == "loop.wait" ? nullptr
                                                                         : &recorded.splits[s]);
  for (const engine::CutMatches& b : recorded.batches) known.batches.push_back(&b);
  engine::BuildOptions options;
  options.known_matches = &known;
  options.event_names = [&names] { return names.get(); };
  fuzz::rebuild_checked(f, options);
  return 0;
}
