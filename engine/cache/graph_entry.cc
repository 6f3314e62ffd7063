// The graph entry (cache.h): a built graph, its rule tables and counts, and the peers cuts
// a rebuild of the cuts reuses. Decoded, every index it holds is checked against the trace,
// the packs and itself before anything walks it.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
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

// A graph's neighbour edges (the edge across each cut that has one, engine/graph
// builder_edges.cc) are half its edges (2.7 M of 5.3 M at 19 M events) and follow from its
// segments: an edge from each segment to the next of its thread, between the first's last
// event and the second's first, of the second's cut rule, weak or strong. The entry keeps
// one byte per segment for them (kNoNeighbour, or the edge's strength + 1) and the other
// edges: those before them and those after. A rebuild of the cuts makes neighbour edges of
// its own and reads none; a load makes them again, in their place.
constexpr uint8_t kNoNeighbour = 0;

// The kind index of neighbour edges in `kinds`, or -1.
int split_kind_of(const std::vector<std::string>& kinds) {
  for (size_t k = 0; k < kinds.size(); ++k)
    if (kinds[k] == engine::kSplitKind) return static_cast<int>(k);
  return -1;
}

// The neighbour edge into segment `to` of strength byte `b`, as the builder makes it.
engine::Edge neighbour_edge(const std::vector<engine::Segment>& segments, uint32_t to, uint8_t b,
                            uint16_t kind) {
  engine::Edge e;
  e.from = to - 1;
  e.to = to;
  e.from_event = segments[to - 1].last;
  e.to_event = segments[to].first;
  e.kind = kind;
  e.strength = static_cast<engine::Strength>(b - 1);
  e.rule = segments[to].cut_rule;
  return e;
}

bool same_edge(const engine::Edge& a, const engine::Edge& b) {
  return a.from == b.from && a.to == b.to && a.from_event == b.from_event &&
         a.to_event == b.to_event && a.rule == b.rule && a.boost_rule == b.boost_rule &&
         a.link == b.link && a.kind == b.kind && a.strength == b.strength && a.cost == b.cost;
}

// Where the graph entry's parts live while they are written.
struct GraphParts {
  // The counts before each array (`bytes`: of the neighbour bytes, 0 or the segments').
  uint64_t segments = 0, bytes = 0, total = 0, before = 0, after = 0;
  std::vector<uint8_t> neighbours;  // per segment, or none: every edge is in `before`
  uint64_t neighbour_count = 0;
  std::string rest;  // everything after the arrays, encoded
  std::vector<std::string_view> parts;
};

// The neighbour edges `bytes` stand for, in the order the builder makes them (its threads
// by first event, each thread's cuts in order), passed to put(edge); false when the bytes
// name one no graph of these segments and threads can have (on a thread's first segment,
// on a segment in no thread's run, more than `limit` of them).
template <class Put>
bool make_neighbour_edges(const engine::Graph& g, const std::vector<uint8_t>& bytes, uint16_t kind,
                          uint64_t limit, Put&& put) {
  const size_t n = g.segments.size();
  std::vector<const engine::Graph::ThreadSegments*> order;
  for (const engine::Graph::ThreadSegments& t : g.threads) {
    if (t.begin > t.end || t.end > n) return false;
    if (t.begin < t.end) order.push_back(&t);
  }
  std::sort(order.begin(), order.end(), [&](const auto* a, const auto* b) {
    return g.segments[a->begin].first < g.segments[b->begin].first;
  });
  uint64_t made = 0, named = 0;
  for (uint8_t b : bytes) named += b != kNoNeighbour;
  for (const engine::Graph::ThreadSegments* t : order) {
    if (bytes[t->begin] != kNoNeighbour) return false;
    for (uint32_t s = t->begin + 1; s < t->end; ++s) {
      if (bytes[s] == kNoNeighbour) continue;
      if (++made > limit) return false;
      put(neighbour_edge(g.segments, s, bytes[s], kind));
    }
  }
  return made == named;
}

// The run of neighbour edges in `g.edges`, as one byte per segment: false (and nothing
// set) when no run is one a load would make again exactly, in the same place.
bool neighbour_bytes(const engine::Graph& g, GraphParts& out) {
  const int kind = split_kind_of(g.kinds);
  if (kind < 0) return false;
  auto is_neighbour = [&](const engine::Edge& e) {
    return e.kind == kind &&
           (e.rule.kind == engine::RuleKind::Split || e.rule.kind == engine::RuleKind::Batch);
  };
  const auto first = std::find_if(g.edges.begin(), g.edges.end(), is_neighbour);
  const auto end = std::find_if_not(first, g.edges.end(), is_neighbour);
  std::vector<uint8_t> bytes(g.segments.size(), kNoNeighbour);
  for (auto it = first; it != end; ++it) {
    if (it->to >= g.segments.size() || bytes[it->to] != kNoNeighbour ||
        (it->strength != engine::Strength::Weak && it->strength != engine::Strength::Strong))
      return false;
    bytes[it->to] = static_cast<uint8_t>(static_cast<uint8_t>(it->strength) + 1);
  }
  auto next = first;
  bool same = true;
  const auto count = static_cast<uint64_t>(end - first);
  if (!make_neighbour_edges(g, bytes, static_cast<uint16_t>(kind), count,
                            [&](const engine::Edge& e) { same = same && same_edge(e, *next++); }) ||
      !same)
    return false;
  out.before = static_cast<uint64_t>(first - g.edges.begin());
  out.neighbour_count = count;
  out.after = static_cast<uint64_t>(g.edges.end() - end);
  out.neighbours = std::move(bytes);
  return true;
}

