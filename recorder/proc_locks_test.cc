#include "recorder/proc_locks.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "base/temp_dir.h"

namespace cw {
namespace fs = std::filesystem;

// /proc/locks's device field: MAJOR:MINOR in hex.
static std::string fmt_dev(unsigned major_number, unsigned minor_number) {
  char text[32];
  std::snprintf(text, sizeof text, "%02x:%02x", major_number, minor_number);
  return text;
}

TEST_CASE("/proc/locks: locks and the requests blocked on them") {
  auto locks = parse_proc_locks(
      "1: FLOCK  ADVISORY  WRITE 20417 fe:00:10952705 0 EOF\n"
      "1: -> FLOCK  ADVISORY  WRITE 20415 fe:00:10952705 0 EOF\n"
      "2: OFDLCK ADVISORY  READ  -1 08:01:77 0 EOF\n"
      "garbage\n");
  REQUIRE(locks.size() == 3);
  CHECK(locks[0].id == 1);
  CHECK_FALSE(locks[0].blocked);
  CHECK(locks[0].type == "FLOCK");
  CHECK(locks[0].pid == 20417);
  CHECK(locks[0].dev_major == 0xfe);
  CHECK(locks[0].inode == 10952705);
  CHECK(locks[1].blocked);
  CHECK(locks[1].pid == 20415);
  CHECK(locks[2].pid == -1);
  CHECK(locks[2].mode == "READ");
  CHECK(locks[2].dev_minor == 1);
}

// A fake /proc: the waiter's thread 11 is blocked with fd 5 as its first argument, which
// is the locked file; thread 12 is blocked on fd 6, another file.
TEST_CASE("a blocked request is matched to the thread whose call's fd is the locked file") {
  TempDir dir("cw-proc-locks");
  fs::path root = dir.path();
  fs::path locked = root / "locked", other = root / "other";
  std::ofstream(locked) << "x";
  std::ofstream(other) << "y";
  struct stat st {};
  REQUIRE(stat(locked.c_str(), &st) == 0);
  fs::create_directories(root / "10/task/11");
  fs::create_directories(root / "10/task/12");
  fs::create_directories(root / "10/fd");
  std::ofstream(root / "10/task/11/syscall") << "73 0x5 0x2 0x1 0x0 0x0 0x0 0x7ff 0x7ff\n";
  std::ofstream(root / "10/task/12/syscall") << "73 0x6 0x2 0x1 0x0 0x0 0x0 0x7ff 0x7ff\n";
  fs::create_symlink(locked, root / "10/fd/5");
  fs::create_symlink(other, root / "10/fd/6");
  std::string dev = fmt_dev(major(st.st_dev), minor(st.st_dev));
  auto locks = parse_proc_locks(
      "1: FLOCK  ADVISORY  WRITE 20 " + dev + ":" + std::to_string(st.st_ino) + " 0 EOF\n" +
      "1: -> FLOCK  ADVISORY  WRITE 10 " + dev + ":" + std::to_string(st.st_ino) + " 0 EOF\n");
  auto waits = find_lock_waits(locks, root.string());
  REQUIRE(waits.size() == 1);
  CHECK(waits[0].waiter_pid == 10);
  CHECK(waits[0].waiter_tid == 11);
  CHECK(waits[0].holder_pid == 20);
  CHECK(waits[0].object == st.st_ino);
  CHECK(waits[0].lock == "FLOCK WRITE");

  SUBCASE("a lock with nobody blocked on it makes no wait") {
    CHECK(find_lock_waits({locks[0]}, root.string()).empty());
  }
}

}  // namespace cw
