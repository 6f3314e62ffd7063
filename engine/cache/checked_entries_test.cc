// Entries checked once: a file checked in full is not hashed or checked again while its
// inode, size and change time are those checked; any write to it, a new file in its place,
// another build's or a damaged record, and a file changed in the clock's current tick are
// checked in full again.
#include "engine/cache/checked_entries.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "engine/cache/cache.h"
#include "engine/cache/encoding.h"
#include "engine/cache/test_support.h"

using namespace cw;
using namespace cw::cache::testing;

namespace {

struct Saved {
  std::string file;  // the trace
  cache::Key key;
  Trace small;  // read without its events, to check the arrays against
};

// The sample's trace written to `dir`, its arrays saved to the cache there.
Saved save_sample(TempDir& dir) {
  Saved s;
  s.file = dir.path + "/t.cwt";
  write_trace(sample().trace, s.file);
  Trace read;
  ReadReport report = read_trace(s.file, read);
  s.key = cache::Key{*cache::trace_key(s.file), 0, 0, cache::engine_key()};
  REQUIRE(cache::save_trace_arrays(dir.f, s.key, read, report));
  REQUIRE(cache::read_trace_without_events(s.file, s.small));
  return s;
}

// What a run does with the events entry (engine/session/trace_load.cc): loads it, checks it
// in full unless an earlier run did, and records a check it made. Whether it was checked
// before; nullopt when it is not used.
std::optional<bool> use(TempDir& dir, const Saved& s, std::string* why = nullptr) {
  auto arrays = cache::load_trace_arrays(dir.f, s.key, why);
  if (!arrays) return std::nullopt;
  if (arrays->once.before) return true;
  cache::check_trace_arrays(*arrays, s.small);
  cache::record_checked(dir.f, cache::kTraceArraysName, arrays->once);
  return false;
}

std::optional<cache::FileVersion> version_of(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return std::nullopt;
  auto v = cache::file_version(fd);
  close(fd);
  return v;
}

int64_t coarse_now_ns() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME_COARSE, &now);
  return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

}  // namespace

