#include "trace/binary_format_chunk_decoder.h"

#include <fmt/format.h>

#include <algorithm>

#include "trace/thread_moves.h"

namespace cw::binary_format {

namespace {

constexpr uint32_t kUnmapped = 0xffffffffu;

}  // namespace

ChunkDecoder::ChunkDecoder(Trace& out, ReadNotes& notes, uint64_t id_bound)
    : out_(out), notes_(notes), id_bound_(id_bound) {
  Schema schema = std::move(out_.schema);
  out_ = Trace{};
  out_.schema = std::move(schema);
  for (KindId k = 0; k < out_.schema.size(); ++k) reader_kinds_[out_.schema.kind(k).name] = k;
  str_map_.push_back(0);
  stack_map_.push_back(0);
}

// ---- schema: file kinds are mapped to the reader's by name ----

void ChunkDecoder::read_schema(Cursor& c) {
  uint32_t n = c.get<uint32_t>();
  if (n > kNoKind) throw Malformed{fmt::format("{} kinds", n)};
  std::vector<KindDef> kinds;
  for (uint32_t i = 0; i < n; ++i) {
    KindDef k;
    k.name = c.str();
    uint8_t role = c.get<uint8_t>();
    if (role > static_cast<uint8_t>(SpanRole::Close)) throw Malformed{"bad span role"};
    k.span_role = static_cast<SpanRole>(role);
    k.span = c.str();
    k.doc = c.str();
    uint32_t nfields = c.get<uint32_t>();
    if (nfields > c.remaining() / 9) throw Malformed{"field count exceeds the chunk"};
    for (uint32_t f = 0; f < nfields; ++f) {
      FieldDef field;
      field.name = c.str();
      uint8_t type = c.get<uint8_t>();
      if (type > static_cast<uint8_t>(FieldType::Tid)) throw Malformed{"bad field type"};
      field.type = static_cast<FieldType>(type);
      field.doc = c.str();
      k.fields.push_back(std::move(field));
    }
    kinds.push_back(std::move(k));
  }
  apply_schema(kinds);
  have_schema_ = true;
}

void ChunkDecoder::apply_schema(const std::vector<KindDef>& kinds) {
  file_kinds_.assign(kinds.size(), FileKind{});
  all_identity_ = true;
  for (size_t i = 0; i < kinds.size(); ++i) {
    const KindDef& k = kinds[i];
    FileKind& fk = file_kinds_[i];
    auto it = reader_kinds_.find(k.name);
    if (it == reader_kinds_.end()) {
      notes_.add(
          fmt::format("kind '{}' is not in this causeway's schema; its events are kept with "
                      "the file's fields",
                      k.name));
      it = reader_kinds_.emplace(k.name, out_.schema.add(k)).first;
    }
    fk.reader = it->second;
    const KindDef& mine = out_.schema.kind(fk.reader);
    fk.identity = fk.reader == i && mine.fields.size() == k.fields.size();
    for (uint32_t f = 0; f < k.fields.size(); ++f) {
      const FieldDef& field = k.fields[f];
      fk.types.push_back(field.type);
      if (field.type == FieldType::Str) fk.str_fields.push_back(f);
      int r = out_.schema.field_index(fk.reader, field.name);
      if (r >= 0 && mine.fields[r].type != field.type) {
        notes_.add(fmt::format(
            "field '{}' of '{}' is {} in the file but {} here; its values are "
            "dropped",
            field.name, k.name, field_type_name(field.type), field_type_name(mine.fields[r].type)));
        r = -1;
      } else if (r < 0) {
        notes_.add(
            fmt::format("field '{}' of '{}' is not known to this causeway; its values are "
                        "dropped",
                        field.name, k.name));
      }
      fk.reader_field.push_back(r);
      fk.identity &= r == static_cast<int>(f);
    }
    all_identity_ &= fk.identity;
  }
}

// Before any schema chunk (it was lost), the file is assumed to use the reader's schema.
void ChunkDecoder::ensure_schema() {
  if (have_schema_) return;
  notes_.add("the schema chunk was lost; events are read with this causeway's schema");
  apply_schema(std::vector<KindDef>(out_.schema.kinds().begin(), out_.schema.kinds().end()));
  have_schema_ = true;
}

// ---- strings and stacks: file ids map to reader ids through tables ----

void ChunkDecoder::read_strings(Cursor& c) {
  uint32_t first = c.get<uint32_t>();
  uint32_t n = c.get<uint32_t>();
  // Ids past what a file this size can hold are damage; refusing them bounds the map.
  if (n > c.remaining() / 4 || uint64_t{first} + n > id_bound_ / 4)
    throw Malformed{"string count exceeds the chunk"};
  std::vector<std::string_view> strings(n);
  for (auto& s : strings) s = c.str();
  if (first > str_map_.size()) strings_identity_ = false;
  if (str_map_.size() < uint64_t{first} + n) str_map_.resize(uint64_t{first} + n, kUnmapped);
  for (uint32_t i = 0; i < n; ++i) {
    StrId id = out_.strings.intern(strings[i]);
    str_map_[first + i] = id;
    strings_identity_ &= id == first + i;
  }
}

StrId ChunkDecoder::map_string(uint64_t file_id) {
  if (file_id < str_map_.size() && str_map_[file_id] != kUnmapped) return str_map_[file_id];
  StrId id = out_.strings.intern(fmt::format("?str#{}", file_id));
  if (file_id < str_map_.size())
    str_map_[file_id] = id;
  else
    lost_strings_.emplace(file_id, id);
  ++substituted_strings_;
  strings_identity_ = false;
  return id;
}

StrId ChunkDecoder::map_string_cached(uint64_t file_id) {
  if (file_id >= str_map_.size())
    if (auto it = lost_strings_.find(file_id); it != lost_strings_.end()) return it->second;
  return map_string(file_id);
}

void ChunkDecoder::read_stacks(Cursor& c) {
  uint32_t first = c.get<uint32_t>();
  uint32_t n = c.get<uint32_t>();
  if (n > c.remaining() / 5 || uint64_t{first} + n > id_bound_ / 5)
    throw Malformed{"stack count exceeds the chunk"};
  std::vector<Stack> stacks(n);
  std::vector<std::vector<uint32_t>> file_symbols(n);
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t frames = c.get<uint32_t>();
    uint8_t symbolised = c.get<uint8_t>();
    if (frames > c.remaining() / 8) throw Malformed{"frame count exceeds the chunk"};
    stacks[i].ips.resize(frames);
    copy_bytes(stacks[i].ips.data(), c.take(frames * 8ull), frames * 8ull);
    if (symbolised) {
      file_symbols[i].resize(frames);
      copy_bytes(file_symbols[i].data(), c.take(frames * 4ull), frames * 4ull);
    }
  }
  if (first != out_.stacks.size()) stacks_identity_ = false;
  if (stack_map_.size() < uint64_t{first} + n) stack_map_.resize(uint64_t{first} + n, kUnmapped);
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t sym : file_symbols[i]) stacks[i].symbols.push_back(map_string_cached(sym));
    StackId id = out_.add_stack(std::move(stacks[i]));
    stack_map_[first + i] = id;
    stacks_identity_ &= id == first + i;
  }
}

