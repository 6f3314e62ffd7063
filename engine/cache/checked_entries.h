// Entries checked in full once, and known again by their file's version (docs/cache.md,
// "Checked once"). At 19 M events the events entry is ~0.9 GB: hashing it and checking
// every event on each run cost a re-run after a rule ~0.2 s of its ~1 s. A file of this
// user's, in a folder no one else can write, whose inode, size and change time are those
// a run saw when it checked it in full holds the bytes it checked: any write to a file
// sets its change time, which no process can set back (only the clock's owner, root, can
// move the clock back). So a run records that it checked the file, and the next run that
// finds it unchanged uses it without checking it again.
//
// A write in the same tick of the kernel's clock as the file's last change leaves its
// change time as it was. So a file is recorded only when the clock was past its change
// time before the check read it (settled()), and still has that change time after.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "engine/cache/cache_dir.h"

namespace cw::cache {

// A file's identity and last change: what changes when anyone writes it.
struct FileVersion {
  uint64_t dev = 0, ino = 0, size = 0;
  int64_t ctime_ns = 0;
  bool operator==(const FileVersion&) const = default;
};

// The version of the file open at `fd` (and its modification time in `mtime_ns`); nullopt
// when fstat fails.
std::optional<FileVersion> file_version(int fd, int64_t* mtime_ns = nullptr);
// Whether any write to the file from now on gives it another change time: the kernel's
// clock (CLOCK_REALTIME_COARSE, the one it stamps files with) is past its change time.
bool settled(const FileVersion& v);

// Waits (at most 100 ms) until the file `name` of `dir` is settled(): a check made then
// may be recorded.
void wait_settled(const Folder& dir, std::string_view name);

// The folder's record of the entries checked in full (kCheckedName), each with the version
// of its file then and its header's checksum.
inline constexpr std::string_view kCheckedName = "checked.cwk";
// At most this many records are kept (a trace folder holds fewer entries), newest first.
inline constexpr size_t kMaxChecked = 64;

// Whether entry `name` was checked in full as the file of version `v` whose header holds
// checksum `sum`. False when there is no record file, it is damaged, another causeway's,
// or has no such record.
bool checked_before(const Folder& dir, std::string_view name, const FileVersion& v, uint64_t sum);
// Records that entry `name`, open at version `v` when `v` was settled(), was checked in
// full: when its file still has that version (seen through the folder, not following a
// link). Another run's record written at the same moment may be lost: the entry is then
// checked again once.
void record_checked(const Folder& dir, std::string_view name, const FileVersion& v, uint64_t sum);

// An entry checked once is marked used (its modification time, which eviction reads) only
// when it was last marked more than this long ago: marking it changes its change time, so
// that it is checked in full again on its next use.
inline constexpr int64_t kMarkUsedEvery = int64_t{3600} * 1'000'000'000;

// What map_entry learned of an entry's file, for its caller's record_checked().
struct CheckedOnce {
  FileVersion version;
  uint64_t sum = 0;
  bool before = false;      // checked in full by an earlier run: the checksum was not taken
  bool may_record = false;  // settled when opened, and not marked used since (a change)
};
// record_checked() for an entry checked in full now (not `before`, and `may_record`).
void record_checked(const Folder& dir, std::string_view name, const CheckedOnce& once);

}  // namespace cw::cache
