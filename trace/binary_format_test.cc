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

#include "base/temp_dir.h"
#include "trace/binary_format_test_support.h"
#include "trace/text_format.h"

namespace cw {
namespace {

namespace fs = std::filesystem;
namespace bf = binary_format;

using namespace bf::testing;

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

TEST_CASE("events whose values are not back to back in event order are written whole") {
  // The writer copies values in one piece when each event's follow the one before's; a
  // trace reordered or thinned after it was built does not, and must read back the same.
  TempDir dir("cw-tracer-test");
  Trace t = parse(kSample);
  Trace reordered = t;
  std::vector<Event> order = std::move(reordered.events).take();
  std::swap(order.front(), order.back());  // distinct times: the reader sorts them back
  reordered.events.assign(order.begin(), order.end());
  write_trace(reordered, dir.file("r.cwt"));
  Trace back;
  CHECK(read_trace(dir.file("r.cwt"), back).clean());
  CHECK(canonical(back) == canonical(t));

  Trace thinned = t;  // the syscall_enter's values left behind, unused
  std::vector<Event> kept = std::move(thinned.events).take();
  kept.erase(kept.begin() + 1);
  thinned.events.assign(kept.begin(), kept.end());
  write_trace(thinned, dir.file("g.cwt"));
  Trace back_thinned;
  CHECK(read_trace(dir.file("g.cwt"), back_thinned).clean());
  REQUIRE(back_thinned.events.size() == 4);
  CHECK(canonical(back_thinned) == canonical(thinned));
  CHECK(canonical(back_thinned).find("futex") == std::string::npos);
  CHECK(canonical(back_thinned).find("target=101") != std::string::npos);
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
  uint32_t version[2] = {4, 0};
  std::memcpy(bytes.data() + 8, version, 8);
  spit(dir.file("v3.cwt"), bytes);
  Trace out;
  CHECK_THROWS_WITH_AS(
      read_trace(dir.file("v3.cwt"), out),
      (dir.file("v3.cwt") + ": trace format version 4.0 is newer than this causeway reads (up to "
                            "3.x); upgrade causeway")
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
        "written by a newer causeway (format 3.3); parts it added may be skipped");
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
