// Helpers for the cache's entry tests: a small built graph, a private folder that goes
// with the test, and whole-file reads and writes to damage entries with.
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "engine/cache/cache.h"
#include "engine/graph/test_support.h"

namespace cw::cache::testing {

// A graph with cuts, a strong link edge and split neighbour edges.
inline engine::testing::Built sample() {
  return engine::testing::build(
      "link wakeup { from wakeup to switch_in join from.target == to.tid pick next }\n"
      "edge w { link wakeup strength strong }\n"
      "split cut { at syscall_enter where name == \"read\" cut before neighbour weak }\n",
      "process 100 comm=app\n"
      "thread 101 pid=100 comm=a\n"
      "thread 102 pid=100 comm=b\n"
      "1000 101 syscall_enter name=read\n"
      "2000 101 wakeup target=102\n"
      "3000 102 switch_in\n"
      "4000 101 syscall_enter name=read\n"
      "5000 102 syscall_enter name=read\n");
}

// A private folder (0700 by mkdtemp), open, removed with what is in it at the end.
struct TempDir {
  std::string path;
  Folder f;  // the folder, open
  TempDir() {
    char tmpl[] = "/tmp/cw-cache-test-XXXXXX";
    path = mkdtemp(tmpl);
    std::string why;
    auto opened = Folder::open(path, &why);
    REQUIRE_MESSAGE(opened, why);
    f = *opened;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

inline std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Sets an environment variable for a scope.
struct Env {
  std::string name;
  std::optional<std::string> old;
  Env(const char* n, const std::string& value) : name(n) {
    if (const char* v = std::getenv(n)) old = v;
    setenv(n, value.c_str(), 1);
  }
  ~Env() {
    if (old)
      setenv(name.c_str(), old->c_str(), 1);
    else
      unsetenv(name.c_str());
  }
};

// A key for entries whose key does not matter.
inline const Key kKey{1, 2, 3, 4};

}  // namespace cw::cache::testing