StackId ChunkDecoder::map_stack(uint32_t file_id) {
  if (file_id < stack_map_.size() && stack_map_[file_id] != kUnmapped) return stack_map_[file_id];
  ++events_without_stack_;
  return 0;
}

// ---- tables and records ----

void ChunkDecoder::read_processes(Cursor& c) {
  uint32_t n = c.get<uint32_t>();
  if (n > c.remaining() / 16) throw Malformed{"process count exceeds the chunk"};
  for (uint32_t i = 0; i < n; ++i) {
    ProcessInfo p;
    p.pid = c.get<uint32_t>();
    p.ppid = c.get<uint32_t>();
    p.comm = map_string_cached(c.get<uint32_t>());
    p.exe = map_string_cached(c.get<uint32_t>());
    out_.processes.push_back(p);
  }
}

void ChunkDecoder::read_threads(Cursor& c, uint64_t chunk, bool compressed) {
  uint32_t n = c.get<uint32_t>();
  if (n > c.remaining() / 16) throw Malformed{"thread count exceeds the chunk"};
  for (uint32_t i = 0; i < n; ++i) {
    ThreadInfo t;
    t.tid = c.get<uint32_t>();
    t.pid = c.get<uint32_t>();
    t.comm = map_string_cached(c.get<uint32_t>());
    t.kernel = (c.get<uint32_t>() & 1) != 0;
    out_.threads.push_back(t);
    thread_records_.push_back({chunk, i, compressed});
  }
}

