// The trace arrays entry (cache.h): a trace's events and field values as the reader
// decoded them, page aligned so that a later run maps them instead of decoding the trace
// again, with the reader's report. The rest of the trace is read from the trace itself.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/cache/cache.h"
#include "engine/cache/chunked_check.h"
#include "engine/cache/encoding.h"
#include "engine/cache/entry_file.h"
#include "trace/binary_format.h"
#include "trace/command_marker.h"

namespace cw::cache {

namespace {

void encode_report(Writer& w, const ReadReport& r) {
  w.value(r.major);
  w.value(r.minor);
  w.value(r.chunks_read);
  w.value(r.events_read);
  w.value(static_cast<uint64_t>(r.skipped.size()));
  for (const auto& s : r.skipped) {
    w.value(s.offset);
    w.value(s.size);
    w.text(s.reason);
  }
  w.texts(r.notes);
  w.value(static_cast<uint8_t>(r.perf_script));
}

ReadReport decode_report(Reader& rd) {
  ReadReport r;
  r.major = rd.value<uint32_t>();
  r.minor = rd.value<uint32_t>();
  r.chunks_read = rd.value<uint64_t>();
  r.events_read = rd.value<uint64_t>();
  uint64_t n = rd.value<uint64_t>();
  if (n > (1u << 20)) throw CorruptEntry("too many skipped ranges");
  for (uint64_t i = 0; i < n; ++i) {
    SkippedRange s;
    s.offset = rd.value<uint64_t>();
    s.size = rd.value<uint64_t>();
    s.reason = rd.text();
    r.skipped.push_back(std::move(s));
  }
  r.notes = rd.texts();
  r.perf_script = rd.value<uint8_t>() != 0;
  return r;
}

// The meta section of a trace arrays entry, at the payload's start.
struct ArraysMeta {
  uint64_t events_offset, events, values_offset, values, strings, stacks;
};

}  // namespace

uint64_t events_min() {
  const char* v = std::getenv("CAUSEWAY_CACHE_EVENTS_MIN");
  if (!v || !*v) return kDefaultEventsMin;
  return parse_size(v).value_or(kDefaultEventsMin);
}

bool keeps_trace_arrays(uint64_t events, uint64_t values) {
  // Counts a trace cannot have (indexes are 32 bits) do not overflow the product.
  if (events > (uint64_t{1} << 40) || values > (uint64_t{1} << 40)) return true;
  return events * sizeof(Event) + values * sizeof(uint64_t) >= events_min();
}

bool save_trace_arrays(const Folder& dir, const Key& key, const Trace& trace,
                       const ReadReport& report, std::string* why) {
  return save_trace_arrays(dir, key, trace.events, trace.values, trace.strings.size(),
                           trace.stacks.size(), marker_events(trace, trace.schema.find("marker")),
                           report, why);
}

bool save_trace_arrays(const Folder& dir, const Key& key, const Column<Event>& events,
                       const Column<uint64_t>& values, uint64_t strings, uint64_t stacks,
                       const std::vector<uint32_t>& markers, const ReadReport& report,
                       std::string* why) {
  Writer w;
  encode_report(w, report);
  w.array(markers);
  std::string report_bytes = w.take();
  ArraysMeta meta{};
  const uint64_t meta_end = kHeaderSize + sizeof meta + report_bytes.size();
  meta.events_offset = page_up(meta_end);
  meta.events = events.size();
  meta.values_offset = page_up(meta.events_offset + meta.events * sizeof(Event));
  meta.values = values.size();
  meta.strings = strings;
  meta.stacks = stacks;
  const std::string pad1(meta.events_offset - meta_end, '\0');
  const std::string pad2(meta.values_offset - (meta.events_offset + meta.events * sizeof(Event)),
                         '\0');
  std::vector<std::string_view> parts = {
      {reinterpret_cast<const char*>(&meta), sizeof meta},
      report_bytes,
      pad1,
      {reinterpret_cast<const char*>(events.data()), meta.events * sizeof(Event)},
      pad2,
      {reinterpret_cast<const char*>(values.data()), meta.values * sizeof(uint64_t)}};
  return write_entry_parts(dir, kTraceArraysName, EntryKind::TraceArrays, key, parts, why);
}

std::optional<ReadReport> read_trace_without_events(const std::string& path, Trace& out) {
  namespace bf = binary_format;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  if (fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(bf::kHeaderSize)) {
    close(fd);
    return std::nullopt;
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return std::nullopt;
  std::unique_ptr<void, std::function<void(void*)>> unmap(p, [size](void* q) { munmap(q, size); });
  const auto* data = static_cast<const unsigned char*>(p);
  // The header and every chunk but the events, as they are: their checksums still hold.
  std::string kept(reinterpret_cast<const char*>(data), bf::kHeaderSize);
  for (uint64_t pos = bf::kHeaderSize; pos < size;) {
    if (size - pos < bf::kChunkHeaderSize || load_le<uint32_t>(data + pos) != bf::kChunkMagic)
      return std::nullopt;
    const uint64_t payload = load_le<uint64_t>(data + pos + 8);
    if (payload > size - pos - bf::kChunkHeaderSize) return std::nullopt;
    // A compressed chunk is its type with kCompressedFlag set.
    const uint32_t type = load_le<uint32_t>(data + pos + 4) & ~bf::kCompressedFlag;
    if (type != static_cast<uint32_t>(bf::ChunkType::Events))
      kept.append(reinterpret_cast<const char*>(data + pos), bf::kChunkHeaderSize + payload);
    pos += bf::kChunkHeaderSize + payload;
  }
  return read_trace_bytes(kept, out, path);
}

std::optional<TraceArrays> load_trace_arrays(const Folder& dir, const Key& key, std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<TraceArrays> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  CheckedOnce once;
  auto m = map_entry(dir, kTraceArraysName, EntryKind::TraceArrays, key, true, sizeof(ArraysMeta),
                     why, true, &once);
  if (!m) return std::nullopt;
  try {
    TraceArrays arrays = decode_trace_arrays(m->keep, m->base, m->size);
    arrays.once = once;
    return arrays;
  } catch (const CorruptEntry& e) {
    return fail(e.what());
  }
}

TraceArrays decode_trace_arrays(const std::shared_ptr<const void>& keep, char* base,
                                uint64_t size) {
  if (size < kHeaderSize) throw CorruptEntry("truncated header");
  Reader rd(std::string_view(base + kHeaderSize, size - kHeaderSize));
  const auto meta = rd.value<ArraysMeta>();
  TraceArrays out;
  out.report = decode_report(rd);
  out.markers = rd.array<uint32_t>();
  if (meta.events_offset % kPage || meta.values_offset % kPage || meta.events_offset > size ||
      meta.values_offset > size || meta.events > (size - meta.events_offset) / sizeof(Event) ||
      meta.events_offset + meta.events * sizeof(Event) > meta.values_offset ||
      meta.values > (size - meta.values_offset) / sizeof(uint64_t))
    throw CorruptEntry("arrays outside the entry");
  // The reader never makes more: event and value indexes are 32 bits.
  if (meta.events > 0xffffffffull || meta.values > 0xffffffffull)
    throw CorruptEntry("more events or values than a trace holds");
  // The markers index the events: in range and ascending even when nothing else is checked
  // (an entry checked once, checked_entries.h).
  for (size_t i = 0; i < out.markers.size(); ++i)
    if (out.markers[i] >= meta.events || (i > 0 && out.markers[i - 1] >= out.markers[i]))
      throw CorruptEntry("markers out of order or past the events");
  out.events =
      Column<Event>::view(keep, reinterpret_cast<Event*>(base + meta.events_offset), meta.events);
  out.values = Column<uint64_t>::view(keep, reinterpret_cast<uint64_t*>(base + meta.values_offset),
                                      meta.values);
  out.strings = meta.strings;
  out.stacks = meta.stacks;
  return out;
}

void check_trace_arrays(const TraceArrays& arrays, const Trace& tables) {
  check_trace_arrays(arrays, tables.schema, tables.strings.size(), tables.stacks.size());
}

void check_trace_arrays(const TraceArrays& arrays, const Schema& schema, uint64_t nstrings,
                        uint64_t nstacks) {
  const uint64_t nkinds = schema.size(), nvalues = arrays.values.size();
  if (arrays.strings != nstrings || arrays.stacks != nstacks)
    throw CorruptEntry("made with other strings or stacks than the trace has");
  // The string fields of each kind, looked up once.
  std::vector<std::vector<uint32_t>> str_fields(nkinds);
  for (size_t k = 0; k < nkinds; ++k) {
    const auto& fields = schema.kind(static_cast<KindId>(k)).fields;
    for (uint32_t f = 0; f < fields.size(); ++f)
      if (fields[f].type == FieldType::Str) str_fields[k].push_back(f);
  }
  const KindId marker = schema.find("marker");
  std::mutex found_lock;
  std::vector<std::pair<size_t, std::vector<uint32_t>>> found;  // per chunk: its first event
  check_in_chunks(arrays.events.size(), [&](size_t begin, size_t end) {
    uint64_t last_ts = begin > 0 ? arrays.events[begin - 1].ts : 0;
    std::vector<uint32_t> marked;
    for (size_t i = begin; i < end; ++i) {
      const Event& e = arrays.events[i];
      if (e.kind == marker) marked.push_back(static_cast<uint32_t>(i));
      if (e.kind >= nkinds)
        throw CorruptEntry(
            fmt::format("event {} has kind {} (the schema has {})", i, e.kind, nkinds));
      if (uint64_t{e.values} + schema.kind(e.kind).fields.size() > nvalues)
        throw CorruptEntry(fmt::format("event {} has values past the array", i));
      if (e.stack >= nstacks) throw CorruptEntry(fmt::format("event {} names no stack", i));
      for (uint32_t f : str_fields[e.kind])
        if (arrays.values[e.values + f] >= nstrings)
          throw CorruptEntry(fmt::format("event {} names no string", i));
      if (e.ts < last_ts) throw CorruptEntry(fmt::format("event {} is out of time order", i));
      last_ts = e.ts;
    }
    const std::lock_guard<std::mutex> hold(found_lock);
    found.emplace_back(begin, std::move(marked));
  });
  std::sort(found.begin(), found.end());
  std::vector<uint32_t> markers;
  for (const auto& chunk : found)
    markers.insert(markers.end(), chunk.second.begin(), chunk.second.end());
  if (markers != arrays.markers)
    throw CorruptEntry("the markers are not the events of kind marker");
}

void check_saved_trace_arrays(const Folder& dir, const Key& key, const Schema& schema,
                              uint64_t strings, uint64_t stacks) {
  wait_settled(dir, kTraceArraysName);
  auto arrays = load_trace_arrays(dir, key);
  if (!arrays || arrays->once.before) return;
  try {
    check_trace_arrays(*arrays, schema, strings, stacks);
  } catch (const CorruptEntry&) {
    return;  // (the next run finds it so too, and reads the trace)
  }
  record_checked(dir, kTraceArraysName, arrays->once);
}

}  // namespace cw::cache
