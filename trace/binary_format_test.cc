#include "trace/binary_format.h"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "base/temp_dir.h"
#include "trace/decompression_limit.h"
#include "trace/text_format.h"

namespace cw {
namespace {

namespace fs = std::filesystem;
namespace bf = binary_format;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spit(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

Trace parse(const std::string& text) {
  return parse_text_trace(make_source("t.trace", text));
}

const char* const kSample = R"(causeway-trace 1
process 100 comm=server ppid=1 exe=/usr/bin/server
process 200 comm="client two"
thread 101 pid=100 comm=main
thread 7 pid=0 comm=kworker/0:1 kernel
lost cpu=1 count=12 at=3s
1000 101 switch_in cpu=3
1.5ms 101 syscall_enter name=futex op=wait resource=0x7f00 timeout_ns=-1 stack=main;lock;futex_wait
2ms 102 wakeup target=101
2ms 101 switch_out state=S stack=main@0x400100;0x400200
5ms 7 marker text="a \"quoted\" marker"
)";

// The text form resolves every id, so equal text means equal traces.
std::string canonical(const Trace& t) {
  return write_text_trace(t);
}

struct ChunkInfo {
  uint64_t offset = 0, end = 0;
  uint32_t type = 0;
  uint64_t events = 0;  // for events chunks
};

// A chunk type's name, as messages give it ("events" for an events chunk).
std::string_view describe_type(uint32_t type) {
  static const char* const names[] = {"",          "schema",  "strings", "stacks",
                                      "processes", "threads", "events",  "lost",
                                      "end",       "maps",    "losses"};
  type &= ~bf::kCompressedFlag;
  return type < std::size(names) ? names[type] : "?";
}

std::vector<ChunkInfo> walk_chunks(const std::string& bytes) {
  std::vector<ChunkInfo> chunks;
  for (uint64_t pos = bf::kHeaderSize; pos + bf::kChunkHeaderSize <= bytes.size();) {
    ChunkInfo c;
    uint64_t size;
    c.offset = pos;
    std::memcpy(&c.type, bytes.data() + pos + 4, 4);
    std::memcpy(&size, bytes.data() + pos + 8, 8);
    c.end = pos + bf::kChunkHeaderSize + size;
    if (c.type == static_cast<uint32_t>(bf::ChunkType::Events))
      std::memcpy(&c.events, bytes.data() + pos + bf::kChunkHeaderSize, 8);
    // A compressed events chunk keeps its counts as the raw prefix.
    if (c.type == (static_cast<uint32_t>(bf::ChunkType::Events) | bf::kCompressedFlag))
      std::memcpy(&c.events, bytes.data() + pos + bf::kChunkHeaderSize + bf::kCompressedHeaderSize,
                  8);
    chunks.push_back(c);
    pos = c.end;
  }
  return chunks;
}

// A trace written the way the recorder writes one: in rounds, each adding strings, a
// stack, a thread and events, so that chunks of every type interleave.
Trace write_streamed(const std::string& path, size_t events_per_chunk, int rounds,
                     int events_per_round, TraceCompression compression = TraceCompression::Zstd) {
  Trace t;
  TraceWriterOptions options{events_per_chunk};
  options.compression = compression;
  TraceWriter writer(path, t.schema, options);
  const KindId enter = t.schema.find("syscall_enter"), wakeup = t.schema.find("wakeup"),
               out = t.schema.find("switch_out");
  uint64_t n = 0;
  for (int r = 0; r < rounds; ++r) {
    size_t from = t.events.size();
    Tid tid = 1000 + static_cast<Tid>(r);
    t.processes.push_back(ProcessInfo{tid, 1, t.strings.intern(fmt::format("proc{}", r)), 0});
    t.threads.push_back(ThreadInfo{tid, tid, t.strings.intern(fmt::format("thread{}", r)), false});
    StackId stack = t.add_stack(Stack{{0x1000u + static_cast<uint64_t>(r), 0x2000},
                                      {t.strings.intern(fmt::format("fn{}", r)), 0}});
    for (int i = 0; i < events_per_round; ++i, ++n) {
      uint64_t ts = n * 1000 + 1;
      if (n % 3 == 0) {
        const Event& e = t.add_event(ts, tid, enter, static_cast<uint16_t>(n % 4), stack);
        t.value_ref(e, 0) = t.strings.intern(fmt::format("call{}_{}", r, i % 5));
        t.value_ref(e, 1) = static_cast<uint64_t>(-static_cast<int64_t>(n));
        t.value_ref(e, 2) = n * 7;
      } else if (n % 3 == 1) {
        t.value_ref(t.add_event(ts, tid, wakeup), 0) = tid + 1;
      } else {
        t.value_ref(t.add_event(ts, tid, out), 0) = t.strings.intern(r % 2 ? "S" : "D");
      }
    }
    if (r % 4 == 3) t.lost.push_back(LostRecord{static_cast<uint16_t>(r), 5, n * 1000});
    writer.append(t, from);
  }
  writer.close();
  t.rebuild_indexes();
  return t;
}

TEST_CASE("a trace survives write_trace and read_trace unchanged") {
  TempDir dir("cw-tracer-test");
  Trace t = parse(kSample);
  write_trace(t, dir.file("a.cwt"));
  Trace back;
  ReadReport report = read_trace(dir.file("a.cwt"), back);
  CHECK(report.clean());
  CHECK(report.notes.empty());
  CHECK(report.major == bf::kMajor);  // compressed by default: format 2
  CHECK(report.minor == bf::kMinor);
  CHECK(report.events_read == 5);
  CHECK(canonical(back) == canonical(t));
  CHECK(back.pid_of(101) == 100);
}

TEST_CASE("memory maps stream in their own chunks and read back sorted by pid then time") {
  TempDir dir("cw-tracer-test");
  Trace t = parse(kSample);
  auto map = [&](Pid pid, uint64_t ts, uint64_t start, const char* path, const char* build_id) {
    t.maps.push_back(MapRecord{pid, ts, start, start + 0x1000, 0x2000, t.strings.intern(path),
                               *build_id ? t.strings.intern(build_id) : 0});
  };
  TraceWriter writer(dir.file("m.cwt"), t.schema);
  map(200, 50, 0x7000, "/lib/libc.so.6", "00ff");
  map(100, 90, 0x400000, "/usr/bin/server", "");
  writer.append(t);
  size_t from = t.events.size();
  map(100, 10, 0x500000, "/usr/lib/libnew.so", "abcdef0123");  // a new string too
  writer.append(t, from);
  writer.close();

  Trace back;
  ReadReport report = read_trace(dir.file("m.cwt"), back);
  CHECK(report.clean());
  CHECK(report.notes.empty());
  std::vector<std::string> maps;
  for (const MapRecord& m : back.maps)
    maps.push_back(fmt::format("{} {} {:#x}-{:#x} {:#x} {} {}", m.pid, m.ts, m.start, m.end,
                               m.pgoff, back.strings.get(m.path), back.strings.get(m.build_id)));
  CHECK(maps ==
        std::vector<std::string>{"100 10 0x500000-0x501000 0x2000 /usr/lib/libnew.so abcdef0123",
                                 "100 90 0x400000-0x401000 0x2000 /usr/bin/server ",
                                 "200 50 0x7000-0x8000 0x2000 /lib/libc.so.6 00ff"});
  std::vector<ChunkInfo> chunks = walk_chunks(slurp(dir.file("m.cwt")));
  CHECK(std::count_if(chunks.begin(), chunks.end(), [](const ChunkInfo& c) {
          return c.type == static_cast<uint32_t>(bf::ChunkType::Maps);
        }) == 2);
}

std::vector<std::string> losses_of(const Trace& t) {
  std::vector<std::string> out;
  for (const LossRecord& l : t.losses)
    out.push_back(fmt::format("{} {} {}", static_cast<uint32_t>(l.kind), l.count, l.ts));
  return out;
}

TEST_CASE("every kind of loss streams in losses chunks and reads back as written") {
  TempDir dir("cw-tracer-test");
  Trace t = parse(kSample);  // with 12 events lost in the kernel buffer
  TraceWriter writer(dir.file("l.cwt"), t.schema);
  t.losses.push_back({LossKind::HookLog, 40, 1000});
  t.losses.push_back({LossKind::SwitchUnreported, 1, 1500});
  writer.append(t);
  size_t from = t.events.size();
  t.losses.push_back({LossKind::Maps, 2, 2000});
  t.losses.push_back({LossKind::WatchpointSilent, 1, 2500});
  t.losses.push_back({static_cast<LossKind>(77), 5, 2600});  // from a newer recorder: kept
  writer.append(t, from);
  writer.close();

  Trace back;
  ReadReport report = read_trace(dir.file("l.cwt"), back);
  CHECK(report.clean());
  CHECK(report.notes.empty());
  CHECK(losses_of(back) ==
        std::vector<std::string>{"1 40 1000", "2 1 1500", "3 2 2000", "4 1 2500", "77 5 2600"});
  CHECK(back.lost_events() == 12);  // the kernel buffer's stay apart
  CHECK(back.losses_of(LossKind::HookLog) == 40);
  std::vector<ChunkInfo> chunks = walk_chunks(slurp(dir.file("l.cwt")));
  CHECK(std::count_if(chunks.begin(), chunks.end(), [](const ChunkInfo& c) {
          return c.type == static_cast<uint32_t>(bf::ChunkType::Losses);
        }) == 2);
}

TEST_CASE("a file from before format 1.2 (no losses chunk) reads cleanly with no losses") {
  std::string bytes;
  {
    TempDir dir("cw-tracer-test");
    Trace t = parse(kSample);
    TraceWriterOptions plain;
    plain.compression = TraceCompression::None;  // a 1.x file
    write_trace(t, dir.file("old.cwt"), plain);
    bytes = slurp(dir.file("old.cwt"));
  }
  for (const ChunkInfo& c : walk_chunks(bytes))
    CHECK(c.type != static_cast<uint32_t>(bf::ChunkType::Losses));
  uint32_t minor = 1;  // what a 1.1 writer put in the header; its chunks are these
  std::memcpy(bytes.data() + 12, &minor, 4);
  Trace out;
  ReadReport report = read_trace_bytes(bytes, out, "old.cwt");
  CHECK(report.clean());
  CHECK(report.notes.empty());
  CHECK(report.minor == 1);
  CHECK(out.events.size() == 5);
  CHECK(out.lost_events() == 12);
  CHECK(out.losses.empty());
}

TEST_CASE("a damaged losses chunk is skipped and reported; the rest is kept") {
  Trace t = parse(kSample);
  t.losses.push_back({LossKind::HookLog, 3, 1000});
  std::string bytes;
  {
    TempDir dir("cw-tracer-test");
    write_trace(t, dir.file("d.cwt"));
    bytes = slurp(dir.file("d.cwt"));
  }
  for (const ChunkInfo& c : walk_chunks(bytes))
    if (c.type == static_cast<uint32_t>(bf::ChunkType::Losses))
      bytes[c.offset + bf::kChunkHeaderSize] ^= 0x55;  // the checksum no longer matches
  Trace out;
  ReadReport report = read_trace_bytes(bytes, out, "d.cwt");
  CHECK(out.losses.empty());
  CHECK(out.events.size() == 5);
  REQUIRE(report.skipped.size() == 1);
}

TEST_CASE("a damaged maps chunk is skipped and reported; the rest is kept") {
  TempDir dir("cw-tracer-test");
  Trace t = parse(kSample);
  t.maps.push_back(MapRecord{100, 1, 0x400000, 0x401000, 0, t.strings.intern("/bin/x"), 0});
  write_trace(t, dir.file("d.cwt"));
  std::string bytes = slurp(dir.file("d.cwt"));
  std::vector<ChunkInfo> chunks = walk_chunks(bytes);
  auto maps = std::find_if(chunks.begin(), chunks.end(), [](const ChunkInfo& c) {
    return c.type == static_cast<uint32_t>(bf::ChunkType::Maps);
  });
  REQUIRE(maps != chunks.end());
  bytes[maps->offset + bf::kChunkHeaderSize + 8] ^= 0x55;  // the first map's time
  Trace back;
  ReadReport report = read_trace_bytes(bytes, back, "d.cwt");
  REQUIRE(report.skipped.size() == 1);
  CHECK(report.skipped[0].offset == maps->offset);
  CHECK(report.skipped[0].reason == "checksum mismatch in maps chunk");
  CHECK(back.maps.empty());
  CHECK(back.events.size() == 5);
}

TEST_CASE("trace files are created 0600, also over an existing file") {
  TempDir dir("cw-tracer-test");
  const std::string path = dir.file("b.cwt");
  write_trace(parse(kSample), path);
  struct stat st;
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  chmod(path.c_str(), 0644);
  write_trace(parse(kSample), path);
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
}

TEST_CASE("an unwritable path is an error naming it") {
  CHECK_THROWS_WITH_AS(write_trace(Trace{}, "/nonexistent-dir/x.cwt"),
                       "/nonexistent-dir/x.cwt: cannot create: No such file or directory",
                       std::runtime_error);
}

TEST_CASE("a write that fails part-way leaves whole chunks, no end chunk, and says how much") {
  TempDir dir("cw-tracer-test");
  const Trace t = parse(kSample);
  write_trace(t, dir.file("whole.cwt"), TraceWriterOptions{1});
  const uint64_t whole = fs::file_size(dir.file("whole.cwt"));
  // A file-size limit stands for a full disk: past it write() fails (EFBIG, SIGXFSZ
  // ignored), as it does with ENOSPC, after writing what fits.
  rlimit saved{};
  REQUIRE(getrlimit(RLIMIT_FSIZE, &saved) == 0);
  auto* old_handler = signal(SIGXFSZ, SIG_IGN);
  const std::string path = dir.file("cut.cwt");
  std::optional<TraceWriteError> error;
  {
    TraceWriter writer(path, t.schema, TraceWriterOptions{1});
    rlimit limit = saved;
    limit.rlim_cur = whole - 30;  // the last events chunk fits, not all of the end chunk
    REQUIRE(setrlimit(RLIMIT_FSIZE, &limit) == 0);
    try {
      writer.append(t);
      writer.close();
    } catch (const TraceWriteError& e) {
      error = e;
    }
    CHECK_THROWS_AS(writer.append(t), TraceWriteError);  // spent: nothing more is written
    writer.close();                                      // closes, writes no end chunk
    setrlimit(RLIMIT_FSIZE, &saved);
  }
  signal(SIGXFSZ, old_handler);
  REQUIRE(error.has_value());
  CHECK(error->error == EFBIG);
  CHECK(error->path == path);
  // The half-written chunk was cut off: the file is exactly the whole chunks said.
  CHECK(error->bytes_written == fs::file_size(path));
  CHECK(error->bytes_written < whole);
  CHECK(std::string(error->what()) ==
        fmt::format("{}: cannot write after {} bytes: File too large", path, error->bytes_written));
  Trace back;
  ReadReport report = read_trace(path, back);
  CHECK(report.skipped.empty());
  REQUIRE(report.notes.size() == 1);
  CHECK(report.notes[0] == "no end chunk: the recording did not finish, or the file was cut short");
}

TEST_CASE("TraceWriter streams appends as chunks and the reader joins them") {
  TempDir dir("cw-tracer-test");
  Trace t = write_streamed(dir.file("s.cwt"), 7, 5, 40);
  Trace back;
  ReadReport report = read_trace(dir.file("s.cwt"), back);
  CHECK(report.clean());
  CHECK(report.events_read == 200);
  CHECK(canonical(back) == canonical(t));
  std::vector<ChunkInfo> chunks = walk_chunks(slurp(dir.file("s.cwt")));
  CHECK(std::count_if(chunks.begin(), chunks.end(), [](const ChunkInfo& c) {
          return (c.type & ~bf::kCompressedFlag) == static_cast<uint32_t>(bf::ChunkType::Events);
        }) == 5 * 6);  // 40 events in chunks of 7: 6 per round
  CHECK(chunks.back().type == static_cast<uint32_t>(bf::ChunkType::End));
}

TEST_CASE("a trace in a misaligned buffer reads the same") {
  TempDir dir("cw-tracer-test");
  Trace t = write_streamed(dir.file("a.cwt"), 5, 2, 12);
  std::string shifted = " " + slurp(dir.file("a.cwt"));
  Trace back;
  ReadReport report = read_trace_bytes(std::string_view(shifted).substr(1), back, "a.cwt");
  CHECK(report.clean());
  CHECK(canonical(back) == canonical(t));
}

TEST_CASE("events written out of time order come back sorted") {
  TempDir dir("cw-tracer-test");
  Trace t;
  KindId exit = t.schema.find("exit");
  t.value_ref(t.add_event(30, 1, exit), 0) = 3;
  t.value_ref(t.add_event(10, 1, exit), 0) = 1;
  t.value_ref(t.add_event(20, 1, exit), 0) = 2;
  write_trace(t, dir.file("o.cwt"));
  Trace back;
  read_trace(dir.file("o.cwt"), back);
  REQUIRE(back.events.size() == 3);
  for (uint64_t i = 0; i < 3; ++i) {
    CHECK(back.events[i].ts == 10 * (i + 1));
    CHECK(back.value(back.events[i], 0) == i + 1);
  }
}

TEST_CASE("load_trace reads both forms, by content") {
  TempDir dir("cw-tracer-test");
  spit(dir.file("t.txt"), kSample);
  write_trace(parse(kSample), dir.file("t.bin"));
  Trace text, binary;
  ReadReport tr = load_trace(dir.file("t.txt"), text);
  load_trace(dir.file("t.bin"), binary);
  CHECK(tr.events_read == 5);
  CHECK(canonical(text) == canonical(binary));
  spit(dir.file("bad.txt"), "causeway-trace 1\n1 1 nope\n");
  Trace bad;
  CHECK_THROWS_AS(load_trace(dir.file("bad.txt"), bad), DiagnosticError);
}

TEST_CASE("a newer major version is refused, naming both versions") {
  TempDir dir("cw-tracer-test");
  write_trace(parse(kSample), dir.file("v3.cwt"));
  std::string bytes = slurp(dir.file("v3.cwt"));
  uint32_t version[2] = {3, 0};
  std::memcpy(bytes.data() + 8, version, 8);
  spit(dir.file("v3.cwt"), bytes);
  Trace out;
  CHECK_THROWS_WITH_AS(
      read_trace(dir.file("v3.cwt"), out),
      (dir.file("v3.cwt") + ": trace format version 3.0 is newer than this causeway reads (up to "
                            "2.x); upgrade causeway")
          .c_str(),
      TraceFormatError);
}

TEST_CASE("a newer minor version is read, with a note") {
  std::string bytes;
  {
    TempDir dir("cw-tracer-test");
    write_trace(parse(kSample), dir.file("m.cwt"));
    bytes = slurp(dir.file("m.cwt"));
  }
  uint32_t minor = 3;
  std::memcpy(bytes.data() + 12, &minor, 4);
  Trace out;
  ReadReport report = read_trace_bytes(bytes, out, "m.cwt");
  CHECK(out.events.size() == 5);
  REQUIRE(report.notes.size() == 1);
  CHECK(report.notes[0] ==
        "written by a newer causeway (format 2.3); parts it added may be skipped");
}

TEST_CASE("a file that is not a trace is refused, naming the file") {
  TempDir dir("cw-tracer-test");
  spit(dir.file("x.txt"), "hello world, this is not a trace at all");
  Trace out;
  CHECK_THROWS_WITH_AS(read_trace(dir.file("x.txt"), out),
                       (dir.file("x.txt") + ": not a causeway trace (no CWTRACE header)").c_str(),
                       TraceFormatError);
  CHECK_THROWS_WITH_AS(read_trace_bytes("", out, "empty"),
                       "empty: empty file (0 bytes): not a causeway trace", TraceFormatError);
  CHECK_THROWS_WITH_AS(read_trace_bytes(std::string("CWTRACE\0\1\0", 10), out, "short"),
                       "short: not a causeway trace: header truncated at 10 bytes",
                       TraceFormatError);
  CHECK_THROWS_WITH_AS(read_trace(dir.file("missing"), out),
                       (dir.file("missing") + ": cannot read: No such file or directory").c_str(),
                       TraceFormatError);
}

TEST_CASE("kinds and fields are mapped by name; unknown kinds are kept, unknown fields dropped") {
  Trace written;
  Schema s;  // the writer's schema: other order, an extra field, a kind we do not know
  s.add(KindDef{"gpu_fence", {{"fence", FieldType::Uint, ""}, {"ring", FieldType::Str, ""}}});
  s.add(KindDef{"wakeup", {{"extra", FieldType::Uint, ""}, {"target", FieldType::Tid, ""}}});
  written.schema = s;
  const Event& w = written.add_event(10, 1, 1);
  written.value_ref(w, 0) = 99;
  written.value_ref(w, 1) = 42;
  const Event& g = written.add_event(20, 1, 0);
  written.value_ref(g, 0) = 0xf00;
  written.value_ref(g, 1) = written.strings.intern("gfx");
  TempDir dir("cw-tracer-test");
  write_trace(written, dir.file("k.cwt"));

  Trace back;
  ReadReport report = read_trace(dir.file("k.cwt"), back);
  CHECK(report.clean());
  CHECK(report.notes == std::vector<std::string>{
                            "kind 'gpu_fence' is not in this causeway's schema; its events are "
                            "kept with the file's fields",
                            "field 'extra' of 'wakeup' is not known to this causeway; its values "
                            "are dropped"});
  REQUIRE(back.events.size() == 2);
  CHECK(back.schema.kind(back.events[0].kind).name == "wakeup");
  CHECK(back.value(back.events[0], 0) == 42);
  KindId fence = back.schema.find("gpu_fence");
  REQUIRE(fence != kNoKind);
  CHECK(fence >= Schema::builtin().size());
  CHECK(back.events[1].kind == fence);
  CHECK(back.value(back.events[1], 0) == 0xf00);
  CHECK(back.strings.get(static_cast<StrId>(back.value(back.events[1], 1))) == "gfx");
}

std::string with_chunk(std::string bytes, uint64_t at, uint32_t type, const std::string& payload) {
  std::string chunk(bf::kChunkHeaderSize, '\0');
  uint64_t size = payload.size(), hash = XXH3_64bits(payload.data(), payload.size());
  std::memcpy(chunk.data(), &bf::kChunkMagic, 4);
  std::memcpy(chunk.data() + 4, &type, 4);
  std::memcpy(chunk.data() + 8, &size, 8);
  std::memcpy(chunk.data() + 16, &hash, 8);
  bytes.insert(at, chunk + payload);
  return bytes;
}

TEST_CASE("a chunk of an unknown type is skipped with a note giving its offset") {
  TempDir dir("cw-tracer-test");
  write_trace(parse(kSample), dir.file("u.cwt"));
  std::string bytes = slurp(dir.file("u.cwt"));
  uint64_t at = walk_chunks(bytes).back().offset;  // before the end chunk
  bytes = with_chunk(bytes, at, 99, std::string(16, 'x'));
  Trace out;
  ReadReport report = read_trace_bytes(bytes, out, "u.cwt");
  CHECK(report.clean());
  CHECK(out.events.size() == 5);
  CHECK(report.notes == std::vector<std::string>{fmt::format(
                            "skipped a chunk of unknown type 99 at byte {} (40 bytes; from a "
                            "newer causeway?)",
                            at)});
}

TEST_CASE("a lost strings chunk is reported and its strings read as ?str#ID") {
  TempDir dir("cw-tracer-test");
  write_trace(parse(kSample), dir.file("l.cwt"));
  std::string bytes = slurp(dir.file("l.cwt"));
  std::vector<ChunkInfo> chunks = walk_chunks(bytes);
  auto strings = std::find_if(chunks.begin(), chunks.end(), [](const ChunkInfo& c) {
    return c.type == static_cast<uint32_t>(bf::ChunkType::Strings);
  });
  REQUIRE(strings != chunks.end());
  bytes[strings->offset + bf::kChunkHeaderSize + 9] ^= 0x55;
  Trace out;
  ReadReport report = read_trace_bytes(bytes, out, "l.cwt");
  REQUIRE(report.skipped.size() == 1);
  CHECK(report.skipped[0].offset == strings->offset);
  CHECK(report.skipped[0].size == strings->end - strings->offset);
  CHECK(report.skipped[0].reason == "checksum mismatch in strings chunk");
  REQUIRE(out.events.size() == 5);
  const Event& futex = out.events[1];
  CHECK(out.strings.get(static_cast<StrId>(out.value(futex, 0))).substr(0, 5) == "?str#");
  CHECK(std::find_if(report.notes.begin(), report.notes.end(), [](const std::string& n) {
          return n.find("strings were lost with their chunks; they read as ?str#ID") !=
                 std::string::npos;
        }) != report.notes.end());
}

// ---- robustness: damaged files lose only their damaged chunks ----

struct Robustness {
  std::string bytes;
  Trace original;
  std::vector<ChunkInfo> chunks;
  std::vector<size_t> first_event;  // per chunk: index of its first event in `original`
  std::map<uint64_t, size_t> by_ts;

