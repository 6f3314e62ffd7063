// The event log written by this process's hooks, read back by HookLogReader: events with
// CLOCK_MONOTONIC times, per thread and in order, read while being written; notes; lost
// events when the file is full; bad files reported.
#include "instrument/hook/event_log.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>
#include <vector>

#include "base/temp_dir.h"
#include "instrument/hook/elf_symbols.h"
#include "instrument/hook/event_sink.h"
#include "instrument/hook/hook_log_reader.h"
#include "instrument/hook/inline_hook.h"
#include "instrument/hook/log_format.h"

extern "C" int shape_frame(int);

using namespace cw::hook;

namespace {

uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

Hooked hook_shape_frame(uint32_t index) {
  FoundFunction found;
  REQUIRE(find_function("shape_frame", nullptr, &found) == Lookup::kFound);
  std::string refusal;
  auto hooked = install_hook({reinterpret_cast<void*>(found.address), found.size, index}, &refusal);
  REQUIRE_MESSAGE(hooked, refusal);
  return *hooked;
}

// Events in a 4096-byte chunk.
constexpr size_t kPerChunk =
    (4096 - cw::hook::log::kChunkHeaderBytes) / sizeof(cw::hook::log::Event);

void open_log(const cw::TempDir& dir, uint64_t file_bytes = uint64_t{64} << 20,
              uint32_t chunk_bytes = 64 << 10) {
  EventLogOptions options;
  options.file_bytes = file_bytes;
  options.chunk_bytes = chunk_bytes;
  char reason[256] = {};
  REQUIRE_MESSAGE(open_event_log(dir.path().c_str(), options, reason, sizeof reason), reason);
}

}  // namespace

TEST_CASE("the TSC is the hook clock only with constant_tsc, nonstop_tsc and clocksource tsc") {
  cw::TempDir dir("cw-hook-clock");
  const std::string good_flags = "processor\t: 0\nflags\t\t: fpu constant_tsc nonstop_tsc sse\n";
  dir.write("cpuinfo", good_flags);
  dir.write("cpuinfo-old", "flags\t\t: fpu constant_tsc sse\n");
  dir.write("tsc", "tsc\n");
  dir.write("kvm", "kvm-clock\n");
  char reason[256] = {};
  CHECK_MESSAGE(
      tsc_usable_from(dir.path("cpuinfo").c_str(), dir.path("tsc").c_str(), reason, sizeof reason),
      reason);
  CHECK_FALSE(
      tsc_usable_from(dir.path("cpuinfo").c_str(), dir.path("kvm").c_str(), reason, sizeof reason));
  CHECK(std::string(reason) ==
        "the TSC cannot timestamp events here: the kernel's clocksource is not tsc");
  CHECK_FALSE(tsc_usable_from(dir.path("cpuinfo-old").c_str(), dir.path("tsc").c_str(), reason,
                              sizeof reason));
  CHECK(std::string(reason) ==
        "the TSC cannot timestamp events here: /proc/cpuinfo lacks constant_tsc or nonstop_tsc");
  // This machine: either answer is fine, the hooks use one clock or the other.
  const bool tsc = tsc_usable(reason, sizeof reason);
  MESSAGE("this machine: " << (tsc ? std::string("TSC") : std::string(reason)));
}

TEST_CASE("a log that cannot be created says where and why") {
  EventLogOptions options;
  char reason[256] = {};
  CHECK_FALSE(open_event_log("/nonexistent-dir", options, reason, sizeof reason));
  CHECK(std::string(reason) == "cannot create /nonexistent-dir/.hooks." + std::to_string(getpid()) +
                                   ".tmp: No such file or directory");
  options.file_bytes = 4096;
  cw::TempDir dir("cw-hook-log");
  CHECK_FALSE(open_event_log(dir.path().c_str(), options, reason, sizeof reason));
  CHECK(std::string(reason) == "bad hook log size: 4096 bytes in chunks of 65536");
}

