#include "engine/cache/cache.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <type_traits>

#include "trace/binary_format.h"
#include "trace/elf_file.h"

namespace cw::cache {

namespace {

// A streaming XXH3-64 that also takes values and strings (with their length, so that
// "ab","c" and "a","bc" differ).
class Hasher {
 public:
  Hasher() : state_(XXH3_createState()) { XXH3_64bits_reset(state_); }
  ~Hasher() { XXH3_freeState(state_); }
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;
  void bytes(const void* data, size_t size) { XXH3_64bits_update(state_, data, size); }
  template <class T>
  void value(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes(&v, sizeof v);
  }
  void text(std::string_view s) {
    value(static_cast<uint64_t>(s.size()));
    bytes(s.data(), s.size());
  }
  uint64_t digest() const { return XXH3_64bits_digest(state_); }

 private:
  XXH3_state_t* state_;
};

bool pread_all(int fd, void* buf, size_t size, uint64_t offset) {
  auto* p = static_cast<char*>(buf);
  while (size > 0) {
    ssize_t n = pread(fd, p, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

// Hashes [from, size) of the file whole.
bool hash_rest(int fd, uint64_t from, uint64_t size, Hasher& h) {
  std::vector<char> buf(1 << 20);
  while (from < size) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(buf.size(), size - from));
    if (!pread_all(fd, buf.data(), n, from)) return false;
    h.bytes(buf.data(), n);
    from += n;
  }
  return true;
}

template <class T>
uint64_t load_le(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// ---- payload encoding: values and arrays as they are in memory (one machine's cache) ----

class Writer {
 public:
  template <class T>
  void value(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  template <class T>
  void array(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    value(static_cast<uint64_t>(v.size()));
    out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void bools(const std::vector<bool>& v) {
    value(static_cast<uint64_t>(v.size()));
    for (bool b : v) out_.push_back(b ? 1 : 0);
  }
  void text(const std::string& s) {
    value(static_cast<uint64_t>(s.size()));
    out_.append(s);
  }
  void texts(const std::vector<std::string>& v) {
    value(static_cast<uint64_t>(v.size()));
    for (const auto& s : v) text(s);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

// Decodes what Writer wrote, from a Source of bytes: `read(dst, n)` (throws CorruptEntry
// past the end), `skip(n)` and `left()`.
template <class Source>
class Decoder {
 public:
  template <class... A>
  explicit Decoder(A&&... a) : in_(std::forward<A>(a)...) {}
  template <class T>
  T value() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    in_.read(&v, sizeof v);
    return v;
  }
  template <class T>
  std::vector<T> array() {
    uint64_t n = count(sizeof(T));
    std::vector<T> v(n);
    if (n) in_.read(v.data(), n * sizeof(T));
    return v;
  }
  // Passes over an array of `unit`-byte elements; returns its count.
  uint64_t skip_array(size_t unit) {
    uint64_t n = count(unit);
    in_.skip(n * unit);
    return n;
  }
  std::vector<bool> bools() {
    const auto bytes = array<char>();
    std::vector<bool> v(bytes.size());
    for (size_t i = 0; i < bytes.size(); ++i) v[i] = bytes[i] != 0;
    return v;
  }
  std::string text() {
    uint64_t n = count(1);
    std::string out(n, '\0');
    if (n) in_.read(out.data(), n);
    return out;
  }
  std::vector<std::string> texts() {
    uint64_t n = count(8);  // each at least its length
    std::vector<std::string> v;
    v.reserve(n);
    for (uint64_t i = 0; i < n; ++i) v.push_back(text());
    return v;
  }
  bool done() const { return in_.left() == 0; }
  const Source& source() const { return in_; }

 private:
  // A count whose elements of `unit` bytes fit in what is left.
  uint64_t count(size_t unit) {
    uint64_t n = value<uint64_t>();
    if (n > in_.left() / unit) throw CorruptEntry("array longer than the entry");
    return n;
  }
  Source in_;
};

// A payload in memory.
class MemorySource {
 public:
  explicit MemorySource(std::string_view in) : in_(in) {}
  void read(void* dst, uint64_t n) { std::memcpy(dst, take(n), n); }
  void skip(uint64_t n) { take(n); }
  uint64_t left() const { return in_.size() - pos_; }

 private:
  const char* take(uint64_t n) {
    if (n > left()) throw CorruptEntry("entry ends early");
    const char* p = in_.data() + pos_;
    pos_ += n;
    return p;
  }
  std::string_view in_;
  size_t pos_ = 0;
};
using Reader = Decoder<MemorySource>;

}  // namespace

std::string Key::hex() const {
  Hasher h;
  h.value(trace);
  h.value(packs);
  h.value(options);
  h.value(engine);
  return fmt::format("{:016x}", h.digest());
}

std::optional<uint64_t> trace_key(const std::string& path) {
  namespace bf = binary_format;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    close(fd);
    return std::nullopt;
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  Hasher h;
  h.value(size);
  bool ok = true;
  unsigned char header[bf::kHeaderSize];
  if (size >= bf::kHeaderSize && pread_all(fd, header, sizeof header, 0) &&
      std::memcmp(header, bf::kFileMagic, 8) == 0) {
    h.bytes(header, sizeof header);
    uint64_t pos = bf::kHeaderSize;
    unsigned char chunk[bf::kChunkHeaderSize];
    while (pos < size) {
      // A chunk header that parses covers its payload by its checksum; from the first that
      // does not (a damaged file), the reader resynchronises by content: hash it all.
      if (size - pos < bf::kChunkHeaderSize || !pread_all(fd, chunk, sizeof chunk, pos) ||
          load_le<uint32_t>(chunk) != bf::kChunkMagic ||
          load_le<uint64_t>(chunk + 8) > size - pos - bf::kChunkHeaderSize) {
        ok = hash_rest(fd, pos, size, h);
        break;
      }
      h.bytes(chunk, sizeof chunk);
      pos += bf::kChunkHeaderSize + load_le<uint64_t>(chunk + 8);
    }
  } else {
    ok = hash_rest(fd, 0, size, h);
  }
  close(fd);
  if (!ok) return std::nullopt;
  return h.digest();
}

uint64_t packs_key(const rules::RuleSet& rules) {
  Hasher h;
  h.value(static_cast<uint64_t>(rules.packs.size()));
  for (const auto& pack : rules.packs) {
    h.text(pack.id);
    h.value(static_cast<uint64_t>(pack.sources.size()));
    for (const auto& source : pack.sources) h.text(source ? source->text : std::string());
  }
  return h.digest();
}

namespace {

void hash_field(Hasher& h, const rules::FieldRef& f) {
  h.value(f.side);
  h.value(f.scope);
  h.value(f.kind);
  h.value(f.field);
  h.text(f.span);
  h.value(f.type);
}

void hash_expr(Hasher& h, const rules::CompiledExpr& e) {
  h.value(static_cast<uint64_t>(e.nodes.size()));
  h.value(e.root);
  for (const rules::ExprNode& n : e.nodes) {
    h.value(n.op);
    h.value(n.type);
    h.value(n.ival);
    h.text(n.sval);
    hash_field(h, n.field);
    h.value(static_cast<uint64_t>(n.kids.size()));
    for (uint32_t k : n.kids) h.value(k);
  }
}

// What of a rule's origin the build reads: its names (edge kinds, the graph's rule names)
// and whether another pack disabled it. Not where it is written.
void hash_origin(Hasher& h, const rules::RuleOrigin& o) {
  h.text(o.pack);
  h.text(o.id);
  h.text(o.local);
  h.value(o.active());
}

}  // namespace

std::optional<uint64_t> links_key(const rules::RuleSet& rules) {
  if (!rules.lua.empty()) return std::nullopt;
  Hasher h;
  h.value(static_cast<uint64_t>(rules.links.size()));
  for (const rules::LinkRule& l : rules.links) {
    hash_origin(h, l.origin);
    h.value(l.from);
    h.value(l.to);
    h.value(static_cast<uint64_t>(l.join.size()));
    for (const auto& [a, b] : l.join) {
      hash_field(h, a);
      hash_field(h, b);
    }
    h.value(l.pick);
    for (int16_t v : {l.offset_field, l.len_field, l.to_offset_field, l.to_len_field}) h.value(v);
    hash_expr(h, l.where);
    h.value(l.within_ns);
    hash_expr(h, l.from_where);
    hash_expr(h, l.to_where);
  }
  h.value(static_cast<uint64_t>(rules.edges.size()));
  for (const rules::EdgeRule& e : rules.edges) {
    hash_origin(h, e.origin);
    h.value(e.link);
    hash_expr(h, e.where);
    h.value(e.strength);
    h.text(e.kind);
    h.value(e.priority);
    hash_expr(h, e.cost);
    h.value(e.ends_polling);
    h.value(e.from_thread);
  }
  h.value(static_cast<uint64_t>(rules.flags.size()));
  for (const rules::FlagRule& f : rules.flags) {
    hash_origin(h, f.origin);
    h.text(f.symbol);
    h.text(f.binary);
    h.value(f.address);
    h.value(f.size);
    hash_expr(h, f.set);
    h.value(f.access);
    h.value(f.strength);
    h.text(f.kind);
  }
  // The peers splits, at their places in the list (peers cuts name them by index).
  for (uint32_t i = 0; i < rules.splits.size(); ++i) {
    const rules::SplitRule& s = rules.splits[i];
    if (s.mode != rules::SplitRule::Mode::Peers) continue;
    h.value(i);
    hash_origin(h, s.origin);
    hash_expr(h, s.where);
    h.value(s.link);
    h.value(s.neighbour);
    h.value(s.loop);
    h.value(s.priority);
    h.value(s.cut_after);
    h.text(s.cut_span);
  }
  return h.digest();
}

uint64_t options_key(const engine::BuildOptions& options, std::string_view format,
                     const Trace& trace) {
  Hasher h;
  h.value(options.lua_limits.instructions);
  h.value(static_cast<uint64_t>(options.lua_limits.memory_bytes));
  h.text(format);
  // Frames named this run (only a trace with memory maps is symbolised at read time).
  uint64_t named = 0;
  for (const Stack& s : trace.stacks) {
    if (s.frames.empty()) continue;
    ++named;
    h.value(static_cast<uint64_t>(s.frames.size()));
    for (const Frame& f : s.frames) {
      h.value(f.ip);
      h.text(trace.strings.get(f.function));
      h.text(trace.strings.get(f.file));
      h.text(trace.strings.get(f.module));
      h.value(f.line);
      h.value(f.offset);
      h.value(static_cast<uint8_t>(f.inlined | (f.kernel << 1)));
    }
  }
  h.value(named);
  return h.digest();
}

uint64_t engine_key() {
  static const uint64_t key = [] {
    Hasher h;
    h.value(kFormatVersion);
    std::string id = read_build_id("/proc/self/exe");
    if (!id.empty()) {
      h.text("build-id");
      h.text(id);
    } else {
      struct stat st {};
      stat("/proc/self/exe", &st);
      h.text("file");
      h.value(static_cast<uint64_t>(st.st_size));
      h.value(static_cast<int64_t>(st.st_mtim.tv_sec));
      h.value(static_cast<int64_t>(st.st_mtim.tv_nsec));
      h.value(static_cast<uint64_t>(st.st_ino));
    }
    return h.digest();
  }();
  return key;
}

bool enabled_by_environment() {
  const char* v = std::getenv("CAUSEWAY_CACHE");
  if (!v) return true;
  std::string_view s = v;
  return !(s == "off" || s == "0" || s == "no" || s == "false");
}

bool write_entry(const Folder& dir, std::string_view name, EntryKind kind, const Key& key,
                 std::string_view payload, std::string* why) {
  return write_entry_parts(dir, name, kind, key, {payload}, why);
}

bool write_entry_parts(const Folder& dir, std::string_view name, EntryKind kind, const Key& key,
                       const std::vector<std::string_view>& parts, std::string* why) {
  uint64_t size = 0;
  Hasher h;
  for (std::string_view p : parts) {
    size += p.size();
    h.bytes(p.data(), p.size());
  }
  unsigned char header[kHeaderSize] = {};
  std::memcpy(header, kMagic, 8);
  auto put = [&](size_t at, auto v) { std::memcpy(header + at, &v, sizeof v); };
  put(8, kFormatVersion);
  put(12, static_cast<uint32_t>(kind));
  put(16, key.trace);
  put(24, key.packs);
  put(32, key.options);
  put(40, key.engine);
  put(48, size);
  put(56, h.digest());
  std::vector<std::string_view> all;
  all.reserve(parts.size() + 1);
  all.emplace_back(reinterpret_cast<const char*>(header), sizeof header);
  all.insert(all.end(), parts.begin(), parts.end());
  if (!dir.write_file(name, all, why)) return false;
  // The user's cache folder holds the entries of every trace whose own folder could not
  // hold them: its least recently used go when it grows past its cap (never this one).
  if (const Folder* pool = dir.pool()) enforce_size_cap(*pool, size_cap(), &dir, name);
  return true;
}

namespace {

// Why the header of a `size`-byte entry does not describe an entry of `kind` and `key`
// of that size; "" when it does (the payload's checksum is checked apart).
std::string check_header(const unsigned char* header, uint64_t size, EntryKind kind,
                         const Key& key) {
  auto get64 = [&](size_t at) { return load_le<uint64_t>(header + at); };
  auto get32 = [&](size_t at) { return static_cast<uint32_t>(load_le<uint32_t>(header + at)); };
  if (std::memcmp(header, kMagic, 8) != 0) return "not a causeway cache file";
  if (get32(8) != kFormatVersion)
    return fmt::format("cache format {} (this causeway writes {})", get32(8), kFormatVersion);
  if (get32(12) != static_cast<uint32_t>(kind)) return "another kind of entry";
  if (Key{get64(16), get64(24), get64(32), get64(40)} != key) return "made from other inputs";
  if (get64(48) != size - kHeaderSize)
    return fmt::format("truncated ({} payload bytes of {})", size - kHeaderSize, get64(48));
  return {};
}

}  // namespace

namespace {

// The XXH3-64 of the payload of the entry open at `fd`, read in pieces.
std::optional<uint64_t> checksum_by_reading(int fd, uint64_t size) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  std::vector<char> buf(uint64_t{1} << 20);
  bool ok = true;
  for (uint64_t at = kHeaderSize; at < size && ok;) {
    const uint64_t n = std::min<uint64_t>(buf.size(), size - at);
    ok = pread_all(fd, buf.data(), n, at);
    XXH3_64bits_update(state, buf.data(), n);
    at += n;
  }
  const uint64_t sum = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  if (!ok) return std::nullopt;
  return sum;
}

// An entry's file mapped whole, its header and checksum verified.
struct MappedEntry {
  std::shared_ptr<const void> keep;  // unmaps
  char* base = nullptr;
  uint64_t size = 0;
  std::string_view payload;
};

// An entry opened for reading (Folder::open_file: not through a link, only this user's
// regular file), and its size; -1 with the reason ("" when there is no entry) otherwise.
int open_entry(const Folder& dir, std::string_view name, uint64_t* size, std::string* why) {
  return dir.open_file(name, size, why);
}

// Read-only and populated from the page cache (no copy); with `writable`, made writable
// after: a write through it copies that page (MAP_PRIVATE), never the file. (Populating a
// writable private mapping would copy every page up front.)
// Without `populate`, the checksum is taken by reading the file (not through the
// mapping) and the mapping is left to fault in what its user touches: for an entry of
// which a run reads little (the thread index: the lists of the threads a diagnosis looks
// at), whose pages would otherwise all count in the process's memory.
std::optional<MappedEntry> map_entry(const Folder& dir, std::string_view name, EntryKind kind,
                                     const Key& key, bool writable, uint64_t min_payload,
                                     std::string* why, bool populate = true) {
  auto fail = [&](std::string reason) -> std::optional<MappedEntry> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  uint64_t size = 0;
  std::string problem;
  const int fd = open_entry(dir, name, &size, &problem);
  if (fd < 0) return fail(problem);
  if (size < kHeaderSize + min_payload) {
    close(fd);
    return fail("truncated header");
  }
  std::optional<uint64_t> read_sum;
  if (!populate) {
    read_sum = checksum_by_reading(fd, size);
    if (!read_sum) {
      close(fd);
      return fail("cannot read the payload");
    }
  }
  void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | (populate ? MAP_POPULATE : 0), fd, 0);
  int err = errno;
  close(fd);
  if (p == MAP_FAILED) return fail(std::strerror(err));
  MappedEntry m;
  m.keep =
      std::shared_ptr<const void>(p, [size](const void* q) { munmap(const_cast<void*>(q), size); });
  if (writable && mprotect(p, size, PROT_READ | PROT_WRITE) != 0) return fail(std::strerror(errno));
  m.base = static_cast<char*>(p);
  m.size = size;
  const auto* header = reinterpret_cast<const unsigned char*>(m.base);
  if (std::string bad = check_header(header, size, kind, key); !bad.empty()) return fail(bad);
  m.payload = std::string_view(m.base + kHeaderSize, size - kHeaderSize);
  const uint64_t sum = read_sum ? *read_sum : XXH3_64bits(m.payload.data(), m.payload.size());
  if (sum != load_le<uint64_t>(header + 56)) return fail("checksum mismatch");
  dir.touch(name);  // used now: eviction drops the least recently used
  return m;
}

// An entry opened for reading with its header read into `header` and checked (magic,
// version, kind, key, size); -1 with the reason otherwise ("" when there is no entry).
int open_checked_entry(const Folder& dir, std::string_view name, EntryKind kind, const Key& key,
                       uint64_t* size, unsigned char (&header)[kHeaderSize], std::string* why) {
  const int fd = open_entry(dir, name, size, why);
  if (fd < 0) return -1;
  std::string bad;
  if (*size < kHeaderSize || !pread_all(fd, header, kHeaderSize, 0))
    bad = "truncated header";
  else
    bad = check_header(header, *size, kind, key);
  if (bad.empty()) return fd;
  close(fd);
  *why = std::move(bad);
  return -1;
}

}  // namespace

std::optional<std::string> read_entry(const Folder& dir, std::string_view name, EntryKind kind,
                                      const Key& key, std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<std::string> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  uint64_t size = 0;
  unsigned char header[kHeaderSize];
  std::string problem;
  const int fd = open_checked_entry(dir, name, kind, key, &size, header, &problem);
  if (fd < 0) return fail(problem);
  std::string payload(size - kHeaderSize, '\0');
  bool ok = pread_all(fd, payload.data(), payload.size(), kHeaderSize);
  close(fd);
  if (!ok) return fail("cannot read the payload");
  if (XXH3_64bits(payload.data(), payload.size()) != load_le<uint64_t>(header + 56))
    return fail("checksum mismatch");
  dir.touch(name);  // used now: eviction drops the least recently used
  return payload;
}

// ---- the graph entry ----

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
  const engine::RuleNames& n = g.rule_names;
  w.texts(n.splits);
  w.texts(n.batches);
  w.texts(n.edges);
  w.texts(n.flags);
  w.texts(n.links);
  w.bools(n.split_cuts_after);
  w.bools(n.split_loops);
  w.array(n.edge_strengths);
  w.bools(n.edge_ends_polling);
  w.array(g.threads);
  w.value(r.stats);
  const engine::RuleCounts& c = r.counts;
  for (const auto* v : {&c.splits, &c.batches, &c.edges, &c.pruned, &c.boosted, &c.flags})
    w.array(*v);
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

// An entry's payload read from its file straight into where it goes (the graph's
// vectors), hashed on the way: a graph loaded so is in memory once, where through a
// mapping its pages would count twice at the peak (~300 MB at 19 M events). The checksum
// is checked at the end (matches()); what was decoded before is dropped if it fails.
class FileSource {
 public:
  FileSource(int fd, uint64_t begin, uint64_t end)
      : fd_(fd), pos_(begin), end_(end), state_(XXH3_createState()) {
    XXH3_64bits_reset(state_);
  }
  ~FileSource() { XXH3_freeState(state_); }
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

  void read(void* dst, uint64_t n) {
    if (n > left()) throw CorruptEntry("entry ends early");
    if (!pread_all(fd_, dst, n, pos_)) throw CorruptEntry("cannot read the entry");
    XXH3_64bits_update(state_, dst, n);
    pos_ += n;
  }
  // Skipped bytes are read too: the checksum covers them.
  void skip(uint64_t n) {
    std::vector<char> buf(std::min<uint64_t>(n, uint64_t{1} << 20));
    for (uint64_t step; n > 0; n -= step) {
      step = std::min<uint64_t>(n, buf.size());
      read(buf.data(), step);
    }
  }
  uint64_t left() const { return end_ - pos_; }
  // Whether the payload read matches the header's checksum.
  bool matches(uint64_t expected) const { return XXH3_64bits_digest(state_) == expected; }

 private:
  int fd_;
  uint64_t pos_, end_;
  XXH3_state_t* state_;
};
using FileReader = Decoder<FileSource>;

// Throws CorruptEntry unless every index `r` holds is inside the table it indexes: the
// trace's events, the graph's segments, kinds and threads, the rule tables (which must be
// those of `rules`: reports index the counts by the packs' rules). A graph with
// `segment_count` segments (not decoded when loaded for reuse: `r` has none then).
void check_graph(const engine::BuildResult& r, uint64_t segment_count, const Trace& trace,
                 const rules::RuleSet& rules, bool for_reuse) {
  using engine::RuleKind;
  const engine::Graph& g = r.graph;
  const engine::RuleNames& n = g.rule_names;
  const uint64_t events = trace.events.size();
  auto bad = [](const char* what) { throw CorruptEntry(what); };
  // The rule tables: one entry per rule of the packs, and the per-rule lists as long. A
  // rebuild of the cuts reads no cut rule of the graph it reuses (those may differ).
  if (n.split_cuts_after.size() != n.splits.size() || n.split_loops.size() != n.splits.size() ||
      n.edge_strengths.size() != n.edges.size() || n.edge_ends_polling.size() != n.edges.size())
    bad("the graph's rule tables do not agree");
  if (n.edges.size() != rules.edges.size() || n.flags.size() != rules.flags.size() ||
      n.links.size() != rules.links.size() ||
      (!for_reuse &&
       (n.splits.size() != rules.splits.size() || n.batches.size() != rules.batches.size())))
    bad("the graph's rules are not those of the packs");
  for (rules::Strength s : n.edge_strengths)
    if (s > rules::Strength::Prune) bad("an edge rule of unknown strength");
  const engine::RuleCounts& c = r.counts;
  if (c.splits.size() != n.splits.size() || c.batches.size() != n.batches.size() ||
      c.edges.size() != n.edges.size() || c.pruned.size() != n.edges.size() ||
      c.boosted.size() != n.edges.size() || c.flags.size() != n.flags.size())
    bad("the graph's rule counts do not fit its rules");
  auto rule_in_range = [&](engine::RuleRef ref) {
    switch (ref.kind) {
      case RuleKind::None: return true;
      case RuleKind::Split: return ref.index < n.splits.size();
      case RuleKind::Batch: return ref.index < n.batches.size();
      case RuleKind::Edge: return ref.index < n.edges.size();
      case RuleKind::Flag: return ref.index < n.flags.size();
    }
    return false;  // a kind this causeway does not have
  };
  // Segments: events of their thread; each thread's segments one run, in event order.
  for (const engine::Segment& s : g.segments) {
    if (s.first > s.last || s.last >= events) bad("a segment names events the trace does not have");
    if (trace.events[s.first].tid != s.tid || trace.events[s.last].tid != s.tid)
      bad("a segment's events are of another thread");
    if (!rule_in_range(s.cut_rule)) bad("a segment names a rule the graph does not have");
  }
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
    if (for_reuse) continue;
    for (uint32_t s = t.begin; s < t.end; ++s)
      if (g.segments[s].tid != t.tid ||
          (s > t.begin && g.segments[s - 1].first >= g.segments[s].first))
        bad("the graph's thread table does not fit its segments");
  }
  if (in_runs != segment_count) bad("the graph's thread table does not fit its segments");
  for (const engine::Edge& e : g.edges) {
    if (e.from >= segment_count || e.to >= segment_count || e.kind >= g.kinds.size())
      bad("an edge names a segment or kind the graph does not have");
    if (e.from_event >= events || e.to_event >= events)
      bad("an edge names events the trace does not have");
    if (!rule_in_range(e.rule) ||
        (e.boost_rule != rules::kNoRule && e.boost_rule >= n.edges.size()) ||
        (e.link != rules::kNoRule && e.link >= n.links.size()))
      bad("an edge names a rule the graph does not have");
    if (e.strength > engine::Strength::Boosted) bad("an edge of unknown strength");
  }
  for (const engine::PeerCut& p : r.peer_cuts)
    if (p.event >= events || p.rule >= rules.splits.size() ||
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
  // A rebuild of the cuts makes its own segments: only their count is kept.
  uint64_t segment_count = 0;
  if (for_reuse)
    segment_count = rd.skip_array(sizeof(engine::Segment));
  else
    g.segments = rd.template array<engine::Segment>();
  g.edges = rd.template array<engine::Edge>();
  g.kinds = rd.texts();
  engine::RuleNames& n = g.rule_names;
  n.splits = rd.texts();
  n.batches = rd.texts();
  n.edges = rd.texts();
  n.flags = rd.texts();
  n.links = rd.texts();
  n.split_cuts_after = rd.bools();
  n.split_loops = rd.bools();
  n.edge_strengths = rd.template array<rules::Strength>();
  n.edge_ends_polling = rd.bools();
  g.threads = rd.template array<engine::Graph::ThreadSegments>();
  r.stats = rd.template value<engine::BuildStats>();
  engine::RuleCounts& c = r.counts;
  for (auto* v : {&c.splits, &c.batches, &c.edges, &c.pruned, &c.boosted, &c.flags})
    *v = rd.template array<uint64_t>();
  r.peer_cuts = rd.template array<engine::PeerCut>();
  if (!rd.done()) throw CorruptEntry("bytes left after the graph");
  // The csr's arrays index segments by the edges, the diagnosis events by the segments,
  // reports rules by the counts: whatever wrote the entry, nothing may index past them.
  check_graph(r, for_reuse ? segment_count : g.segments.size(), trace, rules, for_reuse);
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
    if (!rd.source().matches(load_le<uint64_t>(header + 56))) return fail("checksum mismatch");
    dir.touch(name);  // used now: eviction drops the least recently used
    return r;
  } catch (const CorruptEntry& e) {
    // Damage usually shows as a payload that does not decode before the end is reached:
    // say what it is when the checksum tells.
    if (checksum_by_reading(fd, size) != load_le<uint64_t>(header + 56))
      return fail("checksum mismatch");
    return fail(e.what());
  }
}

bool save_graph(const Folder& dir, const Key& key, const engine::BuildResult& result,
                std::string* why) {
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

// ---- the trace arrays entry ----

namespace {

constexpr uint64_t kPage = 4096;
uint64_t page_up(uint64_t n) {
  return (n + kPage - 1) & ~(kPage - 1);
}

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

bool save_trace_arrays(const Folder& dir, const Key& key, const Trace& trace,
                       const ReadReport& report, std::string* why) {
  return save_trace_arrays(dir, key, trace.events, trace.values, trace.strings.size(),
                           trace.stacks.size(), report, why);
}

bool save_trace_arrays(const Folder& dir, const Key& key, const Column<Event>& events,
                       const Column<uint64_t>& values, uint64_t strings, uint64_t stacks,
                       const ReadReport& report, std::string* why) {
  Writer w;
  encode_report(w, report);
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
  auto m =
      map_entry(dir, kTraceArraysName, EntryKind::TraceArrays, key, true, sizeof(ArraysMeta), why);
  if (!m) return std::nullopt;
  try {
    return decode_trace_arrays(m->keep, m->base, m->size);
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
  if (meta.events_offset % kPage || meta.values_offset % kPage || meta.events_offset > size ||
      meta.values_offset > size || meta.events > (size - meta.events_offset) / sizeof(Event) ||
      meta.events_offset + meta.events * sizeof(Event) > meta.values_offset ||
      meta.values > (size - meta.values_offset) / sizeof(uint64_t))
    throw CorruptEntry("arrays outside the entry");
  // The reader never makes more: event and value indexes are 32 bits.
  if (meta.events > 0xffffffffull || meta.values > 0xffffffffull)
    throw CorruptEntry("more events or values than a trace holds");
  out.events =
      Column<Event>::view(keep, reinterpret_cast<Event*>(base + meta.events_offset), meta.events);
  out.values = Column<uint64_t>::view(keep, reinterpret_cast<uint64_t*>(base + meta.values_offset),
                                      meta.values);
  out.strings = meta.strings;
  out.stacks = meta.stacks;
  return out;
}

void check_trace_arrays(const TraceArrays& arrays, const Trace& tables) {
  const Schema& schema = tables.schema;
  const uint64_t nkinds = schema.size(), nvalues = arrays.values.size();
  const uint64_t nstrings = tables.strings.size(), nstacks = tables.stacks.size();
  if (arrays.strings != nstrings || arrays.stacks != nstacks)
    throw CorruptEntry("made with other strings or stacks than the trace has");
  // The string fields of each kind, looked up once.
  std::vector<std::vector<uint32_t>> str_fields(nkinds);
  for (size_t k = 0; k < nkinds; ++k) {
    const auto& fields = schema.kind(static_cast<KindId>(k)).fields;
    for (uint32_t f = 0; f < fields.size(); ++f)
      if (fields[f].type == FieldType::Str) str_fields[k].push_back(f);
  }
  uint64_t last_ts = 0;
  for (size_t i = 0; i < arrays.events.size(); ++i) {
    const Event& e = arrays.events[i];
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
}

// ---- the thread index entry ----

namespace {

// The index's arrays in Parts order: tids, the three lists, their three offsets. All have
// 4-byte elements.
constexpr size_t kIndexArrays = 7;
static_assert(sizeof(Tid) == sizeof(uint32_t));

struct IndexMeta {
  uint64_t offset[kIndexArrays], count[kIndexArrays];
};

template <class Parts, class F>
void for_each_index_array(Parts& p, F&& f) {
  f(0, p.tids);
  f(1, p.events);
  f(2, p.switches);
  f(3, p.syscalls);
  f(4, p.events_at);
  f(5, p.switches_at);
  f(6, p.syscalls_at);
}

}  // namespace

bool save_thread_index(const Folder& dir, const Key& key, const engine::ThreadEvents& index,
                       std::string* why) {
  IndexMeta meta{};
  std::vector<std::string_view> parts = {{reinterpret_cast<const char*>(&meta), sizeof meta}};
  std::vector<std::string> pads;
  pads.reserve(kIndexArrays);
  uint64_t at = kHeaderSize + sizeof meta;
  for_each_index_array(index.parts(), [&](size_t i, const auto& column) {
    meta.offset[i] = page_up(at);
    meta.count[i] = column.size();
    pads.emplace_back(meta.offset[i] - at, '\0');
    parts.push_back(pads.back());
    parts.push_back({reinterpret_cast<const char*>(column.data()), column.size() * 4});
    at = meta.offset[i] + column.size() * 4;
  });
  return write_entry_parts(dir, kThreadIndexName, EntryKind::ThreadIndex, key, parts, why);
}

std::optional<engine::ThreadEvents> load_thread_index(const Folder& dir, const Key& key,
                                                      uint64_t events, std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<engine::ThreadEvents> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  // Writable (copy-on-write) because Column views hold non-const pointers; nothing writes.
  auto m = map_entry(dir, kThreadIndexName, EntryKind::ThreadIndex, key, true, sizeof(IndexMeta),
                     why, false);
  if (!m) return std::nullopt;
  try {
    engine::ThreadEvents index = decode_thread_index(m->keep, m->base, m->size, events);
    // The check read every list through the mapping: let those pages go again (nothing was
    // written to them), so that only the lists of the threads a diagnosis looks at count in
    // the process's memory, as the mapping was made for.
    madvise(m->base, m->size, MADV_DONTNEED);
    return index;
  } catch (const CorruptEntry& e) {
    return fail(e.what());
  }
}

engine::ThreadEvents decode_thread_index(const std::shared_ptr<const void>& keep, char* base,
                                         uint64_t size, uint64_t events) {
  if (size < kHeaderSize + sizeof(IndexMeta)) throw CorruptEntry("truncated header");
  IndexMeta meta{};
  std::memcpy(&meta, base + kHeaderSize, sizeof meta);
  engine::ThreadEvents::Parts parts;
  for_each_index_array(parts, [&](size_t i, auto& column) {
    using T = typename std::decay_t<decltype(column)>::value_type;
    if (meta.offset[i] % kPage || meta.offset[i] > size ||
        meta.count[i] > (size - meta.offset[i]) / sizeof(T))
      throw CorruptEntry("arrays outside the entry");
    column = Column<T>::view(keep, reinterpret_cast<T*>(base + meta.offset[i]), meta.count[i]);
  });
  try {
    return engine::ThreadEvents(std::move(parts), events);
  } catch (const std::invalid_argument& e) {
    throw CorruptEntry(e.what());
  }
}

// ---- the hang entries ----

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

// ---- graphs to rebuild the cuts of ----

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
