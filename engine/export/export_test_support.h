// The fixture the export tests share: a client waits on a server that computes.
#pragma once

#include "engine/diagnosis/diagnose.h"
#include "engine/export/timeline.h"
#include "engine/graph/test_support.h"

namespace cw::engine::testing {

// Blocking reads cut segments; stream bytes are strong edges, wake-ups weak.
inline const char* const kTimelineRules = R"(
split read.entry {
  at syscall_enter
  where name == "read"
  cut before
  neighbour weak
}
link bytes { from send to recv join from.object == to.object pick overlap range offset, len }
edge bytes.message { link bytes strength strong kind message }
link woken { from wakeup to switch_in join from.target == to.tid pick next }
edge woken.default { link woken strength weak kind wakeup }
)";

// cw-client asks cw-server, which computes for 800 ms before it answers; the client's
// read waits all that time. cw-idle reads on its own, joined to nobody.
inline const char* const kAskAndWait = R"(
process 100 comm=cw-client
thread 100 pid=100 comm=cw-client
process 200 comm=cw-server
thread 200 pid=200 comm=cw-server
thread 201 pid=200 comm=cw-idle
1ms 200 syscall_enter name=read fd=4
1ms 200 switch_out state=S
2ms 201 syscall_enter name=read fd=9
2ms 201 switch_out state=S
10ms 100 syscall_enter name=write fd=3
10ms 100 send object=1 offset=0 len=8 peer=200 fd=3
10ms 100 wakeup target=200
10ms 100 syscall_exit name=write ret=8
10ms 100 syscall_enter name=read fd=3
10ms 100 switch_out state=S
11ms 200 switch_in
11ms 200 recv object=1 offset=0 len=8 peer=100 fd=4
11ms 200 syscall_exit name=read ret=8
100ms 200 sample event=cpu-clock period=1000000 stack=main;serve;compute
200ms 200 sample event=cpu-clock period=1000000 stack=main;serve;compute
300ms 200 sample event=cpu-clock period=1000000 stack=main;serve;log
400ms 201 switch_in
400ms 201 syscall_exit name=read ret=1
400ms 201 syscall_enter name=read fd=9
400ms 201 switch_out state=S
811ms 200 syscall_enter name=write fd=4
811ms 200 send object=2 offset=0 len=8 peer=100 fd=4
811ms 200 wakeup target=100
811ms 200 syscall_exit name=write ret=8
811ms 200 syscall_enter name=read fd=4
811ms 200 switch_out state=S
812ms 100 switch_in
812ms 100 recv object=2 offset=0 len=8 peer=200 fd=3
812ms 100 syscall_exit name=read ret=8
812ms 100 marker text="answered"
813ms 100 syscall_enter name=write fd=3
813ms 100 syscall_exit name=write ret=1
)";

// The slice of thread `tid` from `start_ns` (to `end_ns` when given, else the longest).
inline const TimelineSlice* slice_at(const Timeline& tl, Tid tid, uint64_t start_ns,
                                     uint64_t end_ns = 0) {
  const TimelineSlice* best = nullptr;
  for (const TimelineSlice& s : tl.slices) {
    if (tl.tracks[s.track].tid != tid || s.start_ns != start_ns) continue;
    if (end_ns ? s.end_ns == end_ns : (!best || s.end_ns > best->end_ns)) best = &s;
  }
  return best;
}

inline Diagnosis diagnose_client(const Built& b) {
  DiagnoseOptions o;
  o.symptom.mode = SymptomRequest::Mode::ThreadAt;
  o.symptom.tid = 100;
  o.symptom.at_ns = 500'000'000;
  return diagnose(b.trace, b.result, b.rules, o);
}

}  // namespace cw::engine::testing
