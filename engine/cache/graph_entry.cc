// The graph entry (cache.h): a built graph, its rule tables and counts, and the peers cuts
// a rebuild of the cuts reuses. Decoded, every index it holds is checked against the trace,
// the packs and itself before anything walks it.
#include <fmt/format.h>
#include <unistd.h>

#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/cache/cache.h"
#include "engine/cache/chunked_check.h"
#include "engine/cache/encoding.h"
#include "engine/cache/entry_file.h"
#include "engine/cache/rule_tables.h"

namespace cw::cache {

static_assert(std::is_trivially_copyable_v<engine::Segment>);
static_assert(std::is_trivially_copyable_v<engine::Edge>);
static_assert(std::is_trivially_copyable_v<engine::BuildStats>);
static_assert(std::is_trivially_copyable_v<engine::Graph::ThreadSegments>);

namespace {

// Where the graph entry's parts live while they are written.
struct GraphParts {
  uint64_t segments = 0, edges = 0;  // the counts before each large array
  std::string rest;                  // everything after them, encoded
  std::vector<std::string_view> parts;
};

// The graph's payload in parts: the segments and edges as they are in memory (at 19 M
// events ~250 MB: not copied into a buffer first), then the rest, encoded. The bytes are
// those of Writer::array for the two arrays, so decode_graph reads both alike.
void graph_parts(const engine::BuildResult& r, GraphParts& out) {
  const engine::Graph& g = r.graph;
  out.segments = g.segments.size();
  out.edges = g.edges.size();
  Writer w;
  w.texts(g.kinds);
  write_rule_names(w, g.rule_names);
  w.array(g.threads);
  w.value(r.stats);
  write_rule_counts(w, r.counts);
  w.array(r.peer_cuts);
  out.rest = w.take();
  auto bytes = [](const auto& v) {
    return std::string_view(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(v.front()));
  };
  out.parts = {{reinterpret_cast<const char*>(&out.segments), 8},
               bytes(g.segments),
               {reinterpret_cast<const char*>(&out.edges), 8},
               bytes(g.edges),
               out.rest};
}

}  // namespace

std::string encode_graph(const engine::BuildResult& r) {
  GraphParts p;
  graph_parts(r, p);
  std::string out;
  for (std::string_view part : p.parts) out.append(part);
  return out;
}

namespace {

// Throws CorruptEntry unless every index `r` holds is inside the table it indexes: the
// trace's events, the graph's segments, kinds and threads, the rule tables (which must be
// those of `rules`: reports index the counts by the packs' rules). A graph loaded for
// reuse is not diagnosed: a rebuild reads its segments' events as places in its threads'
// lists, so only their bounds are checked, not the thread of each (a read of two events
// per segment, at random, ~0.2 s at 19 M events).
void check_graph(const engine::BuildResult& r, const Trace& trace, const rules::RuleSet& rules,
                 bool for_reuse) {
  const engine::Graph& g = r.graph;
  const engine::RuleNames& n = g.rule_names;
  const uint64_t events = trace.events.size();
  const uint64_t segment_count = g.segments.size();
  auto bad = [](const char* what) { throw CorruptEntry(what); };
  check_rule_tables(n, r.counts, rules, for_reuse);
  // Segments: events of their thread; each thread's segments one run, in event order.
  check_in_chunks(g.segments.size(), [&](size_t begin, size_t end) {
    // The events read are all over the trace: asked for a few segments ahead.
    constexpr size_t kAhead = 8;
    for (size_t i = begin; i < end; ++i) {
      if (!for_reuse && i + kAhead < end) {
        const engine::Segment& ahead = g.segments[i + kAhead];
        if (ahead.last < events) {
          __builtin_prefetch(&trace.events[ahead.first]);
          __builtin_prefetch(&trace.events[ahead.last]);
        }
      }
      const engine::Segment& s = g.segments[i];
      if (s.first > s.last || s.last >= events)
        bad("a segment names events the trace does not have");
      if (!for_reuse && (trace.events[s.first].tid != s.tid || trace.events[s.last].tid != s.tid))
        bad("a segment's events are of another thread");
      if (!rule_in_range(n, s.cut_rule)) bad("a segment names a rule the graph does not have");
    }
  });
  // Every segment in exactly one thread's run: Graph::segment_of finds an event's segment
  // through its thread's.
  std::vector<bool> covered(segment_count, false);
  uint64_t in_runs = 0;
  for (size_t i = 0; i < g.threads.size(); ++i) {
    const engine::Graph::ThreadSegments& t = g.threads[i];
    if ((i > 0 && g.threads[i - 1].tid >= t.tid) || t.begin > t.end || t.end > segment_count)
      bad("the graph's thread table does not fit its segments");
    for (uint32_t s = t.begin; s < t.end; ++s) {
      if (covered[s]) bad("the graph's thread table does not fit its segments");
      covered[s] = true;
    }
    in_runs += t.end - t.begin;
    for (uint32_t s = t.begin; s < t.end; ++s)
      if (g.segments[s].tid != t.tid ||
          (s > t.begin && g.segments[s - 1].first >= g.segments[s].first))
        bad("the graph's thread table does not fit its segments");
  }
  if (in_runs != segment_count) bad("the graph's thread table does not fit its segments");
  check_in_chunks(g.edges.size(), [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const engine::Edge& e = g.edges[i];
      if (e.from >= segment_count || e.to >= segment_count || e.kind >= g.kinds.size())
        bad("an edge names a segment or kind the graph does not have");
      if (e.from_event >= events || e.to_event >= events)
        bad("an edge names events the trace does not have");
      if (!rule_in_range(n, e.rule) ||
          (e.boost_rule != rules::kNoRule && e.boost_rule >= n.of(engine::RuleKind::Edge).size()) ||
          (e.link != rules::kNoRule && e.link >= n.of(engine::RuleKind::Link).size()))
        bad("an edge names a rule the graph does not have");
      if (e.strength > engine::Strength::Boosted) bad("an edge of unknown strength");
    }
  });
  for (const engine::PeerCut& p : r.peer_cuts)
    if (p.event >= events || p.since >= p.event || p.rule >= rules.splits.size() ||
        p.neighbour > rules::Neighbour::Strong)
      bad("a peers cut names an event or rule the trace and packs do not have");
  // A rebuild of the cuts sizes its flag edges by this.
  if (r.stats.flag_edges > g.edges.size()) bad("more flag edges than edges");
}

template <class R>
engine::BuildResult decode_graph_from(R& rd, const Trace& trace, const rules::RuleSet& rules,
                                      bool for_reuse) {
  engine::BuildResult r;
  engine::Graph& g = r.graph;
  g.segments = rd.template array<engine::Segment>();
  // A rebuild of the cuts keeps the link edges in this vector and adds the neighbour edges
  // of its cuts (engine/graph, reuse_edges): more than it held when a rule cuts more, and
  // a vector grown then is copied whole into fresh memory (~0.2 GB at 19 M events).
  g.edges = rd.template array<engine::Edge>(for_reuse ? 0.5 : 0);
  g.kinds = rd.texts();
  g.rule_names = read_rule_names(rd);
  g.threads = rd.template array<engine::Graph::ThreadSegments>();
  r.stats = rd.template value<engine::BuildStats>();
  r.over_connections_counted = true;  // a saved graph's are (save_graph)
  r.counts = read_rule_counts(rd);
  r.peer_cuts = rd.template array<engine::PeerCut>();
  if (!rd.done()) throw CorruptEntry("bytes left after the graph");
  // The csr's arrays index segments by the edges, the diagnosis events by the segments,
  // reports rules by the counts: whatever wrote the entry, nothing may index past them.
  check_graph(r, trace, rules, for_reuse);
  if (!for_reuse) g.build_csr();
  return r;
}

}  // namespace