  explicit Robustness(TraceCompression compression) {
    TempDir dir("cw-tracer-test");
    original = write_streamed(dir.file("r.cwt"), 13, 12, 60, compression);
    bytes = slurp(dir.file("r.cwt"));
    chunks = walk_chunks(bytes);
    // The damage below must hit compressed chunks when there are to be some.
    const bool any_compressed = std::any_of(chunks.begin(), chunks.end(), [](const ChunkInfo& c) {
      return (c.type & bf::kCompressedFlag) != 0 && c.events > 0;
    });
    REQUIRE(any_compressed == (compression == TraceCompression::Zstd));
    size_t next = 0;
    for (const auto& c : chunks) {
      first_event.push_back(next);
      next += c.events;
    }
    REQUIRE(next == original.events.size());
  }

  // Reads `damaged`; checks that every event of every events chunk for which `intact`
  // holds was kept, and no other. False when the reader refused the file.
  template <typename Intact>
  bool check(const std::string& damaged, Intact&& intact, ReadReport& report) {
    Trace out;
    try {
      report = read_trace_bytes(damaged, out, "damaged");
    } catch (const TraceFormatError&) {
      return false;
    }
    std::map<uint64_t, size_t> read_ts;
    for (size_t i = 0; i < out.events.size(); ++i) read_ts[out.events[i].ts] = i;
    size_t expected = 0, mismatches = 0;
    for (size_t c = 0; c < chunks.size(); ++c) {
      if (chunks[c].events == 0 || !intact(chunks[c])) continue;
      expected += chunks[c].events;
      for (size_t i = first_event[c]; i < first_event[c] + chunks[c].events; ++i)
        mismatches += !same_event(original.events[i], out, read_ts);
    }
    CHECK(mismatches == 0);
    CHECK(out.events.size() == expected);
    CHECK(report.events_read == expected);
    return true;
  }

