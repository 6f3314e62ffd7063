// The derived cache's folders and the files in them (docs/cache.md). causeway often runs
// as root on a trace that lies in a folder another user can write: she could swap a folder
// for a symbolic link between a check made by its path and a write made by its path, and
// so choose where root writes, what it deletes and which entries it loads. So a cache
// folder is opened once, without following a link, and its owner and mode are checked on
// that descriptor; every later create, read, rename and unlink is relative to it; a folder
// another user could write is never used; and only files of the cache's own names, that
// are regular files of this user's, are ever removed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cw::cache {

// One name in a folder as listed (a link is not followed: it is not `regular`).
struct FileInfo {
  std::string name;
  uint64_t size = 0;     // bytes allocated on disk are not counted: the file's length
  int64_t mtime_ns = 0;  // when last used (entries are touched when loaded) or written
  bool regular = false;  // a regular file (not a link, a folder, a FIFO, …)
  bool folder = false;   // a folder (not a link to one)
  bool ours = false;     // owned by this process's effective user
};

// A cache folder: an open descriptor of a folder this user owns and no one else can write.
// Copies share the descriptor (a save in a fork()ed copy of the process uses it too).
class Folder {
 public:
  Folder() = default;

  // `path` opened as a folder, not through a link at its last component, and checked:
  // owned by this process's effective user and not writable by its group or others (then
  // made 0700 if others could read it: the entries hold the trace's events). nullopt with
  // `why` otherwise. `path` is only shown in messages afterwards, never opened again.
  static std::optional<Folder> open(const std::string& path, std::string* why = nullptr);
  // The folder `name` (one component) inside this one, opened and checked the same way;
  // made 0700 first when missing and `create`.
  std::optional<Folder> sub(std::string_view name, bool create, std::string* why = nullptr) const;
  // The same inside the folder open at `at` (shown as `shown` in messages).
  static std::optional<Folder> open_in(int at, const std::string& name, const std::string& shown,
                                       bool create, std::string* why = nullptr);

  bool valid() const { return fd_ != nullptr; }
  int fd() const;
  const std::string& path() const { return path_; }
  // PATH/NAME, for messages.
  std::string shown(std::string_view name) const;

  // The regular file `name`, opened for reading (not through a link; a file of another
  // user's is refused), and its size. -1 with `why` otherwise ("" when there is none).
  int open_file(std::string_view name, uint64_t* size, std::string* why) const;
  // Writes `parts` one after the other to `name`, atomically: to a temporary file
  // NAME.tmp-PID-RANDOM made here (0600, O_EXCL), renamed over `name` once complete. A
  // run that stops half-way, or two runs at once, never leave a half-written `name`.
  bool write_file(std::string_view name, const std::vector<std::string_view>& parts,
                  std::string* why) const;
  // Marks `name` used now (its modification time), without following a link.
  void touch(std::string_view name) const;
  // Writes `name` (a regular file of this user's, not through a link) to disk now and
  // waits for it, when it has at least `from` bytes: what a save left in the page cache
  // is then on disk when the saving copy ends, instead of written back by the kernel about
  // 30 s later while another run works. False when there is no such file, or it is smaller.
  bool write_out(std::string_view name, uint64_t from) const;
  // Removes `name` when it is one of the cache's own file names (is_entry_name,
  // is_temporary_name) and a regular file of this user's. Nothing else is ever removed.
  bool remove_file(std::string_view name) const;
  // Removes the empty folder `name` when it is one of the user cache's per-trace folders
  // (is_trace_folder_name) and this user's.
  bool remove_empty_folder(std::string_view name) const;
  // Every name in the folder but "." and "..", as fstatat() sees it (links not followed).
  std::vector<FileInfo> list() const;

  // The user's cache folder (~/.cache/causeway) when this folder is one of its per-trace
  // folders: the total of all of them is capped (size_cap()). Null beside a trace.
  const Folder* pool() const { return pool_.get(); }
  // This folder, as one of `pool`'s per-trace folders.
  Folder in_pool(const Folder& pool) const;

 private:
  struct Fd;
  Folder(std::shared_ptr<const Fd> fd, std::string path)
      : fd_(std::move(fd)), path_(std::move(path)) {}
  std::shared_ptr<const Fd> fd_;
  std::string path_;
  std::shared_ptr<const Folder> pool_;
};