engine::BuildResult decode_graph(std::string_view payload, const Trace& trace,
                                 const rules::RuleSet& rules, bool for_reuse) {
  Reader rd(payload);
  return decode_graph_from(rd, trace, rules, for_reuse);
}

std::string graph_entry_name(const Key& key) {
  return fmt::format("graph-{}.cwg", key.hex());
}

std::optional<engine::BuildResult> load_graph(const Folder& dir, const Key& key, const Trace& trace,
                                              const rules::RuleSet& rules, std::string* why,
                                              bool for_reuse) {
  const std::string name = graph_entry_name(key);
  auto fail = [&](std::string reason) -> std::optional<engine::BuildResult> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  uint64_t size = 0;
  unsigned char header[kHeaderSize];
  std::string problem;
  const int fd = open_checked_entry(dir, name, EntryKind::Graph, key, &size, header, &problem);
  if (fd < 0) return fail(problem);
  struct Close {
    int fd;
    ~Close() { close(fd); }
  } closer{fd};
  try {
    FileReader rd(fd, kHeaderSize, size);
    engine::BuildResult r = decode_graph_from(rd, trace, rules, for_reuse);
    if (!rd.source().matches(header_checksum(header))) return fail("checksum mismatch");
    dir.touch(name);  // used now: eviction drops the least recently used
    return r;
  } catch (const CorruptEntry& e) {
    // Damage usually shows as a payload that does not decode before the end is reached:
    // say what it is when the checksum tells.
    if (checksum_by_reading(fd, size) != header_checksum(header)) return fail("checksum mismatch");
    return fail(e.what());
  }
}

bool save_graph(const Folder& dir, const Key& key, const engine::BuildResult& result,
                std::string* why) {
  if (!result.over_connections_counted)
    throw std::logic_error("a graph saved before its over-connections are counted");
  GraphParts parts;
  graph_parts(result, parts);
  if (!write_entry_parts(dir, graph_entry_name(key), EntryKind::Graph, key, parts.parts, why))
    return false;
  remove_old_temporaries(dir);
  // Least recently used first out: loads touch their entry. Base entries only name graphs:
  // as many as there are graphs, the newest.
  evict_least_recent(dir, "base-", ".cwb", kGraphEntries);
  for (const std::string& gone : evict_least_recent(dir, "graph-", ".cwg", kGraphEntries)) {
    // The symptoms found on that graph go with it: "graph-HEX.cwg" → "hang-HEX-*".
    evict_least_recent(dir, "hang-" + gone.substr(6, 16) + "-", ".cwh", 0);
  }
  return true;
}

}  // namespace cw::cache
