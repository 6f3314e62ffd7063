#include "trace/ring.h"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/temp_dir.h"

namespace cw {
namespace {

namespace fs = std::filesystem;
namespace bf = binary_format;

std::vector<std::string> ring_files(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.starts_with("ring-") && name.ends_with(".cwt")) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

uint64_t ring_bytes_on_disk(const std::string& dir) {
  uint64_t n = 0;
  for (const std::string& name : ring_files(dir)) n += fs::file_size(fs::path(dir) / name);
  return n;
}

mode_t mode_of(const std::string& path) {
  struct stat st;
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// The recorder's way of using the ring: one Trace whose metadata only grows and whose
// events are cleared after every append.
class Recorder {
 public:
  Recorder() {
    trace_.processes.push_back(ProcessInfo{100, 1, trace_.strings.intern("server"),
                                           trace_.strings.intern("/usr/bin/server")});
    for (Tid t = 0; t < 3; ++t)
      trace_.threads.push_back(
          ThreadInfo{101 + t, 100, trace_.strings.intern(fmt::format("worker-{}", t)), false});
    trace_.rebuild_indexes();
    trace_.lost.push_back(LostRecord{1, 12, 5});
  }

  // Events are 1 µs apart; every 1000th names a new syscall (new strings keep coming)
  // and carries a new stack (new stacks keep coming).
  void add_batch(size_t count) {
    KindId wakeup = trace_.schema.find("wakeup");
    KindId enter = trace_.schema.find("syscall_enter");
    int name_field = trace_.schema.field_index(enter, "name");
    for (size_t i = 0; i < count; ++i, ++next_) {
      Tid tid = 101 + static_cast<Tid>(next_ % 3);
      uint64_t ts = 1000 + next_ * 1000;
      if (next_ % 1000 == 0) {
        StackId stack = trace_.add_stack(Stack{{0x1000 + next_, 0x2000}, {}});
        const Event& e = trace_.add_event(ts, tid, enter, 0, stack);
        trace_.value_ref(e, name_field) = trace_.strings.intern(fmt::format("call{}", next_));
      } else {
        const Event& e = trace_.add_event(ts, tid, wakeup, 1);
        trace_.value_ref(e, 0) = 101 + (next_ + 1) % 3;
      }
    }
  }

  void append_to(RingWriter& ring) {
    ring.append(trace_, 0);
    trace_.events.clear();
    trace_.values.clear();
  }

  const Trace& trace() const { return trace_; }
  uint64_t last_ts() const { return 1000 + (next_ - 1) * 1000; }

 private:
  Trace trace_;
  uint64_t next_ = 0;
};

constexpr uint64_t kMiB = 1 << 20;

// The tests' bounds are sized for uncompressed files (the synthetic events compress
// ~20-fold); "a compressed ring ..." below checks the default.
RingOptions plain_ring(const std::string& dir) {
  RingOptions options{dir, kMiB, 4};
  options.writer.compression = TraceCompression::None;
  return options;
}

// 200 appends of 1000 events into a 1 MiB ring of 4 files.
struct FilledRing {
  TempDir tmp{"cw-ring-test"};
  std::string dir = tmp.file("ring");
  Recorder recorder;
  RingStats stats;

  FilledRing() {
    RingWriter ring(plain_ring(dir));
    for (int batch = 0; batch < 200; ++batch) {
      recorder.add_batch(1000);
      recorder.append_to(ring);
      RingStats now = ring.stats();
      // The bound holds after every append, and the stats agree with the disk.
      REQUIRE(now.bytes <= kMiB);
      REQUIRE(now.bytes == ring_bytes_on_disk(dir));
    }
    ring.close();
    stats = ring.stats();
  }
};

TEST_CASE("the ring keeps the newest events within its byte bound and drops the oldest") {
  FilledRing ring;
  CHECK(ring.stats.events_written == 200000);
  CHECK(ring.stats.events_overwritten > 0);
  CHECK(ring.stats.bytes <= kMiB);
  CHECK(ring.stats.bytes == ring_bytes_on_disk(ring.dir));
  CHECK(ring.stats.files == ring_files(ring.dir).size());
  CHECK(ring.stats.files <= 4);
  CHECK(ring.stats.newest_ts == ring.recorder.last_ts());

  Trace out;
  ReadReport report = read_ring(ring.dir, out);
  CHECK(report.clean());
  REQUIRE(!out.events.empty());
  CHECK(ring.stats.events_overwritten + out.events.size() == ring.stats.events_written);
  CHECK(report.events_read == out.events.size());
  CHECK(out.events.back().ts == ring.recorder.last_ts());
  CHECK(out.events.front().ts == ring.stats.oldest_ts);
  // Nothing is missing between the oldest kept event and the newest.
  CHECK((out.events.back().ts - out.events.front().ts) / 1000 + 1 == out.events.size());
  CHECK(std::is_sorted(out.events.begin(), out.events.end(),
                       [](const Event& a, const Event& b) { return a.ts < b.ts; }));
  for (Tid t = 0; t < 3; ++t) {
    const ThreadInfo* thread = out.thread(101 + t);
    REQUIRE(thread != nullptr);
    CHECK(out.strings.get(thread->comm) == fmt::format("worker-{}", t));
  }
  CHECK(out.threads.size() == 3);
  CHECK(out.processes.size() == 1);
  // Each file repeats the metadata; the merged trace holds it once.
  CHECK(out.lost.size() == 1);
  CHECK(out.stacks.size() == ring.recorder.trace().stacks.size());
  // A syscall's name and stack survive the merge.
  KindId enter = out.schema.find("syscall_enter");
  auto e = std::find_if(out.events.begin(), out.events.end(),
                        [&](const Event& ev) { return ev.kind == enter; });
  REQUIRE(e != out.events.end());
  uint64_t n = (e->ts - 1000) / 1000;
  CHECK(out.strings.get(static_cast<StrId>(out.value(*e, 0))) == fmt::format("call{}", n));
  CHECK(out.stacks[e->stack].ips == std::vector<uint64_t>{0x1000 + n, 0x2000});

  uint64_t dropped_newest = out.events.front().ts - 1000;
  std::vector<std::string> expected_notes = {fmt::format(
      "ring dropped {} older events (up to {:.3f} s) in {} files to stay within 1 MiB",
      ring.stats.events_overwritten, static_cast<double>(dropped_newest) / 1e9,
      // Generations count from 0, so the oldest kept one is the number of files dropped.
      std::stoull(ring_files(ring.dir).front().substr(5, 10)))};
  CHECK(report.notes == expected_notes);
}

TEST_CASE("a compressed ring (the default) rotates within its bound and reads back whole") {
  TempDir tmp("cw-ring-test");
  const std::string dir = tmp.file("ring");
  Recorder recorder;
  constexpr uint64_t kBound = 32 << 10;
  RingWriter ring(RingOptions{dir, kBound, 4});
  for (int batch = 0; batch < 200; ++batch) {
    recorder.add_batch(1000);
    recorder.append_to(ring);
    REQUIRE(ring.stats().bytes <= kBound);
    REQUIRE(ring.stats().bytes == ring_bytes_on_disk(dir));
  }
  ring.close();
  const RingStats stats = ring.stats();
  CHECK(stats.events_overwritten > 0);
  Trace out;
  ReadReport report = read_ring(dir, out);
  CHECK(report.clean());
  CHECK(report.major == bf::kMajor);
  REQUIRE(!out.events.empty());
  CHECK(stats.events_overwritten + out.events.size() == stats.events_written);
  CHECK((out.events.back().ts - out.events.front().ts) / 1000 + 1 == out.events.size());
}

TEST_CASE("reading only the newest ring file gives named threads") {
  FilledRing ring;
  std::vector<std::string> files = ring_files(ring.dir);
  REQUIRE(files.size() >= 2);
  CHECK(files.front() != "ring-0000000000.cwt");  // the first files were reused
  Trace out;
  ReadReport report = read_trace(ring.tmp.file("ring/" + files.back()), out);
  CHECK(report.clean());
  REQUIRE(!out.events.empty());
  for (const Event& e : out.events) {
    const ThreadInfo* thread = out.thread(e.tid);
    REQUIRE(thread != nullptr);
    CHECK(out.strings.get(thread->comm).starts_with("worker-"));
  }
  CHECK(out.strings.get(out.process(100)->exe) == "/usr/bin/server");
  CHECK(out.lost.size() == 1);
}

TEST_CASE("ring files are 0600 and a ring directory it creates is 0700") {
  TempDir tmp("cw-ring-test");
  std::string dir = tmp.file("nested/ring");
  RingWriter ring(plain_ring(dir));
  Recorder recorder;
  recorder.add_batch(10);
  recorder.append_to(ring);
  ring.close();
  CHECK(mode_of(dir) == 0700);
  std::vector<std::string> files = ring_files(dir);
  REQUIRE(files == std::vector<std::string>{"ring-0000000000.cwt"});
  CHECK(mode_of(dir + "/ring-0000000000.cwt") == 0600);
  CHECK(mode_of(dir + "/ring.state") == 0600);
}

// The offset of the last events chunk in a trace file, and its payload size.
std::pair<uint64_t, uint64_t> last_events_chunk(const std::string& bytes) {
  std::pair<uint64_t, uint64_t> found{0, 0};
  for (uint64_t pos = bf::kHeaderSize; pos + bf::kChunkHeaderSize <= bytes.size();) {
    uint32_t type;
    uint64_t size;
    std::memcpy(&type, bytes.data() + pos + 4, 4);
    std::memcpy(&size, bytes.data() + pos + 8, 8);
    if (type == static_cast<uint32_t>(bf::ChunkType::Events)) found = {pos, size};
    pos += bf::kChunkHeaderSize + size;
  }
  return found;
}

TEST_CASE("a ring whose newest file was cut short reads the older files and reports the cut") {
  FilledRing ring;
  std::vector<std::string> files = ring_files(ring.dir);
  std::string newest = ring.dir + "/" + files.back();
  std::string bytes;
  {
    std::ifstream in(newest, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    bytes = ss.str();
  }
  auto [chunk, payload] = last_events_chunk(bytes);
  REQUIRE(chunk > 0);
  // A crash while the events chunk was being written: it ends halfway through.
  uint64_t cut = chunk + bf::kChunkHeaderSize + payload / 2;
  fs::resize_file(newest, cut);

  Trace whole;
  {
    FilledRing again;  // the same recording, untouched, to compare against
    read_ring(again.dir, whole);
  }
  Trace out;
  ReadReport report = read_ring(ring.dir, out);
  REQUIRE(report.skipped.size() == 1);
  CHECK(report.skipped[0].offset == chunk);
  CHECK(report.skipped[0].size == cut - chunk);
  CHECK(report.skipped[0].reason ==
        fmt::format("{}: truncated events chunk (needs {} bytes, {} left)", newest, payload,
                    payload / 2));
  CHECK(std::find(report.notes.begin(), report.notes.end(),
                  fmt::format("{}: no end chunk: the recording did not finish, or the file was "
                              "cut short",
                              newest)) != report.notes.end());
  // Only the cut chunk's events are lost; everything older is there.
  uint64_t lost_events = 0;
  std::memcpy(&lost_events, bytes.data() + chunk + bf::kChunkHeaderSize, 8);
  CHECK(out.events.size() + lost_events == whole.events.size());
  CHECK(out.events.front().ts == whole.events.front().ts);
  CHECK(out.thread(101) != nullptr);
}

TEST_CASE("a reopened ring continues after its newest file and keeps counting what it drops") {
  TempDir tmp("cw-ring-test");
  std::string dir = tmp.file("ring");
  Recorder recorder;
  uint64_t first_overwritten = 0;  // what the first writer dropped (its files fill the ring)
  {
    RingWriter ring(plain_ring(dir));
    for (int batch = 0; batch < 20; ++batch) {
      recorder.add_batch(1000);
      recorder.append_to(ring);
    }
    first_overwritten = ring.stats().events_overwritten;
    // No close: the destructor ends the file, as after an orderly stop.
  }
  std::vector<std::string> before = ring_files(dir);
  RingWriter ring(plain_ring(dir));
  REQUIRE(before.size() == 4);
  // The oldest file made room for the new one, whose generation follows the newest.
  std::vector<std::string> after = ring_files(dir);
  CHECK(after.front() == before[1]);
  CHECK(after.back() == ring_file_name(std::stoull(before.back().substr(5, 10)) + 1));
  CHECK(ring.stats().files == 4);
  CHECK(ring.stats().events_written == 0);
  for (int batch = 0; batch < 100; ++batch) {
    recorder.add_batch(1000);
    recorder.append_to(ring);
    REQUIRE(ring.stats().bytes <= kMiB);
  }
  ring.close();
  RingStats stats = ring.stats();
  Trace out;
  ReadReport report = read_ring(dir, out);
  CHECK(report.clean());
  CHECK(out.events.back().ts == recorder.last_ts());
  // Everything written by both writers is either kept or counted as dropped; the ring's
  // note counts the drops of both.
  CHECK(out.events.size() + first_overwritten + stats.events_overwritten ==
        20000 + stats.events_written);
  REQUIRE(report.notes.size() == 1);
  CHECK(report.notes[0].starts_with(
      fmt::format("ring dropped {} older events", first_overwritten + stats.events_overwritten)));
}

TEST_CASE("a second writer on the same ring is refused") {
  TempDir tmp("cw-ring-test");
  std::string dir = tmp.file("ring");
  RingWriter first(plain_ring(dir));
  try {
    RingWriter second(plain_ring(dir));
    FAIL("the second writer opened the ring");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == dir + ": another causeway recorder is writing this ring");
  }
}

TEST_CASE("a ring directory that cannot be created names its path") {
  TempDir tmp("cw-ring-test");
  std::ofstream(tmp.file("plain")) << "not a directory";
  std::string dir = tmp.file("plain/ring");
  try {
    RingWriter ring(plain_ring(dir));
    FAIL("the ring opened under a file");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == dir + ": cannot create the ring directory: Not a directory");
  }
}

TEST_CASE("read_ring refuses a directory without ring files, naming it") {
  TempDir tmp("cw-ring-test");
  std::ofstream(tmp.file("notes.txt")) << "hello";
  Trace out;
  CHECK_THROWS_WITH_AS(
      read_ring(tmp.path(), out),
      (tmp.path() + ": not a ring: no ring files (ring-<generation>.cwt) in the directory").c_str(),
      TraceFormatError);
  std::string missing = tmp.file("missing");
  CHECK_THROWS_WITH_AS(
      read_ring(missing, out),
      (missing + ": cannot read the ring directory: No such file or directory").c_str(),
      TraceFormatError);
}

TEST_CASE("read_ring skips a ring file that is not a trace, naming it") {
  TempDir tmp("cw-ring-test");
  std::string dir = tmp.file("ring");
  {
    RingWriter ring(plain_ring(dir));
    Recorder recorder;
    recorder.add_batch(100);
    recorder.append_to(ring);
  }
  std::ofstream(dir + "/ring-0000000001.cwt") << "garbage!";
  Trace out;
  ReadReport report = read_ring(dir, out);
  CHECK(out.events.size() == 100);
  REQUIRE(report.skipped.size() == 1);
  CHECK(report.skipped[0].offset == 0);
  CHECK(report.skipped[0].size == 8);
  CHECK(report.skipped[0].reason ==
        dir + "/ring-0000000001.cwt: not a causeway trace (no CWTRACE header)");
}

}  // namespace
}  // namespace cw