TEST_CASE("an entry checked in full is not checked again until its file changes") {
  TempDir dir;
  const Saved s = save_sample(dir);
  const std::string path = dir.path + "/trace.cwa";
  cache::wait_settled(dir.f, cache::kTraceArraysName);
  CHECK(use(dir, s) == false);  // checked, and recorded
  CHECK(use(dir, s) == true);
  CHECK(use(dir, s) == true);

  SUBCASE("a byte changed in place (the same inode): its change time moved") {
    std::string bytes = read_all(path);
    bytes[bytes.size() - 3] ^= 0x40;
    const int fd = open(path.c_str(), O_WRONLY);
    REQUIRE(fd >= 0);
    REQUIRE(pwrite(fd, bytes.data() + bytes.size() - 3, 1, static_cast<off_t>(bytes.size() - 3)) ==
            1);
    close(fd);
    std::string why;
    CHECK(use(dir, s, &why) == std::nullopt);
    CHECK(why == "checksum mismatch");
  }
  SUBCASE("the same bytes saved again: another file") {
    Trace read;
    ReadReport report = read_trace(s.file, read);
    REQUIRE(cache::save_trace_arrays(dir.f, s.key, read, report));
    cache::wait_settled(dir.f, cache::kTraceArraysName);
    CHECK(use(dir, s) == false);
    CHECK(use(dir, s) == true);
  }
  SUBCASE("a damaged record: checked in full, and recorded again") {
    write_all(dir.path + "/checked.cwk", "CWCACHE\\0 not a record");
    CHECK(use(dir, s) == false);
    CHECK(use(dir, s) == true);
  }
  SUBCASE("a record file larger than its most records is not used, and is written again") {
    write_all(dir.path + "/checked.cwk", std::string(size_t{1} << 20, '\0'));
    CHECK(use(dir, s) == false);
    CHECK(read_all(dir.path + "/checked.cwk").size() < 1024);  // written again
    CHECK(use(dir, s) == true);
  }
  SUBCASE("another build's records are not its own") {
    const std::string records = read_all(dir.path + "/checked.cwk");
    REQUIRE(cache::write_entry(dir.f, cache::kCheckedName, cache::EntryKind::Checked,
                               cache::Key{0, 0, 0, cache::engine_key() ^ 1},
                               records.substr(cache::kHeaderSize)));
    CHECK(use(dir, s) == false);
  }
  SUBCASE("marked used an hour on: checked in full again next time, then not") {
    const timespec times[2] = {{0, UTIME_OMIT}, {time(nullptr) - time_t{2} * 3600, 0}};
    REQUIRE(utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
    cache::wait_settled(dir.f, cache::kTraceArraysName);
    CHECK(use(dir, s) == false);  // its record no longer holds; marked used, not recorded
    struct stat st {};
    REQUIRE(stat(path.c_str(), &st) == 0);
    CHECK(st.st_mtime >= time(nullptr) - 60);
    cache::wait_settled(dir.f, cache::kTraceArraysName);
    CHECK(use(dir, s) == false);  // recorded now
    CHECK(use(dir, s) == true);
  }
}

TEST_CASE("a file changed in the clock's current tick is not recorded") {
  TempDir dir;
  const Saved s = save_sample(dir);
  // A version whose change time the kernel's clock has not passed: a write now could leave
  // it as it is.
  const std::optional<cache::FileVersion> v = version_of(dir.path + "/trace.cwa");
  REQUIRE(v);
  cache::FileVersion young = *v;
  young.ctime_ns = coarse_now_ns() + 1'000'000'000;
  CHECK_FALSE(cache::settled(young));
  cache::record_checked(dir.f, cache::kTraceArraysName, young, 0);
  CHECK_FALSE(cache::checked_before(dir.f, cache::kTraceArraysName, young, 0));
  // Nor one whose file has changed since it was opened.
  cache::FileVersion old = *v;
  old.ctime_ns -= 1;
  cache::record_checked(dir.f, cache::kTraceArraysName, old, 0);
  CHECK_FALSE(cache::checked_before(dir.f, cache::kTraceArraysName, old, 0));
  cache::wait_settled(dir.f, cache::kTraceArraysName);
  CHECK(cache::settled(*v));
  cache::record_checked(dir.f, cache::kTraceArraysName, *v, 5);
  CHECK(cache::checked_before(dir.f, cache::kTraceArraysName, *v, 5));
  CHECK_FALSE(cache::checked_before(dir.f, cache::kTraceArraysName, *v, 6));  // another header
  CHECK_FALSE(cache::checked_before(dir.f, cache::kThreadIndexName, *v, 5));  // another name
}

TEST_CASE("the records keep the newest check of each name") {
  TempDir dir;
  const Saved s = save_sample(dir);
  const std::optional<cache::FileVersion> v = version_of(dir.path + "/trace.cwa");
  REQUIRE(v);
  cache::wait_settled(dir.f, cache::kTraceArraysName);
  // A check recorded again replaces the one before: one record per name.
  for (uint64_t sum = 1; sum <= 3; ++sum)
    cache::record_checked(dir.f, cache::kTraceArraysName, *v, sum);
  CHECK(cache::checked_before(dir.f, cache::kTraceArraysName, *v, 3));
  CHECK_FALSE(cache::checked_before(dir.f, cache::kTraceArraysName, *v, 1));
  CHECK(read_all(dir.path + "/checked.cwk").size() == cache::kHeaderSize + 104);
}

TEST_CASE("the copy that saved the events checks them, so that the next run does not") {
  TempDir dir;
  const Saved s = save_sample(dir);
  cache::check_saved_trace_arrays(dir.f, s.key, s.small.schema, s.small.strings.size(),
                                  s.small.stacks.size());
  CHECK(use(dir, s) == true);
  // Events that do not pass the check are not recorded.
  TempDir other;
  const Saved t = save_sample(other);
  cache::check_saved_trace_arrays(other.f, t.key, t.small.schema, t.small.strings.size() + 1,
                                  t.small.stacks.size());
  CHECK(use(other, t) == false);
}

TEST_CASE("a thread index checked once is mapped without reading its lists again") {
  auto b = sample();
  TempDir dir;
  const cache::Key key{7, 0, 0, 1};
  const engine::ThreadEvents made(b.trace);
  REQUIRE(cache::save_thread_index(dir.f, key, made));
  cache::wait_settled(dir.f, cache::kThreadIndexName);
  const std::optional<cache::FileVersion> v = version_of(dir.path + "/threads.cwa");
  REQUIRE(v);
  unsigned char header[cache::kHeaderSize];
  {
    const std::string bytes = read_all(dir.path + "/threads.cwa");
    std::memcpy(header, bytes.data(), sizeof header);
  }
  const uint64_t sum = cache::load_le<uint64_t>(header + 56);
  CHECK_FALSE(cache::checked_before(dir.f, cache::kThreadIndexName, *v, sum));
  auto loaded = cache::load_thread_index(dir.f, key, b.trace.events.size());
  REQUIRE(loaded);
  CHECK(cache::checked_before(dir.f, cache::kThreadIndexName, *v, sum));
  auto again = cache::load_thread_index(dir.f, key, b.trace.events.size());
  REQUIRE(again);
  for (Tid tid : made.tids()) {
    CHECK(std::equal(again->of(tid).begin(), again->of(tid).end(), made.of(tid).begin(),
                     made.of(tid).end()));
  }
}

TEST_CASE("markers out of order or past the events are a miss even when nothing else is checked") {
  TempDir dir;
  const std::string file = dir.path + "/t.cwt";
  write_trace(sample().trace, file);
  Trace read;
  ReadReport report = read_trace(file, read);
  const cache::Key key{*cache::trace_key(file), 0, 0, cache::engine_key()};
  const auto n = static_cast<uint32_t>(read.events.size());
  for (const std::vector<uint32_t>& bad :
       {std::vector<uint32_t>{n}, std::vector<uint32_t>{1, 1}, std::vector<uint32_t>{2, 0}}) {
    REQUIRE(cache::save_trace_arrays(dir.f, key, read.events, read.values, read.strings.size(),
                                     read.stacks.size(), bad, report));
    std::string why;
    CHECK_FALSE(cache::load_trace_arrays(dir.f, key, &why));
    CHECK(why == "markers out of order or past the events");
  }
}
