// The keys entries are found by (cache.h): what of the trace, the packs, the options and
// this build an entry was derived from, hashed so that equal inputs give an equal key.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/cache/cache.h"
#include "engine/cache/encoding.h"
#include "trace/binary_format.h"
#include "trace/elf_file.h"

namespace cw::cache {

namespace {

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
  // Hooks keep state: a cut rule's calls would change what an edge rule's calls return.
  if (rules.cut_rules_call_lua()) return std::nullopt;
  Hasher h;
  // The hooks an edge, link or flag rule calls: their code decides its value.
  h.value(static_cast<uint64_t>(rules.lua.size()));
  for (const rules::LuaChunk& chunk : rules.lua) {
    h.text(chunk.pack);
    h.text(chunk.code);
    h.value(chunk.first_line);
  }
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
    h.value(e.request);
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

uint64_t cut_rule_key(const rules::SplitRule& rule) {
  Hasher h;
  h.text("split");
  h.value(rule.mode);
  h.value(rule.at);
  hash_expr(h, rule.where);
  h.value(rule.cut_after);
  h.text(rule.cut_span);
  return h.digest();
}

uint64_t cut_rule_key(const rules::BatchRule& rule) {
  Hasher h;
  h.text("batch");
  h.value(rule.thread_loop);
  h.text(rule.span);
  h.value(rule.span_open);
  hash_expr(h, rule.within_where);
  h.value(rule.item);
  hash_expr(h, rule.item_where);
  hash_expr(h, rule.per);
  h.text(rule.cut_span);
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
      h.value(static_cast<uint8_t>(f.inlined | (f.kernel << 1) | (f.signal << 2)));
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

}  // namespace cw::cache
