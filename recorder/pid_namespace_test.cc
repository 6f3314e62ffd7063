#include "recorder/pid_namespace.h"

#include <doctest/doctest.h>

namespace cw {
namespace {

TEST_CASE("the initial PID namespace records; any other is refused, saying what to do") {
  CHECK(pid_namespace_problem(kInitialPidNamespaceInode) == "");
  const std::string why = pid_namespace_problem(4026532178u);
  CHECK(why.find("cannot record inside a PID namespace (a container; pid:[4026532178])") == 0);
  CHECK(why.find("the kernel reports the host's pids") != std::string::npos);
  CHECK(why.find("--pid=host") != std::string::npos);
}

}  // namespace
}  // namespace cw
