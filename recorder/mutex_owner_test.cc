#include "recorder/mutex_owner.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>

#include "base/temp_dir.h"

namespace cw {
namespace fs = std::filesystem;

namespace {

// A glibc-like mutex in this process's memory: the futex word, a count, the owner's tid.
struct FakeMutex {
  uint32_t lock = 2;
  uint32_t count = 0;
  uint32_t owner = 0;
};

std::string_view name_of(uint32_t nr) {
  return nr == 202 ? "futex" : nr == 35 ? "nanosleep" : "";
}

void blocked_in(const fs::path& task, uint32_t nr, uint64_t arg1) {
  fs::create_directories(task);
  char line[128];
  std::snprintf(line, sizeof line, "%u 0x%llx 0x80 0x2 0x0 0x0 0x0 0x7ffd 0x7f00\n", nr,
                static_cast<unsigned long long>(arg1));
  std::ofstream(task / "syscall") << line;
}

}  // namespace

// A fake /proc holding this very process (its memory is what is read): thread 11 waits in
// futex on `m`, whose owner word names thread 12 of the same process; 12 sleeps.
TEST_CASE("a thread blocked on a lock word is waiting for the owner its rule points at") {
  TempDir dir("cw-mutex-owner");
  const uint32_t pid = static_cast<uint32_t>(getpid());
  fs::path tasks = fs::path(dir.path()) / std::to_string(pid) / "task";
  FakeMutex m;
  m.owner = 12;
  blocked_in(tasks / "11", 202, reinterpret_cast<uint64_t>(&m.lock));
  blocked_in(tasks / "12", 35, 0x7ffd0000);
  std::vector<HolderField> fields = {{"glibc.pthread/mutex.owner", {"futex"}, false, 8, 4}};
  auto all = [](uint32_t) { return true; };

  auto waits = find_owner_waits(fields, name_of, all, dir.path());
  REQUIRE(waits.size() == 1);
  CHECK(waits[0].waiter_pid == pid);
  CHECK(waits[0].waiter_tid == 11);
  CHECK(waits[0].holder_pid == pid);
  CHECK(waits[0].holder_tid == 12);
  CHECK(waits[0].object == reinterpret_cast<uint64_t>(&m.lock));
  CHECK(waits[0].lock == "owner (glibc.pthread/mutex.owner)");

  SUBCASE("a word that names no thread of the process is no owner") {
    m.owner = 4242;
    CHECK(find_owner_waits(fields, name_of, all, dir.path()).empty());
  }
  SUBCASE("no rule, no owner: the offset is the pack's to say") {
    CHECK(find_owner_waits({}, name_of, all, dir.path()).empty());
  }
  SUBCASE("processes the recording filters out are not looked at") {
    CHECK(find_owner_waits(
              fields, name_of, [](uint32_t) { return false; }, dir.path())
              .empty());
  }
}

}  // namespace cw