// Both clocks, whatever the machine: the TSC (converted through the calibration, a few
// microseconds of error allowed) and CLOCK_MONOTONIC itself (exact: read between the
// readings around the calls).
static void round_trip(bool monotonic) {
  cw::TempDir dir("cw-hook-log");
  use_monotonic_clock(monotonic);
  open_log(dir);
  struct stat info {};
  const std::string path = dir.path("hooks." + std::to_string(getpid()));
  REQUIRE(stat(path.c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0600);

  Hooked hooked = hook_shape_frame(21);
  HookLogReader reader(dir.path());
  std::vector<HookEvent> events;
  auto sink = [&](const HookEvent& e) { events.push_back(e); };

  const uint64_t before = monotonic_ns();
  CHECK(shape_frame(1) == 5);
  const uint64_t between = monotonic_ns();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const uint64_t later = monotonic_ns();
  CHECK(shape_frame(2) == 10);
  const uint64_t after = monotonic_ns();
  // The first poll sees the four events already published.
  CHECK(reader.poll(sink) == 4);
  REQUIRE(events.size() == 4);
  const uint32_t tid = static_cast<uint32_t>(gettid());
  for (const HookEvent& e : events) {
    CHECK(e.pid == static_cast<uint32_t>(getpid()));
    CHECK(e.tid == tid);
    CHECK(e.fn_index == 21);
    CHECK(e.address == reinterpret_cast<uint64_t>(&shape_frame));
  }
  CHECK_FALSE(events[0].exit);
  CHECK(events[1].exit);
  // Times convert to CLOCK_MONOTONIC: within the clock readings around the calls.
  const uint64_t slack = monotonic ? 0 : 20000;
  std::ifstream file(path, std::ios::binary);
  cw::hook::log::Header header{};
  file.read(reinterpret_cast<char*>(&header), sizeof header);
  CHECK(header.clock == (monotonic ? cw::hook::log::kClockMonotonicNs : cw::hook::log::kClockTsc));
  auto notes = reader.take_notes();
  CHECK(notes.size() == (monotonic ? 1u : 0u));
  if (monotonic && !notes.empty()) CHECK(notes[0].text.rfind("clock: ", 0) == 0);
  CHECK(events[0].ts + slack >= before);
  CHECK(events[1].ts <= between + slack);
  CHECK(events[2].ts + slack >= later);
  CHECK(events[3].ts <= after + slack);
  CHECK(events[2].ts - events[1].ts >= 20000000);

  // Only what was appended since.
  std::thread other([] { CHECK(shape_frame(3) == 15); });
  other.join();
  events.clear();
  CHECK(reader.poll(sink) == 2);
  REQUIRE(events.size() == 2);
  CHECK(events[0].tid != tid);
  CHECK(events[0].tid == events[1].tid);
  CHECK(reader.poll(sink) == 0);
  CHECK(reader.lost() == 0);
  std::string error;
  CHECK(remove_hook(hooked, &error));
  use_monotonic_clock(false);
}

TEST_CASE("events round-trip with CLOCK_MONOTONIC times, per thread, while being written") {
  SUBCASE("stamped with the TSC") {
    round_trip(false);
  }
  SUBCASE("stamped with CLOCK_MONOTONIC (no usable TSC)") {
    round_trip(true);
  }
}

TEST_CASE("a thread's events stay in order across chunks") {
  cw::TempDir dir("cw-hook-log");
  open_log(dir, uint64_t{64} << 20, 4096);  // 252 events per chunk
  Hooked hooked = hook_shape_frame(22);
  HookLogReader reader(dir.path());
  std::vector<HookEvent> events;
  auto sink = [&](const HookEvent& e) { events.push_back(e); };
  std::thread a([] {
    for (int i = 0; i < 1000; ++i) shape_frame(i);
  });
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 200; ++i) shape_frame(i);
    reader.poll(sink);  // while the other thread writes
  }
  a.join();
  reader.poll(sink);
  std::string error;
  CHECK(remove_hook(hooked, &error));
  std::map<uint32_t, std::vector<const HookEvent*>> by_tid;
  for (const HookEvent& e : events) by_tid[e.tid].push_back(&e);
  REQUIRE(by_tid.size() == 2);
  for (const auto& [tid, list] : by_tid) {
    REQUIRE(list.size() == 2000);
    for (size_t i = 0; i < list.size(); ++i) {
      CHECK(list[i]->exit == (i % 2 == 1));
      if (i) CHECK(list[i]->ts >= list[i - 1]->ts);
    }
  }
}

TEST_CASE("notes come back once; a full file counts the events it lost") {
  cw::TempDir dir("cw-hook-log");
  const uint64_t one_chunk = cw::hook::log::kChunksOffset + 4096;
  open_log(dir, one_chunk, 4096);
  CHECK(add_note(3, "hooked at 0x1234 (f in /bin/x)"));
  CHECK(add_note(0xffffffff, "bad entry"));
  HookLogReader reader(dir.path());
  auto notes = reader.take_notes();
  REQUIRE(notes.size() == 2);
  CHECK(notes[0].pid == static_cast<uint32_t>(getpid()));
  CHECK(notes[0].fn_index == 3);
  CHECK(notes[0].text == "hooked at 0x1234 (f in /bin/x)");
  CHECK(notes[1].fn_index == 0xffffffff);
  CHECK(reader.take_notes().empty());

  Hooked hooked = hook_shape_frame(23);
  for (int i = 0; i < 200; ++i) shape_frame(i);  // 400 events, room for 252
  std::string error;
  CHECK(remove_hook(hooked, &error));
  size_t count = reader.poll([](const HookEvent&) {});
  CHECK(count == kPerChunk);
  CHECK(reader.lost() == 400 - kPerChunk);
}

