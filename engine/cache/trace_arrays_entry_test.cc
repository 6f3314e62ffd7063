// The trace arrays entry: mapped back equal and copy-on-write, and a miss when its events
// name what the trace does not have.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>

#include "engine/cache/cache.h"
#include "engine/cache/test_support.h"

namespace fs = std::filesystem;
using namespace cw;
using namespace cw::cache::testing;

TEST_CASE("a trace's arrays come back mapped, equal, and copy-on-write") {
  auto b = sample();
  TempDir dir;
  const std::string file = dir.path + "/t.cwt";
  write_trace(b.trace, file);
  Trace read;
  ReadReport report = read_trace(file, read);
  REQUIRE(report.clean());
  REQUIRE(read.events.size() == b.trace.events.size());
  const cache::Key key{*cache::trace_key(file), 0, 0, cache::engine_key()};
  REQUIRE(cache::save_trace_arrays(dir.f, key, read, report));
  const std::string path = dir.path + "/trace.cwa";
  const std::string good = read_all(path);
  // Kept as they are in memory, so that a run maps them (docs/cache.md, "Size"): the entry
  // is the arrays' bytes, with no more than a page of padding before each and the header.
  const uint64_t arrays =
      read.events.size() * sizeof(Event) + read.values.size() * sizeof(uint64_t);
  CHECK(good.size() >= arrays);
  CHECK(good.size() <= arrays + 3 * 4096);
  std::string why;
  {
    auto arrays = cache::load_trace_arrays(dir.f, key, &why);
    REQUIRE_MESSAGE(arrays, why);
    CHECK(arrays->events.is_view());
    CHECK(reinterpret_cast<uintptr_t>(arrays->events.data()) % 4096 == 0);
    CHECK(reinterpret_cast<uintptr_t>(arrays->values.data()) % 4096 == 0);
    REQUIRE(arrays->events.size() == read.events.size());
    CHECK(std::memcmp(arrays->events.data(), read.events.data(),
                      read.events.size() * sizeof(Event)) == 0);
    CHECK(arrays->values == read.values);
    CHECK(arrays->strings == read.strings.size());
    CHECK(arrays->stacks == read.stacks.size());
    CHECK(arrays->report.events_read == report.events_read);
    CHECK(arrays->report.chunks_read == report.chunks_read);
    CHECK(arrays->report.major == report.major);
    CHECK(arrays->report.notes == report.notes);

    // The rest from the trace, events skipped: the same trace.
    Trace small;
    auto sr = cache::read_trace_without_events(file, small);
    REQUIRE(sr);
    CHECK(sr->clean());
    CHECK(small.events.empty());
    CHECK(small.strings.size() == arrays->strings);
    CHECK(small.threads.size() == read.threads.size());

    // A write through the column changes this run's copy, never the file.
    arrays->events[0].ts += 12345;
    arrays->values[0] ^= 1;
  }
  CHECK(read_all(path) == good);
  CHECK(cache::load_trace_arrays(dir.f, key));

  // Another run's save under way: its temporary file, young.
  CHECK_FALSE(cache::being_written(dir.f, cache::kTraceArraysName));
  const std::string tmp = path + ".tmp-1-2";
  write_all(tmp, "x");
  CHECK(cache::being_written(dir.f, cache::kTraceArraysName));
  fs::last_write_time(tmp, fs::file_time_type::clock::now() - std::chrono::minutes(11));
  CHECK_FALSE(cache::being_written(dir.f, cache::kTraceArraysName));
  fs::remove(tmp);

  SUBCASE("another key") {
    cache::Key other = key;
    other.engine ^= 1;
    CHECK_FALSE(cache::load_trace_arrays(dir.f, other, &why));
    CHECK(why == "made from other inputs");
  }
  SUBCASE("a flipped byte in the values") {
    std::string bad = good;
    bad[bad.size() - 3] ^= 0x40;
    write_all(path, bad);
    CHECK_FALSE(cache::load_trace_arrays(dir.f, key, &why));
    CHECK(why == "checksum mismatch");
  }
  SUBCASE("truncated") {
    write_all(path, good.substr(0, good.size() - 8));
    CHECK_FALSE(cache::load_trace_arrays(dir.f, key, &why));
    CHECK(why.find("truncated") == 0);
  }
  SUBCASE("a graph entry is not a trace entry") {
    REQUIRE(cache::write_entry(dir.f, cache::kTraceArraysName, cache::EntryKind::Graph, key, "x"));
    CHECK_FALSE(cache::load_trace_arrays(dir.f, key, &why));
    CHECK(why.find("truncated header") == 0);
    REQUIRE(cache::write_entry(dir.f, cache::kTraceArraysName, cache::EntryKind::Graph, key,
                               std::string(100, 'x')));
    CHECK_FALSE(cache::load_trace_arrays(dir.f, key, &why));
    CHECK(why == "another kind of entry");
  }
}

namespace {

// `trace` written to a file in `dir`, read, its arrays saved to the cache and mapped back;
// `small` the trace read without its events, to check them against.
std::optional<cache::TraceArrays> saved_and_mapped(const Trace& trace, TempDir& dir, Trace& small) {
  const std::string file = dir.path + "/t.cwt";
  write_trace(trace, file);
  Trace read;
  ReadReport report = read_trace(file, read);
  const cache::Key key{*cache::trace_key(file), 0, 0, cache::engine_key()};
  REQUIRE(cache::save_trace_arrays(dir.f, key, read, report));
  REQUIRE(cache::read_trace_without_events(file, small));
  auto arrays = cache::load_trace_arrays(dir.f, key);
  REQUIRE(arrays);
  return arrays;
}

}  // namespace

