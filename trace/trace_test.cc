#include "trace/trace.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "trace/command_marker.h"

namespace cw {
namespace {

TEST_CASE("an event is 24 bytes and its field values start at zero") {
  Trace t;
  KindId wakeup = t.schema.find("wakeup");
  const Event& e = t.add_event(10, 1, wakeup, 2);
  CHECK(t.value(e, 0) == 0);
  t.value_ref(e, 0) = 7;
  CHECK(t.value(t.events[0], 0) == 7);
  CHECK(t.events[0].cpu == 2);
}

TEST_CASE("strings are interned once; id 0 is the empty string") {
  StringTable s;
  CHECK(s.get(0).empty());
  StrId a = s.intern("futex");
  CHECK(s.intern("futex") == a);
  CHECK(s.find("futex") == a);
  CHECK(s.find("nope") == StringTable::kMissing);
}

TEST_CASE("markers and the recorder's notes are found wherever they are, in order") {
  // Enough events to be looked through in parts: markers first, last and at a part's edge.
  Trace t;
  const KindId marker = t.schema.find("marker"), exit = t.schema.find("exit");
  const int text = t.schema.field_index(marker, "text");
  const std::vector<uint32_t> at = {0, 4096, 70000 / 16, 70000 / 16 + 1, 69999};
  for (uint32_t i = 0; i < 70000; ++i) {
    const bool is_marker = std::find(at.begin(), at.end(), i) != at.end();
    const Event& e = t.add_event(i, 1, is_marker ? marker : exit);
    if (is_marker)
      t.value_ref(e, text) = t.strings.intern(recorder_note("note " + std::to_string(i)));
  }
  CHECK(marker_events(t, marker) == at);
  // Found by whatever filled the events (the cache's check): read, not looked for again,
  // while they stand for these events.
  t.markers_found = {t.events.data(), t.events.size(), {at[1]}};
  CHECK(marker_events(t, marker) == std::vector<uint32_t>{at[1]});
  t.markers_found.events_count = t.events.size() - 1;
  CHECK(marker_events(t, marker) == at);
  t.markers_found = {};
  const std::vector<std::string> notes = recorder_notes(t);
  REQUIRE(notes.size() == at.size());
  CHECK(notes.front() == "note 0");
  CHECK(notes.back() == "note 69999");
}

TEST_CASE("sort_events is stable for equal times") {
  Trace t;
  KindId exit = t.schema.find("exit");
  for (int i = 0; i < 3; ++i) t.value_ref(t.add_event(5, 1, exit), 0) = static_cast<uint64_t>(i);
  t.add_event(1, 1, exit);
  t.sort_events();
  CHECK(t.events[0].ts == 1);
  for (int i = 0; i < 3; ++i) CHECK(t.value(t.events[i + 1], 0) == static_cast<uint64_t>(i));
}

TEST_CASE("thread and process lookups follow rebuild_indexes") {
  Trace t;
  t.processes.push_back(ProcessInfo{100, 1, 0, 0});
  t.threads.push_back(ThreadInfo{101, 100, 0, false});
  CHECK(t.thread(101) == nullptr);
  t.rebuild_indexes();
  REQUIRE(t.thread(101) != nullptr);
  CHECK(t.pid_of(101) == 100);
  CHECK(t.process(100)->ppid == 1);
  CHECK(t.pid_of(999) == 0);
}

TEST_CASE("lost_events sums every lost record") {
  Trace t;
  t.lost.push_back(LostRecord{0, 3, 10});
  t.lost.push_back(LostRecord{1, 4, 20});
  CHECK(t.lost_events() == 7);
}

}  // namespace
}  // namespace cw