TEST_CASE("malformed logs are reported as notes, not read") {
  cw::TempDir dir("cw-hook-log");
  dir.write("hooks.1", std::string(8192, 'x'));
  dir.write("hooks.2", "short");
  std::string wrong_version(8192, '\0');
  memcpy(wrong_version.data(), cw::hook::log::kMagic, 8);
  wrong_version[8] = 9;
  dir.write("hooks.3", wrong_version);
  dir.write("other-file", "ignored");
  HookLogReader reader(dir.path());
  CHECK(reader.poll([](const HookEvent&) {}) == 0);
  auto notes = reader.take_notes();
  REQUIRE(notes.size() == 3);
  CHECK(notes[0].text == "bad hook log " + dir.path("hooks.1") + ": no CWHOOKS magic at byte 0");
  CHECK(notes[1].text == "bad hook log " + dir.path("hooks.2") +
                             ": shorter than its header (5 bytes) or unmappable");
  CHECK(notes[2].text == "bad hook log " + dir.path("hooks.3") +
                             ": version 9 at byte 8, this reader reads " +
                             std::to_string(cw::hook::log::kVersion));
}

TEST_CASE("a log truncated while being read is given up, not read past its end") {
  cw::TempDir written("cw-hook-log"), copied("cw-hook-log");
  open_log(written, uint64_t{1} << 20, 4096);
  const std::string name = "hooks." + std::to_string(getpid());
  std::filesystem::copy_file(written.path(name), copied.path(name));
  HookLogReader reader(copied.path());
  CHECK(reader.poll([](const HookEvent&) {}) == 0);
  CHECK(reader.take_notes().empty());
  REQUIRE(truncate(copied.path(name).c_str(), 100) == 0);
  CHECK(reader.poll([](const HookEvent&) {}) == 0);
  const auto notes = reader.take_notes();
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].text == "bad hook log " + copied.path(name) +
                             ": truncated to 100 bytes (from 1048576) while being read; no more "
                             "is read from it");
}

// Chunk recycling: the reader hands full chunks back once delivered, the writers fill them
// again; nothing unread is overwritten, what finds no free chunk is counted as lost.
extern "C" int shape_endbr(int);
extern "C" int shape_sub_rsp(int);
extern "C" int shape_rip_lea(int);

namespace {

using Step = std::pair<uint32_t, bool>;  // function index, exit

uint64_t log_bytes(uint64_t chunks) {
  return cw::hook::log::kChunksOffset + chunks * 4096;
}

cw::hook::log::Header read_header(const std::string& path) {
  cw::hook::log::Header header{};
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(&header), sizeof header);
  return header;
}

// Four hooked functions (indexes 40-43); call i goes to a scrambled one of them, so a
// sequence of events says which calls it came from.
struct PatternHooks {
  std::vector<Hooked> hooks;
  PatternHooks() {
    const char* names[] = {"shape_frame", "shape_endbr", "shape_sub_rsp", "shape_rip_lea"};
    for (uint32_t k = 0; k < 4; ++k) {
      FoundFunction found;
      REQUIRE(find_function(names[k], nullptr, &found) == Lookup::kFound);
      std::string refusal;
      auto hooked =
          install_hook({reinterpret_cast<void*>(found.address), found.size, 40 + k}, &refusal);
      REQUIRE_MESSAGE(hooked, refusal);
      hooks.push_back(*hooked);
    }
  }
  ~PatternHooks() {
    std::string error;
    for (const Hooked& h : hooks) CHECK(remove_hook(h, &error));
  }
  static uint32_t which(uint64_t call) {
    return static_cast<uint32_t>((call * 2654435761u) >> 9) % 4;
  }
  static void call(uint64_t i) {
    const int x = static_cast<int>(i & 0xffff);
    switch (which(i)) {
      case 0: CHECK(shape_frame(x) == 5 * x); break;
      case 1: CHECK(shape_endbr(x) == 2 * x); break;
      case 2: CHECK(shape_sub_rsp(x) == x + 3); break;
      default: CHECK(shape_rip_lea(x) == x + 2000); break;
    }
  }
  // The events of calls [from, to).
  static std::vector<Step> expected(uint64_t from, uint64_t to) {
    std::vector<Step> steps;
    for (uint64_t i = from; i < to; ++i) {
      steps.emplace_back(40 + which(i), false);
      steps.emplace_back(40 + which(i), true);
    }
    return steps;
  }
};

