#include "recorder/stream_peer.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "base/temp_dir.h"

namespace cw {
namespace fs = std::filesystem;

namespace {

std::string_view name_of(uint32_t nr) {
  return nr == 0 ? "read" : nr == 45 ? "recvfrom" : nr == 35 ? "nanosleep" : "";
}

void blocked_in(const fs::path& task, uint32_t nr, uint64_t arg1) {
  fs::create_directories(task);
  std::ofstream(task / "syscall") << nr << " 0x" << std::hex << arg1
                                  << " 0x7ffd 0x400 0x0 0x0 0x0 0x7ffd 0x7f00\n";
}

// Process `pid` has `target` open as fd `fd`, with these open flags (octal text).
void has_open(const fs::path& root, uint32_t pid, int fd, const std::string& target,
              const std::string& flags) {
  fs::path base = root / std::to_string(pid);
  fs::create_directories(base / "fd");
  fs::create_directories(base / "fdinfo");
  fs::create_symlink(target, base / "fd" / std::to_string(fd));
  std::ofstream(base / "fdinfo" / std::to_string(fd)) << "pos:\t0\nflags:\t" << flags << "\n";
}

}  // namespace

// A fake /proc: process 10's thread 11 reads a pipe that process 20 writes and process 30
// reads too; its thread 12 waits in recvfrom on a loopback TCP connection whose other
// socket process 40 has open.
TEST_CASE("a thread blocked reading a pipe or a socket waits for the process at the other end") {
  TempDir dir("cw-stream-peer");
  fs::path root = dir.path();
  blocked_in(root / "10/task/11", 0, 3);
  blocked_in(root / "10/task/12", 45, 6);
  blocked_in(root / "10/task/13", 35, 0x7ffd0000);
  has_open(root, 10, 3, "pipe:[500]", "00");
  has_open(root, 10, 6, "socket:[700]", "02");
  has_open(root, 20, 4, "pipe:[500]", "01");
  has_open(root, 30, 5, "pipe:[500]", "00");
  has_open(root, 40, 7, "socket:[800]", "02");
  fs::create_directories(root / "net");
  std::ofstream(root / "net/tcp")
      << "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
         "timeout inode\n"
      << "   0: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0 "
         "       0 700 1 0000000000000000 20 4 30 10 -1\n"
      << "   1: 0100007F:C350 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0 "
         "       0 800 1 0000000000000000 20 4 30 10 -1\n";
  std::vector<HolderField> fields = {
      {"linux.kernel/stream.peer", {"read", "recvfrom"}, true, 0, 4}};
  auto only_10 = [](uint32_t pid) { return pid == 10; };

  auto waits = find_peer_waits(fields, name_of, only_10, root.string());
  REQUIRE(waits.size() == 2);
  CHECK(waits[0].waiter_tid == 11);
  CHECK(waits[0].holder_pid == 20);  // the writer; 30 reads the pipe as 10 does
  CHECK(waits[0].object == 500);
  CHECK(waits[0].lock == "pipe (linux.kernel/stream.peer)");
  CHECK(waits[1].waiter_tid == 12);
  CHECK(waits[1].holder_pid == 40);
  CHECK(waits[1].object == 700);
  CHECK(waits[1].lock == "tcp peer (linux.kernel/stream.peer)");

  SUBCASE("owner rules are not about streams") {
    fields[0].peer = false;
    CHECK(find_peer_waits(fields, name_of, only_10, root.string()).empty());
  }
}

}  // namespace cw
