#include "trace/names.h"

#include <doctest/doctest.h>

#include "trace/command_marker.h"
#include "trace/text_format.h"

namespace cw {
namespace {

TEST_CASE("thread_comm and process_comm name what the trace knows, else the fallback") {
  Trace t;
  t.processes.push_back(ProcessInfo{100, 1, t.strings.intern("server"), 0});
  t.threads.push_back(ThreadInfo{101, 100, t.strings.intern("worker"), false});
  t.rebuild_indexes();
  CHECK(thread_comm(t, 101) == "worker");
  CHECK(process_comm(t, 100) == "server");
  CHECK(thread_comm(t, 999).empty());
  CHECK(thread_comm(t, 999, "?") == "?");
  CHECK(process_comm(t, 999, "?") == "?");
}

TEST_CASE("a command marker names its pid and argv, and reads back its pid") {
  const std::string text = command_marker(4242, {"sh", "-c", "./app"});
  CHECK(text == "causeway: command 4242 sh -c ./app");
  CHECK(is_command_marker(text));
  CHECK(command_marker_pid(text) == 4242);
  CHECK(command_marker_pid(command_marker(7, {})) == 7);
  // A user's marker, and a marker whose pid is malformed.
  CHECK_FALSE(is_command_marker("checkpoint 3"));
  CHECK(command_marker_pid("causeway: command 12x") == 0);
  CHECK(command_marker_pid("causeway: command 0 sh") == 0);
  CHECK(command_marker_pid("causeway: command ") == 0);
}

TEST_CASE("the recorded command's exit code is its main thread's exit, after its marker") {
  auto parse = [](const std::string& body) {
    return parse_text_trace(make_source("t.trace", "causeway-trace 1\n" + body));
  };
  // A driver that failed: its other threads and unrelated processes do not count.
  Trace failed = parse(
      "1 50 marker text=\"causeway: command 50 run.sh\"\n"
      "2 51 exit code=0\n3 60 exit code=512\n4 50 exit code=256\n");
  CHECK(command_exit_code(failed) == 256);
  CHECK(command_exit_code(parse("1 50 marker text=\"causeway: command 50 x\"\n2 50 exit\n")) == 0);
  // Still running when the recording stopped, or recorded by pid with no command.
  CHECK_FALSE(command_exit_code(parse("1 50 marker text=\"causeway: command 50 x\"\n")));
  CHECK_FALSE(command_exit_code(parse("1 50 exit code=256\n")));
}

}  // namespace
}  // namespace cw