  bool same_event(const Event& e, const Trace& out, const std::map<uint64_t, size_t>& read_ts) {
    auto it = read_ts.find(e.ts);
    if (it == read_ts.end()) return false;
    const Event& r = out.events[it->second];
    const KindDef& kind = original.schema.kind(e.kind);
    if (r.tid != e.tid || r.cpu != e.cpu || out.schema.kind(r.kind).name != kind.name) return false;
    for (size_t f = 0; f < kind.fields.size(); ++f) {
      uint64_t a = original.value(e, static_cast<int>(f)), b = out.value(r, static_cast<int>(f));
      if (kind.fields[f].type != FieldType::Str) {
        if (a != b) return false;
        continue;
      }
      std::string_view got = out.strings.get(static_cast<StrId>(b));
      if (got != original.strings.get(static_cast<StrId>(a)) && got.substr(0, 5) != "?str#")
        return false;
    }
    if (r.stack == 0) return true;  // its stacks chunk may be lost
    const Stack &want = original.stacks[e.stack], &got = out.stacks[r.stack];
    return want.ips == got.ips;
  }
};

void check_truncations(TraceCompression compression) {
  Robustness r(compression);
  std::vector<uint64_t> cuts;
  for (const auto& c : r.chunks)
    for (int d = -3; d <= 3; ++d) cuts.push_back(c.offset + static_cast<uint64_t>(d));
  for (uint64_t cut = 0; cut < r.bytes.size(); cut += 61) cuts.push_back(cut);
  for (uint64_t cut : cuts) {
    if (cut > r.bytes.size()) continue;
    CAPTURE(cut);
    ReadReport report;
    bool read = r.check(
        r.bytes.substr(0, cut), [&](const ChunkInfo& c) { return c.end <= cut; }, report);
    CHECK(read == (cut >= bf::kHeaderSize));  // only a cut header is refused
    if (!read) continue;
    bool at_boundary =
        cut == bf::kHeaderSize || std::any_of(r.chunks.begin(), r.chunks.end(),
                                              [&](const ChunkInfo& c) { return c.end == cut; });
    if (at_boundary) {
      CHECK(report.clean());
    } else {
      REQUIRE(report.skipped.size() == 1);
      CHECK(report.skipped[0].offset + report.skipped[0].size == cut);
      CHECK(report.skipped[0].reason.find("truncated") == 0);
    }
    bool complete = cut == r.bytes.size();
    CHECK(complete == (std::find(report.notes.begin(), report.notes.end(),
                                 "no end chunk: the recording did not finish, or the file was "
                                 "cut short") == report.notes.end()));
  }
}

void check_corruptions(TraceCompression compression) {
  Robustness r(compression);
  std::vector<uint64_t> offsets;
  for (uint64_t o = 0; o < bf::kHeaderSize; ++o) offsets.push_back(o);
  for (const auto& c : r.chunks)
    for (int d = -3; d < static_cast<int>(bf::kChunkHeaderSize) + 3; ++d)
      offsets.push_back(c.offset + static_cast<uint64_t>(d));
  for (uint64_t o = 0; o < r.bytes.size(); o += 53) offsets.push_back(o);
  for (uint64_t at : offsets) {
    if (at >= r.bytes.size()) continue;
    CAPTURE(at);
    std::string damaged = r.bytes;
    damaged[at] = static_cast<char>(damaged[at] ^ 0xff);
    ReadReport report;
    bool read = r.check(
        damaged, [&](const ChunkInfo& c) { return at < c.offset || at >= c.end; }, report);
    if (!read) {
      CHECK(at < 16);  // magic or major version: the header is damaged
      continue;
    }
    if (at < bf::kHeaderSize) continue;
    const ChunkInfo& hit = *std::find_if(r.chunks.begin(), r.chunks.end(),
                                         [&](const ChunkInfo& c) { return at < c.end; });
    bool skipped =
        std::any_of(report.skipped.begin(), report.skipped.end(), [&](const SkippedRange& s) {
          return s.offset == hit.offset && s.offset + s.size >= hit.end;
        });
    // The type field is outside the checksum: a damaged type reads as an unknown chunk.
    bool noted = std::any_of(report.notes.begin(), report.notes.end(), [&](const std::string& n) {
      return n.find(fmt::format("at byte {} ", hit.offset)) != std::string::npos;
    });
    CHECK((skipped || (noted && at >= hit.offset + 4 && at < hit.offset + 8)));
  }
}

TEST_CASE("a truncated trace keeps every whole chunk and reports where it was cut") {
  check_truncations(TraceCompression::None);
}

TEST_CASE("a truncated compressed trace keeps every whole chunk and reports where it was cut") {
  check_truncations(TraceCompression::Zstd);
}

TEST_CASE("a corrupted trace keeps every intact chunk and reports each damaged one") {
  check_corruptions(TraceCompression::None);
}

TEST_CASE("a corrupted compressed trace keeps every intact chunk and reports each damaged one") {
  check_corruptions(TraceCompression::Zstd);
}

// ---- compression ----

TEST_CASE("compressed and uncompressed traces read back the same; none writes format 1.2") {
  TempDir dir("cw-tracer-test");
  // 100 events per chunk over 40 rounds: more compressed chunks than the reader looks
  // ahead, so decompressed chunks are taken from the workers in order.
  Trace t = write_streamed(dir.file("z.cwt"), 100, 40, 500, TraceCompression::Zstd);
  write_streamed(dir.file("p.cwt"), 100, 40, 500, TraceCompression::None);
  const std::string z = slurp(dir.file("z.cwt")), p = slurp(dir.file("p.cwt"));
  std::vector<ChunkInfo> zc = walk_chunks(z), pc = walk_chunks(p);
  auto compressed = [](const ChunkInfo& c) { return (c.type & bf::kCompressedFlag) != 0; };
  CHECK(std::count_if(zc.begin(), zc.end(), compressed) >= 200);
  CHECK(std::none_of(pc.begin(), pc.end(), compressed));
  CHECK(z.size() * 2 < p.size());
  uint32_t zv[2], pv[2];
  std::memcpy(zv, z.data() + 8, 8);
  std::memcpy(pv, p.data() + 8, 8);
  CHECK((zv[0] == 2 && zv[1] == 0));
  CHECK((pv[0] == 1 && pv[1] == 2));
  for (const std::string* bytes : {&z, &p}) {
    Trace back;
    ReadReport report = read_trace_bytes(*bytes, back, "x.cwt");
    CHECK(report.clean());
    CHECK(report.notes.empty());
    CHECK(report.events_read == 20000);
    CHECK(canonical(back) == canonical(t));
  }
  // Every level writes what reads back.
  for (int level : {1, 19}) {
    TraceWriterOptions options;
    options.level = level;
    write_trace(t, dir.file("l.cwt"), options);
    Trace back;
    CHECK(read_trace(dir.file("l.cwt"), back).clean());
    CHECK(canonical(back) == canonical(t));
  }
}

TEST_CASE("compression options parse from none, zstd and zstd=LEVEL") {
  TraceWriterOptions o;
  std::string why;
  CHECK(parse_trace_compression("none", o, &why));
  CHECK(o.compression == TraceCompression::None);
  CHECK(parse_trace_compression("zstd=9", o, &why));
  CHECK(o.compression == TraceCompression::Zstd);
  CHECK(o.level == 9);
  CHECK(parse_trace_compression("zstd", o, &why));
  CHECK(o.level == 3);
  for (const char* bad : {"zstd=0", "zstd=23", "zstd=", "zstd=3x", "gzip", "zstd=-1"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_trace_compression(bad, o, &why));
  }
  CHECK(why == "'zstd=-1': the zstd level is a whole number from 1 to 22");
  parse_trace_compression("gzip", o, &why);
  CHECK(why == "'gzip': expected none, zstd or zstd=LEVEL");
}

// A compressed events chunk of a streamed trace, and the file around it.
struct CompressedChunk {
  std::string bytes;
  Trace original;
  ChunkInfo chunk;
  CompressedChunk() {
    TempDir dir("cw-tracer-test");
    original = write_streamed(dir.file("c.cwt"), 50, 4, 200);
    bytes = slurp(dir.file("c.cwt"));
    std::vector<ChunkInfo> chunks = walk_chunks(bytes);
    auto it = std::find_if(chunks.begin(), chunks.end(), [](const ChunkInfo& c) {
      return c.type == (static_cast<uint32_t>(bf::ChunkType::Events) | bf::kCompressedFlag);
    });
    REQUIRE(it != chunks.end());
    chunk = *it;
  }
  uint64_t payload() const { return chunk.offset + bf::kChunkHeaderSize; }
  // Recomputes the chunk's checksum, as a crafted file would have it.
  void fix_checksum() {
    uint64_t hash = XXH3_64bits(bytes.data() + payload(), chunk.end - payload());
    std::memcpy(bytes.data() + chunk.offset + 16, &hash, 8);
  }
  // Reads the damaged bytes: the one chunk is skipped with `reason`, every other event kept.
  void expect_only_chunk_lost(const std::string& reason) {
    Trace back;
    ReadReport report = read_trace_bytes(bytes, back, "c.cwt");
    REQUIRE(report.skipped.size() == 1);
    CHECK(report.skipped[0].offset == chunk.offset);
    CHECK(report.skipped[0].size == chunk.end - chunk.offset);
    CHECK(report.skipped[0].reason == reason);
    CHECK(back.events.size() == original.events.size() - chunk.events);
  }
};

TEST_CASE("a damaged compressed chunk fails its checksum (taken over the stored bytes)") {
  CompressedChunk c;
  c.bytes[c.chunk.end - 20] ^= 0x10;  // inside the zstd frame
  c.expect_only_chunk_lost("checksum mismatch in compressed events chunk");
}

TEST_CASE("a compressed chunk that does not decompress is skipped, naming zstd's reason") {
  CompressedChunk c;
  // Past the checksum (recomputed): the frame's own header is damaged.
  c.bytes[c.payload() + bf::kCompressedHeaderSize + 16] ^= 0xff;  // the frame's magic
  c.fix_checksum();
  c.expect_only_chunk_lost("malformed compressed events chunk: zstd: Unknown frame descriptor");
}

TEST_CASE("an absurd declared size is refused before anything is allocated") {
  CompressedChunk c;
  uint64_t huge = 1ull << 40;  // a decompression bomb's claim: 1 TiB
  std::memcpy(c.bytes.data() + c.payload() + 8, &huge, 8);
  c.fix_checksum();
  c.expect_only_chunk_lost(
      "malformed compressed events chunk: declares 1099511627776 bytes once decompressed, more "
      "than a chunk may hold (67108864 bytes)");
}

TEST_CASE("a declared size that differs from the zstd frame's is refused") {
  CompressedChunk c;
  uint64_t declared;
  std::memcpy(&declared, c.bytes.data() + c.payload() + 8, 8);
  const uint64_t larger = declared + 8;
  std::memcpy(c.bytes.data() + c.payload() + 8, &larger, 8);
  c.fix_checksum();
  c.expect_only_chunk_lost(fmt::format(
      "malformed compressed events chunk: the zstd frame holds {} bytes, the chunk declares {}",
      declared - 16, larger - 16));
}

TEST_CASE("an unknown codec is refused, naming it") {
  CompressedChunk c;
  uint32_t codec = 7;
  std::memcpy(c.bytes.data() + c.payload(), &codec, 4);
  c.fix_checksum();
  c.expect_only_chunk_lost("malformed compressed events chunk: unknown compression codec 7");
}

// Sets an environment variable for one test case, and puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST_CASE("what a trace may decompress to: 64 times its size, at least 64 MiB, at most 16 GiB") {
  {
    ScopedEnv env("CAUSEWAY_MAX_DECOMPRESSED", nullptr);
    CHECK(decompression_limit(0) == bf::kMaxCompressedPayload);
    CHECK(decompression_limit(90000) == bf::kMaxCompressedPayload);
    CHECK(decompression_limit(10u << 20) == 640u << 20);
    CHECK(decompression_limit(uint64_t{1} << 30) == uint64_t{16} << 30);
    CHECK(decompression_limit(UINT64_MAX) == uint64_t{16} << 30);
  }
  {
    // The user's own limit replaces both bounds.
    ScopedEnv env("CAUSEWAY_MAX_DECOMPRESSED", "32G");
    CHECK(decompression_limit(90000) == uint64_t{32} << 30);
  }
  {
    ScopedEnv env("CAUSEWAY_MAX_DECOMPRESSED", "4096");
    CHECK(decompression_limit(uint64_t{1} << 30) == 4096);
  }
  for (const char* bad : {"lots", "5X", "-1", "16777216T", "2 G"}) {
    CAPTURE(bad);
    ScopedEnv env("CAUSEWAY_MAX_DECOMPRESSED", bad);
    CHECK_THROWS_AS(decompression_limit(1000), TraceFormatError);
  }
  ScopedEnv env("CAUSEWAY_MAX_DECOMPRESSED", "5X");
  CHECK_THROWS_WITH(decompression_limit(1000),
                    "CAUSEWAY_MAX_DECOMPRESSED='5X': expected a size in bytes, or with a K, M, G "
                    "or T suffix (like 32G)");
}

// Each compressed chunk is capped (64 MiB); a file of many small chunks at that cap would
// take thousands of times its size without a total (tests/hostile/traces.t has such a file).
TEST_CASE("past the limit on a file's decompressed total, the chunk and the rest are skipped") {
  TempDir dir("cw-tracer-test");
  write_streamed(dir.file("c.cwt"), 50, 4, 200);
  const std::string bytes = slurp(dir.file("c.cwt"));
  const std::vector<ChunkInfo> chunks = walk_chunks(bytes);
  // The limit lets the first three compressed chunks through, not the fourth.
  uint64_t total = 0, limit = 0, events_before = 0;
  size_t seen = 0;
  std::optional<ChunkInfo> stop;
  size_t ordinal = 0;
  for (const ChunkInfo& c : chunks) {
    ++ordinal;
    if (!(c.type & bf::kCompressedFlag)) {
      events_before += c.events;
      continue;
    }
    uint64_t declared;
    std::memcpy(&declared, bytes.data() + c.offset + bf::kChunkHeaderSize + 8, 8);
    if (++seen == 4) {
      limit = total + declared - 1;
      total += declared;
      stop = c;
      break;
    }
    total += declared;
    events_before += c.events;
  }
  REQUIRE(stop);
  const std::string limit_text = std::to_string(limit);
  ScopedEnv env("CAUSEWAY_MAX_DECOMPRESSED", limit_text.c_str());
  Trace back;
  ReadReport report = read_trace_bytes(bytes, back, "c.cwt");
  REQUIRE(report.skipped.size() == 1);
  CHECK(report.skipped[0].offset == stop->offset);
  CHECK(report.skipped[0].size == bytes.size() - stop->offset);
  std::string type(describe_type(stop->type));
  CHECK(report.skipped[0].reason ==
        fmt::format("chunk {} of the file (compressed {} chunk) would take the trace's "
                    "decompressed total to {} bytes, past the limit of {} bytes (as "
                    "CAUSEWAY_MAX_DECOMPRESSED sets): the chunks before it are kept, it and the "
                    "rest of the file are not read",
                    ordinal, type, total, limit));
  CHECK(back.events.size() == events_before);
  CHECK(report.events_read == events_before);
  // Not cut short: the end chunk is there, unread.
  CHECK(std::none_of(report.notes.begin(), report.notes.end(),
                     [](const std::string& n) { return n.starts_with("no end chunk"); }));
}

// A trace with thread 7 in process 5, then (a later append: a chunk of its own) in process 9.
std::string thread_moved(const std::string& path, bool with_fork) {
  Trace t;
  TraceWriter writer(path, t.schema);
  t.processes = {{5, 1, t.strings.intern("five"), 0}, {9, 1, t.strings.intern("nine"), 0}};
  t.threads = {{5, 5, 0, false}, {7, 5, t.strings.intern("seven"), false}, {9, 9, 0, false}};
  t.add_event(1000, 7, t.schema.find("marker"));
  writer.append(t);
  const size_t from = t.events.size();
  t.threads.push_back({7, 9, t.strings.intern("seven"), false});
  if (with_fork) {
    const KindId fork = t.schema.find("fork");
    const Event& e = t.add_event(2000, 9, fork);
    t.value_ref(e, t.schema.field_index(fork, "child")) = 7;
    t.value_ref(e, t.schema.field_index(fork, "child_pid")) = 9;
  }
  t.add_event(3000, 7, t.schema.find("marker"));
  writer.append(t, from);
  writer.close();
  return slurp(path);
}

// The text form refuses the same (text_format_test.cc): which process a thread's events
// belong to decides where a root cause is reported.
TEST_CASE(
    "a thread put in another process with no fork making it so is refused, naming the record") {
  TempDir dir("cw-tracer-test");
  const std::string bytes = thread_moved(dir.file("m.cwt"), false);
  std::vector<ChunkInfo> threads;
  for (const ChunkInfo& c : walk_chunks(bytes))
    if (c.type == static_cast<uint32_t>(bf::ChunkType::Threads)) threads.push_back(c);
  REQUIRE(threads.size() == 2);
  Trace back;
  CHECK_THROWS_WITH_AS(
      read_trace_bytes(bytes, back, "m.cwt"),
      fmt::format("m.cwt: threads chunk at byte {}, record 0 (byte {}): thread 7 is declared in "
                  "process 9 after process 5, and no fork event creates it there (a trace puts "
                  "a thread in one process)",
                  threads[1].offset, threads[1].offset + bf::kChunkHeaderSize + 4)
          .c_str(),
      TraceFormatError);
  // Its id reused by a new thread, as a fork event records: read, the last entry holding.
  Trace reused;
  CHECK(read_trace_bytes(thread_moved(dir.file("f.cwt"), true), reused, "f.cwt").clean());
  CHECK(reused.pid_of(7) == 9);
}

}  // namespace
}  // namespace cw
