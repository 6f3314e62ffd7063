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

std::string encode_found_hang(const engine::FoundHang& found) {
  Writer w;
  w.value(static_cast<uint8_t>(found.hang.has_value()));
  w.text(found.why);
  w.value(static_cast<uint8_t>(found.no_hang));
  if (const auto& h = found.hang) {
    w.value(h->tid);
    w.value(h->pid);
    w.value(h->start_ns);
    w.value(h->end_ns);
    w.value(static_cast<uint8_t>(h->kind));
    w.value(h->segment);
    w.value(h->first_segment);
    w.value(h->last_segment);
    w.text(h->chosen_by);
    const engine::SegmentProfile& p = h->profile;
    for (uint64_t v : {p.start_ns, p.end_ns, p.on_cpu_ns, p.runnable_ns, p.blocked_ns,
                       p.uninterruptible_ns, p.unknown_ns, p.exited_ns, p.longest_block_ns,
                       p.longest_block_start, p.longest_quiet_ns, p.longest_gap_ns})
      w.value(v);
    for (uint32_t v : {p.longest_block_call, p.longest_block_exit, p.blocks, p.syscalls,
                       p.flag_events, p.events})
      w.value(v);
    w.array(p.by_name);
  }
  return w.take();
}

engine::FoundHang decode_found_hang(std::string_view payload, const Trace& trace,
                                    const engine::Graph& graph) {
  Reader rd(payload);
  engine::FoundHang found;
  const bool has = rd.value<uint8_t>() != 0;
  found.why = rd.text();
  found.no_hang = rd.value<uint8_t>() != 0;
  if (has) {
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
    for (uint64_t* v : {&p.start_ns, &p.end_ns, &p.on_cpu_ns, &p.runnable_ns, &p.blocked_ns,
                        &p.uninterruptible_ns, &p.unknown_ns, &p.exited_ns, &p.longest_block_ns,
                        &p.longest_block_start, &p.longest_quiet_ns, &p.longest_gap_ns})
      *v = rd.value<uint64_t>();
    for (uint32_t* v : {&p.longest_block_call, &p.longest_block_exit, &p.blocks, &p.syscalls,
                        &p.flag_events, &p.events})
      *v = rd.value<uint32_t>();
    p.by_name = rd.array<engine::SyscallCount>();
    // The diagnosis starts at these segments and reads these events and names: each must
    // be the graph's and the trace's, the segments of the hang's thread, in order.
    const uint64_t segments = graph.segments.size(), events = trace.events.size();
    if (h.first_segment > h.segment || h.segment > h.last_segment || h.last_segment >= segments)
      throw CorruptEntry("the hang names segments the graph does not have");
    for (uint32_t s = h.first_segment; s <= h.last_segment; ++s)
      if (graph.segments[s].tid != h.tid)
        throw CorruptEntry("the hang's segments are of another thread");
    for (uint32_t e : {p.longest_block_call, p.longest_block_exit})
      if (e != engine::kNoIndex && e >= events)
        throw CorruptEntry("the hang names events the trace does not have");
    for (const engine::SyscallCount& c : p.by_name)
      if (c.name >= trace.strings.size())
        throw CorruptEntry("the hang names strings the trace does not have");
    found.hang = std::move(h);
  }
  if (!rd.done()) throw CorruptEntry("bytes after the hang");
  return found;
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

}  // namespace cw::cache
