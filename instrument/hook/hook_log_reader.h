// The recorder's side of the hook event logs (log_format.h): every DIR/hooks.* file the
// preload library writes, read through a shared mapping while the programs run. Chunks
// read to the end are handed back to the writers, so polling is what keeps a log from
// filling up; one reader per directory (a second one sees only what the first has not
// handed back yet).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace cw::hook {

struct HookEvent {
  uint64_t ts;  // CLOCK_MONOTONIC ns
  uint32_t pid, tid, fn_index;
  bool exit;
  uint64_t address;
};

struct HookNote {
  uint32_t pid;
  uint32_t fn_index;  // 0xffffffff for notes about no one function (a bad entry, a bad log)
  std::string text;   // "hooked at 0x…" / "refused: …" / "not found: …"
};

class HookLogReader {
 public:
  explicit HookLogReader(std::string dir);
  ~HookLogReader();
  HookLogReader(const HookLogReader&) = delete;
  HookLogReader& operator=(const HookLogReader&) = delete;

  // Reads what was appended since the last call, in every log in the directory (also logs
  // created since), and hands full chunks it has read back to the writers; events of one
  // thread arrive in order, their times never going back. Returns the events delivered.
  size_t poll(const std::function<void(const HookEvent&)>& sink);
  // Notes published since the last call, including one per unreadable or malformed log.
  std::vector<HookNote> take_notes();
  // Events the programs could not store because no chunk of their log was free (the
  // reader was that far behind).
  uint64_t lost() const;

 private:
  struct Log;
  void open_new_logs();

  std::string dir_;
  std::vector<std::unique_ptr<Log>> logs_;
  std::vector<std::string> seen_;  // file names opened or rejected
  std::vector<HookNote> notes_;
  bool clock_noted_ = false;  // said once that events are stamped without the TSC
};

}  // namespace cw::hook
