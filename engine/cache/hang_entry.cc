// The hang entries (cache.h): the symptom found on a graph for one request, so that a
// re-run asking the same of the same graph skips the search.
#include <fmt/format.h>

#include <string>

#include "engine/cache/cache.h"
#include "engine/cache/encoding.h"

namespace cw::cache {

Key hang_key(const Key& graph, const engine::SymptomRequest& request) {
  Hasher h;
  h.value(graph.options);
  h.value(static_cast<uint8_t>(request.mode));
  h.value(request.tid);
  h.value(request.at_ns);
  h.text(request.thread_name);
  h.value(request.min_hang_ns);
  Key k = graph;
  k.options = h.digest();
  return k;
}

std::string hang_entry_name(const Key& graph, const Key& hang) {
  return fmt::format("hang-{}-{}.cwh", graph.hex(), hang.hex());
}

namespace {

// The fewest bytes a rank takes: its tid, segments, cuts and whether it has a stretch.
constexpr uint64_t kRankBytes = sizeof(Tid) + sizeof(uint32_t) + sizeof(uint64_t) + 1;

void write_hang(Writer& w, const engine::Hang& h) {
  w.value(h.tid);
  w.value(h.pid);
  w.value(h.start_ns);
  w.value(h.end_ns);
  w.value(static_cast<uint8_t>(h.kind));
  w.value(h.segment);
  w.value(h.first_segment);
  w.value(h.last_segment);
  w.text(h.chosen_by);
  const engine::SegmentProfile& p = h.profile;
  for (uint64_t v :
       {p.start_ns, p.end_ns, p.on_cpu_ns, p.runnable_ns, p.blocked_ns, p.uninterruptible_ns,
        p.unknown_ns, p.exited_ns, p.longest_block_ns, p.longest_block_start,
        p.longest_block_last_start, p.longest_quiet_ns, p.longest_gap_ns})
    w.value(v);
  for (uint32_t v :
       {p.longest_block_call, p.longest_block_exit, p.blocks, p.syscalls, p.flag_events, p.events})
    w.value(v);
  w.array(p.by_name);
}

// A hang as write_hang wrote it, its events and names checked against `trace` (its
// segments are the caller's to check: they are of the graph it was found on).
engine::Hang read_hang(Reader& rd, const Trace& trace) {
  engine::Hang h;
  h.tid = rd.value<Tid>();
  h.pid = rd.value<Pid>();
  h.start_ns = rd.value<uint64_t>();
  h.end_ns = rd.value<uint64_t>();
  const auto kind = rd.value<uint8_t>();
  if (kind > static_cast<uint8_t>(engine::HangKind::LongWait))
    throw CorruptEntry("unknown hang kind");
  h.kind = static_cast<engine::HangKind>(kind);
  h.segment = rd.value<uint32_t>();
  h.first_segment = rd.value<uint32_t>();
  h.last_segment = rd.value<uint32_t>();
  h.chosen_by = rd.text();
  engine::SegmentProfile& p = h.profile;
  for (uint64_t* v :
       {&p.start_ns, &p.end_ns, &p.on_cpu_ns, &p.runnable_ns, &p.blocked_ns, &p.uninterruptible_ns,
        &p.unknown_ns, &p.exited_ns, &p.longest_block_ns, &p.longest_block_start,
        &p.longest_block_last_start, &p.longest_quiet_ns, &p.longest_gap_ns})
    *v = rd.value<uint64_t>();
  for (uint32_t* v : {&p.longest_block_call, &p.longest_block_exit, &p.blocks, &p.syscalls,
                      &p.flag_events, &p.events})
    *v = rd.value<uint32_t>();
  p.by_name = rd.array<engine::SyscallCount>();
  const uint64_t events = trace.events.size();
  for (uint32_t e : {p.longest_block_call, p.longest_block_exit})
    if (e != engine::kNoIndex && e >= events)
      throw CorruptEntry("the hang names events the trace does not have");
  for (const engine::SyscallCount& c : p.by_name)
    if (c.name >= trace.strings.size())
      throw CorruptEntry("the hang names strings the trace does not have");
  return h;
}

// The payload, with the hang's segments checked against `graph` when there is one (the
// graph the entry is of); without, the hang is dropped (another graph's: only its ranks
// are read).
engine::FoundHang decode(std::string_view payload, const Trace& trace, const engine::Graph* graph) {
  Reader rd(payload);
  engine::FoundHang found;
  const bool has = rd.value<uint8_t>() != 0;
  found.why = rd.text();
  found.no_hang = rd.value<uint8_t>() != 0;
  if (has) {
    engine::Hang h = read_hang(rd, trace);
    // The diagnosis starts at these segments: each must be the graph's, of the hang's
    // thread, in order.
    if (graph) {
      if (h.first_segment > h.segment || h.segment > h.last_segment ||
          h.last_segment >= graph->segments.size())
        throw CorruptEntry("the hang names segments the graph does not have");
      for (uint32_t s = h.first_segment; s <= h.last_segment; ++s)
        if (graph->segments[s].tid != h.tid)
          throw CorruptEntry("the hang's segments are of another thread");
      found.hang = std::move(h);
    }
  }
  // Each candidate thread's rank; its segments are checked where it is reused (against
  // the thread's in that graph).
  const uint64_t ranks = rd.value<uint64_t>();
  if (ranks > payload.size() / kRankBytes) throw CorruptEntry("more ranks than the entry holds");
  Tid last = 0;
  for (uint64_t i = 0; i < ranks; ++i) {
    engine::ThreadRank r;
    r.tid = rd.value<Tid>();
    if (i > 0 && r.tid <= last) throw CorruptEntry("ranks out of thread order");
    last = r.tid;
    r.segments = rd.value<uint32_t>();
    r.cuts = rd.value<uint64_t>();
    r.has_stretch = rd.value<uint8_t>() != 0;
    if (r.has_stretch) {
      engine::HangCandidate& c = r.candidate;
      c.hang = read_hang(rd, trace);
      c.score_ns = rd.value<uint64_t>();
      c.by_design = rd.text();
      c.woken_by = rd.value<Tid>();
    }
    found.ranks.push_back(std::move(r));
  }
  if (!rd.done()) throw CorruptEntry("bytes after the hang");
  return found;
}

}  // namespace

std::string encode_found_hang(const engine::FoundHang& found) {
  Writer w;
  w.value(static_cast<uint8_t>(found.hang.has_value()));
  w.text(found.why);
  w.value(static_cast<uint8_t>(found.no_hang));
  if (const auto& h = found.hang) write_hang(w, *h);
  w.value(static_cast<uint64_t>(found.ranks.size()));
  for (const engine::ThreadRank& r : found.ranks) {
    w.value(r.tid);
    w.value(r.segments);
    w.value(r.cuts);
    w.value(static_cast<uint8_t>(r.has_stretch));
    if (r.has_stretch) {
      write_hang(w, r.candidate.hang);
      w.value(r.candidate.score_ns);
      w.text(r.candidate.by_design);
      w.value(r.candidate.woken_by);
    }
  }
  return w.take();
}

engine::FoundHang decode_found_hang(std::string_view payload, const Trace& trace,
                                    const engine::Graph& graph) {
  return decode(payload, trace, &graph);
}

bool save_hang(const Folder& dir, const Key& graph, const engine::SymptomRequest& request,
               const engine::FoundHang& found, std::string* why) {
  const Key key = hang_key(graph, request);
  if (!write_entry(dir, hang_entry_name(graph, key), EntryKind::Hang, key, encode_found_hang(found),
                   why))
    return false;
  // One per request: a run of many `--hang` values must not leave as many entries.
  evict_least_recent(dir, "hang-", ".cwh", kHangEntries);
  return true;
}

std::optional<engine::FoundHang> load_hang(const Folder& dir, const Key& graph_key,
                                           const engine::SymptomRequest& request,
                                           const Trace& trace, const engine::Graph& graph,
                                           std::string* why) {
  const Key key = hang_key(graph_key, request);
  auto payload = read_entry(dir, hang_entry_name(graph_key, key), EntryKind::Hang, key, why);
  if (!payload) return std::nullopt;
  try {
    return decode_found_hang(*payload, trace, graph);
  } catch (const CorruptEntry& e) {
    if (why) *why = e.what();
    return std::nullopt;
  }
}

std::optional<std::vector<engine::ThreadRank>> load_thread_ranks(
    const Folder& dir, const Key& graph_key, const engine::SymptomRequest& request,
    const Trace& trace, std::string* why) {
  const Key key = hang_key(graph_key, request);
  auto payload = read_entry(dir, hang_entry_name(graph_key, key), EntryKind::Hang, key, why);
  if (!payload) return std::nullopt;
  try {
    return decode(*payload, trace, nullptr).ranks;
  } catch (const CorruptEntry& e) {
    if (why) *why = e.what();
    return std::nullopt;
  }
}

}  // namespace cw::cache