// Collects one thread's steps, checking that its times never go back.
struct ThreadSteps {
  uint32_t tid;
  std::vector<Step> steps;
  uint64_t last_ts = 0;
  bool in_order = true;
  explicit ThreadSteps(uint32_t t) : tid(t) {}
  void operator()(const HookEvent& e) {
    if (e.tid != tid || e.fn_index < 40 || e.fn_index > 43) return;
    steps.emplace_back(e.fn_index, e.exit);
    in_order = in_order && e.ts >= last_ts;
    last_ts = e.ts;
  }
};

}  // namespace

TEST_CASE("chunks the reader handed back are filled again, many times over, nothing lost") {
  cw::TempDir dir("cw-hook-log");
  open_log(dir, log_bytes(2), 4096);  // two chunks of 252 events
  const std::string path = dir.path("hooks." + std::to_string(getpid()));
  PatternHooks hooks;
  HookLogReader reader(dir.path());
  ThreadSteps got(static_cast<uint32_t>(gettid()));
  auto sink = [&](const HookEvent& e) { got(e); };
  // 60,000 events through 2 chunks: each is filled about 120 times.
  constexpr uint64_t kCalls = 30000;
  for (uint64_t i = 0; i < kCalls; ++i) {
    PatternHooks::call(i);
    if (i % 50 == 49) reader.poll(sink);  // 100 events: less than a chunk
  }
  reader.poll(sink);
  CHECK(got.in_order);
  CHECK(got.steps.size() == 2 * kCalls);
  CHECK((got.steps == PatternHooks::expected(0, kCalls)));
  CHECK(reader.lost() == 0);
  const auto header = read_header(path);
  CHECK(header.chunks_claimed == 2);
  CHECK(header.claims == (2 * kCalls + kPerChunk - 1) / kPerChunk);
}

TEST_CASE(
    "a reader that stalls: what finds no free chunk is lost and counted, nothing unread "
    "is overwritten") {
  cw::TempDir dir("cw-hook-log");
  open_log(dir, log_bytes(2), 4096);
  PatternHooks hooks;
  HookLogReader reader(dir.path());
  ThreadSteps got(static_cast<uint32_t>(gettid()));
  auto sink = [&](const HookEvent& e) { got(e); };
  CHECK(reader.poll(sink) == 0);
  // 2,000 events, room for 504 until the reader comes back.
  for (uint64_t i = 0; i < 1000; ++i) PatternHooks::call(i);
  reader.poll(sink);
  auto first = PatternHooks::expected(0, 1000);
  first.resize(2 * kPerChunk);
  CHECK((got.steps == first));
  CHECK(reader.lost() == 2000 - 2 * kPerChunk);
  // Both chunks were handed back: recording goes on after the gap.
  got.steps.clear();
  for (uint64_t i = 1000; i < 1100; ++i) PatternHooks::call(i);
  reader.poll(sink);
  CHECK((got.steps == PatternHooks::expected(1000, 1100)));
  CHECK(reader.lost() == 2000 - 2 * kPerChunk);
  CHECK(got.in_order);
}

TEST_CASE("a later reader skips the fills an earlier one handed back, and hands none back twice") {
  cw::TempDir dir("cw-hook-log");
  open_log(dir, log_bytes(3), 4096);
  PatternHooks hooks;
  const uint32_t tid = static_cast<uint32_t>(gettid());
  HookLogReader early(dir.path());
  ThreadSteps early_got(tid);
  for (uint64_t i = 0; i < 300; ++i) PatternHooks::call(i);  // 600 events: 2 full chunks
  early.poll([&](const HookEvent& e) { early_got(e); });
  CHECK((early_got.steps == PatternHooks::expected(0, 300)));
  // The later reader starts at the fill still open: the first 2 * 252 events are gone.
  HookLogReader later(dir.path());
  ThreadSteps later_got(tid);
  auto sink = [&](const HookEvent& e) { later_got(e); };
  later.poll(sink);
  const auto all = PatternHooks::expected(0, 5000);
  CHECK((later_got.steps == std::vector<Step>(all.begin() + 2 * kPerChunk, all.begin() + 600)));
  // Both read on; the free list stays sound (a chunk pushed twice would be filled by two
  // threads, or lose a fill): the later reader, polled often, sees everything else.
  for (uint64_t i = 300; i < 5000; ++i) {
    PatternHooks::call(i);
    if (i % 50 == 0) later.poll(sink);
    if (i % 70 == 0) early.poll([&](const HookEvent& e) { early_got(e); });
  }
  later.poll(sink);
  CHECK(later.lost() == 0);
  CHECK(later_got.steps.size() == 2 * 5000 - 2 * kPerChunk);
  CHECK((later_got.steps == std::vector<Step>(all.begin() + 2 * kPerChunk, all.end())));
  CHECK(read_header(dir.path("hooks." + std::to_string(getpid()))).chunks_claimed == 3);
}

