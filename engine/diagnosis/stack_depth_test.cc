#include "engine/diagnosis/stack_depth.h"

#include <doctest/doctest.h>

#include "engine/graph/test_support.h"

namespace cw::engine {
namespace {

// A trace whose events carry a shallow stack (a libc wrapper above two kernel frames; the
// text form lists a stack from its outermost frame) and a deep one (main → handle → read).
Trace stacks_trace() {
  return testing::load_trace(R"(process 100 comm=app
thread 100 pid=100 comm=app
1ms 100 syscall_enter name=read fd=3 stack=0x7f0000001000;0xffffffff81000020;0xffffffff81000010
2ms 100 syscall_enter name=read fd=3 stack=0x401000;0x401100;0x401200;0x7f0000001000
)");
}

TEST_CASE("user frames: the frames below the kernel's") {
  Trace t = stacks_trace();
  CHECK(user_frames(t, t.events[0].stack) == 1);
  CHECK(user_frames(t, t.events[1].stack) == 4);
  CHECK(user_frames(t, 0) == 0);
}

TEST_CASE("a note when every root cause's stack is cut short, none when one is deep") {
  Trace t = stacks_trace();
  Diagnosis d;
  d.root_causes.push_back({});
  CHECK_FALSE(shallow_stacks_note(t, d));  // no stack at all: not this note's business
  d.root_causes[0].stack = t.events[0].stack;
  auto note = shallow_stacks_note(t, d);
  REQUIRE(note);
  CHECK(note->find("1 user frame at most") != std::string::npos);
  CHECK(note->find("--call-graph dwarf") != std::string::npos);
  d.root_causes.push_back({});
  d.root_causes[1].stack = t.events[1].stack;
  CHECK_FALSE(shallow_stacks_note(t, d));
}

}  // namespace
}  // namespace cw::engine
