// Shared fixtures for the latency tests: a text trace of one thread's stacks.
#pragma once

#include <string>

#include "engine/latency/infer.h"
#include "trace/text_format.h"

namespace cw::latency::testing {

// One process "app" (pid 10) with thread 11; `body` holds the events.
inline Trace app_trace(const std::string& body) {
  return parse_text_trace(make_source("t.trace",
                                      "causeway-trace 1\n"
                                      "process 10 comm=app\n"
                                      "thread 11 pid=10 comm=app\n" +
                                          body));
}

// The example of IntroPerf, Figure 3: A calls B calls D, then A calls C calls D.
inline const char* const kFigure3 =
    "1ms 11 syscall_enter name=read stack=A;B;D\n"
    "2ms 11 syscall_enter name=read stack=A;B;D\n"
    "3ms 11 syscall_enter name=read stack=A;C;D\n"
    "4ms 11 syscall_enter name=read stack=A;C\n";

}  // namespace cw::latency::testing