// The graph's payload in parts: the segments, the neighbour bytes and the other edges as
// they are in memory (at 19 M events ~200 MB: not copied into a buffer first), then the
// rest, encoded. The bytes of each array are those of Writer::array, so that decode_graph
// reads them alike; the edges' total count comes first.
void graph_parts(const engine::BuildResult& r, GraphParts& out) {
  const engine::Graph& g = r.graph;
  out.segments = g.segments.size();
  out.total = g.edges.size();
  if (!neighbour_bytes(g, out)) {
    out.neighbours.clear();
    out.before = g.edges.size();
    out.after = out.neighbour_count = 0;
  }
  Writer w;
  w.texts(g.kinds);
  write_rule_names(w, g.rule_names);
  w.array(g.threads);
  w.value(r.stats);
  write_rule_counts(w, r.counts);
  w.array(r.peer_cuts);
  out.rest = w.take();
  auto bytes = [](const auto* v, uint64_t n) {
    return std::string_view(reinterpret_cast<const char*>(v), n * sizeof(*v));
  };
  auto count = [](const uint64_t& n) {
    return std::string_view(reinterpret_cast<const char*>(&n), 8);
  };
  out.bytes = out.neighbours.size();
  out.parts = {count(out.segments),
               bytes(g.segments.data(), out.segments),
               count(out.bytes),
               bytes(out.neighbours.data(), out.neighbours.size()),
               count(out.total),
               count(out.before),
               bytes(g.edges.data(), out.before),
               count(out.after),
               bytes(g.edges.data() + out.before + out.neighbour_count, out.after),
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
  const std::vector<uint8_t> neighbours = rd.template array<uint8_t>();
  if (!neighbours.empty() && neighbours.size() != g.segments.size())
    throw CorruptEntry("neighbour bytes for another number of segments");
  uint64_t neighbour_count = 0;
  for (uint8_t b : neighbours) {
    if (b > static_cast<uint8_t>(engine::Strength::Weak) + 1)  // strong or weak, or none
      throw CorruptEntry("a neighbour edge of unknown strength");
    neighbour_count += b != kNoNeighbour;
  }
  const uint64_t total = rd.template value<uint64_t>();
  if (total < neighbour_count ||
      total - neighbour_count > rd.source().left() / sizeof(engine::Edge))
    throw CorruptEntry("more edges than the entry holds");
  // A rebuild of the cuts keeps the link edges in this vector and adds the neighbour edges
  // of its cuts (engine/graph, reuse_edges): more than the graph had when a rule cuts more,
  // and a vector grown then is copied whole into fresh memory (~0.2 GB at 19 M events). A
  // load makes the neighbour edges again between the others.
  const uint64_t gap = for_reuse ? 0 : neighbour_count;
  const uint64_t size = total - neighbour_count + gap;
  if (for_reuse) g.edges.reserve(total + total / 2);  // (room for new neighbour edges)
  resize_populated(g.edges, size);
  const uint64_t before = rd.template array_into<engine::Edge>(g.edges, 0);
  const uint64_t after = rd.template array_into<engine::Edge>(g.edges, before + gap);
  if (before + gap + after != size) throw CorruptEntry("the edges do not add up to their count");
  g.kinds = rd.texts();
  g.rule_names = read_rule_names(rd);
  g.threads = rd.template array<engine::Graph::ThreadSegments>();
  r.stats = rd.template value<engine::BuildStats>();
  r.over_connections_counted = true;  // a saved graph's are (save_graph)
  r.counts = read_rule_counts(rd);
  r.peer_cuts = rd.template array<engine::PeerCut>();
  if (!rd.done()) throw CorruptEntry("bytes left after the graph");
  if (!for_reuse && neighbour_count > 0) {
    const int kind = split_kind_of(g.kinds);
    if (kind < 0) throw CorruptEntry("neighbour edges without their kind");
    engine::Edge* at = g.edges.data() + before;
    if (!make_neighbour_edges(g, neighbours, static_cast<uint16_t>(kind), neighbour_count,
                              [&](const engine::Edge& e) { *at++ = e; }))
      throw CorruptEntry("a neighbour edge across threads");
  }
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