void ChunkDecoder::read_lost(Cursor& c) {
  uint32_t n = c.get<uint32_t>();
  c.get<uint32_t>();
  if (n > c.remaining() / 24) throw Malformed{"lost-record count exceeds the chunk"};
  for (uint32_t i = 0; i < n; ++i) {
    LostRecord l;
    l.ts = c.get<uint64_t>();
    l.count = c.get<uint64_t>();
    l.cpu = static_cast<uint16_t>(c.get<uint32_t>());
    c.get<uint32_t>();
    out_.lost.push_back(l);
  }
}

void ChunkDecoder::read_losses(Cursor& c) {
  uint32_t n = c.get<uint32_t>();
  c.get<uint32_t>();
  if (n > c.remaining() / 24) throw Malformed{"loss-record count exceeds the chunk"};
  for (uint32_t i = 0; i < n; ++i) {
    LossRecord l;
    l.ts = c.get<uint64_t>();
    l.count = c.get<uint64_t>();
    l.kind = static_cast<LossKind>(c.get<uint32_t>());  // an unknown kind is kept
    c.get<uint32_t>();
    out_.losses.push_back(l);
  }
}

void ChunkDecoder::read_maps(Cursor& c) {
  uint32_t n = c.get<uint32_t>();
  c.get<uint32_t>();
  if (n > c.remaining() / 48) throw Malformed{"map count exceeds the chunk"};
  for (uint32_t i = 0; i < n; ++i) {
    MapRecord m;
    m.ts = c.get<uint64_t>();
    m.start = c.get<uint64_t>();
    m.end = c.get<uint64_t>();
    m.pgoff = c.get<uint64_t>();
    m.pid = c.get<uint32_t>();
    m.path = map_string_cached(c.get<uint32_t>());
    uint32_t build_id = c.get<uint32_t>();
    m.build_id = build_id == 0 ? 0 : map_string_cached(build_id);
    c.get<uint32_t>();
    out_.maps.push_back(m);
  }
}

void ChunkDecoder::read_jit_symbols(Cursor& c) {
  uint32_t n = c.get<uint32_t>();
  c.get<uint32_t>();
  if (n > c.remaining() / 32) throw Malformed{"jit-symbol count exceeds the chunk"};
  for (uint32_t i = 0; i < n; ++i) {
    JitSymbol j;
    j.ts = c.get<uint64_t>();
    j.start = c.get<uint64_t>();
    j.size = c.get<uint64_t>();
    j.pid = c.get<uint32_t>();
    j.name = map_string_cached(c.get<uint32_t>());
    // One that covers nothing (a damaged or crafted file) is left out.
    if (j.size != 0 && j.start + j.size > j.start) out_.jit_symbols.push_back(j);
  }
}

// ---- events ----

uint64_t ChunkDecoder::read_events(const uint8_t* payload, uint64_t size) {
  ensure_schema();
  if (size < 16) throw Malformed{"payload ends early"};
  uint64_t count = load<uint64_t>(payload), nvalues = load<uint64_t>(payload + 8);
  if (count > size / kDiskEventSize || nvalues > size / 8 ||
      16 + count * kDiskEventSize + nvalues * 8 > size)
    throw Malformed{"event count exceeds the chunk"};
  if (out_.values.size() + nvalues > 0xffffffffull || out_.events.size() + count > 0xffffffffull)
    throw Malformed{"too many events for one trace"};
  const uint8_t* events = payload + 16;
  const uint8_t* values = events + count * kDiskEventSize;
  if (!(all_identity_ && strings_identity_ && stacks_identity_ &&
        copy_events(events, count, values, nvalues)))
    remap_events(events, count, values, nvalues);
  return count;
}