// The cache folder of `trace_path`:
// - TRACE.cwcache/ beside the trace, when the trace's folder belongs to this user or to
//   root and its group and others cannot write it (else another user could put a link or
//   a folder of hers there), and TRACE.cwcache is, or can be made, a folder of this user's
//   that no one else can write;
// - else this user's cache folder (user_cache_folder()) / a hash of the trace's path.
// Made when missing. nullopt with `why` when neither can be had.
std::optional<Folder> cache_dir(const std::string& trace_path, std::string* why = nullptr);

// The name of `trace_path`'s folder in the user's cache folder: 16 hex digits of a hash of
// its absolute path (links resolved).
std::string trace_folder_name(const std::string& trace_path);
// TRACE.cwcache beside `trace_path` (whether or not it is used).
std::string beside_path(const std::string& trace_path);

// This user's cache folder, $XDG_CACHE_HOME/causeway (~/.cache/causeway without it), made
// component by component (mkdirat, then opened without following a link and checked).
// $XDG_CACHE_HOME or $HOME is used only when it is a folder of this user's (or root's) that
// no one else can write: root run with another user's environment (sudo -E) uses its own
// home from the password database instead, never the other user's folder. With `create`
// false, nullopt when it does not exist yet.
std::optional<Folder> user_cache_folder(bool create, std::string* why = nullptr);

// The cache's own file names: graph-HEX.cwg, base-HEX.cwb, hang-HEX-HEX.cwh (HEX: 16 hex
// digits), trace.cwa, threads.cwa, names.cwa, matches.cwm, checked.cwk.
bool is_entry_name(std::string_view name);

// From how many bytes an entry a save wrote is written out before the saving copy ends
// (Folder::write_out): the trace arrays, the thread index and the graph of a large trace.
inline constexpr uint64_t kWriteOutFrom = uint64_t{64} << 20;
// A temporary file of an entry being written: ENTRY.tmp-PID-HEX.
bool is_temporary_name(std::string_view name);
// A per-trace folder of the user's cache folder: 16 hex digits.
bool is_trace_folder_name(std::string_view name);

// Whether another run is writing `name` now: a temporary file of it, a regular file of
// this user's younger than ten minutes. Saving the same ~1 GB twice at once only slows
// both.
bool being_written(const Folder& dir, std::string_view name);
// Whether a live process (its pid in the temporary file's name, still running) is writing
// an entry whose name starts with one of `prefixes` now.
bool being_saved_by_live_run(const Folder& dir, const std::vector<std::string_view>& prefixes);

// Removes temporary files that runs killed while writing left (regular files of this
// user's older than a day; a younger one may be another run's, still writing).
void remove_old_temporaries(const Folder& dir);
// Removes the least recently used files of `dir` whose names start with `prefix` and end
// with `suffix` (entry names only) beyond the `keep` most recent; returns the names removed.
std::vector<std::string> evict_least_recent(const Folder& dir, std::string_view prefix,
                                            std::string_view suffix, size_t keep);

// The cap on the total size of the user's cache folder: CAUSEWAY_CACHE_MAX (bytes, or a
// number with K, M, G or T: binary units), else kDefaultSizeCap.
inline constexpr uint64_t kDefaultSizeCap = uint64_t{4} << 30;
uint64_t size_cap();
// A size as CAUSEWAY_CACHE_MAX takes it: "1073741824", "512M", "2G", "2GiB"; nullopt when
// it is not one.
std::optional<uint64_t> parse_size(std::string_view text);
// Removes the least recently used entries of the user's cache folder `pool`, over all its
// per-trace folders, until their total is at most `cap`; never `keep_name` in `keep_dir`
// (the entry just written). Per-trace folders left empty are removed. Returns the bytes
// removed.
uint64_t enforce_size_cap(const Folder& pool, uint64_t cap, const Folder* keep_dir = nullptr,
                          std::string_view keep_name = {});

// What a cache folder holds: its entries (the cache's own names, regular files of this
// user's) and their total.
struct FolderUsage {
  std::string name;  // the per-trace folder's name, or the path of a folder beside a trace
  uint64_t bytes = 0;
  uint64_t entries = 0;
  int64_t last_used_ns = 0;  // the newest entry's modification time
};
FolderUsage folder_usage(const Folder& dir);
// The per-trace folders of the user's cache folder, largest first.
std::vector<FolderUsage> pool_usage(const Folder& pool);
// Removes the entries of `dir` last used before `before_ns` (all with INT64_MAX), and
// temporary files older than a day; returns the bytes and entries removed.
FolderUsage clean_folder(const Folder& dir, int64_t before_ns);

}  // namespace cw::cache
