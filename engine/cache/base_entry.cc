// The base entries (cache.h): for a trace and the links_key of its packs, the key of the
// last graph saved, whose edges a run that misses the graph cache reuses to rebuild only
// the cuts.
#include <fmt/format.h>

#include <string>

#include "engine/cache/cache.h"
#include "engine/cache/encoding.h"

namespace cw::cache {

std::string base_entry_name(const Key& base) {
  return fmt::format("base-{}.cwb", base.hex());
}

bool save_base(const Folder& dir, const Key& base, const Key& graph, std::string* why) {
  Writer w;
  w.value(graph);
  return write_entry(dir, base_entry_name(base), EntryKind::Base, base, w.take(), why);
}

Key decode_base(std::string_view payload) {
  Reader rd(payload);
  const Key key = rd.value<Key>();
  if (!rd.done()) throw CorruptEntry("bytes after the graph's key");
  return key;
}

std::optional<engine::BuildResult> load_base(const Folder& dir, const Key& base, const Trace& trace,
                                             const rules::RuleSet& rules, Key* graph,
                                             std::string* why) {
  auto payload = read_entry(dir, base_entry_name(base), EntryKind::Base, base, why);
  if (!payload) return std::nullopt;
  Key key;
  try {
    key = decode_base(*payload);
  } catch (const CorruptEntry& e) {
    if (why) *why = e.what();
    return std::nullopt;
  }
  // The graph of another trace, options or causeway is never one to rebuild.
  if (key.trace != base.trace || key.options != base.options || key.engine != base.engine) {
    if (why) *why = "names a graph of other inputs";
    return std::nullopt;
  }
  if (graph) *graph = key;
  return load_graph(dir, key, trace, rules, why, true);
}

}  // namespace cw::cache