// The fast path: the file's ids are the reader's, so both arrays are copied in bulk and
// then checked in place (false, with nothing added, when an event needs remapping).
bool ChunkDecoder::copy_events(const uint8_t* events, uint64_t count, const uint8_t* values,
                               uint64_t nvalues) {
  const size_t first_event = out_.events.size(), first_value = out_.values.size();
  // Inserting from typed ranges copies without first zeroing the new elements; the
  // writer keeps payloads 8-byte aligned, so only odd in-memory buffers take memcpy.
  if (reinterpret_cast<uintptr_t>(events) % alignof(Event) == 0) {
    auto* first = reinterpret_cast<const Event*>(events);
    auto* first_v = reinterpret_cast<const uint64_t*>(values);
    out_.events.insert(out_.events.end(), first, first + count);
    out_.values.insert(out_.values.end(), first_v, first_v + nvalues);
  } else {
    out_.events.resize(first_event + count);
    copy_bytes(out_.events.data() + first_event, events, count * kDiskEventSize);
    out_.values.resize(first_value + nvalues);
    copy_bytes(out_.values.data() + first_value, values, nvalues * 8);
  }
  const uint64_t* v = out_.values.data() + first_value;
  const uint64_t nkinds = file_kinds_.size(), nstrings = str_map_.size(),
                 nstacks = stack_map_.size();
  uint64_t expected = 0;
  bool ok = true;
  for (Event *e = out_.events.data() + first_event, *end = out_.events.data() + out_.events.size();
       e != end && ok; ++e) {
    ok = e->kind < nkinds && e->values == expected && e->stack < nstacks &&
         expected + file_kinds_[e->kind].types.size() <= nvalues;
    if (!ok) break;
    const FileKind& fk = file_kinds_[e->kind];
    for (uint32_t f : fk.str_fields) ok &= v[expected + f] < nstrings;
    expected += fk.types.size();
    e->values += static_cast<uint32_t>(first_value);
  }
  if (ok && expected == nvalues) return true;
  out_.events.resize(first_event);
  out_.values.resize(first_value);
  return false;
}

// The general path: kinds, fields, strings and stacks go through the maps one by one.
void ChunkDecoder::remap_events(const uint8_t* events, uint64_t count, const uint8_t* values,
                                uint64_t nvalues) {
  // Check first so a bad chunk adds nothing.
  uint64_t expected = 0;
  for (uint64_t i = 0; i < count; ++i) {
    Event e = load<Event>(events + i * kDiskEventSize);
    if (e.kind >= file_kinds_.size())
      throw Malformed{
          fmt::format("event {} has kind {} (the schema has {})", i, e.kind, file_kinds_.size())};
    if (e.values != expected) throw Malformed{fmt::format("event {} has bad value offset", i)};
    expected += file_kinds_[e.kind].types.size();
    if (expected > nvalues) throw Malformed{fmt::format("event {} has values past the chunk", i)};
  }
  if (expected != nvalues) throw Malformed{"value count does not match the events"};
  for (uint64_t i = 0; i < count; ++i) {
    Event e = load<Event>(events + i * kDiskEventSize);
    const FileKind& fk = file_kinds_[e.kind];
    const Event& added = out_.add_event(e.ts, e.tid, fk.reader, e.cpu, map_stack(e.stack));
    for (size_t f = 0; f < fk.types.size(); ++f) {
      int r = fk.reader_field[f];
      if (r < 0) continue;
      uint64_t v = load<uint64_t>(values + (e.values + f) * 8);
      out_.value_ref(added, r) = fk.types[f] == FieldType::Str ? map_string_cached(v) : v;
    }
  }
}

void ChunkDecoder::finish(const std::string& name) {
  if (substituted_strings_)
    notes_.add(fmt::format("{} strings were lost with their chunks; they read as ?str#ID",
                           substituted_strings_));
  if (events_without_stack_)
    notes_.add(fmt::format("{} events refer to stacks that were lost; they have no stack",
                           events_without_stack_));
  // Which process a thread's events belong to decides where a root cause is reported:
  // a thread put in two processes is refused, like the text form refuses it.
  if (auto move = find_unexplained_thread_move(out_)) {
    const ThreadInfo& t = out_.threads[move->entry];
    const ThreadRecord& r = thread_records_[move->entry];
    const std::string where =
        r.compressed
            ? fmt::format("compressed threads chunk at byte {}, record {}", r.chunk, r.index)
            : fmt::format("threads chunk at byte {}, record {} (byte {})", r.chunk, r.index,
                          r.chunk + kChunkHeaderSize + 4 + uint64_t{r.index} * 16);
    throw TraceFormatError(fmt::format(
        "{}: {}: thread {} is declared in process {} after process {}, and no fork event creates "
        "it there (a trace puts a thread in one process)",
        name, where, t.tid, t.pid, move->from));
  }
  out_.rebuild_indexes();
  out_.sort_maps();
  auto by_time = [](const Event& a, const Event& b) { return a.ts < b.ts; };
  if (!std::is_sorted(out_.events.begin(), out_.events.end(), by_time)) out_.sort_events();
}

}  // namespace cw::binary_format
