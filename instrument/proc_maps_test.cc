#include "instrument/proc_maps.h"

#include <doctest/doctest.h>
#include <unistd.h>

namespace cw::instrument {
namespace {

TEST_CASE("maps lines give ranges, permissions, offsets and paths") {
  auto maps = parse_proc_maps(
      "55d0c0a00000-55d0c0a01000 r--p 00000000 fe:01 1234 /usr/bin/cw prog\n"
      "55d0c0a01000-55d0c0a02000 r-xp 00001000 fe:01 1234 /usr/bin/cw prog\n"
      "7ffd1000-7ffd2000 rw-p 00000000 00:00 0                          [stack]\n"
      "7f0000000000-7f0000001000 rw-p 00000000 00:00 0\n"
      "7f0000001000-7f0000002000 r-xp 00002000 fe:01 99 /tmp/old.so (deleted)\n"
      "not a maps line\n");
  REQUIRE(maps.size() == 5);
  CHECK(maps[1].start == 0x55d0c0a01000);
  CHECK(maps[1].end == 0x55d0c0a02000);
  CHECK(maps[1].offset == 0x1000);
  CHECK(maps[1].executable);
  CHECK_FALSE(maps[1].writable);
  CHECK(maps[1].path == "/usr/bin/cw prog");  // spaces in paths survive
  CHECK(maps[1].dev_major == 0xfe);
  CHECK(maps[1].dev_minor == 0x01);
  CHECK(maps[1].inode == 1234);
  CHECK(maps[3].inode == 0);
  CHECK(maps[1].file_backed());
  CHECK(maps[2].path == "[stack]");
  CHECK_FALSE(maps[2].file_backed());
  CHECK(maps[3].path.empty());
  CHECK(maps[4].deleted);
  CHECK(maps[4].path == "/tmp/old.so");
  CHECK(map_at(maps, 0x55d0c0a01800) == &maps[1]);
  CHECK(map_at(maps, 0x10) == nullptr);
}

TEST_CASE("this process's own maps hold the code running now") {
  std::string error;
  auto maps = read_proc_maps(getpid(), &error);
  REQUIRE_MESSAGE(maps.has_value(), error);
  const ProcMap* here = map_at(*maps, reinterpret_cast<uint64_t>(&parse_proc_maps));
  REQUIRE(here != nullptr);
  CHECK(here->executable);
  CHECK(here->file_backed());
}

TEST_CASE("a process that does not exist is an error naming the file") {
  std::string error;
  CHECK_FALSE(read_proc_maps(0x3fffffff, &error).has_value());
  CHECK(error.find("/proc/1073741823/maps") == 0);
}

}  // namespace
}  // namespace cw::instrument