TEST_CASE("a calibration that moves between polls does not move a thread's times back") {
  cw::TempDir dir("cw-hook-log");
  open_log(dir, log_bytes(4), 4096);
  const std::string path = dir.path("hooks." + std::to_string(getpid()));
  PatternHooks hooks;
  HookLogReader reader(dir.path());
  ThreadSteps got(static_cast<uint32_t>(gettid()));
  auto sink = [&](const HookEvent& e) { got(e); };
  // Only the test moves the calibration: the writer's own refreshes are held off.
  const uint64_t recalibrate_at = cw_hook_recalibrate_at;
  cw_hook_recalibrate_at = ~uint64_t{0};
  for (uint64_t i = 0; i < 50; ++i) PatternHooks::call(i);
  reader.poll(sink);
  const uint64_t polled_first = got.last_ts;
  // A refresh that puts `latest` at a thousandth of the slope (as a refresh 1 ms in, off
  // by much, would): converted alone, the next events would come out before the last ones.
  int fd = open(path.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  void* memory = mmap(nullptr, sizeof(log::Header), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  REQUIRE(memory != MAP_FAILED);
  auto* header = static_cast<log::Header*>(memory);
  REQUIRE(header->clock == log::kClockTsc);
  header->latest.tsc = __builtin_ia32_rdtsc();
  header->latest.ns = header->first.ns + (monotonic_ns() - header->first.ns) / 1000;
  for (uint64_t i = 50; i < 100; ++i) PatternHooks::call(i);
  reader.poll(sink);
  munmap(memory, sizeof(log::Header));
  cw_hook_recalibrate_at = recalibrate_at;
  CHECK((got.steps == PatternHooks::expected(0, 100)));
  CHECK(got.in_order);
  CHECK(got.last_ts >= polled_first);
}

TEST_CASE("writer threads and a reader thread at once: every event delivered or counted lost") {
  cw::TempDir dir("cw-hook-log");
  open_log(dir, log_bytes(16), 4096);
  PatternHooks hooks;
  HookLogReader reader(dir.path());
  constexpr uint64_t kCalls = 40000;
  std::vector<uint32_t> tids(2);
  std::atomic<int> running{2};
  std::map<uint32_t, ThreadSteps> got;
  auto sink = [&](const HookEvent& e) {
    auto it = got.find(e.tid);
    if (it == got.end()) it = got.emplace(e.tid, ThreadSteps(e.tid)).first;
    it->second(e);
  };
  std::thread read([&] {
    while (running.load() > 0) reader.poll(sink);
    reader.poll(sink);
  });
  std::vector<std::thread> writers;
  for (int w = 0; w < 2; ++w)
    writers.emplace_back([&, w] {
      tids[w] = static_cast<uint32_t>(gettid());
      for (uint64_t i = 0; i < kCalls; ++i) PatternHooks::call(i);
      --running;
    });
  for (auto& t : writers) t.join();
  read.join();
  uint64_t delivered = 0;
  const auto all = PatternHooks::expected(0, kCalls);
  for (uint32_t tid : tids) {
    // On a loaded machine the reader may not run before the log is full: every event of a
    // thread can be lost (and counted), so a thread may have delivered nothing.
    if (!got.count(tid)) {
      CHECK(reader.lost() >= 2 * kCalls);
      continue;
    }
    const ThreadSteps& steps = got.at(tid);
    CHECK(steps.in_order);
    delivered += steps.steps.size();
    // With nothing lost, exactly the calls made; else the events are some of them, in
    // order (a subsequence).
    if (reader.lost() == 0) {
      CHECK((steps.steps == all));
    } else {
      size_t at = 0;
      for (const Step& s : steps.steps) {
        while (at < all.size() && all[at] != s) ++at;
        REQUIRE(at < all.size());
        ++at;
      }
    }
  }
  CHECK(delivered + reader.lost() == 2 * 2 * kCalls);
  MESSAGE(delivered << " events delivered, " << reader.lost() << " lost");
}