TEST_CASE("trace arrays naming kinds, values, stacks or strings the trace lacks are a miss") {
  auto b = sample();
  TempDir dir;
  Trace small;
  auto arrays = saved_and_mapped(b.trace, dir, small);
  CHECK_NOTHROW(cache::check_trace_arrays(*arrays, small));
  const Event good = arrays->events[1];
  auto bad = [&](const char* what, auto change) {
    INFO(what);
    change(arrays->events[1]);  // a copy-on-write page: the entry stays as it was
    CHECK_THROWS_AS(cache::check_trace_arrays(*arrays, small), cache::CorruptEntry);
    arrays->events[1] = good;
  };
  bad("kind", [&](Event& e) { e.kind = static_cast<KindId>(small.schema.size()); });
  bad("values", [&](Event& e) { e.values = static_cast<uint32_t>(arrays->values.size()); });
  bad("stack", [&](Event& e) { e.stack = static_cast<StackId>(small.stacks.size()); });
  bad("time order", [&](Event& e) { e.ts = arrays->events[2].ts + 1; });
  // A string field naming no string: the name of the first syscall_enter.
  const KindId enter = small.schema.find("syscall_enter");
  const int name = small.schema.field_index(enter, "name");
  for (size_t i = 0; i < arrays->events.size(); ++i) {
    const Event& e = arrays->events[i];
    if (e.kind != enter) continue;
    const uint64_t was = arrays->values[e.values + name];
    arrays->values[e.values + name] = small.strings.size();
    CHECK_THROWS_AS(cache::check_trace_arrays(*arrays, small), cache::CorruptEntry);
    arrays->values[e.values + name] = was;
    break;
  }
  CHECK_NOTHROW(cache::check_trace_arrays(*arrays, small));
  // Counts of strings and stacks other than the trace's.
  arrays->strings += 1;
  CHECK_THROWS_AS(cache::check_trace_arrays(*arrays, small), cache::CorruptEntry);
}

TEST_CASE(
    "the entry lists the markers among the events, in order, and the check holds it to them") {
  // Enough events to be checked in chunks on every CPU: markers first, last and at a
  // chunk's edge.
  Trace t;
  const KindId marker = t.schema.find("marker"), exit = t.schema.find("exit");
  const uint32_t n = 70000;
  const std::vector<uint32_t> at = {0, 4096, n / 16, n / 16 + 1, n - 1};
  for (uint32_t i = 0; i < n; ++i)
    t.add_event(i, 1, std::find(at.begin(), at.end(), i) != at.end() ? marker : exit);
  TempDir dir;
  Trace small;
  auto arrays = saved_and_mapped(t, dir, small);
  CHECK(arrays->markers == at);
  CHECK_NOTHROW(cache::check_trace_arrays(*arrays, small));
  // A list that is not the markers: one left out, one too many.
  arrays->markers.pop_back();
  CHECK_THROWS_AS(cache::check_trace_arrays(*arrays, small), cache::CorruptEntry);
  arrays->markers = at;
  arrays->markers.insert(arrays->markers.begin() + 1, 1);
  CHECK_THROWS_AS(cache::check_trace_arrays(*arrays, small), cache::CorruptEntry);
}

TEST_CASE("the events are kept from 64 MiB of events and values on, or CAUSEWAY_CACHE_EVENTS_MIN") {
  const Env unset("CAUSEWAY_CACHE_EVENTS_MIN", "");
  CHECK(cache::events_min() == uint64_t{64} << 20);
  constexpr uint64_t kValues = (uint64_t{64} << 20) / sizeof(uint64_t);
  CHECK(cache::keeps_trace_arrays(0, kValues));
  CHECK_FALSE(cache::keeps_trace_arrays(0, kValues - 1));
  // A million events of three values each (48 MB): a warm run without their entry takes
  // about 0.2 s longer (bench/RESULTS.md), not kept. Two million are.
  CHECK_FALSE(cache::keeps_trace_arrays(1'000'000, 3'000'000));
  CHECK(cache::keeps_trace_arrays(2'000'000, 6'000'000));
  // Counts no trace has do not wrap round to a small size.
  CHECK(cache::keeps_trace_arrays(UINT64_MAX, 0));
  CHECK(cache::keeps_trace_arrays(0, UINT64_MAX / 4));
  {
    const Env always("CAUSEWAY_CACHE_EVENTS_MIN", "0");
    CHECK(cache::keeps_trace_arrays(0, 0));
  }
  {
    const Env kib("CAUSEWAY_CACHE_EVENTS_MIN", "1K");
    CHECK(cache::keeps_trace_arrays(0, 128));
    CHECK_FALSE(cache::keeps_trace_arrays(0, 127));
    CHECK(cache::keeps_trace_arrays(40, 8));
  }
  {
    const Env junk("CAUSEWAY_CACHE_EVENTS_MIN", "lots");
    CHECK(cache::events_min() == cache::kDefaultEventsMin);
  }
}
