// Output files are never written through a symlink, a second hard link, or a FIFO, and an
// existing regular file is emptied and given the mode asked for.
#include "base/output_file.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "base/temp_dir.h"

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("a new or existing regular file is written whole, with the mode asked for") {
  cw::TempDir dir("cw-output");
  std::string why;
  REQUIRE(cw::write_output_file(dir.path("new"), "abc", 0600, &why));
  CHECK(read(dir.path("new")) == "abc");
  dir.write("old", "a longer old content");
  chmod(dir.path("old").c_str(), 0644);
  REQUIRE(cw::write_output_file(dir.path("old"), "xy", 0600, &why));
  CHECK(read(dir.path("old")) == "xy");
  struct stat info {};
  REQUIRE(stat(dir.path("old").c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0600);
}

TEST_CASE("a symlink at the path is refused and what it points to is left untouched") {
  cw::TempDir dir("cw-output");
  dir.write("precious", "root:x:0:0\n");
  REQUIRE(symlink(dir.path("precious").c_str(), dir.path("link.cwt").c_str()) == 0);
  std::string why;
  CHECK(cw::open_output_file(dir.path("link.cwt"), 0600, &why) < 0);
  CHECK(why == dir.path("link.cwt") +
                   ": refusing to write through a symbolic link (remove it, or write elsewhere)");
  CHECK_FALSE(cw::write_output_file(dir.path("link.cwt"), "x", 0600, &why));
  CHECK(read(dir.path("precious")) == "root:x:0:0\n");
  struct stat info {};
  REQUIRE(stat(dir.path("precious").c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) != 0600);  // not made 0600 either
}

TEST_CASE("a file with another hard link, or a FIFO, is refused") {
  cw::TempDir dir("cw-output");
  dir.write("precious", "keep");
  REQUIRE(link(dir.path("precious").c_str(), dir.path("hard.cwt").c_str()) == 0);
  std::string why;
  CHECK_FALSE(cw::write_output_file(dir.path("hard.cwt"), "x", 0600, &why));
  CHECK(why == dir.path("hard.cwt") +
                   ": has other hard links: refusing to overwrite a file that also lives "
                   "elsewhere");
  CHECK(read(dir.path("precious")) == "keep");
  REQUIRE(mkfifo(dir.path("fifo").c_str(), 0600) == 0);
  CHECK_FALSE(cw::write_output_file(dir.path("fifo"), "x", 0600, &why));  // and does not block
  CHECK(why.find("not a regular file") != std::string::npos);
}
